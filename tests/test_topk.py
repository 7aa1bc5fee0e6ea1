"""Exact top-k with ties broken by position (``mtsbench.memory.topk``): the group-maxima
bound must never change a selection — each function against a full stable sort, on rows
long enough for the bound to be used, with ties, -inf, NaN and float32; and the tier
of an attention among cut-offs, against counting them; ``distinct`` against np.unique."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.memory.index import ExactTier
from mtsbench.memory.topk import (BLOCK, distinct, distinct_inverse, kth_largest, lower_bounds, rank, run_starts,
                                   top_per_row)


@st.composite
def score_rows(draw):
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 40 * BLOCK))
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    levels = draw(st.sampled_from([3, 50, 10**6]))                     # few levels: many ties
    scores = rng.integers(0, levels, size=(rows, cols)) / levels
    if draw(st.booleans()):
        scores[rng.random(scores.shape) < 0.2] = -np.inf
    if draw(st.integers(0, 9)) == 0:
        scores[rng.random(scores.shape) < 0.01] = np.nan
    return scores.astype(draw(st.sampled_from([np.float64, np.float32])))


def stable_top(row: np.ndarray, k: int) -> list[int]:
    return np.argsort(-row.astype(float), kind="stable")[:k].tolist()


@settings(max_examples=300, deadline=None)
@given(scores=score_rows(), k=st.integers(1, 12))
def test_top_per_row_and_rank_are_the_stable_sorts_first_k(scores, k):
    assert top_per_row(scores, k).tolist() == [stable_top(row, k) for row in scores]
    assert rank(scores[0], k).tolist() == stable_top(scores[0], k)


@settings(max_examples=300, deadline=None)
@given(scores=score_rows(), k=st.integers(1, 12))
def test_the_bound_is_at_most_the_kth_largest(scores, k):
    bound = lower_bounds(scores, k)
    if bound is None:
        assert scores.shape[1] < 8 * k or np.isnan(scores).any()
        return
    for row, b in zip(scores, bound):
        assert b <= -np.sort(-row)[k - 1] and (row >= b).sum() >= k


@settings(max_examples=200, deadline=None)
@given(scores=score_rows(), k=st.integers(1, 12))
def test_kth_largest_is_the_partitions(scores, k):
    values = scores[0][~np.isnan(scores[0])].astype(float)
    k = min(k, len(values))
    if k:
        assert kth_largest(values, k) == -np.partition(-values, k - 1)[k - 1]


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 3000), k=st.integers(1, 12), seed=st.integers(0, 10**6))
def test_an_exact_tiers_nearest_are_the_full_scans_best_in_row_order(n, k, seed):
    rng = np.random.default_rng(seed)
    tier = ExactTier(dim=4)
    vectors = rng.integers(-2, 3, size=(n, 4)).astype(np.float32)    # repeated vectors: tied similarities
    tier.add(np.arange(100, 100 + n), vectors)
    qs = rng.integers(-2, 3, size=(2, 4)).astype(np.float32)
    ids, sims = tier.nearest_in_order(qs, k)
    for q, row_ids, row_sims in zip(qs, ids, sims):
        full = (vectors @ q).astype(float)
        best = sorted(stable_top(full, k))
        assert row_ids.tolist() == [100 + i for i in best] and row_sims.tolist() == full[best].tolist()


@settings(max_examples=300, deadline=None)
@given(attention=st.lists(st.sampled_from([-np.inf, 0.0, 0.5, 1.99, 2.0, 2.01, 5.0, 9.0, np.inf, np.nan]), max_size=20),
       cutoffs=st.lists(st.sampled_from([-np.inf, 0.5, 2.0, 5.0, np.inf, np.nan]), max_size=4))
def test_tiers_by_cutoffs_counts_the_cutoffs_strictly_above(attention, cutoffs):
    from mtsbench.mechanisms.tiers import tiers_by_cutoffs

    a, c = np.array(attention, dtype=float), np.array(cutoffs, dtype=float)
    expected = [sum(x < y for y in cutoffs) for x in attention]        # NaN compares False
    assert tiers_by_cutoffs(a, c).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-3, 3), max_size=40))
def test_run_starts_are_where_a_sorted_arrays_values_change(values):
    v = np.sort(np.array(values, dtype=np.int64))
    expected = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if len(v) else np.zeros(0, dtype=np.int64)
    assert run_starts(v).tolist() == expected.tolist()


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-5, 40), max_size=60), dtype=st.sampled_from([np.int64, np.int8, np.int32]))
def test_distinct_is_np_unique_with_its_inverse(values, dtype):
    a = np.array(values, dtype=dtype)
    u, inverse = distinct_inverse(a)
    want_u, want_inverse = np.unique(a, return_inverse=True)
    assert u.dtype == a.dtype and u.tolist() == want_u.tolist() == distinct(a).tolist()
    assert inverse.tolist() == want_inverse.ravel().tolist()
