"""Per-tier vector indexes: an exact scan for small tiers, hnswlib above a size threshold.

``TierIndexes`` keeps, for each tier, the ids of its memories and an index over their
vectors. Moving a memory between tiers removes it from one index and adds it to the
other. An exact tier keeps its own contiguous matrix (swap-remove on delete) so that a
scan is one matrix-vector product; once it holds more than ``exact_below`` memories it
becomes an HNSW tier (cosine space, built single-threaded with a fixed seed, so it is
deterministic). HNSW removal is ``mark_deleted``; a memory coming back is
``unmark_deleted``; the index is resized when full.

``query(tier, q, k)`` returns (ids, cosine similarities, scored): an exact tier scores
all its members; an HNSW tier returns its k approximate nearest neighbours and counts
those k as scored (a graph left mostly of deleted entries, which hnswlib cannot always
search k deep, falls back to an exact scan of its live members, all counted) (the graph's internal distance evaluations, about ef * M per query,
are not counted; ``index_queries`` counts the queries).
"""

from __future__ import annotations

import hnswlib
import numpy as np


class ExactTier:
    """A tier searched by an exact scan of its own contiguous matrix."""

    kind = "exact"

    def __init__(self, dim: int, capacity: int = 64):
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.vectors = np.zeros((capacity, dim), dtype=np.float32)
        self.size = 0
        self.pos: dict[int, int] = {}

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        need = self.size + len(ids)
        if need > len(self.ids):
            cap = max(need, 2 * len(self.ids))
            self.ids = np.resize(self.ids, cap)
            grown = np.zeros((cap, self.vectors.shape[1]), dtype=np.float32)
            grown[: self.size] = self.vectors[: self.size]
            self.vectors = grown
        self.ids[self.size:need] = ids
        self.vectors[self.size:need] = vectors
        for offset, i in enumerate(ids):
            self.pos[int(i)] = self.size + offset
        self.size = need

    def remove(self, i: int) -> None:
        p = self.pos.pop(int(i))
        last = self.size - 1
        if p != last:
            moved = int(self.ids[last])
            self.ids[p] = moved
            self.vectors[p] = self.vectors[last]
            self.pos[moved] = p
        self.size = last

    def query(self, q: np.ndarray, k: int):
        sims = self.vectors[: self.size] @ q
        return self.ids[: self.size].copy(), sims.astype(float), self.size

    def members(self) -> np.ndarray:
        return self.ids[: self.size].copy()

    def update(self, i: int, vector: np.ndarray) -> None:
        self.vectors[self.pos[int(i)]] = vector


class HnswTier:
    """A tier searched through an hnswlib graph (cosine space)."""

    kind = "hnsw"

    def __init__(self, dim: int, capacity: int, M: int = 16, ef_construction: int = 100, ef: int = 64,
                 seed: int = 0):
        self.index = hnswlib.Index(space="cosine", dim=dim)
        self.index.init_index(max_elements=max(capacity, 16), M=M, ef_construction=ef_construction,
                              random_seed=seed)
        self.index.set_num_threads(1)
        self.ef = ef
        self.index.set_ef(ef)
        self.present: set[int] = set()     # labels in the graph, deleted or not
        self.live: set[int] = set()
        self.stale: set[int] = set()       # deleted labels whose memory got a new vector since

    @property
    def size(self) -> int:
        return len(self.live)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        back = [int(i) for i in ids if int(i) in self.present]
        for i in back:
            self.index.unmark_deleted(i)
        rewritten = [p for p, i in enumerate(ids) if int(i) in self.stale]
        if rewritten:   # its text changed while it lived in another tier: refresh the vector
            self.index.add_items(vectors[rewritten], np.asarray(ids)[rewritten].astype(np.uint64), num_threads=1)
            self.stale.difference_update(int(ids[p]) for p in rewritten)
        new = np.array([int(i) not in self.present for i in ids], dtype=bool)
        if new.any():
            need = self.index.get_current_count() + int(new.sum())
            if need > self.index.get_max_elements():
                self.index.resize_index(max(need, 2 * self.index.get_max_elements()))
            self.index.add_items(vectors[new], np.asarray(ids)[new].astype(np.uint64), num_threads=1)
            self.present.update(int(i) for i in np.asarray(ids)[new])
        self.live.update(int(i) for i in ids)

    def remove(self, i: int) -> None:
        self.index.mark_deleted(int(i))
        self.live.discard(int(i))

    def query(self, q: np.ndarray, k: int):
        k = min(k, self.size)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0), 0
        self.index.set_ef(max(self.ef, k))
        try:
            labels, dist = self.index.knn_query(q, k=k, num_threads=1)
        except RuntimeError:    # the graph is mostly deleted entries and cannot reach k live ones
            return self._scan(q)
        return labels[0].astype(np.int64), 1.0 - dist[0].astype(float), k

    def _scan(self, q: np.ndarray):
        """Exact cosine scan of the live members (hnswlib keeps their normalised vectors)."""
        ids = np.array(sorted(self.live), dtype=np.int64)
        vectors = np.asarray(self.index.get_items(ids.astype(np.uint64)), dtype=np.float32)
        norm = float(np.linalg.norm(q)) or 1.0
        return ids, (vectors @ (q / norm)).astype(float), len(ids)

    def members(self) -> np.ndarray:
        return np.array(sorted(self.live), dtype=np.int64)

    def update(self, i: int, vector: np.ndarray) -> None:
        """Replace a live member's vector (hnswlib updates an existing label in place)."""
        self.index.add_items(vector[None, :], np.array([int(i)], dtype=np.uint64), num_threads=1)


class TierIndexes:
    """The indexes of every tier of one store; ``tier_of`` mirrors the store's tier column."""

    def __init__(self, dim: int, n_tiers: int, exact_below: int = 5000, M: int = 16, ef_construction: int = 100,
                 ef: int = 64, seed: int = 0):
        self.dim = dim
        self.exact_below = exact_below
        self.hnsw = {"M": M, "ef_construction": ef_construction, "ef": ef, "seed": seed}
        self.tiers: list[ExactTier | HnswTier] = [ExactTier(dim) for _ in range(n_tiers)]

    @property
    def n_tiers(self) -> int:
        return len(self.tiers)

    def sizes(self) -> list[int]:
        return [t.size for t in self.tiers]

    def add(self, tier: int, ids: np.ndarray, vectors: np.ndarray) -> None:
        t = self.tiers[tier]
        t.add(ids, vectors)
        if isinstance(t, ExactTier) and t.size > self.exact_below:
            self._to_hnsw(tier)

    def _to_hnsw(self, tier: int) -> None:
        old = self.tiers[tier]
        new = HnswTier(self.dim, 2 * old.size, **self.hnsw)
        new.add(old.ids[: old.size].copy(), old.vectors[: old.size].copy())
        self.tiers[tier] = new

    def move(self, ids: np.ndarray, old: np.ndarray, new: np.ndarray, vectors: np.ndarray) -> None:
        """Move memories ``ids`` from tiers ``old`` to tiers ``new`` (vectors: their rows)."""
        for i, a in zip(ids, old):
            self.tiers[int(a)].remove(int(i))
        for t in np.unique(new):
            sel = new == t
            self.add(int(t), np.asarray(ids)[sel], vectors[sel])

    def query(self, tier: int, q: np.ndarray, k: int):
        return self.tiers[tier].query(q, k)

    def update(self, tier: int, i: int, vector: np.ndarray) -> None:
        """Memory ``i`` of ``tier`` has a new vector (its text was rewritten); an HNSW tier
        that held it before keeps the old vector until it comes back, then refreshes it."""
        self.tiers[tier].update(i, vector)
        for other, t in enumerate(self.tiers):
            if other != tier and isinstance(t, HnswTier) and int(i) in t.present:
                t.stale.add(int(i))

    def remove(self, tier: int, i: int) -> None:
        """Memory ``i`` leaves the indexes (it died)."""
        self.tiers[tier].remove(i)
