"""Solving motivation (the essay's 求解动机): how hard a question is worth searching for.

The ``motivation`` config group. A policy turns what is known about a probe into a
motivation in [0, 1], which the depth policy (``depth`` group) turns into tiers:

- ``Given`` (the default): the scenario's own number (``motivation:`` on the probe step,
  0.5 when absent), as every bundled scenario scripts it;
- ``FromAttention``: the probe is labelled like a perception (the ``attention`` group:
  its associated memories are searched and the LLM rates it in their light) and its
  motivation is a monotone function of that score, ``clip((score - low) / (high - low), 0, 1)``.

Both raise the motivation of a repeated question — the same question asked again within
``repeat_window`` (a duration: ``1h``, or seconds; cosine of the question vectors at least ``repeat_similarity``):
``+ repeat_boost`` per earlier asking, capped at 1. ``Given`` does not raise by default
(``repeat_boost: 0``): bundled scenarios script their second tries. The ``escalate`` depth
policy composes with either: it goes deeper within one search while the best score is low.

A policy is pure arithmetic; the agent labels the probe and counts the repeats.
"""

from __future__ import annotations

from typing import Protocol

from ..core.params import Cosine, Duration, Score, Share, declared
from ..core.units import seconds


class MotivationPolicy(Protocol):
    """``solve(given, score, repeats) -> motivation in [0, 1]``; ``labels``: whether the
    probe must be labelled (``score`` is None otherwise, or when the LLM call failed)."""

    labels: bool
    repeat_boost: float
    repeat_window: float
    repeat_similarity: float

    def window(self) -> float:
        """``repeat_window`` in seconds."""

    def solve(self, given: float, score: float | None, repeats: int) -> float: ...


class _Repeats:
    def window(self) -> float:
        """``repeat_window`` in seconds."""
        return seconds(self.repeat_window)


def _raised(m: float, repeats: int, boost: float) -> float:
    """min(1, m + boost * repeats), never below 0."""
    return min(1.0, max(0.0, m + boost * repeats))


@declared
class Given(_Repeats):
    """The scenario's number: ``min(1, given + repeat_boost * repeats)``.

    >>> Given().solve(0.3, None, 2), Given(repeat_boost=0.3).solve(0.3, None, 1), Given().window()
    (0.3, 0.6, 3600.0)
    """

    labels = False

    def __init__(self, repeat_boost: Share = 0.0, repeat_window: Duration = "1h", repeat_similarity: Cosine = 0.9):
        self.repeat_boost = repeat_boost
        self.repeat_window = repeat_window
        self.repeat_similarity = repeat_similarity

    def solve(self, given: float, score: float | None, repeats: int) -> float:
        return _raised(given, repeats, self.repeat_boost)


@declared
class FromAttention(_Repeats):
    """``min(1, clip((score - low) / (high - low), 0, 1) + repeat_boost * repeats)``:
    monotone in the probe's labelled attention; the scenario's number only when the
    labelling failed (a counted LLM failure) and ``score`` is None.

    >>> p = FromAttention(low=1.0, high=9.0, repeat_boost=0.25)
    >>> p.solve(0.5, 1.0, 0), p.solve(0.5, 5.0, 0), p.solve(0.5, 9.5, 0), p.solve(0.5, 5.0, 1)
    (0.0, 0.5, 1.0, 0.75)
    >>> p.solve(0.4, None, 0)
    0.4
    """

    labels = True

    @staticmethod
    def cross_check(values: dict) -> tuple[str, str] | None:
        """``high`` above ``low``."""
        if not values["high"] > values["low"]:
            return "high", f"expected a score above low ({values['low']}), got {values['high']}"
        return None

    def __init__(self, low: Score = 1.0, high: Score = 9.0, repeat_boost: Share = 0.25,
                 repeat_window: Duration = "1h", repeat_similarity: Cosine = 0.9):
        self.low = low
        self.high = high
        self.repeat_boost = repeat_boost
        self.repeat_window = repeat_window
        self.repeat_similarity = repeat_similarity

    def solve(self, given: float, score: float | None, repeats: int) -> float:
        if score is None:
            base = given
        else:
            base = min(1.0, max(0.0, (score - self.low) / (self.high - self.low)))
        return _raised(base, repeats, self.repeat_boost)
