"""mtsbench: simulate and evaluate agent long-term memory.

Every mechanism of the memory design is a small class behind a Protocol, chosen by a
Hydra config group; scenarios replay scripted multi-day dialogues on a simulated clock,
and runs report recall accuracy against search cost.

From Python (a notebook): ``mtsbench.run(overrides=[...])`` runs a configuration and
``mtsbench.run_sweep(overrides=[...])`` a sweep (as ``mtsbench run -m``), and
``mtsbench.load(path)`` reads a finished run or sweep, both as pandas DataFrames
(``mtsbench.api``). Importing mtsbench changes nothing in the process (BLAS threads are
limited only while a run runs: ``mtsbench.runner.one_blas_thread``).
"""

__version__ = "0.1.0"


def __getattr__(name):
    # lazily: importing the package stays light. Not ``sweep``: that is the module mtsbench.sweep
    if name in ("run", "run_sweep", "load", "Run", "Sweep"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'mtsbench' has no attribute {name!r}")
