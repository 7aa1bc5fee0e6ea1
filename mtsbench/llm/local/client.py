"""``LocalLLM``, the ``llm=local`` backend: a ``server.Server`` on first use, every task
handed to the OpenAI-compatible backend talking to it.

Constructing only stores the parameters (the scikit-learn rule, ``checks.py``). The first
task call finds the model file (``model_path``, else the packaged ``model``, assembled
once), acquires the shared server for (file, threads, context size) and builds an
``openai_backend.OpenAILLM`` (composed, not changed) on its URL, sharing this backend's
meter; ``ask`` hands it every task. ``server_url`` attaches to a server that is already
running instead (nothing is started; the tests use it with ``testing.FakeOpenAI``). A deep
copy or a pickle leaves the server and client out and gets them again on first use.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ...errors import ConfigError
from ...core.params import Count, Natural, NonNegative, Positive, Seed, Share, Text, Threads, declared
from ..base import LLMError, Meter
from ..task import Task
from ..tasks import task_methods
from .model import DEFAULT_MODEL, assemble
from .server import RUNTIME, acquire, release


@declared
class LocalLLM(task_methods()):
    """The ``llm=local`` backend (see the module docstring)."""

    backend = "local"

    def __init__(self, model: Text = DEFAULT_MODEL, model_path: Text | None = None, threads: Threads = 2,
                 ctx_size: Annotated[int, Field(ge=256)] = 4096, startup_timeout: Positive = 180.0,
                 cache_dir: Text | None = None, server_url: Text | None = None, temperature: NonNegative | None = 0.0,
                 seed: Seed | None = None, max_tokens: Count | None = 512, timeout: Positive = 300.0,
                 max_retries: Natural = 1, response_format: Literal["json_schema", "json_object", "text"] = "json_schema",
                 on_failure: Literal["raise", "skip"] = "raise", record: Text | None = None,
                 max_failure_rate: Share = 0.05, max_retry_wait: NonNegative = 30.0, replay_first: Text | None = None):
        if importlib.util.find_spec("openai") is None:     # refused now, not at the first call
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
        self.replay_first = replay_first
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
        from ..openai_backend import OpenAILLM   # the openai client is imported only when used

        if self.server_url:
            url = self.server_url.rstrip("/")
            url = url[:-3] if url.endswith("/v1") else url
            name = Path(self.model_path).stem if self.model_path else self.model
        else:
            path = self.model_file()
            key = (str(path.resolve()), self.threads, self.ctx_size)
            server = acquire(key, path, self.threads, self.ctx_size, float(self.startup_timeout))
            self.server_key_ = key
            self.load_seconds_ = server.load_seconds
            url, name = server.url, path.stem if self.model_path else self.model
        chat = OpenAILLM(base_url=url + "/v1", model=name, api_key_env="", temperature=self.temperature,
                         seed=self.seed, max_tokens=self.max_tokens, timeout=self.timeout,
                         max_retries=self.max_retries, response_format=self.response_format,
                         on_failure=self.on_failure, record=self.record, max_retry_wait=self.max_retry_wait,
                         logprobs=True,          # llama.cpp's server returns them: continuous scores
                         replay_first=self.replay_first)
        chat.meter = self.meter                 # one meter: the runner reads this backend's
        self.chat_ = chat
        return chat

    def close(self) -> None:
        """Let go of the server; it stops when no other open LocalLLM of the process uses it."""
        vars(self).pop("chat_", None)
        key = vars(self).pop("server_key_", None)
        if key is not None:
            release(key)

    def __enter__(self) -> "LocalLLM":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getstate__(self) -> dict:
        """The parameters and the meter: a copy starts (or shares) a server on first use."""
        return {k: v for k, v in vars(self).items() if k not in ("chat_", "server_key_")}

    # -- the tasks: every one is the composed backend's ----------------------------------------
    def ask(self, task: Task, *args, **kwargs) -> Any:
        """The composed OpenAI-compatible backend's answer (``ChatLLM.ask``)."""
        return self._chat().ask(task, *args, **kwargs)
