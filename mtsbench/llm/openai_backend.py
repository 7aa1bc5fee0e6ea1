"""``llm=openai``: any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, Ollama).

Configuration (``configs/llm/openai.yaml``): ``base_url`` and ``model`` (both required),
``api_key_env`` (the *name* of the environment variable holding the key; a missing
variable is fine for servers that need none), ``temperature``, ``seed`` and ``max_tokens``
(sent when not null), ``timeout`` (seconds per request), ``max_retries`` (re-sends of a
request that failed: 408/409/429/5xx, a timeout, a connection error, a 200 that is no chat
completion), ``max_retry_wait`` (the longest wait before a re-send, seconds),
``response_format`` (the first structured-output mode to try), ``on_failure`` (``raise``
or ``skip``, see ``chat.py``), ``record`` (a cassette path, or null) and
``max_failure_rate`` (stored for the run: above this share of failed calls ``mtsbench
run`` warns and exits 3), and ``logprobs`` (ask for the answer tokens' log-probabilities,
``top_logprobs`` = ``TOP_LOGPROBS``, in the requests of tasks with an ``expectation``:
``rate_attention``'s score is then their expectation; ``llm=local`` sets it, llama.cpp's
server returns them; off by default, since not every server accepts the fields), and
``replay_first`` (a cassette path or packaged cassette name, or null: a request it holds is
answered from it as ``llm=replay`` would, the running scenario's record first, and written to
``record`` as if sent; only the others reach the server. A live run that shares most of its
requests with a recording, an ablation of a recorded run, then costs only its new requests;
at temperature 0 the recorded answer is the model's answer to that request, up to the few
thousandths its log-probabilities move between server sessions).

Retries are ours, not the client's (it is built with ``max_retries=0``): every fault above
is re-sent up to ``max_retries`` times, after the wait the server asks (``Retry-After`` or
``retry-after-ms``, in seconds or as a date) or else an exponential backoff (0.5 s, 1 s,
2 s, ... up to 8 s), never longer than ``max_retry_wait``. A longer wait asked is cut to
``max_retry_wait`` and said so in a warning; it is still retried (the client itself would
sleep up to 120 s per retry and not retry at all above that). A server's
``x-should-retry: true/false`` is obeyed. A 400-499 other than 408, 409 and 429 is not
retried.

The key is read from the environment when the client is built and is held only by the
client: it is never on a config node, in a cassette line or a log, and it is registered
with ``errors.register_secret`` so no error message, ``failure.json`` traceback or stderr
line shows it (a server echoing the Authorization header included).

An HTTP 200 whose body is not JSON or not a chat completion (a proxy's HTML page, a
truncated body, ``{"choices": "nope"}``, token counts that are not whole numbers) is
re-sent up to ``max_retries`` times (counted as retries), then fails the call like a
transport error (``on_failure`` decides; counted in ``llm_failures``). Every answer's
shape is checked against ``Completion`` (a pydantic model of the fields read: at least one
choice with a message whose content is a string or null, and ``usage`` token counts that
are integers from 0 to 2**31 - 1, or absent) before anything is read from it.

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
other 500 is a transport error, retried. The first mode that works is
remembered for (base_url, model) for the rest of the process. 401, 403 and 404 mean the
key, model or URL is wrong and always raise, whatever ``on_failure`` says.

Tokens come from the response's ``usage``; a server that sends none is charged the
estimate of ``base.estimate_tokens``. Retries are counted by watching every HTTP request
the client sends; a request's re-sends (fault retries and response-format fallbacks)
are its ``retries``. The HTTP library's per-request INFO log lines are silenced (its
loggers are set to WARNING unless configured).
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import os
import random
import time
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

try:
    import openai
except ImportError:       # the optional extra (mtsbench[openai]; mtsbench[local] pulls it too)
    openai = None
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from . import cassette
from .cassette import running_scenario
from ..errors import ConfigError, redact, register_secret
from ..core.params import Count, Natural, NonNegative, Positive, Seed, Share, Text, declared
from .base import LLMError, Meter, estimate_tokens
from .chat import ChatLLM, Exchange, TransportError
from .task import Task

log = logging.getLogger(__name__)

MODES = ("json_schema", "json_object", "text")
REJECTED = (400, 422)          # a server refusing the response_format it was sent
FORMAT_FAULT = 500             # ... or failing on it, when the error body names response_format
MISCONFIGURED = (401, 403, 404)
RETRIED = (408, 409, 429)      # and every 5xx: as the openai client retries
BACKOFF = (0.5, 8.0)           # first and longest backoff without a Retry-After, seconds
TOP_LOGPROBS = 10              # alternatives per answer token asked with logprobs (10 digits: a score's)


INSTALL = "pip install 'mtsbench[openai]'"


def missing_extra() -> ConfigError:
    """The one line for llm=openai (or llm=local, which talks to its server through this
    client) chosen without the openai client installed."""
    return ConfigError(f"llm=openai and llm=local need the openai client, an optional extra: {INSTALL} "
                       "(or 'mtsbench[local]'; openai is not installed)")


@declared
class OpenAILLM(ChatLLM):
    """The OpenAI-compatible backend (see the module docstring)."""

    backend = "openai"
    working_mode: ClassVar[dict[tuple[str, str], str]] = {}   # (base_url, model) -> mode that works

    def __init__(self, base_url: Text | None = None, model: Text | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: NonNegative | None = 0.0, seed: Seed | None = None, max_tokens: Count | None = None,
                 timeout: Positive = 60.0, max_retries: Natural = 2,
                 response_format: Literal[MODES] = "json_schema",
                 on_failure: Literal["raise", "skip"] = "raise", record: Text | None = None, max_failure_rate: Share = 0.05,
                 max_retry_wait: NonNegative = 30.0, logprobs: bool = False, replay_first: Text | None = None):
        if openai is None:
            raise missing_extra()
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
        self.max_retry_wait = max_retry_wait
        self.logprobs = logprobs
        self.replay_first = replay_first
        self.meter = Meter()

    # -- derived on first use -----------------------------------------------------------
    def _configure(self) -> dict:
        if not self.base_url:
            raise LLMError("llm.base_url is not set (e.g. llm.base_url=http://127.0.0.1:8000/v1)")
        if not self.model:
            raise LLMError("llm.model is not set (the model name the server serves)")
        wait = float(self.max_retry_wait)       # response_format, max_retry_wait: checked where built
        params = {k: v for k, v in (("temperature", self.temperature), ("seed", self.seed),
                                    ("max_tokens", self.max_tokens)) if v is not None}
        return {"backend_": self.backend, "model_": str(self.model), "params_": params,
                "base_url_": str(self.base_url), "record_": str(self.record) if self.record else None,
                "requests_": 0, "max_wait_": wait, "replayed_": 0,
                "replay_first_": _cassette(self.replay_first) if self.replay_first else None}

    @cached_property
    def client_(self) -> openai.OpenAI:
        """The openai client, built on first use; the key is read from ``api_key_env`` then."""
        self._ready()
        for name in ("httpx", "httpx2"):  # one INFO line per request would drown a run's log
            if logging.getLogger(name).level == logging.NOTSET:
                logging.getLogger(name).setLevel(logging.WARNING)
        http = openai.DefaultHttpxClient(event_hooks={"request": [self._count_request]})
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        register_secret(key)                  # every error message and failure.json leave it out
        return openai.OpenAI(api_key=key or "unused", base_url=self.base_url_, timeout=float(self.timeout),
                             max_retries=0, http_client=http)   # retries are ours (_send): waits capped

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
        if self.replay_first_ is not None and (known := self.replay_first_.next(key, running_scenario())) is not None \
                and "response" in known:
            self.replayed_ += 1
            self._write(key, task, messages, known.get("mode", self.response_format), response=known["response"])
            return Exchange.recorded(known["response"])
        client = self.client_
        before = self.requests_
        modes = self._modes()
        faults = 0                                  # failed requests so far, each re-sent while the budget lasts
        i = 0
        while i < len(modes):
            mode = modes[i]
            extra = {"response_format": rf} if (rf := format_field(task, mode)) else {}
            if self.logprobs and task.expectation is not None:
                extra |= {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
            asked = None                            # the wait the server asked for, seconds
            try:
                raw = client.chat.completions.with_raw_response.create(model=self.model_, messages=messages,
                                                                       **self.params_, **extra)
                completion = parse_completion(raw.content)
            except Malformed as e:                  # a 200 that is no chat completion: re-sent, then a failure
                reason = (f"HTTP 200 from {self.base_url_} with a body that is not a chat completion "
                          f"({self._scrub(str(e))})")
            except openai.APIStatusError as e:
                if (e.status_code in REJECTED or _format_fault(e.response)) and i + 1 < len(modes):
                    log.warning("%s rejected response_format %s (HTTP %s); trying %s", self.base_url_, mode,
                                e.status_code, modes[i + 1])
                    i += 1
                    continue
                reason = f"HTTP {e.status_code} from {self.base_url_}: {self._scrub(_message(e))}"
                if e.status_code in MISCONFIGURED:
                    raise LLMError(reason, task=task.name) from None
                if not _retried(e.response):
                    return self._give_up(task, messages, key, mode, reason, before)
                asked = retry_after(e.response.headers)
            except openai.APITimeoutError:
                reason = f"no answer within llm.timeout={self.timeout:g} s"
            except openai.APIConnectionError as e:
                reason = f"cannot connect to {self.base_url_} ({self._scrub(str(e.__cause__ or e))})"
            except openai.OpenAIError as e:
                return self._give_up(task, messages, key, mode, f"unusable response ({self._scrub(str(e))})", before)
            else:
                self.working_mode[(self.base_url_, self.model_)] = mode
                return self._answered(task, messages, key, mode, completion, before)
            faults += 1
            if faults > int(self.max_retries):
                return self._give_up(task, messages, key, mode, reason, before)
            self._wait(asked, faults, task)
        raise AssertionError("unreachable: the last mode never moves on")

    def _wait(self, asked: float | None, faults: int, task: Task) -> None:
        """Sleep before re-sending: the wait the server ``asked`` (else a backoff growing with
        the ``faults`` so far), at most ``max_wait_``; a longer wait asked is said and cut."""
        if asked is None:
            wait = min(BACKOFF[0] * 2.0 ** min(faults - 1, 32), BACKOFF[1]) * (1 - 0.25 * random.random())
        else:
            wait = max(0.0, asked)
        if wait > self.max_wait_:
            if asked is not None:
                log.warning("%s asked to wait %s s before retrying task %s (Retry-After); waiting "
                            "llm.max_retry_wait=%g s instead", self.base_url_, f"{asked:g}", task.name,
                            self.max_wait_)
            wait = self.max_wait_
        if wait > 0:
            time.sleep(wait)

    def _answered(self, task: Task, messages: list[dict], key: str, mode: str, completion: "Completion",
                  before: int) -> Exchange:
        text = completion.choices[0].message.content or ""
        usage = completion.usage
        prompt_tokens = usage.prompt_tokens if usage else None
        completion_tokens = usage.completion_tokens if usage else None
        if prompt_tokens is None:
            prompt_tokens = sum(estimate_tokens(m["content"]) for m in messages)
        if completion_tokens is None:
            completion_tokens = estimate_tokens(text)
        tokens = token_logprobs(completion)
        got = Exchange(text, int(prompt_tokens), int(completion_tokens), self.requests_ - before - 1, tokens)
        response = {"text": got.text, "prompt_tokens": got.prompt_tokens,
                    "completion_tokens": got.completion_tokens, "retries": got.retries}
        self._write(key, task, messages, mode, response=response | ({"logprobs": tokens} if tokens else {}))
        return got

    def _give_up(self, task: Task, messages: list[dict], key: str, mode: str, reason: str, before: int):
        retries = max(0, self.requests_ - before - 1)
        if retries:
            reason += f" (after {retries} retr{'y' if retries == 1 else 'ies'})"
        self._write(key, task, messages, mode, error=reason, retries=retries)
        raise TransportError(reason, retries)

    def _write(self, key: str, task: Task, messages: list[dict], mode: str, **outcome) -> None:
        if self.record_:
            scenario = running_scenario()
            cassette.append(self.record_, {"key": key, "backend": self.backend_, "model": self.model_,
                                           "params": self.params_, "task": task.name, "messages": messages,
                                           "mode": mode, **({"scenario": scenario} if scenario else {}),
                                           **outcome})


def _cassette(name: str):
    """The cassette ``replay_first`` names (a path or a packaged cassette's name), opened."""
    from .replay import open_cassette

    try:
        return open_cassette(name)
    except LLMError as e:
        raise LLMError(f"llm.replay_first: {e.reason}") from None


def _message(e: "openai.APIStatusError") -> str:
    """The server's own error message if its body has one, else the client's."""
    body = e.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(e.message)


def format_field(task: Task, mode: str) -> dict | None:
    """The ``response_format`` sent in ``mode``: the task's, with its schema in json_object
    mode too (llama.cpp servers enforce it there; the openai client passes the key through).

    >>> from .tasks import REGISTRY
    >>> rate = REGISTRY["rate_attention"]
    >>> sorted(format_field(rate, "json_object")), format_field(rate, "text")
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


TOKENS = Annotated[StrictInt, Field(ge=0, le=2**31 - 1)]


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Message(_Part):
    content: StrictStr | None = None


class Choice(_Part):
    message: Message
    logprobs: Any = None          # read by token_logprobs, leniently: a server's odd logprobs fail nothing


class TopLogprob(_Part):
    token: StrictStr
    logprob: float


class TokenLogprob(TopLogprob):
    top_logprobs: list[TopLogprob] = []


class ChoiceLogprobs(_Part):
    content: list[TokenLogprob]


class Usage(_Part):
    prompt_tokens: TOKENS | None = None
    completion_tokens: TOKENS | None = None


class Completion(_Part):
    """The fields of a chat completion that are read, with their shapes (other fields are
    ignored): at least one choice with a message, token counts that are whole numbers."""

    choices: Annotated[list[Choice], Field(min_length=1)]
    usage: Usage | None = None


def token_logprobs(completion: "Completion") -> list[dict] | None:
    """The first choice's answer tokens with their log-probabilities and alternatives
    (``[{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]``, as ``logprobs.py``
    reads them), or None when the server sent none or sent them in another shape.

    >>> c = parse_completion(b'{"choices": [{"message": {"content": "7"}, "logprobs": {"content": '
    ...                      b'[{"token": "7", "logprob": -0.1, "bytes": [55], "top_logprobs": []}]}}]}')
    >>> token_logprobs(c), token_logprobs(parse_completion(b'{"choices": [{"message": {"content": "7"}}]}'))
    ([{'token': '7', 'logprob': -0.1, 'top_logprobs': []}], None)
    """
    raw = completion.choices[0].logprobs
    if not raw:
        return None
    try:
        content = ChoiceLogprobs.model_validate(raw).content
    except ValidationError:
        return None
    return [{"token": t.token, "logprob": _rounded(t.logprob),
             "top_logprobs": [{"token": a.token, "logprob": _rounded(a.logprob)} for a in t.top_logprobs]}
            for t in content] or None


def _rounded(logprob: float) -> float:
    """A log-probability to 4 decimals (a cassette line stays short; -inf and nan as -1e9)."""
    return round(logprob, 4) if math.isfinite(logprob) else -1e9


class Malformed(ValueError):
    """An HTTP 200 body that is not a chat completion (its str: what is wrong, one line)."""


def parse_completion(body: bytes) -> Completion:
    """The chat completion in an HTTP 200 ``body``, its shape checked; ``Malformed`` if it is
    not one.

    >>> parse_completion(b'{"choices": [{"message": {"content": "hi"}}]}').choices[0].message.content
    'hi'
    >>> for bad in (b'<html>', b'{"choices": "nope"}', b'{"choices": [1]}',
    ...             b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 1e999}}'):
    ...     try:
    ...         parse_completion(bad)
    ...     except Malformed as e:
    ...         print(e)
    not JSON: Expecting value: line 1 column 1 (char 0)
    choices: Input should be a valid list
    choices.0: Input should be a valid dictionary or instance of Choice
    usage.prompt_tokens: Input should be a valid integer
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as e:      # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise Malformed(f"not JSON: {e}") from None
    if not isinstance(data, dict):
        raise Malformed(f"a JSON {type(data).__name__}, not an object")
    try:
        return Completion.model_validate(data)
    except ValidationError as e:
        raise Malformed("; ".join(f"{'.'.join(map(str, err['loc'])) or 'body'}: {err['msg']}"
                                  for err in e.errors(include_url=False)[:3])) from None


def retry_after(headers) -> float | None:
    """The wait in seconds a response's ``retry-after-ms`` or ``Retry-After`` header asks
    (seconds, or an HTTP date), None if it asks none readable.

    >>> retry_after({"retry-after": "100"}), retry_after({"retry-after-ms": "250"}), retry_after({})
    (100.0, 0.25, None)
    >>> retry_after({"retry-after": "1e999"}), retry_after({"retry-after": "soon"})
    (inf, None)
    """
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        return None if math.isnan(seconds) else seconds
    try:
        date = email.utils.parsedate_tz(headers.get("retry-after") or "")
        return None if date is None else float(email.utils.mktime_tz(date) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _retried(response) -> bool:
    """Whether a failed response is re-sent: the server's ``x-should-retry`` if it says, else
    408, 409, 429 and every 5xx (as the openai client decides)."""
    said = response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return response.status_code in RETRIED or response.status_code >= 500
