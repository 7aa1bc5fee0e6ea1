"""Imported by the server the local launcher's workers are forked from (``mtsbench.workers``):
what a sweep's job imports (``MODULES``, every module of ``PACKAGES``, Hydra's plugins), so
no worker imports it again. Nothing runs here but imports (and Hydra's plugin discovery,
which imports); a module that fails to import here is left to the job, which says what is wrong.

What was imported then lives as long as the workers: ``gc.freeze()`` takes it out of the
garbage collector's way (a sweep's jobs spent about 40% less time collecting, and a
collection in a worker no longer writes to every object the fork shares).

SIGINT is ignored while importing: a Ctrl-C in the first second of a sweep stops
``mtsbench run`` (one line), not this server with a traceback; the workers get the usual
SIGINT handling back (the server hands its forks the handlers it found).
"""

import gc
import importlib
import pkgutil
import signal
import sys

MODULES = ("hydra._internal.config_loader_impl", "hydra.core.utils", "hydra_plugins.mtsbench_launcher.progress_joblib",
           "pyarrow.parquet", "pyarrow.dataset", "pyarrow.pandas_compat", "pandas.io.formats.csvs", "threadpoolctl",
           "mtsbench.hydra_app", "mtsbench.sweep", "mtsbench.config_rules", "mtsbench.runner", "mtsbench.outputs",
           "mtsbench.report.markdown", "mtsbench.systems.mts", "mtsbench.embed.hashing")
PACKAGES = ("mtsbench.mechanisms", "mtsbench.memory", "mtsbench.processes")   # every module: the configs' _target_s


def _import(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception:  # noqa: BLE001 - the job imports it again and reports the error
        pass


gc.disable()            # until all is imported: nothing imported is garbage (the imports ran 10% faster)
try:
    _previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
except ValueError:      # not the main thread: signals are not its to change
    _previous = None
try:
    for _name in MODULES:
        _import(_name)
    for _package in PACKAGES:
        _import(_package)
        for _module in pkgutil.iter_modules(getattr(sys.modules.get(_package), "__path__", [])):
            _import(f"{_package}.{_module.name}")
    try:        # Hydra's plugin discovery imports every plugin's modules, in each worker's first job
        from hydra.core.plugins import Plugins

        Plugins.instance()
    except Exception:  # noqa: BLE001 - the job discovers them and reports the error
        pass
finally:
    if _previous is not None:
        signal.signal(signal.SIGINT, _previous)
    gc.freeze()
    gc.enable()
