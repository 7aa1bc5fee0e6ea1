"""mtsbench: simulate and evaluate agent long-term memory.

Every mechanism of the memory design is a small class behind a Protocol, chosen by a
Hydra config group; scenarios replay scripted multi-day dialogues on a simulated clock,
and runs report recall accuracy against search cost.

From Python (a notebook): ``mtsbench.run(overrides=[...])`` runs a configuration and
``mtsbench.run_sweep(overrides=[...])`` a sweep (as ``mtsbench run -m``), and
``mtsbench.load(path)`` reads a finished run or sweep, both as pandas DataFrames
(``mtsbench.api``). Importing mtsbench changes nothing in the process but one import
finder, for the old paths of moved modules (``mtsbench.core.moved``); BLAS threads are
limited only while a run runs (``mtsbench.harness.runner.one_blas_thread``).
"""

__version__ = "0.1.0"

from .core import moved as _moved

_moved.install()   # old import paths of modules moved in issue 37 (mtsbench.core.moved)
del _moved


def __getattr__(name):
    # lazily: importing the package stays light. Not ``sweep``: that is the module mtsbench.harness.sweep
    if name in ("run", "run_sweep", "load", "Run", "Sweep"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'mtsbench' has no attribute {name!r}")
