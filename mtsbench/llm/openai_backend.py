"""``llm=openai``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama).

Configuration (``configs/llm/openai.yaml``): ``base_url`` and ``model`` (both required),
``api_key_env`` (the *name* of the environment variable holding the key; a missing
variable is fine for servers that need none), ``temperature``, ``seed`` and ``max_tokens``
(sent when not null), ``timeout`` (seconds per request) and ``max_retries`` (the client's
retries of 408/409/429/5xx, timeouts and connection errors, honouring Retry-After),
``response_format`` (the first structured-output mode to try), ``on_failure`` (``raise``
or ``skip``, see ``chat.py``) and ``record`` (a cassette path, or null).

The key is read from the environment when the client is built and is held only by the
client: it is never on a config node, in a cassette line, in an error message or a log.

Structured output: a request asks for ``response_format`` json_schema (strict, the task's
schema); a server that rejects it (HTTP 400 or 422) is asked again with json_object, then
with no response_format (the JSON is then found in the text). The first mode that works
is remembered for (base_url, model) for the rest of the process. 401, 403 and 404 mean
the key, model or URL is wrong and always raise, whatever ``on_failure`` says.

Tokens come from the response's ``usage``; a server that sends none is charged the
estimate of ``base.estimate_tokens``. Retries are counted by watching every HTTP request
the client sends; a request's re-sends (transport retries and response-format fallbacks)
are its ``retries``. The HTTP library's per-request INFO log lines are silenced (its
loggers are set to WARNING unless configured).
"""

from __future__ import annotations

import logging
import os
from typing import ClassVar

import openai

from . import cassette
from .base import LLMError, estimate_tokens
from .chat import ChatLLM, Exchange, TransportError
from .tasks import Task

log = logging.getLogger(__name__)

MODES = ("json_schema", "json_object", "text")
REJECTED = (400, 422)          # a server refusing the response_format it was sent
MISCONFIGURED = (401, 403, 404)


class OpenAILLM(ChatLLM):
    """The OpenAI-compatible backend (see the module docstring)."""

    backend = "openai"
    working_mode: ClassVar[dict[tuple[str, str], str]] = {}   # (base_url, model) -> mode that works

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float = 0.0, seed: int | None = None, max_tokens: int | None = None,
                 timeout: float = 60.0, max_retries: int = 2, response_format: str = "json_schema",
                 on_failure: str = "raise", record: str | None = None):
        if not base_url:
            raise LLMError("llm.base_url is not set (e.g. llm.base_url=http://127.0.0.1:8000/v1)")
        if not model:
            raise LLMError("llm.model is not set (the model name the server serves)")
        if response_format not in MODES:
            raise LLMError(f"llm.response_format must be one of {', '.join(MODES)}, got {response_format!r}")
        params = {k: v for k, v in (("temperature", temperature), ("seed", seed), ("max_tokens", max_tokens))
                  if v is not None}
        super().__init__(str(model), params, on_failure)
        self.base_url = str(base_url)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.first_mode = response_format
        self.record = str(record) if record else None
        self._requests = 0
        for name in ("httpx", "httpx2"):  # one INFO line per request would drown a run's log
            if logging.getLogger(name).level == logging.NOTSET:
                logging.getLogger(name).setLevel(logging.WARNING)
        http = openai.DefaultHttpxClient(event_hooks={"request": [self._count_request]})
        self.client = openai.OpenAI(api_key=(os.environ.get(api_key_env) if api_key_env else None) or "unused",
                                    base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries,
                                    http_client=http)

    def _count_request(self, request) -> None:
        self._requests += 1

    def _scrub(self, text: str) -> str:
        """One line of at most 200 characters, with the key (should a server echo it) removed."""
        key = self.client.api_key
        if isinstance(key, str) and len(key) >= 4 and key != "unused":
            text = text.replace(key, "<redacted>")
        return " ".join(text.split())[:200]

    def _modes(self) -> tuple[str, ...]:
        """The modes to try, from the configured one or, if lower, the one found to work."""
        known = self.working_mode.get((self.base_url, self.model), self.first_mode)
        return MODES[max(MODES.index(known), MODES.index(self.first_mode)):]

    def _send(self, task: Task, messages: list[dict], key: str) -> Exchange:
        before = self._requests
        modes = self._modes()
        for i, mode in enumerate(modes):
            extra = {"response_format": rf} if (rf := task.response_format(mode)) else {}
            try:
                response = self.client.chat.completions.create(model=self.model, messages=messages,
                                                               **self.params, **extra)
            except openai.APIStatusError as e:
                if e.status_code in REJECTED and i + 1 < len(modes):
                    log.warning("%s rejected response_format %s (HTTP %s); trying %s", self.base_url, mode,
                                e.status_code, modes[i + 1])
                    continue
                reason = f"HTTP {e.status_code} from {self.base_url}: {self._scrub(_message(e))}"
                if e.status_code in MISCONFIGURED:
                    raise LLMError(reason, task=task.name) from None
                return self._give_up(task, messages, key, mode, reason, before)
            except openai.APITimeoutError:
                return self._give_up(task, messages, key, mode, f"no answer within llm.timeout={self.timeout:g} s",
                                     before)
            except openai.APIConnectionError as e:
                return self._give_up(task, messages, key, mode, f"cannot connect to {self.base_url} "
                                     f"({self._scrub(str(e.__cause__ or e))})", before)
            except openai.OpenAIError as e:
                return self._give_up(task, messages, key, mode, f"unusable response ({self._scrub(str(e))})", before)
            self.working_mode[(self.base_url, self.model)] = mode
            return self._answered(task, messages, key, mode, response, before)
        raise AssertionError("unreachable: the last mode never continues")

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
        got = Exchange(text, int(prompt_tokens), int(completion_tokens), self._requests - before - 1)
        self._write(key, task, messages, mode, response={"text": got.text, "prompt_tokens": got.prompt_tokens,
                                                         "completion_tokens": got.completion_tokens,
                                                         "retries": got.retries})
        return got

    def _give_up(self, task: Task, messages: list[dict], key: str, mode: str, reason: str, before: int):
        retries = max(0, self._requests - before - 1)
        if retries:
            reason += f" (after {retries} retr{'y' if retries == 1 else 'ies'})"
        self._write(key, task, messages, mode, error=reason, retries=retries)
        raise TransportError(reason, retries)

    def _write(self, key: str, task: Task, messages: list[dict], mode: str, **outcome) -> None:
        if self.record:
            cassette.append(self.record, {"key": key, "backend": self.backend, "model": self.model,
                                          "params": self.params, "task": task.name, "messages": messages,
                                          "mode": mode, **outcome})


def _message(e: "openai.APIStatusError") -> str:
    """The server's own error message if its body has one, else the client's."""
    body = e.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(e.message)
