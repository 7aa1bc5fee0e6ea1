"""The task methods of a chat-completion backend, shared by ``openai`` and ``replay``.

``ChatLLM._ask(task, prompt, language)`` sends ``[system, user]`` messages through the
backend's ``_send`` and parses the answer with the task's validator. A malformed or
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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import TransportError
from . import cassette
from .base import Association, EventTag, Fact, Impression, Item, Known, LLMError, Relation, Summary
from .prompts import (answer_prompt, infer_prompt, judge_answer_prompt, judge_relation_prompt, merge_event_prompt,
                      rate_attention_prompt, reassess_belief_prompt, repair_prompt, same_event_prompt, summarize_prompt,
                      system_prompt)
from .tasks import (ANSWER, INFER, JUDGE_ANSWER, JUDGE_RELATION, MERGE_EVENT, RATE_ATTENTION, REASSESS_BELIEF,
                    SAME_EVENT, SUMMARIZE, AnswerError, Task)


@dataclass(frozen=True)
class Exchange:
    """What one request returned: the answer text, its token usage, requests re-sent for it."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0


def excerpt(text: str, head: int = 50, tail: int = 70) -> str:
    """One line of ``text``: whitespace collapsed, the middle elided when long.

    >>> excerpt("a\\n b"), excerpt("x" * 200)[:8], len(excerpt("x" * 200))
    ('a b', 'xxxxxxxx', 123)
    """
    one = " ".join(text.split())
    return one if len(one) <= head + tail + 3 else f"{one[:head]} … {one[-tail:]}"


class ChatLLM:
    """Task methods over ``_send``; subclasses store their parameters (``on_failure`` among
    them) and a ``meter``, and derive ``backend_``, ``model_``, ``params_`` in ``_configure``."""

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
            self.meter.record(task.name, prompt_tokens, completion_tokens, retries)
            return value

    def _failed(self, task: Task, reason: str, prompt_tokens: int, completion_tokens: int, retries: int) -> None:
        self.meter.record(task.name, prompt_tokens, completion_tokens, retries, failed=True)
        if self.on_failure == "raise":
            raise LLMError(reason, task=task.name)
        return None

    # -- the tasks ---------------------------------------------------------------------
    def rate_attention(self, item: Item, associated: Sequence[Association]) -> float | None:
        return self._ask(RATE_ATTENTION, rate_attention_prompt(item, associated), item.language)

    def summarize(self, turns: Sequence[Item], known_facts: Sequence[Known] = (),
                  known_events: Sequence[Known] = ()) -> Summary | None:
        return self._ask(SUMMARIZE, summarize_prompt(turns, known_facts, known_events),
                         turns[0].language if turns else "en")

    def merge_event(self, event_text: str, new_text: str, language: str = "en") -> str | None:
        return self._ask(MERGE_EVENT, merge_event_prompt(event_text, new_text, language), language)

    def judge_relation(self, new: Fact, old: Fact, language: str = "en") -> Relation | None:
        return self._ask(JUDGE_RELATION, judge_relation_prompt(new, old, language), language)

    def same_event(self, event: EventTag, new: EventTag, language: str = "en") -> bool | None:
        return self._ask(SAME_EVENT, same_event_prompt(event, new, language), language)

    def reassess_belief(self, fact: Fact, evidence: Sequence[Fact], language: str = "en") -> float | None:
        return self._ask(REASSESS_BELIEF, reassess_belief_prompt(fact, evidence, language), language)

    def infer(self, info: Item, context: Sequence[str], known: Sequence[Known] = ()) -> tuple[Impression, ...] | None:
        return self._ask(INFER, infer_prompt(info, context, known), info.language)

    # -- answering and judging a probe (evaluation: mtsbench.answer) ---------------------
    def answer(self, question: str, context: Sequence[str], language: str = "en") -> str | None:
        """A short answer to ``question`` from the retrieved memories' texts ``context``."""
        return self._ask(ANSWER, answer_prompt(question, context, language), language)

    def judge_answer(self, question: str, gold: str, reply: str, language: str = "en") -> bool | None:
        """Whether ``reply`` states what the ``gold`` answer does (LLM-as-judge)."""
        return self._ask(JUDGE_ANSWER, judge_answer_prompt(question, gold, reply, language), language)
