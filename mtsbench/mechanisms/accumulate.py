"""How repeated impressions of one key add up (DESIGN §1.6): the ``accumulate`` config group.

Impression i has belief b_i (how strongly its source supports the statement), age a_i and
TTL T_i; its weight is d_i = exp(-3 a_i / T_i) (about 5% left at the TTL), or 1 with TTL
decay switched off. A rule maps the arrays (b, d) of one key's impressions to an
accumulated belief in [0, 1]; a single fresh impression (d = 1) gives its own b under every
rule but ``nars``. Every impression supports its statement: none is evidence against it.
Pure, vectorised functions; the classes choose one for the config group.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from ..core.params import Confidence, Positive, declared


def ttl_weight(age, ttl, decay: bool = True):
    """d = exp(-3 * age / ttl), or 1 when decay is off.

    >>> ttl_weight(np.array([0.0, 10.0]), np.array([10.0, 10.0])).round(4).tolist()
    [1.0, 0.0498]
    """
    age, ttl = np.asarray(age, dtype=float), np.asarray(ttl, dtype=float)
    return np.exp(-3.0 * age / ttl) if decay else np.ones_like(age)


def noisy_or(b, d):
    """B = 1 - prod(1 - b_i d_i): independent chances that the statement holds.

    >>> round(float(noisy_or(np.array([0.5, 0.5]), np.ones(2))), 4)
    0.75
    """
    return float(1.0 - np.prod(1.0 - np.asarray(b) * np.asarray(d)))


def nars(b, d, k: float = 1.0, max_confidence: float = 0.99):
    """NARS positive evidence: w+ = sum b_i d_i, w- = 0, so f = 1 and the belief is the
    confidence B = min(w+ / (w+ + k), cap): weak impressions need to pile up.

    >>> round(float(nars(np.array([0.8, 0.8, 0.8]), np.ones(3))), 4)    # w+ = 2.4
    0.7059
    """
    w = float(np.dot(np.asarray(b, dtype=float), np.asarray(d, dtype=float)))
    return min(w / (w + k), max_confidence) if w > 0 else 0.0


def log_odds(b, d, cap: float = 6.0):
    """Additive evidence in logit space: impression i adds d_i * ln((1 + b_i) / (1 - b_i)),
    the logit of 0.5 + b_i / 2; L = min(sum, cap); B = tanh(L / 2) = 2 sigmoid(L) - 1, so a
    single impression gives back its b and two of b give 2b / (1 + b^2).

    >>> round(float(log_odds(np.array([0.5]), np.ones(1))), 4), round(float(log_odds(np.array([0.5, 0.5]), np.ones(2))), 4)
    (0.5, 0.8)
    """
    b = np.clip(np.asarray(b, dtype=float), 0.0, 1.0 - 1e-9)
    L = min(float(np.dot(np.asarray(d, dtype=float), np.log1p(b) - np.log1p(-b))), cap)
    return float(np.tanh(L / 2.0))


def maximum(b, d):
    """No accumulation, the baseline: B = max b_i d_i.

    >>> maximum(np.array([0.3, 0.6]), np.array([1.0, 0.5]))
    0.3
    """
    return float(np.max(np.asarray(b) * np.asarray(d))) if len(b) else 0.0


class Accumulation(Protocol):
    """Accumulated belief of one key's impressions: beliefs ``b``, TTL weights ``d``."""

    def __call__(self, b: np.ndarray, d: np.ndarray) -> float: ...


class NoisyOr:
    """1 - prod(1 - b_i d_i) (the default).

    >>> round(NoisyOr()(np.array([0.4, 0.4]), np.ones(2)), 4)
    0.64
    """

    def __call__(self, b, d):
        return noisy_or(b, d)


@declared
class Nars:
    """NARS confidence of the positive evidence: sum b_i d_i / (sum b_i d_i + k).

    >>> round(Nars()(np.array([1.0]), np.ones(1)), 4)
    0.5
    """

    def __init__(self, k: Positive = 1.0, max_confidence: Confidence = 0.99):
        self.k = k
        self.max_confidence = max_confidence

    def __call__(self, b, d):
        return nars(b, d, self.k, self.max_confidence)


@declared
class LogOdds:
    """tanh(min(sum d_i ln((1 + b_i)/(1 - b_i)), cap) / 2).

    >>> round(LogOdds()(np.array([0.6, 0.6]), np.ones(2)), 4)   # 2 * 0.6 / 1.36
    0.8824
    """

    def __init__(self, cap: Positive = 6.0):
        self.cap = cap

    def __call__(self, b, d):
        return log_odds(b, d, self.cap)


class Max:
    """No accumulation (the ablation): max b_i d_i.

    >>> Max()(np.array([0.4, 0.4]), np.ones(2))
    0.4
    """

    def __call__(self, b, d):
        return maximum(b, d)
