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
"""

from __future__ import annotations

import os
from typing import Sequence

PRELOAD = ["mtsbench.worker_preload"]
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
    try:
        if not _running():
            forkserver.set_forkserver_preload(PRELOAD)
            _started = True
        forkserver.ensure_running()       # (again if it died)
    except OSError:
        return None
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
