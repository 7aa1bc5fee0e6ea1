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
search k deep, falls back to an exact scan of its live members, all counted). The
graph's internal distance evaluations, about ef * M per query, are not counted: ``work_``
(``IndexWork``) counts the k returned as its distances, and inserts and moves. This is
``index.graph=per_tier``, the design before issue 13, kept for comparison; the default is
``memory.graph_index.SharedGraphIndex`` (one graph, measured distance counts).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..core.costs import charge
from ..errors import ConfigError

from .topk import pick, top_per_row


INSTALL_HNSW = "pip install 'mtsbench[hnsw]'"


def hnswlib_module():
    """hnswlib, which only ``index.graph=per_tier`` uses (an optional extra); ``ConfigError``,
    one line, when it is not installed."""
    try:
        import hnswlib
    except ImportError:
        raise ConfigError(f"index.graph=per_tier needs hnswlib, an optional extra: {INSTALL_HNSW} "
                          "(hnswlib is not installed; the default index.graph=shared does not need it)") from None
    return hnswlib


@dataclass
class IndexWork:
    """Index work done so far (``add`` counts it and charges it to the cost scope open,
    ``mtsbench.core.costs``); ``minus`` gives the work between two snapshots.

    ``distances``: measured distance computations of queries (exact scans: one per member
    scanned; graph: faiss's count), ``graph_distances`` the graph's share of them;
    ``inserts``: vectors inserted into the graph;
    ``insert_distances_est``: their estimated distance computations; ``moves``: memories
    moved between tiers; ``queries``: index queries.
    """

    distances: int = 0
    graph_distances: int = 0
    inserts: int = 0
    insert_distances_est: int = 0
    moves: int = 0
    queries: int = 0

    def add(self, **amounts: int) -> None:
        """Count work (field -> amount) and charge it to the cost scope open."""
        for name, amount in amounts.items():
            setattr(self, name, getattr(self, name) + amount)
        charge(**amounts)

    def copy(self) -> "IndexWork":
        return IndexWork(**{f.name: getattr(self, f.name) for f in fields(self)})

    def minus(self, before: "IndexWork") -> "IndexWork":
        return IndexWork(**{f.name: getattr(self, f.name) - getattr(before, f.name) for f in fields(self)})


def walk_ef(ef: int, ef_per_k: float, k: int) -> int:
    """The width of a graph query for k results: ``max(ef, ceil(ef_per_k * k))`` (an ef near
    k loses neighbours; ``ef_per_k`` widens deep queries).

    >>> walk_ef(64, 1.0, 10), walk_ef(64, 1.0, 100), walk_ef(64, 4.0, 51)
    (64, 100, 204)
    """
    return int(max(ef, np.ceil(ef_per_k * k)))


class IdMap:
    """A dense array indexed by memory id (ids are store rows, so dense), grown on demand: an
    id past the end reads the fill value, and writing it grows the array (by doubling). No
    check is paid on the usual access, within the array: numpy's own bounds check finds the
    rest.

    >>> m = IdMap(np.int32, -1)
    >>> m[np.array([5, 2])] = [7, 8]
    >>> m[np.array([2, 5, 9])].tolist()
    [8, 7, -1]
    """

    def __init__(self, dtype, fill):
        self.fill = fill
        self.a = np.full(0, fill, dtype=dtype)

    def _ensure(self, n: int) -> None:
        if n > len(self.a):
            grown = np.full(max(n, 2 * len(self.a)), self.fill, dtype=self.a.dtype)
            grown[: len(self.a)] = self.a
            self.a = grown

    def __getitem__(self, ids):
        try:
            return self.a[ids]
        except IndexError:          # an id past the end: grow (it reads the fill) and read again
            self._fit(ids)
            return self.a[ids]

    def __setitem__(self, ids, values):
        try:
            self.a[ids] = values
        except IndexError:          # the rows in range may be written already: writing all again is the same
            self._fit(ids)
            self.a[ids] = values

    def _fit(self, ids) -> None:
        self._ensure(int(np.max(ids)) + 1)


class ExactTier:
    """A tier searched by an exact scan of its own contiguous matrix."""

    kind = "exact"

    def __init__(self, dim: int, capacity: int = 64):
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.vectors = np.zeros((capacity, dim), dtype=np.float32)
        self.size = 0
        self.pos = IdMap(np.int64, -1)          # memory id -> row in this tier, -1 if absent

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        need = self.size + len(ids)
        if need > len(self.ids):
            cap = max(need, 2 * len(self.ids))
            self.ids = np.resize(self.ids, cap)
            grown = np.zeros((cap, self.vectors.shape[1]), dtype=np.float32)
            grown[: self.size] = self.vectors[: self.size]
            self.vectors = grown
        self.ids[self.size:need] = ids
        self.vectors[self.size:need] = vectors
        self.pos[ids] = np.arange(self.size, need)
        self.size = need

    def remove(self, i: int) -> None:
        self.remove_many(np.array([i]))

    def remove_many(self, ids: np.ndarray) -> None:
        """Swap-remove: the rows at the end fill the holes, O(len(ids))."""
        ids = np.asarray(ids, dtype=np.int64)
        gone = np.sort(self.pos[ids])
        end = self.size - len(ids)
        holes = gone[gone < end]
        stays = np.ones(self.size - end, dtype=bool)     # the last rows, but those removed
        stays[gone[gone >= end] - end] = False
        tail = np.arange(end, self.size)[stays]
        self.ids[holes] = self.ids[tail]
        self.vectors[holes] = self.vectors[tail]
        self.pos[self.ids[holes]] = holes
        self.pos[ids] = -1
        self.size = end

    def query(self, q: np.ndarray, k: int):
        sims = self.vectors[: self.size] @ q
        return self.ids[: self.size].copy(), sims.astype(float), self.size

    def scan(self, qs: np.ndarray) -> np.ndarray:
        """Every member against each row of ``qs``: float32 sims, (len(qs), size). Computed as
        ``(members @ qs.T).T``, the same values as ``qs @ members.T`` at a third of the time
        (BLAS is slow on a product whose first operand has a few rows)."""
        return np.ascontiguousarray((self.vectors[: self.size] @ qs.T).T)

    def query_many(self, qs: np.ndarray, k: int):
        """Every member against each row of ``qs``: (ids, sims of shape (len(qs), size), scored per query)."""
        return self.ids[: self.size].copy(), self.scan(qs).astype(float), self.size

    def nearest_in_order(self, qs: np.ndarray, k: int):
        """Each row of ``qs`` against every member, its k most similar kept in row order (ties
        broken by row, as a stable ranking of the full scan would): (ids, sims), (len(qs), k')."""
        ids, sims = self.ids[: self.size], self.scan(qs)
        if self.size > k:       # selected on the float32 sims: the same order as their float64 values
            pos = top_per_row(sims, k)
            pos.sort(axis=1)
            return ids[pos], pick(sims, pos).astype(float)
        return np.broadcast_to(ids, sims.shape), sims.astype(float)

    def members(self) -> np.ndarray:
        return self.ids[: self.size].copy()

    def update(self, i: int, vector: np.ndarray) -> None:
        self.vectors[int(self.pos[np.array([i])][0])] = vector


class HnswTier:
    """A tier searched through an hnswlib graph (cosine space)."""

    kind = "hnsw"

    def __init__(self, dim: int, capacity: int, M: int = 16, ef_construction: int = 100, ef: int = 64,
                 ef_per_k: float = 1.0, seed: int = 0, threads: int = 1):
        self.index = hnswlib_module().Index(space="cosine", dim=dim)
        self.index.init_index(max_elements=max(capacity, 16), M=M, ef_construction=ef_construction,
                              random_seed=seed)
        self.index.set_num_threads(1)
        self.ef = ef
        self.ef_per_k = ef_per_k
        self.threads = threads
        self.index.set_ef(ef)
        self.present = IdMap(bool, False)      # labels in the graph, deleted or not
        self.live = IdMap(bool, False)
        self.stale = IdMap(bool, False)        # deleted labels whose memory got a new vector since
        self.size = 0

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        known = self.present[ids]
        for i in ids[known].tolist():
            self.index.unmark_deleted(i)
        rewritten = known & self.stale[ids]
        if rewritten.any():   # its text changed while it lived in another tier: refresh the vector
            self.index.add_items(np.asarray(vectors)[rewritten], ids[rewritten].astype(np.uint64), num_threads=1)
            self.stale[ids[rewritten]] = False
        if not known.all():
            new = ~known
            need = self.index.get_current_count() + int(new.sum())
            if need > self.index.get_max_elements():
                self.index.resize_index(max(need, 2 * self.index.get_max_elements()))
            # threads pay off for a bulk build only; a step's few inserts stay single-threaded
            threads = self.threads if new.sum() >= 1000 else 1
            self.index.add_items(np.asarray(vectors)[new], ids[new].astype(np.uint64), num_threads=threads)
            self.present[ids[new]] = True
        self.live[ids] = True
        self.size += len(ids)

    def remove(self, i: int) -> None:
        self.remove_many(np.array([i]))

    def remove_many(self, ids: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        for i in ids.tolist():
            self.index.mark_deleted(i)
        self.live[ids] = False
        self.size -= len(ids)

    def query(self, q: np.ndarray, k: int):
        ids, sims, scored = self.query_many(np.asarray(q)[None, :], k)
        return ids[0], sims[0], scored

    def query_many(self, qs: np.ndarray, k: int):
        """The k nearest of each row of ``qs``: (ids, sims), both (len(qs), k), and k scored per query."""
        k = min(k, self.size)
        if k <= 0:
            return np.zeros((len(qs), 0), dtype=np.int64), np.zeros((len(qs), 0)), 0
        self.index.set_ef(walk_ef(self.ef, self.ef_per_k, k))
        try:
            labels, dist = self.index.knn_query(qs, k=k, num_threads=1)
        except RuntimeError:    # the graph is mostly deleted entries and cannot reach k live ones
            return self._scan(qs)
        return labels.astype(np.int64), 1.0 - dist.astype(float), k

    def _scan(self, qs: np.ndarray):
        """Exact cosine scan of the live members (hnswlib keeps their normalised vectors)."""
        ids = self.members()
        vectors = np.asarray(self.index.get_items(ids.astype(np.uint64)), dtype=np.float32)
        norms = np.linalg.norm(qs, axis=1, keepdims=True)
        sims = (qs / np.where(norms > 0, norms, 1.0)) @ vectors.T
        return np.broadcast_to(ids, sims.shape).copy(), sims.astype(float), len(ids)

    def members(self) -> np.ndarray:
        return np.flatnonzero(self.live.a)

    def update(self, i: int, vector: np.ndarray) -> None:
        """Replace a live member's vector (hnswlib updates an existing label in place)."""
        self.index.add_items(vector[None, :], np.array([int(i)], dtype=np.uint64), num_threads=1)


class TierIndexes:
    """The indexes of every tier of one store (``tiers[t]``, exact or HNSW). Which tier a
    memory is in is the store's tier column, kept by the caller and passed to ``move``.

    ``threads`` > 1 builds HNSW graphs on several cores: faster, but the graph (so results)
    then varies from run to run; 1 (the default) is deterministic.
    """

    def __init__(self, dim: int, n_tiers: int, exact_below: int = 5000, M: int = 16, ef_construction: int = 100,
                 ef: int = 64, ef_per_k: float = 1.0, arousal: str = "scan", seed: int = 0, threads: int = 1):
        hnswlib_module()                # refused up front, not once a tier grows past exact_below
        self.dim = dim
        self.arousal = arousal          # only "scan" here (config_rules refuses walk with per_tier)
        self.exact_below = exact_below
        self.hnsw = {"M": M, "ef_construction": ef_construction, "ef": ef, "ef_per_k": ef_per_k, "seed": seed,
                     "threads": threads}
        self.tiers: list[ExactTier | HnswTier] = [ExactTier(dim) for _ in range(n_tiers)]
        self.work_ = IndexWork()

    @property
    def n_tiers(self) -> int:
        return len(self.tiers)

    def sizes(self) -> list[int]:
        return [t.size for t in self.tiers]

    def add(self, tier: int, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add memories to a tier; an exact tier growing past ``exact_below`` becomes an HNSW
        tier built from its members and the new ones in one call."""
        t = self.tiers[tier]
        if not isinstance(t, ExactTier) or t.size + len(ids) > self.exact_below:
            self.work_.add(inserts=len(ids) + (t.size if isinstance(t, ExactTier) else 0))
        if isinstance(t, ExactTier) and t.size + len(ids) > self.exact_below:
            hnsw = HnswTier(self.dim, 2 * (t.size + len(ids)), **self.hnsw)
            hnsw.add(np.concatenate([t.ids[: t.size], np.asarray(ids, dtype=np.int64)]),
                     np.concatenate([t.vectors[: t.size], np.asarray(vectors, dtype=np.float32)]))
            self.tiers[tier] = hnsw
        else:
            t.add(ids, vectors)

    def move(self, ids: np.ndarray, old: np.ndarray, new: np.ndarray, vectors: np.ndarray) -> None:
        """Move memories ``ids`` from tiers ``old`` to tiers ``new`` (vectors: their rows)."""
        ids = np.asarray(ids, dtype=np.int64)
        self.work_.add(moves=len(ids))
        for t in np.unique(old):
            self.tiers[int(t)].remove_many(ids[old == t])
        for t in np.unique(new):
            sel = new == t
            self.add(int(t), ids[sel], vectors[sel])

    def query(self, tier: int, q: np.ndarray, k: int):
        ids, sims, scored = self.tiers[tier].query(q, k)
        self.work_.add(queries=1, distances=scored)
        if isinstance(self.tiers[tier], HnswTier):
            self.work_.add(graph_distances=scored)
        return ids, sims, scored

    def query_many(self, tier: int, qs: np.ndarray, k: int):
        """Each row of ``qs`` against one tier (see ``ExactTier.query_many``, ``HnswTier.query_many``)."""
        ids, sims, scored = self.tiers[tier].query_many(qs, k)
        self.work_.add(queries=len(qs), distances=scored * len(qs))
        if isinstance(self.tiers[tier], HnswTier):
            self.work_.add(graph_distances=scored * len(qs))
        return ids, sims, scored

    def query_all(self, qs: np.ndarray, k: int):
        """Every tier for each row of ``qs`` (see ``SharedGraphIndex.query_all``)."""
        ids, sims, scored = [], [], 0
        for tier in range(self.n_tiers):
            t_ids, t_sims, t_scored = self.query_many(tier, qs, k)
            ids.append(np.broadcast_to(t_ids, t_sims.shape) if t_ids.ndim == 1 else t_ids)
            sims.append(t_sims)
            scored += t_scored
        return np.concatenate(ids, axis=1), np.concatenate(sims, axis=1), scored

    def update(self, tier: int, i: int, vector: np.ndarray) -> None:
        """Memory ``i`` of ``tier`` has a new vector (its text was rewritten); an HNSW tier
        that held it before keeps the old vector until it comes back, then refreshes it."""
        self.tiers[tier].update(i, vector)
        for other, t in enumerate(self.tiers):
            if other != tier and isinstance(t, HnswTier) and bool(t.present[np.array([i])][0]):
                t.stale[np.array([i])] = True

    def remove(self, tier: int, i: int) -> None:
        """Memory ``i`` leaves the indexes (it died)."""
        self.tiers[tier].remove(i)
