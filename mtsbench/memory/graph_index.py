"""One graph for every large tier, tier membership as a bitmap: a tier move never rebuilds graph state.

``SharedGraphIndex`` has the interface of ``TierIndexes`` (``add``, ``move``, ``query``,
``query_many``, ``update``, ``remove``, ``sizes``, ``tiers[t].members()``) and adds
``query_all`` (every tier at once, for arousal) and exact work counters (``work_``).

- A small tier is scanned exactly: its own contiguous matrix (swap-remove), one matrix
  product per query, every member counted as a distance.
- A tier becomes a *graph tier* once scanning it would cost more distances than a graph
  query: a walk filtered to a tier holding the share s = size / N of an N-vector graph
  costs about q / s distances (q: the measured mean of a graph query, ``query_cost_``), a
  scan costs size, so past ``graph_above() = max(exact_below, sqrt(q * N))`` members the
  graph is the cheaper way; a graph tier that shrinks to half that is scanned again
  (hysteresis: a tier on the border does not flip back and forth). All graph tiers
  share one faiss ``IndexHNSWFlat`` (inner product on unit vectors = cosine). A memory is
  inserted into the graph once, the first time it enters a graph tier; which graph tier
  it is in is one bit in that tier's bitmap (``IDSelectorBitmap``), so moving between
  graph tiers flips two bits and moving out clears one — the graph is never edited.
  A dead memory or one that left for an exact tier stays in the graph, unselected. A
  rewritten memory (new vector) is inserted again under a new graph id when it next
  enters a graph tier; its old entry is never selected again. A filtered walk that
  cannot reach k selected members is retried once at four times the ef, then falls back
  to an exact scan of the tier's members, all counted as distances.
- Memories with equal vectors (bit for bit, after scaling to unit length: the same text,
  or the same bag of words under the hashing embedder) share one graph node, found by a
  CRC32 of the vector's bytes and checked row for row. A bitmap counts its members per
  node and selects a node while the count is above zero; a walk returns nodes, and each
  node stands for its selected members in ascending memory id (equal similarity); the
  exact fallback scores each selected node once, the same way. One
  node per memory would let a set of more than 2M equal vectors fill each other's
  neighbour lists: a closed clique no walk leaves, so a walk that ends its descent there
  finds at most the clique (on the bench's 1M pre-load 54 such cliques of 33-41 copies,
  walks short of k and an exact scan of ~1M members as the fallback; in a generated
  year the most repeated turn has 156 copies).
- Arousal asks for each source's nearest neighbours in *every* tier (``query_all``). With
  ``arousal="scan"`` (the default) that is a scan of each exact tier plus one walk over
  the graph tiers: exact where the upper tiers are. With ``arousal="walk"``, once
  scanning the exact tiers costs more distances than one graph query (their total size
  > q; before any query has measured q, its prior ef * M), every indexed memory goes
  into the graph (the exact tiers' members are inserted once, then each new memory at
  creation, all counted as inserts) and a third bitmap, ``everyone_``, selects all of
  them: arousal becomes one walk per source over the whole store, about q distances
  instead of the exact tiers' size plus q — but approximate: on the bench's dialogue a
  walk at ef 64 finds 89% of the exact 50 nearest at 20k, 74% at 100k and about half at
  1M, which lowers what arousal lifts (at 1M, recall@10 of awakened needles 0.93 ->
  0.80). Searches of single tiers are unchanged (an exact tier is still scanned: a walk
  filtered to a small share of the graph costs more than the scan).
- A graph query walks with ``efSearch = max(ef, ef_per_k * k)`` (``index.walk_ef``).
- Distance computations of graph queries are faiss's own count (``hnsw_stats.ndis``):
  measured, not estimated. Graph inserts are counted (``inserts``) and their distances
  *estimated* (``insert_distances_est``): faiss does not count them, so each insert is
  charged the measured mean distance count of a beam search at ``ef_construction`` on
  the graph (``InsertModel``), which is what an HNSW insertion runs per level 0 — the
  neighbour-pruning distances are left out, so the estimate is a lower bound.

Searches are single-threaded (deterministic); ``threads`` > 1 builds a bulk insert on
several cores (faster, but the graph then varies run to run).
"""

from __future__ import annotations

import bisect
import logging
import zlib
from itertools import chain

logging.getLogger("faiss.loader").setLevel(logging.WARNING)     # not its CPU probing in every run's log

import faiss  # noqa: E402
import numpy as np  # noqa: E402

from .index import ExactTier, IdMap, IndexWork, walk_ef
from .topk import distinct, pick, run_starts, top_per_row

faiss.omp_set_num_threads(1)


def unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), float32, C-contiguous. The norm is
    ``np.linalg.norm(v, axis=1)``'s own formula, sqrt(sum of squares), without its wrapper."""
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.sqrt(np.add.reduce(v * v, axis=1, keepdims=True))
    return np.ascontiguousarray(v / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _tally(gids: np.ndarray):
    """(distinct graph ids ascending, how often each occurs), as ``np.unique(gids,
    return_counts=True)``: one sort and the run boundaries; one id without sorting.

    >>> [a.tolist() for a in _tally(np.array([7, 3, 7, 7]))]
    [[3, 7], [1, 3]]
    """
    if len(gids) == 1:
        return gids, np.ones(1, dtype=np.int64)
    g = gids.copy()
    g.sort()
    starts = run_starts(g)
    counts = np.empty(len(starts), dtype=np.int64)
    counts[:-1] = starts[1:] - starts[:-1]
    counts[-1] = len(g) - starts[-1]
    return g[starts], counts


def _in_tier(tier: int, in_tier: np.ndarray) -> np.ndarray:
    """Which memories, by their ``in_tier_`` entries (1 + graph tier, 0: none), a bitmap of
    ``tier`` counts: that graph tier's (``tier`` >= 0) or any graph tier's (-1)."""
    return in_tier > 0 if tier < 0 else in_tier == tier + 1


class Bitmap:
    """Graph nodes selected while at least one member counts, in faiss's ``IDSelectorBitmap``
    layout (bit i is ``bits[i >> 3] >> (i & 7) & 1``): ``set`` counts one member per graph id
    given (repeats count again), ``clear`` uncounts one, and a node's bit is set while its
    count is above zero. ``tier`` says which memories on a selected node it selects: a graph
    tier's members (``tier`` >= 0), any graph tier's (-1) or every indexed memory (None).

    >>> b = Bitmap(); b.set(np.array([3, 9, 9])); b.clear(np.array([3, 9]))
    >>> np.flatnonzero(np.unpackbits(b.bits, bitorder="little")).tolist(), b.selected_
    ([9], 1)
    """

    def __init__(self, tier: int | None = None):
        self.tier = tier
        self.bits = np.zeros(64, dtype=np.uint8)
        self.counts_ = np.zeros(8 * 64, dtype=np.int32)     # one per bit
        self.selected_ = 0            # nodes with a count above zero
        self.params_ = None           # (ef, bits, SearchParametersHNSW) of the last ``params``

    def _fit(self, top: int) -> None:
        if top >> 3 >= len(self.bits):
            grown = np.zeros(max(2 * len(self.bits), (top >> 3) + 1), dtype=np.uint8)
            grown[: len(self.bits)] = self.bits
            self.bits = grown
            counts = np.zeros(8 * len(grown), dtype=np.int32)
            counts[: len(self.counts_)] = self.counts_
            self.counts_ = counts

    def set(self, gids: np.ndarray) -> None:
        if len(gids):
            nodes, n = _tally(gids)
            self._fit(int(nodes[-1]))
            counts = self.counts_[nodes]
            self.selected_ += int((counts == 0).sum())
            self.counts_[nodes] = counts + n
            np.bitwise_or.at(self.bits, nodes >> 3, (1 << (nodes & 7)).astype(np.uint8))

    def clear(self, gids: np.ndarray) -> None:
        if len(gids):
            nodes, n = _tally(gids)
            self._fit(int(nodes[-1]))
            counts = self.counts_[nodes] - n
            self.counts_[nodes] = counts
            gone = nodes[counts <= 0]
            self.selected_ -= len(gone)
            if len(gone):
                np.bitwise_and.at(self.bits, gone >> 3, ~(1 << (gone & 7)).astype(np.uint8))

    def count(self, gids: np.ndarray) -> np.ndarray:
        """How many counted members each graph id holds (any shape)."""
        self._fit(int(gids.max(initial=0)))
        return self.counts_[gids]

    def copy(self, tier: int | None) -> "Bitmap":
        """The same counts, selecting ``tier``'s members."""
        b = Bitmap(tier)
        b.bits, b.selected_ = self.bits.copy(), self.selected_
        b.counts_ = self.counts_.copy()
        return b

    def selector(self, n: int):
        """A faiss selector over the first n graph ids (valid while this bitmap is not grown)."""
        self._fit(max(n - 1, 0))
        return faiss.IDSelectorBitmap(n, faiss.swig_ptr(self.bits))

    def __getstate__(self) -> dict:
        """A copy (``copy.deepcopy``, pickle) holds the bits and counts: the cached faiss parameters
        point at this bitmap's own buffer (and cannot be pickled); the copy builds its own."""
        return {**self.__dict__, "params_": None}

    def params(self, n: int, ef: int):
        """faiss search parameters for a graph of n ids: ``efSearch`` ef, this bitmap's members
        selected. The selector spans the whole buffer (a bit past the graph's ids is never
        set), so the parameters are kept while ef and the buffer stay the same (the selector
        reads the bits as they are at search time); read-only for the caller."""
        self._fit(max(n - 1, 0))
        kept = self.params_
        if kept is None or kept[0] != ef or kept[1] is not self.bits:
            sel = self.selector(8 * len(self.bits))
            kept = self.params_ = (ef, self.bits, faiss.SearchParametersHNSW(sel=sel, efSearch=ef))
        return kept[2]


class InsertModel:
    """Estimated distance computations of one graph insert: the mean measured ``ndis`` of
    ``probes`` beam searches at ``ef_construction`` (k = 2M) on the graph, re-measured each
    time the graph has doubled since the last measurement."""

    def __init__(self, probes: int = 16):
        self.probes = probes
        self.per_insert_ = 0.0
        self.measured_at_ = 0

    def charge(self, graph, vectors: np.ndarray, M: int, ef_construction: int) -> int:
        """Estimated distances of inserting ``vectors`` into ``graph`` (before they are added)."""
        n = graph.ntotal
        if n == 0:
            return 0
        if n >= 2 * self.measured_at_:
            sample = vectors[: self.probes]
            params = faiss.SearchParametersHNSW(efSearch=ef_construction)
            stats = faiss.cvar.hnsw_stats
            stats.reset()
            graph.search(sample, min(2 * M, n), params=params)
            self.per_insert_ = stats.ndis / len(sample)
            self.measured_at_ = n
        return int(round(self.per_insert_ * len(vectors)))


class GraphTierView:
    """A graph tier as ``tiers[t]``: its size and members (memory ids)."""

    kind = "graph"

    def __init__(self, owner: "SharedGraphIndex", tier: int):
        self.owner, self.tier = owner, tier
        self.size = 0

    def members(self) -> np.ndarray:
        return np.flatnonzero(self.owner.in_tier_.a == self.tier + 1)


class SharedGraphIndex:
    """Exact scans for small tiers, one shared HNSW graph (faiss) for the large ones.

    >>> idx = SharedGraphIndex(dim=4, n_tiers=2, exact_below=3)
    >>> v = unit(np.eye(4, dtype=np.float32) + 0.1)
    >>> idx.add(1, np.arange(4), v)                        # tier 1 outgrows exact_below: a graph tier
    >>> idx.tiers[1].kind, idx.work_.inserts
    ('graph', 4)
    >>> idx.move(np.array([0]), np.array([1]), np.array([0]), v[:1])   # up into the exact tier 0
    >>> sorted(idx.query(1, v[0], 5)[0].tolist()), idx.query(0, v[0], 5)[0].tolist()
    ([1, 2, 3], [0])
    >>> idx.move(np.array([0]), np.array([0]), np.array([1]), v[:1]); idx.work_.inserts   # back: no new insert
    4
    """

    def __init__(self, dim: int, n_tiers: int, exact_below: int = 5000, M: int = 16, ef_construction: int = 100,
                 ef: int = 64, ef_per_k: float = 1.0, arousal: str = "scan", seed: int = 0, threads: int = 1):
        self.dim = dim
        self.ef_per_k = ef_per_k
        self.arousal = arousal
        self.exact_below = exact_below
        self.M, self.ef_construction, self.ef, self.seed, self.threads = M, ef_construction, ef, seed, threads
        self.tiers: list[ExactTier | GraphTierView] = [ExactTier(dim) for _ in range(n_tiers)]
        self.graph_ = None
        self.gid_ = IdMap(np.int64, -1)           # memory id -> graph id of its current vector, -1: none
        self.mem_ = IdMap(np.int64, -1)           # graph id -> its only member, -1: none (or in shared_)
        self.shared_: dict[int, list[int]] = {}   # graph id -> its members ascending, once given two
        self.is_shared_ = IdMap(bool, False)      # graph id -> in shared_
        self.node_of_: dict[int, int] = {}        # CRC32 of a unit vector's bytes -> its graph id
        self.in_tier_ = IdMap(np.int8, 0)         # memory id -> 1 + its graph tier, 0: not in a graph tier
        self.bitmaps_: list[Bitmap | None] = [None] * n_tiers
        self.any_graph_ = Bitmap(-1)              # union of the graph tiers' bitmaps
        self.everyone_: Bitmap | None = None      # every indexed memory, once arousal walks the graph
        self.insert_model_ = InsertModel()
        self.query_cost_ = float(ef * M)          # mean distances of a graph query, measured as they run
        self.work_ = IndexWork()

    def graph_above(self) -> int:
        """Tier size past which a graph query is cheaper than a scan: max(exact_below, sqrt(q * N))."""
        n = self.graph_.ntotal if self.graph_ is not None else 0
        return max(self.exact_below, int(np.sqrt(self.query_cost_ * n)))

    @property
    def n_tiers(self) -> int:
        return len(self.tiers)

    def sizes(self) -> list[int]:
        return [t.size for t in self.tiers]

    # -- the graph ---------------------------------------------------------------------------
    def _graph(self):
        if self.graph_ is None:
            g = faiss.IndexHNSWFlat(self.dim, self.M, faiss.METRIC_INNER_PRODUCT)
            g.hnsw.efConstruction = self.ef_construction
            g.hnsw.efSearch = self.ef
            g.hnsw.rng = faiss.RandomGenerator(self.seed)    # levels drawn from this seed: the same graph every run
            self.graph_ = g
        return self.graph_

    def _gids(self, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """Graph ids of ``ids``: those without one get the node of an equal vector already in
        the graph, else a new node (one batched insert of the distinct new vectors)."""
        gids = self.gid_[ids]
        new = (gids < 0).nonzero()[0]
        if len(new):
            vecs = unit(np.asarray(vectors)[new])
            _, first, inverse = np.unique(vecs.view(np.dtype((np.void, vecs.shape[1] * 4))).ravel(),
                                          return_index=True, return_inverse=True)
            order = np.argsort(first)                   # distinct vectors in the order they came
            first, inverse = first[order], np.argsort(order)[inverse.ravel()]
            keys = [zlib.crc32(row.tobytes()) for row in vecs[first]]
            nodes = self._nodes_of(keys, vecs[first])
            fresh = (nodes < 0).nonzero()[0]
            if len(fresh):
                nodes[fresh] = self._insert(vecs[first[fresh]])
                for f, node in zip(fresh.tolist(), nodes[fresh].tolist()):
                    self.node_of_.setdefault(keys[f], node)
            gids[new] = nodes[inverse]
            self._give(ids[new], gids[new])
        return gids

    def _nodes_of(self, keys: list[int], rows: np.ndarray) -> np.ndarray:
        """The graph id holding a vector equal to each of ``rows`` (``keys``: the CRC32 of each
        row's bytes), -1 if none: each key looked up, its node's row compared in one gather."""
        nodes = np.array([self.node_of_.get(key, -1) for key in keys], dtype=np.int64)
        known = (nodes >= 0).nonzero()[0]
        if len(known):
            nodes[known[~(self._rows(nodes[known]) == rows[known]).all(axis=1)]] = -1
        return nodes

    def _insert(self, vecs: np.ndarray) -> np.ndarray:
        """Insert distinct unit vectors into the graph; returns their graph ids."""
        g = self._graph()
        self.work_.add(insert_distances_est=self.insert_model_.charge(g, vecs, self.M, self.ef_construction))
        start = g.ntotal
        if self.threads > 1 and len(vecs) >= 1000:
            faiss.omp_set_num_threads(self.threads)
        try:
            g.add(vecs)
        finally:
            faiss.omp_set_num_threads(1)
        self.work_.add(inserts=len(vecs))
        return np.arange(start, start + len(vecs))

    def _give(self, ids: np.ndarray, gids: np.ndarray) -> None:
        """Record memories ``ids`` as members of graph nodes ``gids``: a node's only member in
        ``mem_``; once a node is given a second, all its members in ``shared_``, ascending
        (``_release`` takes a member out when it dies or gets a new vector)."""
        self.gid_[ids] = gids
        nodes, where, n = np.unique(gids, return_index=True, return_counts=True)
        alone = (n == 1) & (self.mem_[nodes] < 0) & ~self.is_shared_[nodes]
        self.mem_[nodes[alone]] = ids[where[alone]]          # grown by doubling: no copy per insert
        rest = np.ones(len(ids), dtype=bool)
        rest[where[alone]] = False
        for i, node in zip(ids[rest].tolist(), gids[rest].tolist()):
            members = self.shared_.get(node)
            if members is None:
                first = int(self.mem_.a[node])
                if first < 0:
                    self.mem_.a[node] = i
                    continue
                members = self.shared_[node] = [first]
                self.is_shared_[[node]] = True
            bisect.insort(members, i)

    def _release(self, ids: np.ndarray) -> None:
        """Memories ``ids`` leave their graph nodes (death, a new vector): out of ``mem_`` or
        ``shared_``, graph id -1."""
        gids = self.gid_[ids]
        for i, node in zip(ids[gids >= 0].tolist(), gids[gids >= 0].tolist()):
            if node in self.shared_:
                self.shared_[node].remove(i)
            else:
                self.mem_.a[node] = -1
        self.gid_[ids] = -1

    def _enter(self, tier: int, ids: np.ndarray, vectors: np.ndarray) -> None:
        gids = self._gids(ids, vectors)
        self.bitmaps_[tier].set(gids)
        self.any_graph_.set(gids)
        self.in_tier_[ids] = tier + 1
        self.tiers[tier].size += len(ids)

    def _leave(self, tier: int, ids: np.ndarray) -> None:
        self._unselect(tier, ids)
        self.tiers[tier].size -= len(ids)
        if self.tiers[tier].size <= self.graph_above() // 2:     # small again: back to an exact scan
            members = self.tiers[tier].members()
            exact = ExactTier(self.dim)
            exact.add(members, self._vectors(members))
            self._unselect(tier, members)
            self.tiers[tier], self.bitmaps_[tier] = exact, None

    def _unselect(self, tier: int, ids: np.ndarray) -> None:
        """Clear ``ids``' bits in their graph tier's bitmap and the union's (the graph keeps them)."""
        gids = self.gid_[ids]
        self.bitmaps_[tier].clear(gids)
        self.any_graph_.clear(gids)
        self.in_tier_[ids] = 0

    def _rows(self, gids: np.ndarray) -> np.ndarray:
        """The graph's (unit) vectors of graph ids ``gids``."""
        xb = faiss.rev_swig_ptr(faiss.downcast_index(self.graph_.storage).get_xb(), self.graph_.ntotal * self.dim)
        return np.asarray(xb).reshape(-1, self.dim)[gids]

    def _vectors(self, ids: np.ndarray) -> np.ndarray:
        """The graph's (unit) vectors of memories ``ids``."""
        return self._rows(self.gid_[ids])

    def _holds(self, bitmap: Bitmap, ids: np.ndarray) -> np.ndarray:
        """Which of memories ``ids`` (each on a node ``bitmap`` selects) the bitmap counts."""
        if bitmap.tier is None:
            return np.ones(len(ids), dtype=bool)
        return _in_tier(bitmap.tier, self.in_tier_[ids])

    def _members(self, bitmap: Bitmap) -> np.ndarray:
        """Every memory ``bitmap`` counts, ascending."""
        if bitmap.tier is None:
            return np.flatnonzero(self.gid_.a >= 0)
        return np.flatnonzero(_in_tier(bitmap.tier, self.in_tier_.a))

    # -- membership --------------------------------------------------------------------------
    def add(self, tier: int, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add memories to a tier; an exact tier growing past ``exact_below`` becomes a graph tier."""
        ids = np.asarray(ids, dtype=np.int64)
        self._add(tier, ids, vectors)
        if self.everyone_ is not None:
            self.everyone_.set(self._gids(ids, np.asarray(vectors, dtype=np.float32)))

    def _add(self, tier: int, ids: np.ndarray, vectors: np.ndarray) -> None:
        t = self.tiers[tier]
        if isinstance(t, ExactTier) and t.size + len(ids) > self.graph_above():
            old_ids, old_vecs = t.ids[: t.size].copy(), t.vectors[: t.size].copy()
            self.tiers[tier], self.bitmaps_[tier] = GraphTierView(self, tier), Bitmap(tier)
            self._enter(tier, np.concatenate([old_ids, ids]),
                        np.concatenate([old_vecs, np.asarray(vectors, dtype=np.float32)]))
        elif isinstance(t, ExactTier):
            t.add(ids, vectors)
        else:
            self._enter(tier, ids, np.asarray(vectors, dtype=np.float32))

    def _remove(self, tier: int, ids: np.ndarray) -> None:
        t = self.tiers[tier]
        if isinstance(t, ExactTier):
            t.remove_many(ids)
        else:
            self._leave(tier, ids)

    def move(self, ids: np.ndarray, old: np.ndarray, new: np.ndarray, vectors: np.ndarray) -> None:
        """Move memories ``ids`` from tiers ``old`` to tiers ``new`` (vectors: their rows)."""
        ids = np.asarray(ids, dtype=np.int64)
        self.work_.add(moves=len(ids))
        for t in distinct(old).tolist():
            self._remove(t, ids[old == t])
        for t in distinct(new).tolist():
            sel = new == t
            self._add(t, ids[sel], np.asarray(vectors, dtype=np.float32)[sel])

    def update(self, tier: int, i: int, vector: np.ndarray) -> None:
        """Memory ``i`` has a new vector: an exact tier overwrites its row; in a graph tier it
        is inserted again under a new graph id (the old entry is never selected again)."""
        t = self.tiers[tier]
        ids = np.array([i], dtype=np.int64)
        self._forget(ids)
        if isinstance(t, ExactTier):
            t.update(i, vector)
            self._release(ids)
            if self.everyone_ is not None:
                self.everyone_.set(self._gids(ids, np.asarray(vector, dtype=np.float32)[None, :]))
        else:
            self._leave(tier, ids)
            self._release(ids)
            self.add(tier, ids, np.asarray(vector, dtype=np.float32)[None, :])

    def remove(self, tier: int, i: int) -> None:
        """Memory ``i`` leaves the indexes (it died); its graph node no longer stands for it."""
        ids = np.array([i], dtype=np.int64)
        self._remove(tier, ids)
        self._forget(ids)
        self._release(ids)

    def _forget(self, ids: np.ndarray) -> None:
        """Clear ``ids``' current graph entries from ``everyone_`` (death or a new vector)."""
        if self.everyone_ is not None:
            gids = self.gid_[ids]
            self.everyone_.clear(gids[gids >= 0])

    def _walk_everyone(self) -> bool:
        """True once arousal walks the graph over every memory (``arousal="walk"`` only):
        switched on (and the exact tiers' members inserted) the first time scanning the
        exact tiers costs more distances than one graph query (``query_cost_``: ef * M
        until a query measures it)."""
        if self.everyone_ is None and self.arousal == "walk":
            exact = [t for t in self.tiers if isinstance(t, ExactTier) and t.size]
            if sum(t.size for t in exact) > self.query_cost_:
                everyone = self.any_graph_.copy(None)              # the graph tiers' members
                for t in exact:
                    everyone.set(self._gids(t.ids[: t.size].copy(), t.vectors[: t.size]))
                self.everyone_ = everyone
        return self.everyone_ is not None

    # -- queries -----------------------------------------------------------------------------
    def _search_graph(self, qs: np.ndarray, k: int, bitmap: Bitmap, size: int):
        """The k nearest selected graph members of each row of ``qs``: (ids, sims) of shape
        (len(qs), k') with k' = min(k, size). The walk asks for min(k', selected nodes) nodes;
        each stands for its selected members (``_expand``)."""
        k = min(k, size)
        if k <= 0:
            return np.zeros((len(qs), 0), dtype=np.int64), np.zeros((len(qs), 0))
        g = self.graph_
        kn = min(k, bitmap.selected_)
        ef = walk_ef(self.ef, self.ef_per_k, kn)
        params = bitmap.params(g.ntotal, ef)
        stats = faiss.cvar.hnsw_stats
        stats.reset()
        qs = unit(qs)
        sims, gids = g.search(qs, kn, params=params)
        self.work_.add(distances=int(stats.ndis), graph_distances=int(stats.ndis), queries=len(qs))
        self.query_cost_ += 0.05 * (stats.ndis / len(qs) - self.query_cost_)
        short = (gids < 0).any(axis=1).nonzero()[0]
        if len(short):      # the filter cut the walk short: once more, wider
            params = faiss.SearchParametersHNSW(sel=bitmap.selector(g.ntotal), efSearch=4 * ef)
            stats.reset()
            sims[short], gids[short] = g.search(qs[short], kn, params=params)
            self.work_.add(distances=int(stats.ndis), graph_distances=int(stats.ndis))
        walked_short = (gids < 0).any(axis=1)
        ids, sims = self._expand(gids, sims, k, bitmap)
        short = (walked_short | (ids < 0).any(axis=1)).nonzero()[0]
        if len(short):      # still short: scan the selected members instead
            ids[short], sims[short] = self._scan(qs[short], k, bitmap)
        return ids, sims

    def _expand(self, gids: np.ndarray, sims: np.ndarray, k: int, bitmap: Bitmap):
        """Walk results (graph ids, -1 padded) as memories: each node's members that
        ``bitmap`` counts, ascending, at the node's similarity; the first k of a row, -1 / -inf
        padded. Only rows holding a node given several memories are expanded, and only up
        to the node where the bitmap's counts reach k."""
        found = gids >= 0
        nodes = np.maximum(gids, 0)
        one = np.where(found, self.mem_.a[nodes], -1)          # mem_ has a slot for every node
        rows = (self.is_shared_[nodes] & found).any(axis=1).nonzero()[0]
        if not len(rows) and gids.shape[1] == k:
            return one, np.where(found, sims.astype(float), -np.inf)
        ids = np.full((len(gids), k), -1, dtype=np.int64)
        out = np.full((len(gids), k), -np.inf)
        ids[:, : gids.shape[1]] = one
        out[:, : gids.shape[1]] = np.where(found, sims, -np.inf)
        for row in rows.tolist():
            m, at = self._walk_members(gids[row], one[row], k, bitmap)
            ids[row], out[row] = -1, -np.inf
            ids[row, : len(m)] = m
            out[row, : len(m)] = sims[row, at]
        return ids, out

    def _walk_members(self, gids: np.ndarray, one: np.ndarray, k: int, bitmap: Bitmap):
        """One walk result row as memories: (the first k that ``bitmap`` counts, node by node
        and ascending within a node; the position in the row of each one's node). Only the
        nodes up to the one where the bitmap's counts reach k are expanded; a node given one
        memory stands for it (``one``), a shared node for its member list."""
        found = (gids >= 0).nonzero()[0]
        nodes = gids[found]
        upto = int(bitmap.count(nodes).cumsum().searchsorted(k)) + 1     # the nodes holding the first k
        found, nodes = found[:upto], nodes[:upto]
        shared = self.is_shared_.a[nodes]
        m, at = one[found], found
        if shared.any():
            lists = [self.shared_[n] for n in nodes[shared].tolist()]
            sizes = np.ones(len(nodes), dtype=np.int64)
            sizes[shared] = [len(x) for x in lists]
            at, m = found.repeat(sizes), m.repeat(sizes)
            m[shared.repeat(sizes)] = np.fromiter(chain.from_iterable(lists), dtype=np.int64,
                                                  count=int(sizes[shared].sum()))
        ok = self._holds(bitmap, m)
        return m[ok][:k], at[ok][:k]

    def _scan(self, qs: np.ndarray, k: int, bitmap: "Bitmap"):
        """Exact k nearest of the memories ``bitmap`` counts (the filtered walk's fallback):
        each selected node scored once (counted as distances) and its members given its
        similarity; equal similarities in graph-id order, a node's members in ascending id."""
        ids = self._members(bitmap)
        gids = self.gid_[ids]
        order = np.lexsort((ids, gids))
        ids, gids = ids[order], gids[order]
        nodes, inverse = np.unique(gids, return_inverse=True)
        sims = qs @ self._rows(nodes).T
        self.work_.add(distances=sims.size)
        if len(nodes) < len(ids):
            sims = sims[:, inverse.ravel()]
        top = top_per_row(sims, k)          # the stable sort's first k, without sorting every member
        return ids[top], pick(sims, top).astype(float)

    def query_many(self, tier: int, qs: np.ndarray, k: int):
        """Each row of ``qs`` against one tier: (ids, sims, scored per query) — an exact tier
        returns all members (ids 1-D, sims 2-D), a graph tier its k nearest (2-D, -1 padded)."""
        t = self.tiers[tier]
        qs = np.atleast_2d(np.asarray(qs, dtype=np.float32))
        if isinstance(t, ExactTier):
            self.work_.add(distances=t.size * len(qs), queries=len(qs))
            return t.query_many(qs, k)
        ids, sims = self._search_graph(qs, k, self.bitmaps_[tier], t.size)
        return ids, sims, ids.shape[1]

    def query(self, tier: int, q: np.ndarray, k: int):
        """One query against one tier: (ids, cosine similarities, scored)."""
        t = self.tiers[tier]
        if isinstance(t, ExactTier):
            self.work_.add(distances=t.size, queries=1)
            return t.query(q, k)
        ids, sims, scored = self.query_many(tier, np.asarray(q)[None, :], k)
        keep = ids[0] >= 0
        return ids[0][keep], sims[0][keep], int(keep.sum())

    def query_all(self, qs: np.ndarray, k: int):
        """Every tier at once for each row of ``qs``: each exact tier scanned in full (every
        member scored) and its k most similar kept, and the k nearest over all graph tiers in
        one graph query — or, once the graph holds every memory (``_walk_everyone``), the k
        nearest of the whole store in one graph query. Returns (ids, sims), both (len(qs), C),
        -1 / -inf padded, the candidates in tier order and, within an exact tier, in its row
        order (so the k best of a row, ties broken by position, are those of the full scan),
        and the candidates scored per query."""
        qs = np.atleast_2d(np.asarray(qs, dtype=np.float32))
        if self._walk_everyone():
            ids, sims = self._search_graph(qs, k, self.everyone_, sum(self.sizes()))
            return ids, sims, int((ids[0] >= 0).sum()) if len(ids) else 0
        ids, sims, scored = [], [], 0
        for tier in range(self.n_tiers):
            t = self.tiers[tier]
            if isinstance(t, ExactTier) and t.size:
                self.work_.add(distances=t.size * len(qs), queries=len(qs))
                scored += t.size
                t_ids, t_sims = t.nearest_in_order(qs, k)
                ids.append(t_ids)
                sims.append(t_sims)
        in_graph = sum(t.size for t in self.tiers if not isinstance(t, ExactTier))
        if in_graph:
            g_ids, g_sims = self._search_graph(qs, k, self.any_graph_, in_graph)
            ids.append(g_ids)
            sims.append(g_sims)
            scored += int((g_ids[0] >= 0).sum()) if len(g_ids) else 0
        if not ids:
            return np.zeros((len(qs), 0), dtype=np.int64), np.zeros((len(qs), 0)), 0
        return np.concatenate(ids, axis=1), np.concatenate(sims, axis=1), scored
