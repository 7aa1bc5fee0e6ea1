"""Depth policies (DESIGN §1.3): solving motivation (0..1) → how many tiers are searched.

``limit(motivation, n_tiers)`` is the deepest a search may go; ``go_deeper(searched,
best, k_found, k)`` says whether to search one more tier after ``searched`` tiers, given
the best score so far. Only ``Escalate`` stops early.
"""

from __future__ import annotations

import math
from typing import Protocol
from ..core.params import Count, NonNegative, declared


class DepthPolicy(Protocol):
    def limit(self, motivation: float, n_tiers: int) -> int: ...

    def go_deeper(self, searched: int, best: float, k_found: int, k: int) -> bool: ...


class _SearchToLimit:
    def go_deeper(self, searched, best, k_found, k):
        return True


class Full(_SearchToLimit):
    """Every tier, whatever the motivation (no depth gating).

    >>> Full().limit(0.0, 4)
    4
    """

    def limit(self, motivation, n_tiers):
        return n_tiers


@declared
class Fixed(_SearchToLimit):
    """Always ``n`` tiers (clipped to the tiers there are).

    >>> Fixed(n=1).limit(0.9, 4), Fixed(n=9).limit(0.1, 4)
    (1, 4)
    """

    def __init__(self, n: Count = 1):
        self.n = n

    def limit(self, motivation, n_tiers):
        return max(1, min(self.n, n_tiers))


def linear_limit(motivation: float, n_tiers: int) -> int:
    """clip(ceil(motivation * n_tiers), 1, n_tiers).

    >>> [linear_limit(m, 4) for m in (0.0, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0)]
    [1, 1, 2, 2, 3, 4, 4]
    """
    return max(1, min(n_tiers, math.ceil(motivation * n_tiers - 1e-9)))


class Linear(_SearchToLimit):
    """Motivation 0..1 maps linearly onto 1..n tiers (``linear_limit``)."""

    def limit(self, motivation, n_tiers):
        return linear_limit(motivation, n_tiers)


@declared
class Escalate:
    """The seed's second thought: start at the top tier and go one tier deeper while the
    best score is below ``confidence`` (or fewer than k were found), up to the linear limit.

    >>> e = Escalate(confidence=0.5)
    >>> e.limit(0.9, 4), e.go_deeper(1, 0.3, 5, 5), e.go_deeper(1, 0.7, 5, 5), e.go_deeper(1, 0.7, 2, 5)
    (4, True, False, True)
    """

    def __init__(self, confidence: NonNegative = 0.5):
        self.confidence = confidence

    def limit(self, motivation, n_tiers):
        return linear_limit(motivation, n_tiers)

    def go_deeper(self, searched, best, k_found, k):
        return best < self.confidence or k_found < k
