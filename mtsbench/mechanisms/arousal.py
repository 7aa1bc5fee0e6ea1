"""Regional arousal (DESIGN §1.2): recalling a memory raises its neighbours' short-term
attention. Pure math: similarities in, boost amounts out; the agent finds the neighbours
through the tier indexes and writes the boost into the short-term component.

``amounts(sims)`` gets the cosine similarities of the sources' candidate neighbours, one
row per source (at most ``neighbors`` per row, sorted descending, ``-inf`` where a source
has fewer; a 1-D array is one source) and returns the boost of each, same shape; a policy
that normalises by a source's fan (``Radius``) counts it from that row itself. Vectorised
over the rows: arousing many sources is one call.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from ..params import Count, NonNegative, Positive, Share, declared


class Arousal(Protocol):
    neighbors: int      # how many candidate neighbours to fetch per recalled memory

    def amounts(self, sims: np.ndarray) -> np.ndarray:
        """Boost per candidate (>= 0), ``sims`` of shape (sources, candidates) or (candidates,),
        each row sorted descending."""
        ...


class NoArousal:
    """No spreading (the ablation, and what every peer system does at storage time)."""

    neighbors = 0

    def amounts(self, sims):
        return np.zeros_like(np.asarray(sims, dtype=float))


@declared
class Knn:
    """The k nearest neighbours each gain ``gain * sim`` (negative similarity gains 0).

    >>> Knn(k=2, gain=2.0).amounts(np.array([0.5, 0.25, 0.1])).tolist()
    [1.0, 0.5, 0.0]
    """

    def __init__(self, k: Count = 5, gain: NonNegative = 1.0):
        self.k = k
        self.gain = gain

    @property
    def neighbors(self) -> int:
        return self.k

    def amounts(self, sims):
        sims = np.asarray(sims, dtype=float)
        out = self.gain * np.clip(sims, 0.0, None)
        out[..., self.k:] = 0.0
        return out


@declared
class Radius:
    """Every neighbour with similarity >= r gains, falling with distance, fan-normalised.

    amount_j = gain * sim_j * max(0, S - ln(fan)) / S, for sim_j >= r (0 below r),
    where fan is the number of neighbours within r (ACT-R's S - ln(fan): a hub spreads
    thinly, so a memory linked to everything does not flood the store). At most
    ``max_neighbors`` candidates are considered per source.

    >>> Radius(r=0.5, gain=2.0, strength=2.0).amounts(np.array([1.0, 0.75, 0.4])).round(4).tolist()
    [1.3069, 0.9801, 0.0]
    >>> Radius(r=0.5, gain=2.0, strength=2.0).amounts(np.array([[1.0, 0.75, 0.4], [0.6, -np.inf, -np.inf]])).round(4).tolist()
    [[1.3069, 0.9801, 0.0], [1.2, 0.0, 0.0]]
    """

    def __init__(self, r: Share = 0.15, gain: NonNegative = 6.0, strength: Positive = 5.0, max_neighbors: Count = 50):
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
        fan = within.sum(axis=-1, keepdims=True)
        spread = np.maximum(0.0, self.strength - np.log(np.maximum(fan, 1))) / self.strength
        return np.where(within, self.gain * sims * spread, 0.0)
