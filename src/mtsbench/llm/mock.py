"""A deterministic mock LLM: answers every task from the step's hints, never from ``expect``.

rate_attention — the personalised score combines the common-sense salience ``s`` (the
step's ``salience`` hint, else the cue-word heuristic below) with the associated memories
j it is shown, each with attention a_j (0-10) and relevance r_j::

    g_j   = clip((r_j - relevance_floor) / (relevance_full - relevance_floor), 0, 1)
    lift  = min(1, max_j g_j * a_j / attention_ref)
    score = s + (10 - s) * lift

so an item is lifted toward 10 when it strongly evokes (g near 1) a memory holding at
least ``attention_ref`` of attention, and keeps its common-sense score otherwise.

Heuristic salience without a hint: ``min(10, 2 + 2 * c + q)`` with c the number of
distinct cue words (``CUE_WORDS``; at most 3) and q = 1 if the text has "!" or "?".

Noise: with ``noise`` = σ > 0 every number the mock outputs gets Gaussian noise of
standard deviation σ times its range (10 for a score) and is clipped back into range. The
noise generator is seeded from (seed, task, prompt) with crc32, so a call's answer does
not depend on the order of calls.

Tokens are estimated from the rendered prompt and the JSON answer (``estimate_tokens``).
"""

from __future__ import annotations

import json
import re
from typing import Sequence

import numpy as np

from ..seeding import generator
from .base import Association, Item, Meter, estimate_tokens
from .prompts import rate_attention_prompt

CUE_WORDS = frozenset(
    "allergic allergy sick ill pain hurt hospital emergency doctor birthday important remember "
    "never always love hate afraid scared deadline danger urgent".split()
)
CUE_WORDS_ZH = ("过敏", "生病", "医院", "重要", "记住", "生日", "喜欢", "讨厌", "害怕", "疼", "危险", "紧急")
_WORD = re.compile(r"[a-z]+")


def heuristic_salience(text: str) -> float:
    """Common-sense salience without a hint: min(10, 2 + 2 * cues + q).

    >>> heuristic_salience("Nice weather."), heuristic_salience("I'm allergic to milk, remember!")
    (2.0, 7.0)
    """
    words = set(_WORD.findall(text.lower()))
    cues = len(words & CUE_WORDS) + sum(1 for w in CUE_WORDS_ZH if w in text)
    q = 1 if any(c in text for c in "!?！？") else 0
    return float(min(10, 2 + 2 * min(cues, 3) + q))


def personalised_score(salience: float, attention: np.ndarray, relevance: np.ndarray,
                       relevance_floor: float, relevance_full: float, attention_ref: float) -> float:
    """s + (10 - s) * min(1, max_j g_j * a_j / attention_ref) (see module docstring).

    >>> personalised_score(1.0, np.array([5.0, 9.0]), np.array([0.3, 0.0]), 0.05, 0.25, 2.5)
    10.0
    >>> personalised_score(2.0, np.array([1.0]), np.array([0.15]), 0.05, 0.25, 2.5)
    3.6
    """
    if len(attention) == 0:
        return float(salience)
    g = np.clip((np.asarray(relevance) - relevance_floor) / (relevance_full - relevance_floor), 0.0, 1.0)
    lift = min(1.0, float(np.max(g * np.asarray(attention))) / attention_ref)
    return round(float(salience + (10.0 - salience) * lift), 6)


class MockLLM:
    """Deterministic backend for offline runs and CI (see the module docstring)."""

    def __init__(self, seed: int = 0, noise: float = 0.0, relevance_floor: float = 0.05,
                 relevance_full: float = 0.25, attention_ref: float = 2.5):
        self.seed = seed
        self.noise = noise
        self.relevance_floor = relevance_floor
        self.relevance_full = relevance_full
        self.attention_ref = attention_ref
        self.meter = Meter()

    def _noisy(self, task: str, prompt: str, value: float, lo: float, hi: float) -> float:
        if self.noise <= 0:
            return value
        rng = generator(self.seed, task, prompt)
        return float(np.clip(value + rng.normal(0.0, self.noise * (hi - lo)), lo, hi))

    def rate_attention(self, item: Item, associated: Sequence[Association]) -> float:
        prompt = rate_attention_prompt(item, associated)
        s = item.hints.salience if item.hints.salience is not None else heuristic_salience(item.text)
        score = personalised_score(
            s, np.array([a.attention for a in associated]), np.array([a.relevance for a in associated]),
            self.relevance_floor, self.relevance_full, self.attention_ref)
        score = round(self._noisy("rate_attention", prompt, score, 0.0, 10.0), 3)
        answer = json.dumps({"score": score})
        self.meter.record("rate_attention", estimate_tokens(prompt), estimate_tokens(answer))
        return score
