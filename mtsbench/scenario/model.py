"""Typed scenario objects (DESIGN §3), produced by ``loader.load_scenario``.

Times (``Step.at``) are seconds since ``Scenario.start``; durations, TTLs and validities
are seconds.

``EventTag`` and ``Impression`` are defined here once, ``Fact`` in ``mtsbench.core.facts``: a step's ``Hints`` hold
what a perfect LLM would output, and ``mtsbench.llm.base`` re-exports them as the LLM's
answer types (the mock LLM returns a step's hints with its noise applied). The old hint
names stay: ``EventHint`` is ``EventTag``, ``InferHint`` is ``Impression``, and
``FactHint(key, text, value, belief)`` builds a ``Fact`` from the old argument order.
"""

from __future__ import annotations

from contextvars import ContextVar

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Union

from ..core.facts import Fact, FactValue  # noqa: F401  (defined below memory and the LLM layer, which share it)

STEP_KINDS = ("say", "reply", "perceive", "probe", "idle", "check")
TEXT_KINDS = ("say", "reply", "perceive", "probe")
OBSERVED_KINDS = ("say", "reply", "perceive")
# The scenario being run in this context (``runner.run_scenario`` sets it), for what deep
# inside a run should name it: the scenario a cassette record was sent in (``llm.cassette``),
# and the one a replay serves when no caller told it (``llm.replay.ReplayLLM.serve``).
RUNNING: "ContextVar[Scenario | None]" = ContextVar("mtsbench_running_scenario", default=None)
CHECK_NAMES = ("belief", "conjecture", "attention", "tier", "event_count", "arousal")


@dataclass(frozen=True)
class EventTag:
    """A major-event tag; ``valid`` is the category's time validity in seconds (None: unstated).

    ``text`` None (a hint only): the mock LLM uses the step's first sentence.
    """

    category: str
    text: str | None = None
    valid: float | None = None
    turns: tuple[int, ...] = ()     # 1-based numbers of the summarized turns that tell of it (LLM answers)


@dataclass(frozen=True)
class Impression:
    """An inferred statement with a belief 0..1 and a time validity ``ttl`` in seconds."""

    key: str
    text: str
    belief: float
    ttl: float


EventHint = EventTag
InferHint = Impression


def FactHint(key: str, text: str, value: FactValue, belief: float = 0.7) -> Fact:
    """A ``Fact`` from the old hint argument order (key, text, value, belief).

    >>> FactHint("user.age", "The user is 30", 30) == Fact("user.age", 30, "The user is 30")
    True
    """
    return Fact(key, value, text, belief)


@dataclass(frozen=True)
class Hints:
    """What a perfect LLM would output for a step; read by the mock LLM only."""

    salience: float | None = None
    facts: tuple[Fact, ...] = ()
    event: EventTag | None = None
    infer: tuple[Impression, ...] = ()


@dataclass(frozen=True)
class Range:
    """A closed interval; an open side (None) is unbounded."""

    min: float | None = None
    max: float | None = None

    def contains(self, x: float | None) -> bool:
        """True when x is given and within [min, max] (an open side is unbounded).

        >>> Range(min=6).contains(7.5), Range(max=2).contains(3), Range().contains(None)
        (True, False, False)
        """
        return x is not None and (self.min is None or x >= self.min) and (self.max is None or x <= self.max)


@dataclass(frozen=True)
class EventExpect:
    """The step's event must merge into the event of step ``same_as``, or be ``new``."""

    same_as: str | None = None
    new: bool = False


@dataclass(frozen=True)
class BeliefCheck:
    """The highest belief among the live facts named by ``key`` (key form) or derived from step
    ``from_`` (provenance form: the step is in the fact's provenance), of those with ``value``
    if given, lies in [min, max]. Exactly one of ``key`` and ``from_`` is set."""

    key: str | None
    value: object | None = None
    min: float | None = None
    max: float | None = None
    from_: str | None = None


@dataclass(frozen=True)
class ConjectureCheck:
    """A live conjecture of ``key`` (key form), or one whose provenance includes every step of
    ``from_`` (provenance form), exists (``present``) or does not. Exactly one of them is set."""

    key: str | None
    present: bool = True
    from_: tuple[str, ...] = ()


@dataclass(frozen=True)
class StepAttentionCheck:
    """The current attention of step ``step``'s memory lies in [min, max]; with ``above``, it
    also exceeds the current attention of that step's memory. Or, with ``from_`` (and ``step``
    None), the highest current attention among the live facts derived from that step does."""

    step: str | None
    min: float | None = None
    max: float | None = None
    above: str | None = None
    from_: str | None = None


@dataclass(frozen=True)
class TierCheck:
    """The memory of step ``step`` sits in tier ``max`` or above and in tier ``min`` or below
    (0 = top tier; None: that side is open)."""

    step: str
    max: int | None = None
    min: int | None = None


@dataclass(frozen=True)
class ArousalCheck:
    """The arousal step ``step``'s memory received (the amounts regional arousal gave it, summed,
    before the attention cap) since step ``since`` began (None: since it was stored) lies in
    [min, max]; with ``above``, it also exceeds what that step's memory received over the same span."""

    step: str
    min: float | None = None
    max: float | None = None
    since: str | None = None
    above: str | None = None


@dataclass(frozen=True)
class EventCountCheck:
    """The number of live events of ``category`` (category form), or of live events whose
    provenance includes at least one step of ``containing`` (provenance form), is ``equals``.
    Exactly one of them is set."""

    category: str | None
    equals: int
    containing: tuple[str, ...] = ()


Check = Union[BeliefCheck, ConjectureCheck, StepAttentionCheck, TierCheck, EventCountCheck, ArousalCheck]


@dataclass(frozen=True)
class Expect:
    """Expectations: ``attention``/``event`` on say, reply, perceive; ``recall``/``absent``/``k``,
    ``order`` (steps the probe's ranking must name in this order) and ``recall_sessions``
    (session name -> its step ids, in file order) on probe; ``cost`` (a cost column of the step's
    own row -> its bounds) on any of them."""

    attention: Range | None = None
    event: EventExpect | None = None
    recall: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    k: int = 5
    recall_sessions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    recall_roles: tuple[tuple[str, tuple[str, ...]], ...] = ()
    order: tuple[str, ...] = ()
    cost: tuple[tuple[str, Range], ...] = ()


@dataclass(frozen=True)
class Step:
    """One timeline step. ``kind`` is one of STEP_KINDS; the fields of other kinds keep their defaults.

    ``text`` is set for say/reply/perceive/probe, ``motivation`` (0..1) matters for probe,
    ``duration`` (seconds) for idle, ``checks`` (in file order) for check. A probe may have
    a ``category`` (its evidence recall is also reported per category) and ``abstain``
    (the memory does not hold the answer: no recall expectation, kept out of recall).
    """

    index: int
    id: str
    at: float
    kind: str
    text: str | None = None
    motivation: float = 0.5
    duration: float = 0.0
    hints: Hints = Hints()
    expect: Expect = Expect()
    checks: tuple[Check, ...] = ()
    category: str | None = None
    abstain: bool = False
    answer: str | None = None       # a probe's gold answer (imported data sets; scored by mtsbench.evaluation.answer)

    @property
    def end(self) -> float:
        """When the step is over: ``at + duration`` (only an idle lasts)."""
        return self.at + self.duration

    @property
    def label(self) -> str:
        """``step INDEX (ID)``, as messages name it."""
        return f"step {self.index} ({self.id})"


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario; ``start`` is naive, step times are seconds since it."""

    id: str
    title: str
    language: str
    start: datetime
    tags: tuple[str, ...]
    steps: tuple[Step, ...]
    path: Path | None = None

    @property
    def days_spanned(self) -> int:
        """Calendar days covered, inclusive: from the start's date to the date the last step
        ends (an idle counts up to its end); 0 without steps.

        >>> s = Scenario("x", "t", "en", datetime(2026, 3, 2, 9), (), (Step(0, "s0", 4 * 86400.0, "say", "hi"),))
        >>> s.days_spanned
        5
        """
        if not self.steps:
            return 0
        end = self.start + timedelta(seconds=max(s.end for s in self.steps))
        return (end.date() - self.start.date()).days + 1

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.steps)

    def step_by_id(self, step_id: str) -> Step:
        """The step with this id; KeyError if there is none."""
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)
