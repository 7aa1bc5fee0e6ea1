"""A fact about the user: the value type that scenarios (hints, checks), memory (a stored
fact, ``Memory.fact``) and the LLM layer (a summary's facts) share, so it sits below all
three and imports nothing of mtsbench (``mtsbench.scenario.model`` and
``mtsbench.llm.base`` re-export it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

FactValue = Union[str, int, float, bool]


@dataclass(frozen=True)
class Fact:
    """A fact about the user: ``key`` names what it is about (``user.allergy.milk``), ``value``
    what holds; same key and equal value = the same fact, same key and another value = a
    contradiction. ``belief`` 0..1."""

    key: str
    value: FactValue
    text: str
    belief: float = 0.7
    turns: tuple[int, ...] = ()     # 1-based numbers of the summarized turns that state it (LLM answers)
