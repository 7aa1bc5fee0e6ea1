"""Imported by the server the local launcher's workers are forked from (``mtsbench.workers``):
what a sweep's job imports (``MODULES``, every module of ``PACKAGES``, Hydra's plugins), so
no worker imports it again. Nothing runs here but imports (and Hydra's plugin discovery,
which imports); a module that fails to import here is left to the job, which says what is wrong.

What was imported then lives as long as the workers: ``gc.freeze()`` takes it out of the
garbage collector's way (a sweep's jobs spent about 40% less time collecting, and a
collection in a worker no longer writes to every object the fork shares).

First of all it binds the server to ``mtsbench run``, and each worker it forks to the
server, so none outlives a sweep killed outright (``mtsbench.workers.bind_server`` and
``bind_worker``; the worker's binding is an at-fork hook, run only in the server's own forks).

SIGINT is ignored while importing: a Ctrl-C in the first second of a sweep stops
``mtsbench run`` (one line), not this server with a traceback; the workers get the usual
SIGINT handling back (the server hands its forks the handlers it found).
"""

import gc
import importlib
import os
import pkgutil
import signal
import sys

from mtsbench import workers as _workers

SERVER = os.getpid()
SWEEP = _workers.bind_server()        # the mtsbench run this server dies with (None: not bound)
_forking = None                        # the PID of the process forking (the at-fork hooks below)


def _before_fork() -> None:
    global _forking
    _forking = os.getpid()


def _after_fork_in_child() -> None:
    if _forking == SERVER and SWEEP is not None:   # a worker of the server, not a fork of a worker
        _workers.bind_worker(SERVER, SWEEP)


os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)

MODULES = ("hydra.initialize", "hydra.core.utils", "hydra_plugins.mtsbench_launcher.progress_joblib",
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
