"""Query-time scorers of peer designs: ``retrieval`` targets that replace the weighted sum.

Each is a ``TieredSearch`` whose ``score`` is another formula over the candidates a
search reaches; searching, cost counting and ranking stay those of ``TieredSearch``, and
so does ``relevance`` (the ``retrieval`` group: cosine, BM25 or their fusion), the
formulas' relevance term.

- ``WeightedMinMax`` (Generative Agents, Park et al. 2023): a weighted sum of min-max
  normalised recency, importance and relevance.
- ``Forgetting`` (MemoryBank, Zhong et al. 2024): relevance ranking over the memories
  not yet forgotten, a memory being forgotten once its retention falls below a seeded
  uniform threshold.
"""

from __future__ import annotations

import numpy as np

from ..core.params import Count, NonNegative, Positive, Seed, Unit, declared
from ..core.seeding import generator
from .attention import HOUR
from .retrieval import TieredSearch
from .store import MemoryStore


def min_max(x: np.ndarray) -> np.ndarray:
    """(x - min) / (max - min) over the candidates; 0.5 each when all are equal (GA's code).

    >>> min_max(np.array([2.0, 4.0, 3.0])).tolist(), min_max(np.array([7.0, 7.0])).tolist()
    ([0.0, 1.0, 0.5], [0.5, 0.5])
    """
    x = np.asarray(x, dtype=float)
    if not len(x):
        return x
    lo, span = x.min(), x.max() - x.min()
    return np.full_like(x, 0.5) if span == 0 else (x - lo) / span


@declared
class WeightedMinMax(TieredSearch):
    """score = recency_weight * mm(recency) + attention_weight * mm(importance)
    + relevance_weight * mm(relevance), mm = ``min_max`` over the candidates scored together.

    recency = recency_decay ** (hours since last access), the last access being the last
    labelling or recall (``store.long_t``); importance = the memory's attention (with the
    generative_agents preset: its labelled score, which never decays or grows);
    relevance = cosine. The weights default to the paper's 1/1/1.

    >>> from mtsbench.memory.store import MemoryStore
    >>> s = MemoryStore(dim=2)
    >>> for t in (0.0, 10 * HOUR):
    ...     _ = s.add("m", "turn", created=t, provenance=("s",), vector=np.zeros(2))
    >>> ga = WeightedMinMax(recency_decay=0.5)
    >>> ga.score(s, np.array([0, 1]), np.array([0.2, 0.1]), np.array([3.0, 9.0]), now=11 * HOUR).tolist()
    [1.0, 2.0]
    """

    def __init__(self, relevance_weight: NonNegative = 1.0, attention_weight: NonNegative = 1.0,
                 recency_weight: NonNegative = 1.0, recency_decay: Unit = 0.995, candidates: Count = 50,
                 context: Count | None = None, relevance=None, relevance_sd: Positive | None = 0.05):
        super().__init__(relevance_weight, attention_weight, candidates, context, relevance, relevance_sd)
        self.recency_weight = recency_weight
        self.recency_decay = recency_decay

    def score(self, store: MemoryStore, ids, relevance, attention, now):
        hours = np.maximum(now - store.long_t[ids], 0.0) / HOUR
        recency = self.recency_decay ** hours
        return (self.recency_weight * min_max(recency) + self.attention_weight * min_max(attention)
                + self.relevance_weight * min_max(relevance))


@declared
class Forgetting(TieredSearch):
    """MemoryBank's forgetting, deterministic per seed: memory i is forgotten while
    attention_i / ``full`` < u_i, u_i ~ U(0, 1) drawn once per memory (the published code
    drops a memory when ``random.random() > retention``). The rest are ranked by the
    usual weighted sum (the memorybank preset: relevance only). A forgotten memory scores
    -inf and is never returned; it still counts as scored.

    With the memorybank preset a memory's attention is ``full`` times its retention
    e^(-t/S), so the test is retention < u_i.

    >>> from mtsbench.memory.store import MemoryStore
    >>> f = Forgetting(attention_weight=0.0, seed=0)
    >>> u = f.thresholds(np.array([0, 1]))
    >>> s = f.score(MemoryStore(dim=2), np.array([0, 1]), np.array([0.5, 0.4]),
    ...             10.0 * np.array([u[0] + 0.01, u[1] - 0.01]), now=0.0)
    >>> s.tolist()
    [0.5, -inf]
    """

    def __init__(self, relevance_weight: NonNegative = 1.0, attention_weight: NonNegative = 0.0, candidates: Count = 50,
                 context: Count | None = None, full: Positive = 10.0, seed: Seed = 0, relevance=None,
                 relevance_sd: Positive | None = 0.05):
        super().__init__(relevance_weight, attention_weight, candidates, context, relevance, relevance_sd)
        self.full = full
        self.seed = seed
        self.thresholds_ = np.zeros(0)

    def thresholds(self, ids: np.ndarray) -> np.ndarray:
        """u_i of each memory: the i-th draw of one seeded stream, so it depends only on i."""
        need = int(np.max(ids, initial=-1)) + 1
        if need > len(self.thresholds_):
            rng = generator(self.seed, "memorybank.forget")
            self.thresholds_ = rng.random(max(need, 2 * len(self.thresholds_), 64))
        return self.thresholds_[np.asarray(ids, dtype=np.int64)]

    def score(self, store, ids, relevance, attention, now):
        kept = np.asarray(attention, dtype=float) / self.full >= self.thresholds(ids)
        return np.where(kept, self.combine(relevance, attention), -np.inf)
