"""The shared llama.cpp server of ``llm=local``: one child process per (model file, threads,
context size), started on first use and shared by every ``LocalLLM`` of the process.

``Server`` starts ``python -m mtsbench.llm.local serve`` on 127.0.0.1 on a free port (three
tries should another process take it first), waits until ``/health`` answers (at most
``startup_timeout`` seconds; a failure is one ``LLMError`` line naming what failed and the
server's log file) and stops it: stdin closed (the child exits by itself), then SIGTERM,
then SIGKILL. ``acquire``/``release`` count the users of each server and stop it when the
last lets go; ``stop_all`` (also at exit) stops every one. The child runs in its own
session (a Ctrl-C reaches only mtsbench, which then stops it in order) and exits when its
stdin pipe closes, so even a mtsbench killed with SIGKILL leaves no server behind.
``serve`` is the child's side.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path

from ..base import LLMError

RUNTIME = "xllamacpp"           # the module the server child imports


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _last_line(log: Path) -> str:
    """The last line of the server's log that says something (an error if there is one)."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no log"
    errors = [ln for ln in lines if " E " in ln or "error" in ln.lower() or "failed" in ln.lower()]
    return (errors or lines or ["the log is empty"])[-1][:200]


def _stop(proc: subprocess.Popen, log: Path | None = None, keep_log: bool = False) -> None:
    """Stop a server child: close its stdin (it exits by itself), then SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(10)
        except (subprocess.TimeoutExpired, OSError):
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    elif proc.stdin:
        proc.stdin.close()
    if log is not None and not keep_log:
        try:
            log.unlink()
        except OSError:
            pass


class Server:
    """One llama.cpp server child on 127.0.0.1 (see the module docstring); ``url`` has no /v1."""

    def __init__(self, model: Path, threads: int, ctx_size: int, startup_timeout: float):
        self.model, self.threads, self.ctx_size, self.startup_timeout = model, threads, ctx_size, startup_timeout
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.log: Path | None = None
        self.load_seconds = float("nan")
        self._finalizer = None

    def start(self) -> "Server":
        if importlib.util.find_spec(RUNTIME) is None:
            raise LLMError(f"llm=local: the runtime {RUNTIME} is not installed (pip install 'mtsbench[local]'); "
                           "llm=openai reaches a server you run yourself")
        for attempt in range(3):                      # another process may take the free port first
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == 2:
                    raise LLMError("llm=local: the server could not bind a free port on 127.0.0.1 "
                                   "(three tries)") from None
        raise AssertionError("unreachable")

    def _start_once(self) -> "Server":
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        fd, name = tempfile.mkstemp(prefix="mtsbench-llama-", suffix=".log")
        self.log = Path(name)
        cmd = [sys.executable, "-m", "mtsbench.llm.local", "serve", "--model", str(self.model), "--port", str(port),
               "--threads", str(self.threads), "--ctx-size", str(self.ctx_size), "--log", name]
        # OpenMP threads that spin while waiting collapse when another process holds a core (measured
        # on 2 shared cores: 0.45 against 2.5 tokens/s); passive waiting keeps them useful
        env = {"OMP_WAIT_POLICY": "passive", **os.environ}
        began = time.monotonic()
        with os.fdopen(fd, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=env)
        self._finalizer = weakref.finalize(self, _stop, self.proc, self.log)   # also runs at exit
        deadline = began + self.startup_timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                why = _last_line(self.log)
                self._finalizer.detach()
                taken = "bind" in why.lower() or "address already in use" in why.lower()
                _stop(self.proc, self.log, keep_log=not taken)
                if taken:
                    raise _PortTaken()
                raise LLMError(f"llm=local: the server exited with code {code} while loading {self.model.name}: "
                               f"{why} (log {self.log})")
            if _healthy(self.url):
                self.load_seconds = time.monotonic() - began
                return self
            if time.monotonic() > deadline:
                self.stop(keep_log=True)
                raise LLMError(f"llm=local: the server on {self.url} was not healthy within "
                               f"llm.startup_timeout={self.startup_timeout:g} s loading {self.model.name} "
                               f"(log {self.log})")
            time.sleep(0.2)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, keep_log: bool = False) -> None:
        """Stop the child (idempotent); its log is removed unless ``keep_log``."""
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self.proc is not None:
            _stop(self.proc, self.log, keep_log)

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class _PortTaken(Exception):
    pass


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, ValueError):   # not listening yet, or 503 while loading
        return False


# -- the process's servers, shared by every LocalLLM with the same launch settings --------------
_SERVERS: dict[tuple, Server] = {}
_USERS: dict[tuple, int] = {}
_LOCK = threading.Lock()


def acquire(key: tuple, model: Path, threads: int, ctx_size: int, startup_timeout: float) -> Server:
    with _LOCK:
        server = _SERVERS.get(key)
        if server is None or not server.alive:
            server = Server(model, threads, ctx_size, startup_timeout).start()
            _SERVERS[key] = server
        _USERS[key] = _USERS.get(key, 0) + 1
        return server


def release(key: tuple) -> None:
    with _LOCK:
        _USERS[key] = max(0, _USERS.get(key, 0) - 1)
        if _USERS[key] == 0 and key in _SERVERS:
            _SERVERS.pop(key).stop()


def stop_all() -> None:
    """Stop every server this process started (they stop at exit anyway)."""
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()
        _USERS.clear()


atexit.register(stop_all)


def serve(model: str, port: int, threads: int, ctx_size: int, log: str | None = None) -> None:
    """Serve ``model`` on 127.0.0.1:``port`` until stdin closes (the parent stopped or died);
    then remove ``log`` (a parent killed with SIGKILL cannot)."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = model
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx_size
    params.n_parallel = 1                # one slot: the whole context, requests in order
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.ui = False
    server = xlc.Server(params)          # returns once the model is loaded and the port is bound
    print(f"mtsbench: serving {model} on {server.listening_address}", flush=True)
    try:
        sys.stdin.buffer.read()          # blocks until the parent closes the pipe or dies
    except KeyboardInterrupt:
        pass
    if log:
        Path(log).unlink(missing_ok=True)
    threading.Timer(5.0, os._exit, (0,)).start()   # a generation still running must not hold us
    del server
    os._exit(0)
