"""How repeated impressions of one key add up (DESIGN §1.6), each fading over its TTL.

Impression i has belief b_i, age a_i and TTL T_i; its weight is d_i = exp(-3 a_i / T_i)
(about 5% left at the TTL), or 1 with TTL decay switched off. Every rule maps the arrays
of one key's impressions to an accumulated belief in [0, 1] (pure, vectorised). Not yet
wired to a config group: the inferrer (issue 5) will choose a rule through ``accumulate``.
"""

from __future__ import annotations

import numpy as np


def ttl_weight(age, ttl, decay: bool = True):
    """d = exp(-3 * age / ttl), or 1 when decay is off.

    >>> ttl_weight(np.array([0.0, 10.0]), np.array([10.0, 10.0])).round(4).tolist()
    [1.0, 0.0498]
    """
    age, ttl = np.asarray(age, dtype=float), np.asarray(ttl, dtype=float)
    return np.exp(-3.0 * age / ttl) if decay else np.ones_like(age)


def noisy_or(b, d):
    """B = 1 - prod(1 - b_i d_i).

    >>> round(float(noisy_or(np.array([0.5, 0.5]), np.ones(2))), 4)
    0.75
    """
    return float(1.0 - np.prod(1.0 - np.asarray(b) * np.asarray(d)))


def nars(b, d, max_confidence: float = 0.99):
    """Each impression is evidence of weight d_i and frequency b_i: w = sum d_i,
    f = sum b_i d_i / w, c = min(w / (w + 1), cap); B = f * c.

    >>> round(float(nars(np.array([0.8, 0.8, 0.8]), np.ones(3))), 4)    # f = 0.8, c = 3/4
    0.6
    """
    b, d = np.asarray(b, dtype=float), np.asarray(d, dtype=float)
    w = float(d.sum())
    if w <= 0:
        return 0.0
    return float(np.dot(b, d) / w * min(w / (w + 1.0), max_confidence))


def log_odds(b, d, cap: float = 6.0, eps: float = 1e-6):
    """Additive in logit space from a 0.5 prior: L = clip(sum d_i logit(b_i), -cap, cap); B = sigmoid(L).

    >>> round(float(log_odds(np.array([0.75, 0.75]), np.ones(2))), 4)   # odds 3 * 3 = 9
    0.9
    """
    p = np.clip(np.asarray(b, dtype=float), eps, 1 - eps)
    L = float(np.clip(np.dot(np.asarray(d, dtype=float), np.log(p / (1 - p))), -cap, cap))
    return float(1.0 / (1.0 + np.exp(-L)))


def maximum(b, d):
    """No accumulation, the baseline: B = max b_i d_i.

    >>> maximum(np.array([0.3, 0.6]), np.array([1.0, 0.5]))
    0.3
    """
    return float(np.max(np.asarray(b) * np.asarray(d))) if len(b) else 0.0
