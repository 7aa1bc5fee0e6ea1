"""The shared-graph tier index, batched arousal and attention evaluated only where it can matter."""

import faiss
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.mechanisms.arousal import Knn, Radius
from mtsbench.mechanisms.decay import Exponential, NoDecay
from mtsbench.memory.attention import DualAttention
from mtsbench.memory.graph_index import SharedGraphIndex, _tally, unit
from mtsbench.memory.index import ExactTier
from mtsbench.memory.retrieval import TieredSearch
from mtsbench.memory.topk import rank, top_per_row
from mtsbench.memory.store import MemoryStore


def unit_rows(n, dim, seed=0):
    return unit(np.random.default_rng(seed).normal(size=(n, dim)))


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 2)), min_size=1, max_size=120),
       seed=st.integers(0, 3))
def test_members_follow_every_move_and_the_graph_is_never_rebuilt(ops, seed):
    v = unit_rows(60, 8, seed)
    idx = SharedGraphIndex(dim=8, n_tiers=3, exact_below=6, ef=64)
    where: dict[int, int] = {}
    moves = 0
    for i, tier in ops:
        if i in where:
            if where[i] != tier:
                moves += 1
                idx.move(np.array([i]), np.array([where[i]]), np.array([tier]), v[[i]])
        else:
            idx.add(tier, np.array([i]), v[[i]])
        where[i] = tier
    for t in range(3):
        members = sorted(i for i, w in where.items() if w == t)
        assert sorted(idx.tiers[t].members().tolist()) == members
        assert idx.tiers[t].size == len(members)
        ids, _, _ = idx.query(t, v[0], 100)
        assert set(ids.tolist()) <= set(members)
        if isinstance(idx.tiers[t], ExactTier):
            assert sorted(ids.tolist()) == members
    # one insert per memory that ever entered a graph tier, however often it moved
    assert idx.work_.inserts <= len(where)
    assert idx.work_.moves == moves


def test_a_memory_moving_between_graph_tiers_is_inserted_once():
    v = unit_rows(40, 8)
    idx = SharedGraphIndex(dim=8, n_tiers=3, exact_below=4, M=4, ef=4)   # graph_above: sqrt(16 * 20) < 20
    idx.add(1, np.arange(20), v[:20])
    idx.add(2, np.arange(20, 40), v[20:])
    assert idx.work_.inserts == 40
    for _ in range(5):
        idx.move(np.array([3]), np.array([1]), np.array([2]), v[[3]])
        idx.move(np.array([3]), np.array([2]), np.array([1]), v[[3]])
    assert idx.work_.inserts == 40 and idx.work_.moves == 10 and idx.graph_.ntotal == 40


def test_a_filtered_graph_tier_finds_its_nearest_members():
    n, dim = 4000, 16
    v = unit_rows(n, dim, 1)
    rng = np.random.default_rng(2)
    small = np.sort(rng.choice(n, n // 10, replace=False))
    idx = SharedGraphIndex(dim=dim, n_tiers=2, exact_below=100)
    idx.query_cost_ = 1.0          # as if graph queries were cheap: tier 0 goes on the graph, through the filter
    idx.add(1, np.setdiff1d(np.arange(n), small), v[np.setdiff1d(np.arange(n), small)])
    idx.add(0, small, v[small])                      # tier 0: 10% of the graph, through the bitmap
    assert idx.tiers[0].kind == "graph"
    hits = 0
    for q in unit_rows(50, dim, 3):
        ids, _, _ = idx.query(0, q, 10)
        exact = small[np.argsort(-(v[small] @ q), kind="stable")[:10]]
        assert set(ids.tolist()) <= set(small.tolist())
        hits += len(set(ids.tolist()) & set(exact.tolist()))
    assert hits / 500 >= 0.9


def test_graph_tiers_start_where_a_scan_costs_more_than_a_graph_query():
    v = unit_rows(5000, 8, 7)
    idx = SharedGraphIndex(dim=8, n_tiers=3, exact_below=100)
    idx.add(2, np.arange(2000), v[:2000])                 # the first graph tier: past exact_below
    assert idx.tiers[2].kind == "graph" and idx.graph_above() == int(np.sqrt(idx.query_cost_ * 2000))
    idx.add(1, np.arange(2000, 2000 + idx.graph_above()), v[2000:2000 + idx.graph_above()])
    assert idx.tiers[1].kind == "exact"                   # sqrt(q * N) members: still cheaper to scan
    idx.add(1, np.array([4999]), v[[4999]])
    assert idx.tiers[1].kind == "graph"
    half = idx.graph_above() // 2
    gone = idx.tiers[1].members()[: idx.tiers[1].size - half]
    idx.move(gone, np.ones(len(gone), dtype=np.int8), np.zeros(len(gone), dtype=np.int8), v[gone])
    assert idx.tiers[1].kind == "exact" and idx.tiers[1].size == half


def test_a_mostly_unselected_graph_tier_still_answers_with_all_its_members():
    v = unit_rows(300, 16, 4)
    idx = SharedGraphIndex(dim=16, n_tiers=2, exact_below=10)
    idx.query_cost_ = 0.01         # tier 1 stays on the graph when it shrinks to 8 members
    idx.add(1, np.arange(300), v)
    idx.move(np.arange(292), np.ones(292, dtype=np.int8), np.zeros(292, dtype=np.int8), v[:292])
    ids, sims, scored = idx.query(1, v[299], 50)
    assert sorted(ids.tolist()) == list(range(292, 300)) and scored == 8
    assert np.allclose(sims, v[ids] @ v[299], atol=1e-5)


def test_distances_are_faiss_own_count_and_exact_scans_count_their_members():
    v = unit_rows(3000, 16, 5)
    idx = SharedGraphIndex(dim=16, n_tiers=2, exact_below=1000)
    idx.add(0, np.arange(500), v[:500])
    idx.add(1, np.arange(500, 3000), v[500:])
    before = idx.work_.copy()
    idx.query(0, v[1], 10)
    assert idx.work_.minus(before).distances == 500
    before = idx.work_.copy()
    idx.query(1, v[1], 10)
    first = idx.work_.minus(before)
    stats = faiss.cvar.hnsw_stats
    stats.reset()
    idx.graph_.search(v[1][None, :], 10, params=faiss.SearchParametersHNSW(
        sel=idx.bitmaps_[1].selector(idx.graph_.ntotal), efSearch=idx.ef))
    assert first.distances == first.graph_distances == stats.ndis > 10


def test_the_insert_estimate_matches_a_measured_beam_search_count():
    """Each insert is charged the mean ndis of beam searches at ef_construction; measured on the
    inserted vectors themselves before they go in, the count agrees within 25%."""
    v = unit_rows(6000, 16, 6)
    idx = SharedGraphIndex(dim=16, n_tiers=1, exact_below=10, ef_construction=100)
    idx.add(0, np.arange(4000), v[:4000])
    batch = v[4000:4400]
    stats = faiss.cvar.hnsw_stats
    stats.reset()
    idx.graph_.search(batch, 2 * idx.M, params=faiss.SearchParametersHNSW(efSearch=idx.ef_construction))
    measured = stats.ndis
    before = idx.work_.copy()
    idx.insert_model_.measured_at_ = 0           # re-measure on this graph
    idx.add(0, np.arange(4000, 4400), batch)
    estimated = idx.work_.minus(before).insert_distances_est
    assert abs(estimated - measured) / measured <= 0.25


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(st.integers(0, 5), min_size=12, max_size=12), min_size=1, max_size=6),
       k=st.integers(1, 14))
def test_top_per_row_is_rank_row_by_row(rows, k):
    scores = np.array(rows, dtype=float)
    assert top_per_row(scores, k).tolist() == [rank(r, k).tolist() for r in scores]


@settings(max_examples=100, deadline=None)
@given(sims=st.lists(st.lists(st.floats(-1, 1), min_size=5, max_size=5), min_size=1, max_size=4))
def test_arousal_amounts_of_many_sources_are_each_sources_own(sims):
    s = -np.sort(-np.array(sims), axis=1)
    for policy in (Radius(r=0.2, gain=3.0, strength=2.0), Knn(k=2, gain=1.5)):
        assert np.allclose(policy.amounts(s), np.array([policy.amounts(row) for row in s]))


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 80), top=st.integers(1, 30), weight=st.sampled_from([0.0, 0.3, 2.0]),
       seed=st.integers(0, 10**6))
def test_bounded_scoring_ranks_exactly_as_full_scoring(n, top, weight, seed):
    rng = np.random.default_rng(seed)
    store = MemoryStore(dim=2)
    ids = store.add_many([f"m{i}" for i in range(n)], "turn", created=0.0, vectors=np.zeros((n, 2)),
                         provenance=[()] * n)
    att = DualAttention(NoDecay(), Exponential(half_life=2.0), long_share=0.4)
    att.label(store, ids, rng.integers(0, 11, n).astype(float), 0.0)
    rel = np.round(rng.uniform(-1, 1, n), 1)                 # ties on purpose
    search = TieredSearch(attention_weight=weight)
    full = search.combine(rel, att.total(store, ids, 3600.0))
    bounded, a = search.bounded(store, att, ids, rel, 3600.0, top)
    order = rank(full, top)
    assert rank(bounded, top).tolist() == order.tolist()
    assert np.allclose(bounded[order], full[order])
    assert not np.isnan(a[order]).any()


def brute_top(v, live, q, k):
    live = np.array(sorted(live))
    return set(live[np.argsort(-(v[live] @ q), kind="stable")[:k]].tolist())


def test_arousal_walks_one_graph_over_every_memory_once_scanning_the_exact_tiers_costs_more():
    """Past q exact-tier members every memory is in the graph (inserts counted) and
    query_all is one walk over all of them; deaths and new vectors stay exact."""
    rng = np.random.default_rng(7)
    v = unit_rows(400, 8, seed=1)
    idx = SharedGraphIndex(dim=8, n_tiers=3, exact_below=40, M=8, ef=64, arousal="walk")
    idx.query_cost_ = 60.0                       # a graph query's distances, as if measured
    idx.add(2, np.arange(200, 300), v[200:300])  # a graph tier (the switch does not need one)
    idx.add(0, np.arange(0, 30), v[:30])
    idx.add(1, np.arange(30, 60), v[30:60])      # 60 exact members: not more than q yet
    idx.query_all(v[:2], 5)
    assert idx.everyone_ is None and idx.work_.inserts == 100
    idx.add(1, np.arange(60, 70), v[60:70])      # 70 > q: the next arousal query switches
    idx.query_all(v[:2], 5)
    assert idx.everyone_ is not None and idx.work_.inserts == 170
    idx.add(0, np.array([70]), v[[70]])          # from now on each new memory is inserted at creation
    assert idx.work_.inserts == 171
    live = set(range(71)) | set(range(200, 300))
    idx.remove(0, 3)
    live.discard(3)
    v[5] = unit(rng.normal(size=(1, 8)))[0]
    idx.update(0, 5, v[5])
    idx.move(np.array([10, 210]), np.array([0, 2]), np.array([2, 0]), v[[10, 210]])
    hits = 0
    for q in v[rng.choice(sorted(live), 40, replace=False)]:
        ids, sims, scored = idx.query_all(q[None, :], 6)
        found = {int(i) for i in ids[0] if i >= 0}
        assert found <= live and scored == 6
        got = {int(i): float(s) for i, s in zip(ids[0], sims[0]) if i >= 0}
        assert all(abs(s - float(v[i] @ q)) < 1e-5 for i, s in got.items())   # never a stale vector
        hits += len(found & brute_top(v, live, q, 6))
    assert hits >= 0.95 * 40 * 6
    assert idx.query_all(v[[5]], 1)[0][0, 0] == 5      # found by its new vector


@pytest.mark.parametrize("arousal", ["scan", "walk"])
def test_small_stores_keep_arousal_on_exact_scans(arousal):
    """Fewer exact members than a graph query's distances: arousal stays an exact scan
    under either option, and no graph is built."""
    v = unit_rows(50, 8)
    idx = SharedGraphIndex(dim=8, n_tiers=2, exact_below=2048, arousal=arousal)
    idx.add(0, np.arange(50), v)
    ids, sims, scored = idx.query_all(v[:1], 3)
    assert idx.everyone_ is None and idx.graph_ is None and scored == 50


def test_arousal_scan_never_walks_the_whole_store():
    """The default: the exact tiers are scanned in full however large they grow."""
    v = unit_rows(300, 8, seed=3)
    idx = SharedGraphIndex(dim=8, n_tiers=3, exact_below=100, M=8, ef=16)
    idx.add(2, np.arange(150), v[:150])               # a graph tier
    idx.add(0, np.arange(150, 250), v[150:250])
    idx.add(1, np.arange(250, 300), v[250:300])       # 150 exact members > q
    ids, sims, scored = idx.query_all(v[:1], 4)
    assert idx.everyone_ is None and idx.work_.inserts == 150 and scored == 150 + 4


def test_the_switch_builds_the_graph_when_every_tier_is_still_exact():
    v = unit_rows(300, 8, seed=2)
    idx = SharedGraphIndex(dim=8, n_tiers=2, exact_below=2048, M=8, ef=16, arousal="walk")   # q = ef*M = 128
    idx.add(0, np.arange(100), v[:100])
    idx.add(1, np.arange(100, 128), v[100:128])
    idx.query_all(v[:1], 4)
    assert idx.graph_ is None and idx.everyone_ is None
    idx.add(1, np.array([128, 129]), v[128:130])  # 130 exact members > 128
    ids, sims, scored = idx.query_all(v[:1], 4)
    assert idx.graph_.ntotal == 130 and idx.work_.inserts == 130 and scored == 4
    assert ids[0, 0] == 0 and [t.kind for t in idx.tiers] == ["exact", "exact"]


def test_equal_vectors_share_one_node_and_a_walk_finds_every_copy():
    """40 copies of one vector among 3,000 others, neighbour lists of 2M = 8: one node per
    memory would make the copies a closed clique (a walk ending there finds at most 40 and
    falls back to scanning the tier). One node per distinct vector: the walk returns all 40
    copies first, ascending, then the nearest others, without the fallback."""
    v = unit_rows(3000, 16, 8)
    copies = np.repeat(v[:1], 40, axis=0)
    idx = SharedGraphIndex(dim=16, n_tiers=2, exact_below=100, M=4)
    idx.add(1, np.arange(3000, 3040), copies)
    idx.add(1, np.arange(1, 3000), v[1:])
    assert idx.work_.inserts == 3000 and idx.graph_.ntotal == 3000
    before = idx.work_.copy()
    ids, sims, scored = idx.query(1, v[0], 50)
    assert ids[:40].tolist() == list(range(3000, 3040)) and np.allclose(sims[:40], 1.0, atol=1e-5)
    others = np.argsort(-(v[1:] @ v[0]), kind="stable")[:10] + 1
    assert len(set(ids[40:].tolist()) & set(others.tolist())) >= 9 and scored == 50
    assert idx.work_.minus(before).distances < 3040           # a walk, not the fallback's scan
    idx.move(np.arange(3000, 3010), np.ones(10, dtype=np.int8), np.zeros(10, dtype=np.int8), copies[:10])
    ids, _, _ = idx.query(1, v[0], 35)
    assert ids[:30].tolist() == list(range(3010, 3040))        # moved copies are not the tier's any more


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.sampled_from(["put", "put", "put", "die", "rewrite"]), st.integers(0, 49),
                              st.integers(0, 2), st.integers(0, 5)), min_size=1, max_size=150),
       arousal=st.sampled_from(["scan", "walk"]))
def test_memories_sharing_nodes_are_found_as_themselves_through_every_change(ops, arousal):
    """Vectors drawn from 6, so most memories share a node: after any adds, moves, deaths and
    rewrites every query returns each live member of the asked tier(s) at most once, at the
    similarity of its current vector, and a query asking for a whole tier gets all of it; each
    node's member list holds exactly the memories whose current vector it is, ascending."""
    pool = unit_rows(6, 8, 9)
    idx = SharedGraphIndex(dim=8, n_tiers=3, exact_below=4, M=4, ef=16, arousal=arousal)
    idx.query_cost_ = 2.0
    where: dict[int, int] = {}
    vec: dict[int, int] = {}
    dead: set[int] = set()
    for op, i, tier, p in ops:
        if i in dead:
            continue
        if op == "put" and i not in where:
            idx.add(tier, np.array([i]), pool[[p]])
            where[i], vec[i] = tier, p
        elif op == "put" and where[i] != tier:
            idx.move(np.array([i]), np.array([where[i]]), np.array([tier]), pool[[vec[i]]])
            where[i] = tier
        elif op == "die" and i in where:
            idx.remove(where.pop(i), i)
            dead.add(i)
        elif op == "rewrite" and i in where:
            idx.update(where[i], i, pool[p])
            vec[i] = p
        holders = {n: np.flatnonzero(idx.gid_.a == n).tolist() for n in range(idx.mem_.a.size)}
        for n, held in holders.items():         # a node's member list is exactly its members, ascending
            assert idx.shared_[n] == held if n in idx.shared_ else idx.mem_.a[n] == (held[0] if held else -1)
        q = pool[p]
        for t in range(3):
            members = sorted(m for m, w in where.items() if w == t)
            ids, sims, _ = idx.query(t, q, len(members) or 1)
            assert sorted(ids.tolist()) == members
            assert np.allclose(sims, pool[[vec[m] for m in ids.tolist()]] @ q, atol=1e-5)
        ids, sims, _ = idx.query_all(q[None, :], 3)
        got = ids[0][ids[0] >= 0].tolist()
        assert len(got) == len(set(got)) and set(got) <= set(where)
        assert np.allclose(sims[0][ids[0] >= 0], pool[[vec[m] for m in got]] @ q, atol=1e-5)


def a_tier_of_one_vector_and_ten_copies(dim=16, seed=2, **index):
    """Tier 0: memory 0 with vector A, memories 1-10 sharing vector B (one node)."""
    pool = unit_rows(2, dim, seed)
    idx = SharedGraphIndex(dim=dim, n_tiers=2, exact_below=10, **index)
    idx.add(0, np.arange(11), np.concatenate([pool[:1], np.repeat(pool[1:], 10, axis=0)]))
    return idx, pool


def test_a_walk_that_comes_back_short_falls_back_though_a_shared_node_fills_k():
    """A walk that cannot reach the tier's other node is short even when the copies it found
    fill k: the fallback scans, so the nearest memory is never missing (a walk at ef 1 on a
    graph of M = 2 misses memory 0 in 2 of these 1,500 queries)."""
    rng = np.random.default_rng(2)
    missing = 0
    for _ in range(30):
        pool = unit(rng.standard_normal((2, 16)))
        big = rng.standard_normal((5000, 16)).astype(np.float32)
        idx = SharedGraphIndex(dim=16, n_tiers=2, exact_below=10, M=2, ef=1, ef_construction=8)
        idx.add(0, np.arange(11), np.concatenate([pool[:1], np.repeat(pool[1:], 10, axis=0)]))
        idx.add(1, np.arange(100, 5100), big)
        for q in unit(rng.standard_normal((50, 16))):
            ids, _, _ = idx.query(0, q, 5)
            missing += pool[0] @ q > pool[1] @ q + 1e-3 and 0 not in ids.tolist()
    assert missing == 0


def test_the_fallback_gives_copies_one_similarity_in_ascending_id():
    idx, _ = a_tier_of_one_vector_and_ten_copies(M=4)
    for q in unit_rows(100, 16, 5):
        ids, sims = idx._scan(q[None, :], 5, idx.bitmaps_[0])
        copies = [i for i in ids[0].tolist() if i]
        assert copies == sorted(copies) and len(set(sims[0][ids[0] > 0].tolist())) <= 1


def test_distinct_vectors_enter_the_graph_in_the_order_given():
    idx = SharedGraphIndex(dim=8, n_tiers=2, exact_below=10, M=4)
    idx.add(1, np.arange(400), unit_rows(400, 8, 11))
    assert idx.gid_[np.arange(400)].tolist() == list(range(400))


@settings(max_examples=200, deadline=None)
@given(gids=st.lists(st.integers(0, 12), min_size=1, max_size=40))
def test_tally_is_np_unique_with_counts(gids):
    """A bitmap's per-node counts: the distinct graph ids ascending and how often each occurs."""
    nodes, n = _tally(np.array(gids, dtype=np.int64))
    expected_nodes, expected_n = np.unique(gids, return_counts=True)
    assert nodes.tolist() == expected_nodes.tolist() and n.tolist() == expected_n.tolist()
    assert n.dtype == np.int64
