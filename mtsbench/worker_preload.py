"""Imported by the server the local launcher's workers are forked from (``mtsbench.workers``):
what a sweep's job imports (``MODULES``), so no worker imports it again. Nothing runs here
but imports; a module that fails to import here is left to the job, which says what is wrong.

SIGINT is ignored while importing: a Ctrl-C in the first second of a sweep stops
``mtsbench run`` (one line), not this server with a traceback; the workers get the usual
SIGINT handling back (the server hands its forks the handlers it found).
"""

import importlib
import signal

MODULES = ("hydra._internal.config_loader_impl", "hydra.core.utils", "hydra_plugins.hydra_joblib_launcher._core",
           "hydra_plugins.mtsbench_launcher.progress_joblib", "pyarrow.parquet", "mtsbench.hydra_app",
           "mtsbench.sweep", "mtsbench.config_rules", "mtsbench.runner", "mtsbench.outputs",
           "mtsbench.report.markdown", "mtsbench.systems.mts")

try:
    _previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
except ValueError:      # not the main thread: signals are not its to change
    _previous = None
try:
    for _name in MODULES:
        try:
            importlib.import_module(_name)
        except Exception:  # noqa: BLE001 - the job imports it again and reports the error
            pass
finally:
    if _previous is not None:
        signal.signal(signal.SIGINT, _previous)
