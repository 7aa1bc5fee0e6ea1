"""An installable mtsbench plug-in: ``RecencySystem`` and its config (``configs/system/recency.yaml``),
found by mtsbench through the ``mtsbench.configs`` entry point of ``pyproject.toml``."""

from .recency_system import RecencySystem

__all__ = ["RecencySystem"]
