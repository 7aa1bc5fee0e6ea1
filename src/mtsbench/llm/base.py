"""Typed LLM tasks and the meter that counts every call.

A backend implements each task method; the agent never sends free-form prompts. Every
call is recorded in ``LLM.meter`` (calls, prompt and completion tokens, latency, failures)
so that cost is reported for the mock exactly as for a real server.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

from ..scenario.model import Hints

_CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """Token estimate from text length: one per CJK character, one per 4 other characters.

    >>> estimate_tokens("milk on the table"), estimate_tokens("桌上有牛奶")
    (5, 5)
    """
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


@dataclass(frozen=True)
class Item:
    """An item of the perception stream to be labelled. ``hints`` are read by the mock only."""

    text: str
    kind: str
    step: str
    language: str = "en"
    hints: Hints = field(default_factory=Hints)


@dataclass(frozen=True)
class Association:
    """An associated memory shown to the LLM: its text, current attention (0-10) and relevance."""

    text: str
    attention: float
    relevance: float


@dataclass
class Meter:
    """Running totals of LLM use, overall and per task."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    retries: int = 0
    by_task: dict = field(default_factory=dict)

    def record(self, task: str, prompt_tokens: int, completion_tokens: int,
               retries: int = 0, failed: bool = False) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.retries += retries
        self.failures += int(failed)
        t = self.by_task.setdefault(task, {"calls": 0, "tokens": 0, "retries": 0, "failures": 0})
        t["calls"] += 1
        t["tokens"] += prompt_tokens + completion_tokens
        t["retries"] += retries
        t["failures"] += int(failed)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def snapshot(self) -> tuple[int, int]:
        """(calls, tokens) so far, for per-step deltas."""
        return self.calls, self.tokens


@runtime_checkable
class LLM(Protocol):
    """What the memory agent asks of a language model."""

    meter: Meter

    def rate_attention(self, item: Item, associated: Sequence[Association]) -> float:
        """Attention score 0-10 of ``item`` in the light of the ``associated`` memories."""
        ...
