"""Regional arousal (DESIGN §1.2): recalling a memory raises its neighbours' short-term
attention. Pure math: similarities in, boost amounts out; the agent finds the neighbours
through the tier indexes and writes the boost into the short-term component.

``amounts(sims)`` gets the cosine similarity of each of one source's candidate neighbours
(at most ``neighbors`` of them, sorted descending) and returns the boost of each; a policy
that normalises by the source's fan (``Radius``) counts it from ``sims`` itself.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Arousal(Protocol):
    neighbors: int      # how many candidate neighbours to fetch per recalled memory

    def amounts(self, sims: np.ndarray) -> np.ndarray:
        """Boost per candidate, for one source; ``sims`` sorted descending."""
        ...


class NoArousal:
    """No spreading (the ablation, and what every peer system does at storage time)."""

    neighbors = 0

    def amounts(self, sims):
        return np.zeros_like(np.asarray(sims, dtype=float))


class Knn:
    """The k nearest neighbours each gain ``gain * sim`` (negative similarity gains 0).

    >>> Knn(k=2, gain=2.0).amounts(np.array([0.5, 0.25, 0.1])).tolist()
    [1.0, 0.5, 0.0]
    """

    def __init__(self, k: int = 5, gain: float = 1.0):
        self.k = k
        self.gain = gain

    @property
    def neighbors(self) -> int:
        return self.k

    def amounts(self, sims):
        sims = np.asarray(sims, dtype=float)
        out = self.gain * np.clip(sims, 0.0, None)
        out[self.k:] = 0.0
        return out


class Radius:
    """Every neighbour with similarity >= r gains, falling with distance, fan-normalised.

    amount_j = gain * sim_j * max(0, S - ln(fan)) / S, for sim_j >= r (0 below r),
    where fan is the number of neighbours within r (ACT-R's S - ln(fan): a hub spreads
    thinly, so a memory linked to everything does not flood the store). At most
    ``max_neighbors`` candidates are considered per source.

    >>> Radius(r=0.5, gain=2.0, strength=2.0).amounts(np.array([1.0, 0.75, 0.4])).round(4).tolist()
    [1.3069, 0.9801, 0.0]
    """

    def __init__(self, r: float = 0.15, gain: float = 6.0, strength: float = 5.0, max_neighbors: int = 50):
        self.r = r
        self.gain = gain
        self.strength = strength
        self.max_neighbors = max_neighbors

    @property
    def neighbors(self) -> int:
        return self.max_neighbors

    def amounts(self, sims):
        sims = np.asarray(sims, dtype=float)
        within = sims >= self.r
        fan = int(within.sum())
        if fan == 0:
            return np.zeros_like(sims)
        spread = max(0.0, self.strength - np.log(fan)) / self.strength
        return np.where(within, self.gain * sims * spread, 0.0)
