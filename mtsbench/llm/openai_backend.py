"""``llm=openai``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama).

Configuration (``configs/llm/openai.yaml``): ``base_url`` and ``model`` (both required),
``api_key_env`` (the *name* of the environment variable holding the key; a missing
variable is fine for servers that need none), ``temperature``, ``seed`` and ``max_tokens``
(sent when not null), ``timeout`` (seconds per request) and ``max_retries`` (the client's
retries of 408/409/429/5xx, timeouts and connection errors, honouring Retry-After),
``response_format`` (the first structured-output mode to try), ``on_failure`` (``raise``
or ``skip``, see ``chat.py``), ``record`` (a cassette path, or null) and
``max_failure_rate`` (stored for the run: above this share of failed calls ``mtsbench
run`` warns and exits 3).

The key is read from the environment when the client is built and is held only by the
client: it is never on a config node, in a cassette line or a log, and it is registered
with ``errors.register_secret`` so no error message, ``failure.json`` traceback or stderr
line shows it (a server echoing the Authorization header included).

An HTTP 200 whose body is not JSON or not a chat completion (a proxy's HTML page, a
truncated body) is re-sent up to ``max_retries`` times (counted as retries), then fails
the call like a transport error (``on_failure`` decides; counted in ``llm_failures``).

Constructing only stores the parameters (under their own names, as given). The first
task call checks them (the one-line ``LLMError`` of a missing ``base_url``/``model`` or a
bad ``response_format``/``on_failure`` is raised then), derives ``model_`` and ``params_``
(temperature, seed and max_tokens that are not null), and builds the client
(``client_``), reading the key from the environment. A deep copy or a pickle leaves the
client out; the copy builds its own on first use.

Structured output: a request asks for ``response_format`` json_schema (strict, the task's
schema); a server that rejects it (HTTP 400 or 422, or HTTP 500 whose body names
``response_format``, as llama-cpp-python answers) is asked again with json_object (carrying
the task's schema under ``schema``, which llama.cpp servers enforce; most others ignore it),
then with no response_format (the JSON is then found in the text). A 500 naming
``response_format`` is not retried by the client (the same request would fail again); any
other 500 is a transport error, retried by the client. The first mode that works is
remembered for (base_url, model) for the rest of the process. 401, 403 and 404 mean the
key, model or URL is wrong and always raise, whatever ``on_failure`` says.

Tokens come from the response's ``usage``; a server that sends none is charged the
estimate of ``base.estimate_tokens``. Retries are counted by watching every HTTP request
the client sends; a request's re-sends (transport retries and response-format fallbacks)
are its ``retries``. The HTTP library's per-request INFO log lines are silenced (its
loggers are set to WARNING unless configured).
"""

from __future__ import annotations

import json
import logging
import os
from functools import cached_property
from typing import ClassVar

import openai

from . import cassette
from ..errors import redact, register_secret
from .base import LLMError, Meter, estimate_tokens
from .chat import ChatLLM, Exchange, TransportError
from .tasks import Task

log = logging.getLogger(__name__)

MODES = ("json_schema", "json_object", "text")
REJECTED = (400, 422)          # a server refusing the response_format it was sent
FORMAT_FAULT = 500             # ... or failing on it, when the error body names response_format
MISCONFIGURED = (401, 403, 404)


class OpenAILLM(ChatLLM):
    """The OpenAI-compatible backend (see the module docstring)."""

    backend = "openai"
    working_mode: ClassVar[dict[tuple[str, str], str]] = {}   # (base_url, model) -> mode that works

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, seed: int | None = None, max_tokens: int | None = None,
                 timeout: float = 60.0, max_retries: int = 2, response_format: str = "json_schema",
                 on_failure: str = "raise", record: str | None = None, max_failure_rate: float = 0.05):
        self.base_url = base_url
        self.model = model
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.response_format = response_format
        self.on_failure = on_failure
        self.record = record
        self.max_failure_rate = max_failure_rate
        self.meter = Meter()

    # -- derived on first use -----------------------------------------------------------
    def _configure(self) -> dict:
        if not self.base_url:
            raise LLMError("llm.base_url is not set (e.g. llm.base_url=http://127.0.0.1:8000/v1)")
        if not self.model:
            raise LLMError("llm.model is not set (the model name the server serves)")
        if self.response_format not in MODES:
            raise LLMError(f"llm.response_format must be one of {', '.join(MODES)}, got {self.response_format!r}")
        params = {k: v for k, v in (("temperature", self.temperature), ("seed", self.seed),
                                    ("max_tokens", self.max_tokens)) if v is not None}
        return {"backend_": self.backend, "model_": str(self.model), "params_": params,
                "base_url_": str(self.base_url), "record_": str(self.record) if self.record else None,
                "requests_": 0}

    @cached_property
    def client_(self) -> openai.OpenAI:
        """The openai client, built on first use; the key is read from ``api_key_env`` then."""
        self._ready()
        for name in ("httpx", "httpx2"):  # one INFO line per request would drown a run's log
            if logging.getLogger(name).level == logging.NOTSET:
                logging.getLogger(name).setLevel(logging.WARNING)
        http = openai.DefaultHttpxClient(event_hooks={"request": [self._count_request],
                                                      "response": [_no_retry_of_a_format_fault]})
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        register_secret(key)                  # every error message and failure.json leave it out
        return openai.OpenAI(api_key=key or "unused", base_url=self.base_url_, timeout=float(self.timeout),
                             max_retries=int(self.max_retries), http_client=http)

    def __getstate__(self) -> dict:
        """Everything but the client (it holds locks and counts into this instance): a copy
        builds its own on first use."""
        state = dict(vars(self))
        state.pop("client_", None)
        return state

    def _count_request(self, request) -> None:
        self.requests_ += 1

    def _scrub(self, text: str) -> str:
        """One line of at most 200 characters, with the key (should a server echo it) removed."""
        return " ".join(redact(text).split())[:200]

    def _modes(self) -> tuple[str, ...]:
        """The modes to try, from the configured one or, if lower, the one found to work."""
        known = self.working_mode.get((self.base_url_, self.model_), self.response_format)
        return MODES[max(MODES.index(known), MODES.index(self.response_format)):]

    def _send(self, task: Task, messages: list[dict], key: str) -> Exchange:
        client = self.client_
        before = self.requests_
        modes = self._modes()
        garbled = 0                                 # HTTP 200 answers that were no chat completion
        i = 0
        while i < len(modes):
            mode = modes[i]
            extra = {"response_format": rf} if (rf := format_field(task, mode)) else {}
            try:
                response = client.chat.completions.create(model=self.model_, messages=messages,
                                                          **self.params_, **extra)
                if not hasattr(response, "choices"):
                    raise ValueError(f"a {type(response).__name__} body, not a chat completion")
            except ValueError as e:                 # a 200 whose body is not JSON: re-sent, then a failure
                garbled += 1
                if garbled <= int(self.max_retries):
                    continue
                return self._give_up(task, messages, key, mode, f"HTTP 200 from {self.base_url_} with a body "
                                     f"that is not a chat completion ({self._scrub(str(e))})", before)
            except openai.APIStatusError as e:
                if (e.status_code in REJECTED or _format_fault(e.response)) and i + 1 < len(modes):
                    log.warning("%s rejected response_format %s (HTTP %s); trying %s", self.base_url_, mode,
                                e.status_code, modes[i + 1])
                    i += 1
                    continue
                reason = f"HTTP {e.status_code} from {self.base_url_}: {self._scrub(_message(e))}"
                if e.status_code in MISCONFIGURED:
                    raise LLMError(reason, task=task.name) from None
                return self._give_up(task, messages, key, mode, reason, before)
            except openai.APITimeoutError:
                return self._give_up(task, messages, key, mode, f"no answer within llm.timeout={self.timeout:g} s",
                                     before)
            except openai.APIConnectionError as e:
                return self._give_up(task, messages, key, mode, f"cannot connect to {self.base_url_} "
                                     f"({self._scrub(str(e.__cause__ or e))})", before)
            except openai.OpenAIError as e:
                return self._give_up(task, messages, key, mode, f"unusable response ({self._scrub(str(e))})", before)
            self.working_mode[(self.base_url_, self.model_)] = mode
            return self._answered(task, messages, key, mode, response, before)
        raise AssertionError("unreachable: the last mode never moves on")

    def _answered(self, task: Task, messages: list[dict], key: str, mode: str, response, before: int) -> Exchange:
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content if choices and choices[0].message else None) or ""
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        if prompt_tokens is None:
            prompt_tokens = sum(estimate_tokens(m["content"]) for m in messages)
        if completion_tokens is None:
            completion_tokens = estimate_tokens(text)
        got = Exchange(text, int(prompt_tokens), int(completion_tokens), self.requests_ - before - 1)
        self._write(key, task, messages, mode, response={"text": got.text, "prompt_tokens": got.prompt_tokens,
                                                         "completion_tokens": got.completion_tokens,
                                                         "retries": got.retries})
        return got

    def _give_up(self, task: Task, messages: list[dict], key: str, mode: str, reason: str, before: int):
        retries = max(0, self.requests_ - before - 1)
        if retries:
            reason += f" (after {retries} retr{'y' if retries == 1 else 'ies'})"
        self._write(key, task, messages, mode, error=reason, retries=retries)
        raise TransportError(reason, retries)

    def _write(self, key: str, task: Task, messages: list[dict], mode: str, **outcome) -> None:
        if self.record_:
            cassette.append(self.record_, {"key": key, "backend": self.backend_, "model": self.model_,
                                           "params": self.params_, "task": task.name, "messages": messages,
                                           "mode": mode, **outcome})


def _message(e: "openai.APIStatusError") -> str:
    """The server's own error message if its body has one, else the client's."""
    body = e.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(e.message)


def format_field(task: Task, mode: str) -> dict | None:
    """The ``response_format`` sent in ``mode``: the task's, with its schema in json_object
    mode too (llama.cpp servers enforce it there; the openai client passes the key through).

    >>> from .tasks import RATE_ATTENTION
    >>> sorted(format_field(RATE_ATTENTION, "json_object")), format_field(RATE_ATTENTION, "text")
    (['schema', 'type'], None)
    """
    rf = task.response_format(mode)
    return {**rf, "schema": task.schema} if mode == "json_object" and rf is not None else rf


def _format_fault(response) -> bool:
    """A 500 whose body names ``response_format``: the server failed on the format it was sent."""
    if response is None or response.status_code != FORMAT_FAULT:
        return False
    try:
        return "response_format" in response.text.lower()
    except Exception:  # noqa: BLE001 - an unread or undecodable body names nothing
        return False


def _no_retry_of_a_format_fault(response) -> None:
    """Response hook: a format fault of a request that sent a response_format gets
    ``x-should-retry: false``, so the client raises it at once and ``_send`` falls back."""
    if response.status_code != FORMAT_FAULT:
        return
    try:
        sent = json.loads(response.request.content or b"{}").get("response_format")
        response.read()
    except Exception:  # noqa: BLE001 - leave anything unexpected to the client's own handling
        return
    if sent is not None and _format_fault(response):
        response.headers["x-should-retry"] = "false"
