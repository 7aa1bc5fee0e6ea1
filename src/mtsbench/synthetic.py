"""Synthetic pre-loaded memory stores for measuring retrieval at scale.

``synthetic_agent_memory(n, ...)`` fills a store with ``n`` memories without simulating
turns: random unit vectors in ``fields`` clusters (so neighbours exist), ages uniform over
``span_days``, and labelled attention drawn so that about ``awake`` of the memories are
awake (recently recalled, attention 6-9) and the rest dormant (0-1.5). Tiers are then
assigned by the given policy in one vectorised rebalance. Every draw comes from one seeded
generator, so the same arguments give the same store.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mechanisms.decay import Decay, Exponential, PowerLaw
from .mechanisms.tiers import TierPolicy
from .memory.attention import HOUR, DualAttention
from .memory.index import TierIndexes
from .memory.store import MemoryStore
from .seeding import generator


@dataclass
class SyntheticMemory:
    store: MemoryStore
    attention: DualAttention
    index: TierIndexes
    awake_ids: np.ndarray
    now: float


def clustered_vectors(rng: np.random.Generator, n: int, dim: int, fields: int, spread: float = 0.6) -> np.ndarray:
    """Unit vectors around ``fields`` random centres: v = normalise(centre + spread * noise / sqrt(dim))."""
    centres = rng.standard_normal((fields, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    v = centres[rng.integers(0, fields, n)] + spread * rng.standard_normal((n, dim)).astype(np.float32) / np.sqrt(dim)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.astype(np.float32)


def synthetic_agent_memory(n: int, tiers: TierPolicy, dim: int = 64, fields: int = 200, awake: float = 0.005,
                           span_days: float = 365.0, seed: int = 0, exact_below: int = 5000,
                           long_decay: Decay | None = None, short_decay: Decay | None = None) -> SyntheticMemory:
    rng = generator(seed, "synthetic", str(n))
    vectors = clustered_vectors(rng, n, dim, fields)
    now = span_days * 24 * HOUR
    created = np.sort(rng.uniform(0, now, n))
    store = MemoryStore(dim=dim, capacity=n)
    ids = store.add_many([f"m{i}" for i in range(n)], "turn", created=created, vectors=vectors,
                         provenance=[(f"m{i}",) for i in range(n)])
    att = DualAttention(long_decay or PowerLaw(), short_decay or Exponential())
    is_awake = rng.random(n) < awake
    score = np.where(is_awake, rng.uniform(6.0, 9.0, n), rng.uniform(0.0, 1.5, n))
    # labelled "now" so the drawn scores are the current attention; ages stay in `created`
    att.label(store, ids, score, now)
    index = TierIndexes(dim, tiers.n_tiers, exact_below=exact_below, seed=seed)
    target = tiers.assign(att.total(store, ids, now), np.full(n, tiers.n_tiers - 1), store.recalls[ids],
                          store.parts[ids], np.zeros(n), full=True)
    store.tier[ids] = target
    for t in range(tiers.n_tiers):
        sel = ids[target == t]
        if len(sel):
            index.add(t, sel, vectors[sel])
    return SyntheticMemory(store, att, index, ids[is_awake], now)
