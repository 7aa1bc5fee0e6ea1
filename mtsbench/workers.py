"""The worker processes of ``hydra/launcher=local``: forked from a server that has imported
what a job needs, instead of each starting a fresh interpreter that imports it all again.

The server is ``multiprocessing``'s forkserver, its preloaded module ``mtsbench.worker_preload``.

- ``start(argv)``: first thing ``mtsbench run`` does for a sweep on this machine (``-m`` or
  ``--resume``, no other launcher named): the server starts and imports while ``mtsbench
  run`` composes and checks the sweep, so a lane's worker is a fork, ready at once.
- ``context()``: the context the launcher's lanes make their workers with (the server,
  started then if ``start`` did not); None where there is no forkserver (loky's own start).
- ``stop()``: ends the server when ``mtsbench run`` ends; a next sweep in the same process
  gets a server of its own (with that run's standard streams).
- ``pickled(fn, *args)`` / ``call_pickled(blob)``: a lane's initializer and its arguments
  sent as one blob, pickled as loky pickles jobs (the forkserver pickles a worker's
  arguments with the standard pickle, which cannot send Hydra's task function).
- ``launcher_choice(argv)``: the launcher a command line names (read here before anything
  else is imported; ``mtsbench.sweep`` re-exports it).

A worker is a process of its own as before: its death fails only its job, signals reach it
as they did (SIGINT by default raises KeyboardInterrupt in it; SIGTERM ends it).

The server and the workers die with ``mtsbench run`` (issue 28, item 1): a sweep killed
outright (SIGKILL, the OOM killer) would otherwise leave them running (the server lives as
long as any worker, which holds its "alive" pipe), still writing job folders that a
``--resume`` then writes too. On Linux each is bound with the parent-death signal
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``): the server, as it starts (``bind_server``, called
by ``worker_preload`` first thing), to ``mtsbench run`` (its PID in ``PARENT_ENV``, set
while the server starts from the main thread: the signal follows the thread that started
it); each worker, as the server forks it (``bind_worker``, an at-fork hook), to the server.
Either then checks that its parent is still the one it bound to (it may have died before
the signal was set) and ends at once if not. Elsewhere (no ``prctl``) a worker watches
``mtsbench run`` from a thread, twice a second, and the server ends by itself once no
worker is left. A job folder is also written by one process at a time
(``mtsbench.folder_lock``, taken by the lane's worker before Hydra writes there).
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

PRELOAD = ["mtsbench.worker_preload"]
PARENT_ENV = "MTSBENCH_SWEEP_PID"   # for the server: the PID of the mtsbench run it dies with
WATCH_EVERY = 0.5       # seconds between a worker's looks at mtsbench run, where there is no prctl
_started = False        # the server running is ours to stop


def start(argv: Sequence[str]) -> None:
    """Start the server for a sweep ``argv`` runs on the local launcher (see the module docstring)."""
    sweep = any(a in ("-m", "--multirun", "--resume") for a in argv)
    if sweep and launcher_choice(argv) in (None, "local"):
        context()


def launcher_choice(argv: Sequence[str]) -> str | None:
    """The ``hydra/launcher=NAME`` of a command line (None: the default).

    >>> launcher_choice(["-m", "seed=0,1", "hydra/launcher=ray_cluster"])
    'ray_cluster'
    >>> launcher_choice(["override hydra/launcher=slurm"]), launcher_choice(["seed=1"])
    ('slurm', None)
    """
    choice = None
    for a in argv:
        key, eq, value = a.partition("=")
        words = key.split()             # "=x" (no key): none, refused in one line by mtsbench.config
        if eq and words and words[-1].lstrip("+~") == "hydra/launcher":
            choice = value
    return choice


def context():
    """The forkserver context, its server started (None without a forkserver, or if it fails to start)."""
    global _started
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    # a dead worker's executor leaves a semaphore behind: not the user's concern at exit (the
    # resource tracker starting with the server reads this)
    os.environ.setdefault("PYTHONWARNINGS", "ignore:resource_tracker:UserWarning")
    import threading

    main = threading.current_thread() is threading.main_thread()
    before = os.environ.get(PARENT_ENV)
    if main:        # the parent-death signal follows the thread that started the server: the main one only
        os.environ[PARENT_ENV] = str(os.getpid())
    try:
        if not _running():
            forkserver.set_forkserver_preload(PRELOAD)
            _started = True
        forkserver.ensure_running()       # (again if it died)
    except OSError:
        return None
    finally:
        if main and before is None:
            os.environ.pop(PARENT_ENV, None)
        elif main:
            os.environ[PARENT_ENV] = before
    return multiprocessing.get_context("forkserver")


def stop() -> None:
    """End the server ``start`` or ``context`` started (its workers ended before)."""
    global _started
    import signal
    from multiprocessing import forkserver

    if _started:
        _started = False
        pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
        if pid is not None:
            try:    # it has nothing to finish: spared the interpreter's teardown (0.2 s with pandas loaded)
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        stopping = getattr(forkserver._forkserver, "_stop", None)
        if stopping is not None:
            stopping()


def bind_server() -> int | None:
    """In the server as it starts: die (SIGKILL) with the ``mtsbench run`` named by
    ``PARENT_ENV`` (see the module docstring); ended at once if that process is gone already.
    Returns the PID bound to (None: not started by ``context``'s main thread, left as is)."""
    text = os.environ.pop(PARENT_ENV, "")
    if not text.isdigit():
        return None
    parent = int(text)
    if _death_signal():
        if os.getppid() != parent:      # mtsbench run died before the signal was set
            os._exit(1)
    return parent


def bind_worker(server: int, sweep: int | None) -> None:
    """In a worker the server just forked (``server``: its PID; ``sweep``: the ``mtsbench run``
    it serves): die with the server (Linux), else watch ``sweep`` from a thread."""
    if _death_signal():
        if os.getppid() != server:      # the server died before the signal was set
            os._exit(1)
    elif sweep is not None:
        import threading

        threading.Thread(target=_watch, args=(sweep,), name="mtsbench-parent-watch", daemon=True).start()


def _death_signal() -> bool:
    """SIGKILL this process when its parent (the thread that forked it) ends: Linux's
    ``prctl(PR_SET_PDEATHSIG)``. False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0    # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _watch(pid: int) -> None:
    import time

    while True:
        time.sleep(WATCH_EVERY)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass


def _running() -> bool:
    from multiprocessing import forkserver

    return getattr(forkserver._forkserver, "_forkserver_pid", None) is not None


def pickled(fn, *args) -> bytes:
    """``fn(*args)`` as one blob, for ``call_pickled``, pickled as loky pickles a job (cloudpickle)."""
    from joblib.externals.loky.backend.reduction import dumps

    return bytes(dumps((fn, args)))


def call_pickled(blob: bytes):
    """Call what ``pickled`` packed."""
    import pickle

    fn, args = pickle.loads(blob)
    return fn(*args)
