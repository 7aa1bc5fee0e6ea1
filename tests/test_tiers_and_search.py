"""Tier policies, depth policies, arousal math, the per-tier indexes and tiered search."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.mechanisms.arousal import Knn, NoArousal, Radius
from mtsbench.mechanisms.decay import NoDecay
from mtsbench.mechanisms.depth import Escalate, Fixed, Full, Linear
from mtsbench.mechanisms.tiers import Capacity, Heat, Thresholds
from mtsbench.memory.attention import DualAttention
from mtsbench.memory.index import ExactTier, HnswTier, TierIndexes
from mtsbench.memory.retrieval import TieredSearch
from mtsbench.memory.topk import rank
from mtsbench.memory.store import MemoryStore


def unit_rows(n, dim, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_thresholds_hysteresis_keeps_border_memories_still():
    p = Thresholds(cutoffs=[5.0, 2.0, 0.5], hysteresis=0.25)
    a = np.array([5.2, 4.8, 4.7, 0.2])
    assert p.assign(a, np.array([1, 0, 0, 2]), None, None, None).tolist() == [1, 0, 1, 3]


def test_capacity_ranks_and_remembers_boundaries():
    p = Capacity(sizes=[2, 3])
    att = np.array([0.5, 9.0, 8.0, 7.0, 1.0, 0.2, 6.0])
    assert p.assign(att, np.full(7, 2), None, None, None).tolist() == [2, 0, 0, 1, 1, 2, 1]
    # a memory lifted to 8.5 after the rebalance beats tier 0's boundary (8.0)
    assert p.assign(np.array([8.5, 0.1]), np.array([2, 2]), None, None, None, full=False).tolist() == [0, 2]


def test_heat_follows_memoryos_formula():
    h = Heat(alpha=1, beta=1, gamma=1, mu_hours=24.0, threshold=5.0)
    heat = h.heat(np.array([3]), np.array([1]), np.array([24.0]))
    assert heat[0] == pytest.approx(3 + 1 + np.exp(-1))


def test_depth_policies():
    assert [Linear().limit(m, 4) for m in (0.1, 0.3, 0.6, 0.9)] == [1, 2, 3, 4]
    assert Full().limit(0.0, 4) == 4 and Fixed(n=2).limit(1.0, 4) == 2
    e = Escalate(confidence=0.6)
    assert e.go_deeper(1, 0.5, 9, 5) and not e.go_deeper(1, 0.7, 9, 5)


def test_arousal_amounts_by_hand():
    r = Radius(r=0.25, gain=3.0, strength=3.0)
    sims = np.array([0.85, 0.55, 0.2])
    spread = (3.0 - np.log(2)) / 3.0
    assert r.amounts(sims).tolist() == pytest.approx([3 * 0.85 * spread, 3 * 0.55 * spread, 0.0])
    # a hub with 30 neighbours spreads thinner per neighbour than a memory with 2
    hub = r.amounts(np.full(30, 0.85))
    assert hub[0] < r.amounts(sims)[0]
    assert Knn(k=1, gain=2.0).amounts(np.array([0.5, 0.4])).tolist() == [1.0, 0.0]
    assert NoArousal().neighbors == 0


def test_exact_tier_swap_remove_keeps_members():
    t = ExactTier(dim=4, capacity=2)
    t.add(np.array([10, 11, 12]), np.eye(4, dtype=np.float32)[:3])
    t.remove(10)
    ids, sims, scored = t.query(np.eye(4, dtype=np.float32)[2], 5)
    assert sorted(ids.tolist()) == [11, 12] and scored == 2
    assert sims[ids.tolist().index(12)] == pytest.approx(1.0)


def test_hnsw_tier_returns_what_the_exact_scan_returns_when_ef_is_large():
    vecs = unit_rows(3000, 32)
    ids = np.arange(3000) + 7
    exact = ExactTier(dim=32)
    exact.add(ids, vecs)
    hnsw = HnswTier(dim=32, capacity=100, M=16, ef_construction=200, ef=400)   # resized as it grows
    for chunk in np.array_split(np.arange(3000), 10):
        hnsw.add(ids[chunk], vecs[chunk])
    for i in (5, 50, 500, 1500):       # moved out and back in, as tier changes do
        hnsw.remove(int(ids[i]))
    for i in (5, 50):
        hnsw.add(ids[[i]], vecs[[i]])
    exact.remove(int(ids[500]))
    exact.remove(int(ids[1500]))
    for q in unit_rows(20, 32, seed=1):
        e_ids, e_sims, _ = exact.query(q, 10)
        top = e_ids[np.argsort(-e_sims, kind="stable")[:10]]
        h_ids, h_sims, scored = hnsw.query(q, 10)
        assert scored == 10 and set(h_ids.tolist()) == set(top.tolist())
        assert int(ids[500]) not in h_ids


def test_tier_indexes_switch_to_hnsw_above_threshold_and_move_members():
    idx = TierIndexes(dim=16, n_tiers=2, exact_below=50, ef=200)
    v = unit_rows(120, 16)
    idx.add(1, np.arange(120), v)
    assert idx.tiers[1].kind == "hnsw" and idx.tiers[0].kind == "exact"
    idx.move(np.array([3, 4]), np.array([1, 1]), np.array([0, 0]), v[[3, 4]])
    assert idx.sizes() == [2, 118]
    ids, _, _ = idx.query(1, v[3], 5)
    assert 3 not in ids.tolist()
    ids, sims, scored = idx.query(0, v[3], 5)
    assert sorted(ids.tolist()) == [3, 4] and scored == 2


def _store(n_top, n_bottom, dim=32):
    store, att = MemoryStore(dim=dim), DualAttention(NoDecay(), NoDecay(), long_share=1.0)
    v = unit_rows(n_top + n_bottom, dim)
    for i in range(n_top + n_bottom):
        store.add(f"m{i}", "turn", created=0.0, provenance=(f"s{i}",), vector=v[i])
    att.label(store, np.arange(n_top + n_bottom), np.r_[np.full(n_top, 8.0), np.full(n_bottom, 1.0)], 0.0)
    idx = TierIndexes(dim, 2)
    idx.add(0, np.arange(n_top), v[:n_top])
    idx.add(1, np.arange(n_top, n_top + n_bottom), v[n_top:])
    store.tier[n_top:] = 1
    return store, att, idx, v


def test_low_motivation_searches_only_the_top_tier_and_counts_exactly():
    store, att, idx, v = _store(10, 90)
    s = TieredSearch()
    low = s.search(store, att, idx, Linear(), v[50], 5, 0.2, 0.0)
    assert (low.cost.scored, low.cost.tiers_searched, low.cost.index_queries) == (10, 1, 1)
    assert 50 not in low.ids.tolist()
    high = s.search(store, att, idx, Linear(), v[50], 5, 0.9, 0.0)
    assert (high.cost.scored, high.cost.tiers_searched) == (100, 2)
    assert high.ids[0] == 50
    assert np.all(np.diff(high.scores) <= 0)


def test_escalate_goes_deeper_only_when_unsure():
    store, att, idx, v = _store(10, 90)
    s = TieredSearch()
    sure = s.search(store, att, idx, Escalate(confidence=0.5), v[3], 5, 1.0, 0.0)     # exact hit on top
    unsure = s.search(store, att, idx, Escalate(confidence=0.5), v[50], 5, 1.0, 0.0)  # the hit is below
    assert sure.cost.tiers_searched == 1 and unsure.cost.tiers_searched == 2
    assert unsure.ids[0] == 50


def test_a_mostly_deleted_hnsw_tier_still_answers_with_its_live_members():
    from mtsbench.memory.index import HnswTier

    rng = np.random.default_rng(0)
    for _ in range(30):
        vectors = rng.normal(size=(45, 16)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        tier = HnswTier(16, 64, seed=0)
        tier.add(np.arange(45), vectors)
        gone = rng.choice(45, 37, replace=False)
        for i in gone:
            tier.remove(int(i))
        q = rng.normal(size=16).astype(np.float32)
        ids, sims, scored = tier.query(q / np.linalg.norm(q), 50)
        live = sorted(set(range(45)) - set(gone.tolist()))
        assert sorted(ids.tolist()) == live and scored == len(live)
        assert np.allclose(sims, vectors[ids] @ (q / np.linalg.norm(q)), atol=1e-5)


@settings(max_examples=200, deadline=None)
@given(scores=st.lists(st.integers(0, 6), min_size=1, max_size=300), k=st.integers(1, 60))
def test_rank_is_the_stable_sorts_first_k(scores, k):
    s = np.array(scores, dtype=float) / 3.0          # many ties
    assert rank(s, k).tolist() == np.argsort(-s, kind="stable")[:k].tolist()
