"""How a chat-completion backend answers every task, shared by ``openai`` and ``replay``.

``ChatLLM.ask(task, *args)`` (what each task's method calls, ``mtsbench.llm.tasks``)
renders the task's prompt in the call's language, sends ``[system, user]`` messages
through the backend's ``_send`` and parses the answer with the task's validator. A malformed or
out-of-range answer gets one repair retry: the conversation continues with the answer
and a message saying what was wrong (``prompts.repair_prompt``). An answer still bad
after it, or a ``TransportError`` (raised by ``_send`` after the client's own retries),
fails the call: ``on_failure: raise`` raises ``LLMError`` (one line: task and reason),
``on_failure: skip`` returns None. Either way the call is metered with the tokens of all
its requests, the requests re-sent within it (``retries``) and whether it failed.

Constructors only store their parameters (the scikit-learn rule, ``checks.py``): a
backend checks its configuration and derives what its requests need on first use
(``_ready``, once; a bad configuration raises the same one-line ``LLMError`` then), into
attributes ending in ``_``: ``backend_``, ``model_`` and ``params_`` identify its requests.

A request is identified by ``cassette.request_key(backend_, model_, task, messages,
params_)``; backends that record write one cassette line per request under that key, and
``replay`` answers from those lines, so both run the same validation and repair path.

A task with an ``expectation`` (``rate_attention``) reads its result again from the answer's
token log-probabilities when the exchange has them (a backend asked for them and the server
sent them, or the cassette recorded them); else the parsed result stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import TransportError
from . import cassette
from .base import LLMError
from .prompts import repair_prompt, system_prompt
from .task import AnswerError, Task
from .tasks import task_methods


@dataclass(frozen=True)
class Exchange:
    """What one request returned: the answer text, its token usage, requests re-sent for it,
    and its tokens' log-probabilities when the server sent them (``logprobs.py``'s shape)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    logprobs: list | None = None

    @classmethod
    def recorded(cls, response: dict) -> "Exchange":
        """The exchange a cassette record's ``response`` holds (``cassette.py``'s shape)."""
        r = response
        return cls(r["text"], int(r["prompt_tokens"]), int(r["completion_tokens"]), int(r.get("retries", 0)),
                   r.get("logprobs"))


def excerpt(text: str, head: int = 50, tail: int = 70) -> str:
    """One line of ``text``: whitespace collapsed, the middle elided when long.

    >>> excerpt("a\\n b"), excerpt("x" * 200)[:8], len(excerpt("x" * 200))
    ('a b', 'xxxxxxxx', 123)
    """
    one = " ".join(text.split())
    return one if len(one) <= head + tail + 3 else f"{one[:head]} … {one[-tail:]}"


class ChatLLM(task_methods()):
    """Every task (``ask``, and a method per task) over ``_send``; subclasses store their
    parameters (``on_failure`` among them) and a ``meter``, and derive ``backend_``,
    ``model_``, ``params_`` in ``_configure``."""

    backend = "chat"

    # -- the configuration a backend derives on first use ------------------------------
    def _configure(self) -> dict:
        """Check the parameters; the derived state to set: ``backend_``, ``model_``,
        ``params_`` and whatever else the backend needs (names ending in ``_``)."""
        raise NotImplementedError

    def _ready(self) -> None:
        """Derive the backend's state from its parameters, once (LLMError if they are bad)."""
        if "params_" in vars(self):
            return
        vars(self).update(self._configure())   # on_failure: checked where built (its declared type)

    # -- the transport a backend provides ----------------------------------------------
    def _send(self, task: Task, messages: list[dict], key: str) -> Exchange:
        """Answer one request (``key`` identifies it); raise TransportError if none came."""
        raise NotImplementedError

    # -- validation, repair, failure, metering -----------------------------------------
    def ask(self, task: Task, *args, **kwargs) -> Any:
        """The result of ``task`` called with these arguments (its method's), None if it
        failed under ``on_failure: skip``."""
        args = task.bind(*args, **kwargs)
        return self._ask(task, task.render(args), task.language_of(*args))

    def _ask(self, task: Task, prompt: str, language: str) -> Any:
        self._ready()
        messages = [{"role": "system", "content": system_prompt(language)}, {"role": "user", "content": prompt}]
        prompt_tokens = completion_tokens = retries = 0
        for attempt in (0, 1):
            key = cassette.request_key(self.backend_, self.model_, task.name, messages, self.params_)
            try:
                got = self._send(task, messages, key)
            except TransportError as e:
                return self._failed(task, e.reason, prompt_tokens, completion_tokens, retries + e.retries)
            except LLMError:  # misconfigured backend or a replay miss: counted, then always raised
                self.meter.record(task.name, prompt_tokens, completion_tokens, retries, failed=True)
                raise
            prompt_tokens += got.prompt_tokens
            completion_tokens += got.completion_tokens
            retries += got.retries
            try:
                value = task.parse(got.text)
            except AnswerError as e:
                if attempt == 1:
                    return self._failed(task, f"invalid answer after a repair retry: {e}",
                                        prompt_tokens, completion_tokens, retries)
                retries += 1
                messages = [*messages, {"role": "assistant", "content": got.text},
                            {"role": "user", "content": repair_prompt(str(e), language)}]
                continue
            if task.expectation is not None and got.logprobs:
                refined = task.expectation(value, got.logprobs)
                value = value if refined is None else refined
            self.meter.record(task.name, prompt_tokens, completion_tokens, retries)
            return value

    def _failed(self, task: Task, reason: str, prompt_tokens: int, completion_tokens: int, retries: int) -> None:
        self.meter.record(task.name, prompt_tokens, completion_tokens, retries, failed=True)
        if self.on_failure == "raise":
            raise LLMError(reason, task=task.name)
        return None
