"""Typed scenario objects (DESIGN §3), produced by ``loader.load_scenario``.

Times (``Step.at``) are seconds since ``Scenario.start``; durations, TTLs and validities
are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Union

STEP_KINDS = ("say", "reply", "perceive", "probe", "idle", "check")
TEXT_KINDS = ("say", "reply", "perceive", "probe")


@dataclass(frozen=True)
class FactHint:
    key: str
    text: str
    value: Union[str, int, float, bool]
    belief: float = 0.7


@dataclass(frozen=True)
class EventHint:
    category: str
    text: str | None = None
    valid: float | None = None


@dataclass(frozen=True)
class InferHint:
    key: str
    text: str
    belief: float
    ttl: float


@dataclass(frozen=True)
class Hints:
    """What a perfect LLM would output for a step; read by the mock LLM only."""

    salience: float | None = None
    facts: tuple[FactHint, ...] = ()
    event: EventHint | None = None
    infer: tuple[InferHint, ...] = ()


@dataclass(frozen=True)
class Range:
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
    same_as: str | None = None
    new: bool = False


@dataclass(frozen=True)
class BeliefCheck:
    key: str
    value: object | None = None
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class ConjectureCheck:
    key: str
    present: bool = True


@dataclass(frozen=True)
class StepAttentionCheck:
    step: str
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class TierCheck:
    step: str
    max: int


@dataclass(frozen=True)
class EventCountCheck:
    category: str
    equals: int


Check = Union[BeliefCheck, ConjectureCheck, StepAttentionCheck, TierCheck, EventCountCheck]


@dataclass(frozen=True)
class Expect:
    attention: Range | None = None
    event: EventExpect | None = None
    recall: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    k: int = 5


@dataclass(frozen=True)
class Step:
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


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    language: str
    start: datetime
    tags: tuple[str, ...]
    steps: tuple[Step, ...]
    path: Path | None = None

    @property
    def days_spanned(self) -> int:
        """Calendar days touched, from the start's date to the last step's date, inclusive."""
        if not self.steps:
            return 0
        end = max(s.at + s.duration for s in self.steps)
        from datetime import timedelta

        return ((self.start + timedelta(seconds=end)).date() - self.start.date()).days + 1

    def step_by_id(self, step_id: str) -> Step:
        return next(s for s in self.steps if s.id == step_id)
