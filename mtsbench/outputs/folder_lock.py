"""One writer per run or sweep folder: an advisory lock file holding its owner's PID.

``mtsbench run`` takes the lock of its run folder (``hydra.run.dir``) before Hydra writes
``.hydra/`` there, and a sweep the lock of its sweep folder (``hydra.sweep.dir``, also when
resumed) before ``multirun.yaml``; ``mtsbench check --out DIR`` takes DIR's. The lock is
``FOLDER/.mtsbench.lock``, held with ``fcntl.flock`` for as long as the process writes there
and removed when it is done:

- a second writer (another run, a second ``--resume`` of the same sweep) gets one line
  naming the folder and the owner's PID, exit 2, and writes nothing there;
- the kernel drops a flock when its process dies, so a lock file left by a killed run
  (SIGKILL, a crash) is stale: the next writer takes it over and says so in one line.

Taking the lock checks that the file it locked is still the one at the path (a writer
releasing it unlinks the file), so two writers never both hold one.

A sweep's job folder is locked too, by the worker running the job (``hydra/launcher=local``,
before Hydra writes the job's ``.hydra/``): a job of a resumed sweep never writes beside a
worker of the killed one. That worker waits for the lock a few seconds (``wait``: a worker
of a killed sweep dies with it, but not in the same instant) and the job then fails in one
line (``FolderBusy``) without writing there. ``busy(folder)`` tells, without taking the lock
or leaving a file, whether a live process holds it. The holder of a folder's lock also
removes the temporary files of atomic writes a killed writer left there (``sweep_leftovers``).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import re
import time
from pathlib import Path

from ..errors import ConfigError

LOCK_FILE = ".mtsbench.lock"
_held: dict[Path, int] = {}       # folder (absolute) -> the open, locked lock file's descriptor


class FolderBusy(ConfigError):
    """Another live process holds the folder's lock (its str: one line)."""


def acquire(folder: str | os.PathLike, setting: str = "hydra.run.dir", wait: float = 0.0) -> str | None:
    """Lock ``folder`` (made if missing) for this process. Returns the line to print when a
    stale lock was taken over (else None); ``FolderBusy`` (a ``ConfigError``, one line) when
    another live process holds it still after ``wait`` seconds. ``setting`` names the
    folder's setting in the message. Taking a lock this process holds already is a no-op."""
    folder = Path(folder).absolute()
    if folder in _held:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    deadline = time.monotonic() + wait
    for _ in range(10):               # the owner may release (unlink) it between open and flock
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                owner = _pid(fd)
                os.close(fd)
                raise FolderBusy(f"{setting}={folder}: another mtsbench process is writing there "
                                 f"({'PID ' + str(owner) if owner else 'its PID not written yet'}; lock {path}); "
                                 f"wait for it to finish, or choose another folder") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            continue
        previous = _pid(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[folder] = fd
        if previous and previous != os.getpid():
            state = "no longer running" if not _alive(previous) else "not holding it"
            return (f"{setting}={folder}: taking over a stale lock of PID {previous}, which is {state} "
                    f"(a run killed there?)")
        return None
    raise ConfigError(f"{setting}={folder}: could not lock {path}: it is being replaced over and over")


def busy(folder: str | os.PathLike) -> bool:
    """Does a live process other than this one hold ``folder``'s lock? Read without taking
    it for more than an instant and without making or removing any file."""
    folder = Path(folder).absolute()
    if folder in _held:
        return False
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDWR)
    except OSError:
        return False                  # no lock file: nobody holds it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)                  # (closing drops the flock taken, if it was)
    return False


_LEFTOVER = re.compile(r"^\..+\.tmp-(\d+)$")     # mtsbench.outputs.atomic's temporary name: .NAME.tmp-PID


def sweep_leftovers(folder: str | os.PathLike) -> int:
    """Remove from ``folder`` (and its subfolders) the temporary files of atomic writes left
    by other processes (a writer killed between writing and renaming); call it holding the
    folder's lock, so no other writer is there. Returns how many were removed."""
    removed = 0
    for root, _dirs, files in os.walk(Path(folder)):
        for name in files:
            m = _LEFTOVER.match(name)
            if m and int(m.group(1)) != os.getpid():
                try:
                    os.unlink(os.path.join(root, name))
                    removed += 1
                except OSError:
                    pass
    return removed


def release(folder: str | os.PathLike) -> None:
    """Give up the lock of ``folder`` (if this process holds it): the file removed, then unlocked."""
    fd = _held.pop(Path(folder).absolute(), None)
    if fd is None:
        return
    try:
        (Path(folder).absolute() / LOCK_FILE).unlink(missing_ok=True)
    except OSError:
        pass                          # the folder is gone or read-only now: the flock still goes
    os.close(fd)


def release_all() -> None:
    for folder in list(_held):
        release(folder)


atexit.register(release_all)


def _pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
