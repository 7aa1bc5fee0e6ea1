"""Retrieval: score = relevance_weight * cosine + attention_weight * attention / 10, top k.

A retriever returns the ranked ids with their parts and an exact ``SearchCost``: how
many memories it scored, how many tiers it searched and how many index queries it made.
``FlatScan`` is the exact baseline: one tier, every live memory scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .attention import DualAttention
from .store import MemoryStore


@dataclass
class SearchCost:
    """What one search cost; ``+=`` adds another search's cost."""

    scored: int = 0
    tiers_searched: int = 0
    index_queries: int = 0

    def __iadd__(self, other: "SearchCost") -> "SearchCost":
        self.scored += other.scored
        self.tiers_searched = max(self.tiers_searched, other.tiers_searched)
        self.index_queries += other.index_queries
        return self


@dataclass
class Retrieval:
    """Ranked result of one search (best first)."""

    ids: np.ndarray
    scores: np.ndarray
    relevance: np.ndarray
    attention: np.ndarray
    cost: SearchCost = field(default_factory=SearchCost)


def rank(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best scores, best first, ties broken by position (stable).

    >>> rank(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist()
    [1, 3, 2]
    """
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(-scores, kind="stable")
    return order[:k]


class Retriever(Protocol):
    """Finds the k best memories for a query vector at a given solving motivation."""

    def search(self, store: MemoryStore, attention: DualAttention, query: np.ndarray,
               k: int, motivation: float, now: float) -> Retrieval: ...


class FlatScan:
    """Exact scan of every live memory (one tier; ``motivation`` is ignored)."""

    def __init__(self, relevance_weight: float = 1.0, attention_weight: float = 0.3):
        self.relevance_weight = relevance_weight
        self.attention_weight = attention_weight

    def combine(self, relevance: np.ndarray, attention: np.ndarray) -> np.ndarray:
        """relevance_weight * relevance + attention_weight * attention / 10."""
        return self.relevance_weight * relevance + self.attention_weight * attention / 10.0

    def search(self, store, attention, query, k, motivation, now):
        ids = store.live_ids()
        relevance = store.vectors[ids] @ query.astype(np.float32)
        att = attention.total(store, ids, now)
        scores = self.combine(relevance.astype(float), att)
        top = rank(scores, k)
        return Retrieval(ids[top], scores[top], relevance[top].astype(float), att[top],
                         SearchCost(scored=len(ids), tiers_searched=1 if len(ids) else 0, index_queries=1))
