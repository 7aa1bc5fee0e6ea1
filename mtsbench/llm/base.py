"""The LLM protocol, the result types of its tasks, and the meter that counts every call.

A backend answers typed tasks; the agent never sends free-form prompts. Each task is one
object in ``mtsbench.llm.tasks`` (its signature and doc, schema, prompts, mock and fake
answers); a backend implements ``ask(task, *args)`` and has a method per task calling it
(``llm.rate_attention(item, associated)``, ``llm.summarize(turns)``, ``llm.infer(info,
context)`` ...): the memory tasks of DESIGN §1, §2 (``tasks.TASKS``) and evaluation's
(answer, judge_answer).

Identity is kept by showing the model what memory already holds (issue 15): ``summarize``
gets ``known_facts`` (the keys of stored facts similar to the turns) and ``known_events``
(the categories of live events of similar text), ``infer`` gets ``known`` (the keys of the
open impressions nearest the item, with the belief each has accumulated), each a sequence
of ``Known``; the model reuses a name when it is about the same subject and names a new one
otherwise. Both default to none, and an answer is read the same way either way (the
schemas do not change). An item may carry the ``belief`` its information holds (None: not
known, not shown); ``infer`` shows it, since what follows from an item can be no surer
than the item.

Failure contract (real backends): an answer that stays malformed or out of range after
one repair retry, or a transport error after the client's retries, fails the call.
With ``on_failure: raise`` the method raises ``LLMError`` (its str is one line naming the
task and the reason); with ``on_failure: skip`` it returns None — never an invented value
— and the failure is counted in the meter. The mock never fails.

Every call is recorded in ``LLM.meter``: per task the calls, prompt and completion tokens,
retries (requests re-sent within a call: transport retries, response-format fallbacks,
repair retries) and failures, so cost is reported for the mock exactly as for a server.
Durations (``EventTag.valid``, ``Impression.ttl``) are seconds. ``Fact``, ``EventTag`` and
``Impression`` are the scenario hints' own types (``mtsbench.scenario.model``), re-exported.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..errors import LLMError  # noqa: F401  (re-exported: its old home)
from ..core.costs import charge
from ..scenario.model import EventTag, Fact, FactValue, Hints, Impression  # noqa: F401  (re-exported)

_CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")

RELATION_LABELS = ("same", "contradicts", "unrelated")
ON_FAILURE = ("raise", "skip")


def estimate_tokens(text: str) -> int:
    """Token estimate from text length: one per CJK character, one per 4 other characters.

    >>> estimate_tokens("milk on the table"), estimate_tokens("桌上有牛奶")
    (5, 5)
    """
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


@dataclass(frozen=True)
class Item:
    """An item of the perception stream to be labelled. ``hints`` are read by the mock only.

    ``sources`` are the steps a summary or an event was made from: their memories are its
    content, not associations, so labelling skips them. A conjecture gives none: the
    memories it was inferred from are evidence that bears on how much it matters.
    """

    text: str
    kind: str
    step: str
    language: str = "en"
    hints: Hints = field(default_factory=Hints)
    sources: tuple[str, ...] = ()
    belief: float | None = None


@dataclass(frozen=True)
class Known:
    """A name memory already holds, shown to the model so that it can reuse it: a fact's key,
    an event's category or an impression's key; ``text`` says what it names, ``belief`` (an
    impression's accumulated belief, else None) how sure memory is of it."""

    name: str
    text: str
    belief: float | None = None


@dataclass(frozen=True)
class Association:
    """An associated memory shown to the LLM: its text, current attention (0-10) and relevance."""

    text: str
    attention: float
    relevance: float


@dataclass(frozen=True)
class Summary:
    """A summary of dialogue turns with the facts and event tags extracted from them."""

    text: str
    facts: tuple[Fact, ...] = ()
    events: tuple[EventTag, ...] = ()


@dataclass(frozen=True)
class Relation:
    """How a new fact bears on an old one: ``label`` in RELATION_LABELS, ``strength`` 0..1."""

    label: str
    strength: float


def _task_totals() -> dict:
    return {"calls": 0, "tokens": 0, "prompt_tokens": 0, "completion_tokens": 0, "retries": 0, "failures": 0}


@dataclass
class Meter:
    """Running totals of LLM use, overall and per task (``by_task[task]`` has the keys of
    ``totals()``: calls, tokens, prompt_tokens, completion_tokens, retries, failures).

    >>> m = Meter(); m.record("infer", 10, 2, retries=1, failed=True); m.record("infer", 5, 1)
    >>> m.snapshot(), m.by_task["infer"]["failures"], m.totals()["retries"]
    ((2, 18), 1, 1)
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    retries: int = 0
    by_task: dict = field(default_factory=dict)

    def record(self, task: str, prompt_tokens: int, completion_tokens: int,
               retries: int = 0, failed: bool = False) -> None:
        """Count one task call: its tokens over all its requests, re-sent requests, failure;
        charged to the cost scope open (``mtsbench.core.costs``) too."""
        charge(calls=1, tokens=prompt_tokens + completion_tokens, prompt_tokens=prompt_tokens,
               completion_tokens=completion_tokens, retries=retries, failures=int(failed))
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.retries += retries
        self.failures += int(failed)
        t = self.by_task.setdefault(task, _task_totals())
        t["calls"] += 1
        t["tokens"] += prompt_tokens + completion_tokens
        t["prompt_tokens"] += prompt_tokens
        t["completion_tokens"] += completion_tokens
        t["retries"] += retries
        t["failures"] += int(failed)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def snapshot(self) -> tuple[int, int]:
        """(calls, tokens) so far, for per-step deltas."""
        return self.calls, self.tokens

    def totals(self) -> dict:
        """Overall calls, tokens, prompt_tokens, completion_tokens, retries and failures."""
        return {"calls": self.calls, "tokens": self.tokens, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "retries": self.retries,
                "failures": self.failures}


@runtime_checkable
class LLM(Protocol):
    """What the memory agent asks of a language model (see the module docstring): ``ask``,
    and a method of each task's name with the task's signature (``tasks.task_methods``).

    Every call returns None only when it failed under ``on_failure: skip``.
    """

    meter: Meter

    def ask(self, task, *args, **kwargs):
        """The result of ``task`` (a ``task.Task``) called with these arguments."""
        ...
