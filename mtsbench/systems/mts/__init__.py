"""The seed design as a memory system: ``system`` adapts it to the protocol of
``mtsbench.systems.base`` (what the harness calls), ``agent`` schedules what each step does,
``preload`` and ``synthetic`` fill a store without simulating turns. The memory itself and
its mechanisms are in ``mtsbench.memory``, ``mtsbench.processes`` and ``mtsbench.mechanisms``.
Copy this folder as the example of a system.
"""

from .system import MtsSystem

__all__ = ["MtsSystem"]
