"""Regional arousal (DESIGN §1.2): recalling a memory raises its neighbours' short-term
attention. Pure math: similarities in, boost amounts out; the agent finds the neighbours
through the tier indexes and writes the boost into the short-term component.

Similarities are relative (issue 36), as the mock's relevance is: a neighbour's cosine s is
read as z = (s - m) / sd, standard deviations above the embedder's chance level (m, sd: the
mean and spread of its cosines of unrelated texts, ``mtsbench.embed.chance``), so a policy's
reach and amounts mean the same for every embedder (z is unchanged by any shift and stretch
of the cosine scale). ``mtsbench.memory.memory.Memory`` measures the level on its embedder
and converts. Hashing's English level is 0.026 ± 0.047, all-MiniLM-L6-v2's 0.077 ± 0.090,
multilingual-e5-small's 0.794 ± 0.026: an absolute cut-off of 0.15 reached about 3% of
unrelated pairs with the first, a fifth with the second and every pair with the third.

``amounts(z)`` gets the relative similarities of the sources' candidate neighbours, one row
per source (at most ``neighbors`` per row, sorted descending, ``-inf`` where a source has
fewer; a 1-D array is one source) and returns the boost of each, same shape; a policy that
normalises by a source's fan (``Radius``) counts it from that row itself. Vectorised over
the rows: arousing many sources is one call.

Sources: every memory recalled (a probe's top k, a labelling's associations, a merged
event) and, when the policy's ``perceived`` is true, every memory just perceived (a turn, an
observation, a summary, an event, a conjecture, once labelled and stored): the item in
focus wakes its field at every depth, whether or not its shallow association search reached
the field (``Memory.attend``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from ..core.params import Count, NonNegative, Positive, declared


class Arousal(Protocol):
    neighbors: int      # how many candidate neighbours to fetch per source
    perceived: bool     # a memory just perceived arouses its field too (not only a recalled one)

    def amounts(self, z: np.ndarray) -> np.ndarray:
        """Boost per candidate (>= 0), ``z`` (relative similarities) of shape (sources,
        candidates) or (candidates,), each row sorted descending."""
        ...


class NoArousal:
    """No spreading (the ablation, and what every peer system does at storage time)."""

    neighbors = 0
    perceived = False

    def amounts(self, z):
        return np.zeros_like(np.asarray(z, dtype=float))


@declared
class Knn:
    """The k nearest neighbours each gain ``gain * z`` (z <= 0 gains 0).

    >>> Knn(k=2, gain=0.1).amounts(np.array([5.0, 2.5, 1.0])).tolist()
    [0.5, 0.25, 0.0]
    """

    def __init__(self, k: Count = 5, gain: NonNegative = 0.05, perceived: bool = True):
        self.k = k
        self.gain = gain
        self.perceived = perceived

    @property
    def neighbors(self) -> int:
        return self.k

    def amounts(self, z):
        z = np.asarray(z, dtype=float)
        out = self.gain * np.clip(z, 0.0, None)
        out[..., self.k:] = 0.0
        return out


@declared
class Radius:
    """Every neighbour at least ``r`` sd above chance gains, in proportion, fan-normalised.

    amount_j = gain * z_j * max(0, S - ln(fan)) / S, for z_j >= r (0 below r),
    where fan is the number of neighbours within r (ACT-R's S - ln(fan): a hub spreads
    thinly, so a memory linked to everything does not flood the store). At most
    ``max_neighbors`` candidates are considered per source. Defaults: r = 2.5 sd keeps
    97-99.6% of unrelated pairs out with each bundled embedder (hashing's English reach is
    cosine 0.144, where the absolute rule before issue 36 had 0.15); gain 0.5 per sd gives a
    neighbour 4 sd above chance — about where two sentences on one topic lie with every
    bundled embedder (hashing 3-9, all-MiniLM-L6-v2 3-7, multilingual-e5-small 2-6) — 2.0,
    what a recall adds to the recalled memory's own short-term part (``dual.short_gain``),
    before its fan thins it.

    >>> Radius(r=2.0, gain=0.5, strength=2.0).amounts(np.array([4.0, 3.0, 1.6])).round(4).tolist()
    [1.3069, 0.9801, 0.0]
    >>> Radius(r=2.0, gain=0.5, strength=2.0).amounts(np.array([[4.0, 3.0, 1.6], [2.4, -np.inf, -np.inf]])).round(4).tolist()
    [[1.3069, 0.9801, 0.0], [1.2, 0.0, 0.0]]
    """

    def __init__(self, r: NonNegative = 2.5, gain: NonNegative = 0.5, strength: Positive = 5.0,
                 max_neighbors: Count = 50, perceived: bool = True):
        self.r = r
        self.gain = gain
        self.strength = strength
        self.max_neighbors = max_neighbors
        self.perceived = perceived

    @property
    def neighbors(self) -> int:
        return self.max_neighbors

    def amounts(self, z):
        z = np.asarray(z, dtype=float)
        within = z >= self.r
        fan = within.sum(axis=-1, keepdims=True)
        spread = np.maximum(0.0, self.strength - np.log(np.maximum(fan, 1))) / self.strength
        return np.where(within, self.gain * z * spread, 0.0)
