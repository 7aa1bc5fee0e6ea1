"""Tier policies (DESIGN §1.3): which tier (0 = top, searched first) a memory belongs in.

``assign(attention, current, recalls, length, idle_hours)`` returns target tiers for the
memories given, from arrays only (no clock): ``attention`` is the current total,
``current`` the present tier, ``recalls`` the recall count, ``length`` the interaction
length (provenance size), ``idle_hours`` the hours since the last recall or labelling.
The agent applies promotions at once (after a recall or arousal) and demotions only at
rebalance points.

Every policy declares its optional capabilities as attributes. ``fifo`` (None for most):
a bounded top tier of that size, as ``Fifo`` has: a new memory enters tier 0, and when an
arrival makes tier 0 hold more than ``fifo`` memories the memory hands the oldest over to
``overflow``, which places them below.

``local`` is True when a memory's target depends on its own inputs only and, while they
change only by time passing (attention decays, idle hours grow), never moves up: then a
rebalance need look only at the memories whose decay can have crossed a boundary
(``memory.tiering``). A policy without it is re-applied to the whole store at each pass.
"""

from __future__ import annotations

import functools
from typing import Protocol

import numpy as np
from ..core.params import Count, NonNegative, Positive, Score, declared


class TierPolicy(Protocol):
    n_tiers: int
    local: bool
    fifo: int | None

    def assign(self, attention: np.ndarray, current: np.ndarray, recalls: np.ndarray,
               length: np.ndarray, idle_hours: np.ndarray, full: bool = True) -> np.ndarray:
        """Target tiers; ``full`` is True at a rebalance (every live memory is given)."""
        ...


class Flat:
    """One tier: every memory in tier 0 (the exact-scan baseline).

    >>> Flat().assign(np.array([9.0, 0.1]), np.zeros(2, int), None, None, None).tolist()
    [0, 0]
    """

    n_tiers = 1
    local = True
    fifo = None

    def assign(self, attention, current, recalls, length, idle_hours, full=True):
        return np.zeros(len(attention), dtype=np.int8)


def tiers_by_cutoffs(attention: np.ndarray, cutoffs: np.ndarray) -> np.ndarray:
    """Tier = number of cutoffs (descending) strictly above the attention (NaN: tier 0),
    by a binary search of the sorted cutoffs.

    >>> tiers_by_cutoffs(np.array([7.0, 4.0, 2.0, 0.1, np.nan]), np.array([5.0, 2.0, 0.5])).tolist()
    [0, 1, 1, 3, 0]
    """
    key = cutoffs if isinstance(cutoffs, tuple) else tuple(np.asarray(cutoffs, dtype=float).tolist())
    ascending = _ascending(key)
    return (len(ascending) - ascending.searchsorted(attention, side="right")).astype(np.int8)


@functools.lru_cache(maxsize=64)
def _ascending(cutoffs: tuple[float, ...]) -> np.ndarray:
    """Cut-offs as ``tiers_by_cutoffs`` searches them (ascending; a NaN cut-off is above
    nothing, so dropped), sorted once per set of cut-offs: a promotion assigns a few memories
    many times a step."""
    c = np.array(cutoffs, dtype=float)
    return np.sort(c[~np.isnan(c)])


@declared
class Thresholds:
    """Attention cut-offs with hysteresis.

    Tier t holds attention in [cutoffs[t], cutoffs[t-1]). A memory moves up only once its
    attention clears a cut-off by ``hysteresis`` and down only once it falls ``hysteresis``
    below one, so a memory on a border does not flap:
    ``up = tiers(a - h)``, ``down = tiers(a + h)``, new = up if up < current, down if
    down > current, else current.

    >>> p = Thresholds(cutoffs=[5.0, 2.0, 0.5], hysteresis=0.25)
    >>> p.assign(np.array([5.1, 5.3, 1.9, 1.7]), np.array([1, 1, 1, 1]), None, None, None).tolist()
    [1, 0, 1, 2]
    """

    local = True
    fifo = None

    def __init__(self, cutoffs: list[Score] = (5.0, 2.0, 0.5), hysteresis: NonNegative = 0.25):
        self.cutoffs = tuple(float(c) for c in cutoffs)
        self.hysteresis = hysteresis

    @property
    def n_tiers(self) -> int:
        return len(self.cutoffs) + 1

    def assign(self, attention, current, recalls, length, idle_hours, full=True):
        up = tiers_by_cutoffs(attention - self.hysteresis, self.cutoffs)
        down = tiers_by_cutoffs(attention + self.hysteresis, self.cutoffs)
        current = np.asarray(current)
        return np.where(up < current, up, np.where(down > current, down, current)).astype(np.int8)


@declared
class Capacity:
    """Tier sizes by attention rank: the ``sizes[0]`` most attended memories in tier 0, ...

    A full assignment (at a rebalance) ranks everything given and remembers the attention
    at each tier's boundary (``boundaries_``); a partial assignment (a promotion at once)
    compares against those boundaries.

    >>> p = Capacity(sizes=[1, 2])
    >>> p.assign(np.array([1.0, 9.0, 5.0, 3.0, 0.0]), np.full(5, 2), None, None, None).tolist()
    [2, 0, 1, 1, 2]
    """

    local = False     # a memory's tier depends on every other memory's attention
    fifo = None

    def __init__(self, sizes: list[Count] = (200, 2000)):
        self.sizes = tuple(int(s) for s in sizes)
        self.boundaries_: np.ndarray | None = None

    @property
    def n_tiers(self) -> int:
        return len(self.sizes) + 1

    def assign(self, attention, current, recalls, length, idle_hours, full=True):
        attention = np.asarray(attention, dtype=float)
        if not full and self.boundaries_ is not None:
            return tiers_by_cutoffs(attention, self.boundaries_)
        order = np.argsort(-attention, kind="stable")
        ends = np.cumsum(self.sizes)
        rank = np.empty(len(attention), dtype=np.int64)
        rank[order] = np.arange(len(attention))
        tiers = np.searchsorted(ends, rank, side="right").astype(np.int8)
        bounds = [attention[order[e - 1]] if e - 1 < len(order) else -np.inf for e in ends]
        self.boundaries_ = np.nextafter(np.array(bounds, dtype=float), -np.inf)
        return tiers


@declared
class Heat:
    """MemoryOS's heat as a two-tier baseline: tier 0 when heat >= threshold, else tier 1.

    heat = alpha * visits + beta * length + gamma * exp(-idle_hours / mu_hours)
    (MemoryOS: mu = 1e7 s in the paper, 24 h in its code; promotion at heat >= 5).

    >>> Heat(threshold=5.0).assign(None, np.array([1, 1]), np.array([4, 1]), np.array([1, 1]), np.array([0.0, 0.0])).tolist()
    [0, 1]
    """

    n_tiers = 2
    local = True
    fifo = None

    def __init__(self, alpha: NonNegative = 1.0, beta: NonNegative = 1.0, gamma: NonNegative = 1.0,
                 mu_hours: Positive = 24.0, threshold: NonNegative = 5.0):
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.mu_hours = mu_hours
        self.threshold = threshold

    def heat(self, recalls, length, idle_hours) -> np.ndarray:
        return (self.alpha * np.asarray(recalls, dtype=float) + self.beta * np.asarray(length, dtype=float)
                + self.gamma * np.exp(-np.asarray(idle_hours, dtype=float) / self.mu_hours))

    def assign(self, attention, current, recalls, length, idle_hours, full=True):
        return np.where(self.heat(recalls, length, idle_hours) >= self.threshold, 0, 1).astype(np.int8)


@declared
class Fifo:
    """MemoryOS's hierarchy: tier 0 is a short-term FIFO of the ``size`` newest memories;
    a memory pushed out of it is placed by ``below``, one tier lower (``1 + below``).

    ``assign`` keeps a tier-0 memory where it is (only an arrival evicts, through
    ``overflow``) and places every other memory by ``below``; a new memory arrives with
    tier 0. With ``below`` = ``Heat`` the tiers are 0 short-term, 1 hot mid-term (heat >=
    threshold: MemoryOS promotes it to long-term persona memory), 2 cold mid-term.

    >>> f = Fifo(size=2, below=Heat(threshold=5.0))
    >>> f.n_tiers, f.assign(None, np.array([0, 2, 2]), np.array([0, 4, 0]), np.ones(3), np.zeros(3)).tolist()
    (3, [0, 1, 2])
    >>> f.overflow(None, np.array([0]), np.ones(1), np.zeros(1)).tolist()
    [2]
    """

    local = False     # an arrival evicts the oldest: tiers depend on other memories

    def __init__(self, size: Count = 7, below: TierPolicy | None = None):
        self.size = size
        self.below = below if below is not None else Heat()

    @property
    def fifo(self) -> int:
        return self.size

    @property
    def n_tiers(self) -> int:
        return 1 + self.below.n_tiers

    def overflow(self, attention, recalls, length, idle_hours) -> np.ndarray:
        """Tiers (>= 1) for memories leaving the FIFO."""
        current = np.full(len(recalls), self.below.n_tiers - 1)
        return (1 + self.below.assign(attention, current, recalls, length, idle_hours, full=True)).astype(np.int8)

    def assign(self, attention, current, recalls, length, idle_hours, full=True):
        current = np.asarray(current)
        below = np.clip(current - 1, 0, self.below.n_tiers - 1)
        placed = 1 + self.below.assign(attention, below, recalls, length, idle_hours, full=full)
        return np.where(current == 0, 0, placed).astype(np.int8)
