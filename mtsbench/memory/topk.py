"""Exact top-k selection with ties broken by position, in O(n) passes.

``rank`` (1-D) and ``top_per_row`` (2-D, row by row) give the positions of the k best
scores, best first, ties broken by position: the first k of a stable sort, without sorting.
``lower_bounds`` finds, in one pass, a value at most the k-th largest of each row (the k-th
largest of its group maxima), so only the few elements at or above it are ranked;
``kth_largest`` is the exact k-th largest. ``distinct`` and ``distinct_inverse`` are
``np.unique`` of a 1-D array (and its inverse) without the wrapper's Python.
"""

from __future__ import annotations

import numpy as np

BLOCK = 32      # the most columns in one group of ``lower_bounds``


def lower_bounds(scores: np.ndarray, k: int) -> np.ndarray | None:
    """Per row of ``scores`` (2-D), a value at most its k-th largest: the k-th largest of the
    maxima of disjoint groups of its columns. The first ``size * groups`` columns form
    ``groups`` groups of ``size`` (column c in group c mod groups), the rest one more group;
    size = min(``BLOCK``, n // 4k), so there are at least 4k groups. Each group's maximum
    is a distinct element, so at least k elements of the row are >= it. The maxima are an
    elementwise maximum of ``size`` contiguous slices (one pass, vectorised), and the
    elements >= the bound are few and hold the k largest. None (use a partition) when
    groups would hold fewer than 2 columns (n < 8k) or a maximum is NaN.

    >>> lower_bounds(np.arange(256.0)[None, :], 2).tolist()   # 8 groups of 32: maxima 248, ..., 255
    [254.0]
    """
    rows, n = scores.shape
    size = min(BLOCK, n // (4 * k)) if k > 0 else 0
    if size < 2:
        return None
    groups = n // size
    whole = groups * size
    maxima = scores[:, :whole].reshape(rows, size, groups).max(axis=1)
    if whole < n:
        maxima = np.concatenate([maxima, scores[:, whole:].max(axis=1, keepdims=True)], axis=1)
    if np.isnan(maxima).any():
        return None
    maxima.partition(maxima.shape[1] - k, axis=1)         # a fresh array: partitioned in place
    return maxima[:, maxima.shape[1] - k]


def kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest of ``values`` (1-D, 1 <= k <= len): ``-partition(-values, k-1)[k-1]``.

    >>> kth_largest(np.array([0.1, 0.9, 0.5, 0.9]), 2), kth_largest(np.arange(1000.0), 3)
    (0.9, 997.0)
    """
    bound = lower_bounds(values[None, :], k)
    if bound is not None:
        values = values[values >= bound[0]]
    neg = -values
    neg.partition(k - 1)
    return float(-neg[k - 1])


def rank(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k best scores, best first, ties broken by position (stable).

    >>> rank(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist()
    [1, 3, 2]
    """
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    scores = np.asarray(scores)
    if 8 * k >= len(scores):
        return (-scores).argsort(kind="stable")[:k]
    # O(n): every position at least as good as the k-th best (or its lower bound), then a
    # stable sort of those few; the same positions in the same order as the full stable sort's first k
    bound = lower_bounds(scores[None, :], k)
    if bound is None:
        neg = -scores
        candidates = (neg <= np.partition(neg, k - 1)[k - 1]).nonzero()[0]
    else:
        candidates = (scores >= bound[0]).nonzero()[0]
    return candidates[(-scores[candidates]).argsort(kind="stable")[:k]]


def top_per_row(scores: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``scores`` (2-D), the positions of its k best, best first, ties broken by
    position: row by row the same as ``rank``, for all rows at once (O(rows * columns)).

    >>> top_per_row(np.array([[0.1, 0.9, 0.5, 0.9], [0.3, 0.2, 0.3, 0.0]]), 2).tolist()
    [[1, 3], [0, 2]]
    """
    rows_n, cols_n = scores.shape
    k = min(k, cols_n)
    if k <= 0:
        return np.zeros((rows_n, 0), dtype=np.int64)
    if 8 * k >= cols_n:
        return (-np.asarray(scores, dtype=float)).argsort(axis=1, kind="stable")[:, :k]
    bound = lower_bounds(scores, k)
    if bound is not None and rows_n == 1:       # one row (a single query): no row bookkeeping
        cols = (scores[0] >= bound[0]).nonzero()[0]
        return cols[(-scores[0, cols]).argsort(kind="stable")[:k]][None, :]
    if bound is None:
        neg = -np.asarray(scores, dtype=float)
        rows, cols = np.nonzero(neg <= np.partition(neg, k - 1, axis=1)[:, k - 1:k])   # at least k per row
    else:
        rows, cols = np.nonzero(scores >= bound[:, None])
    order = np.lexsort((cols, -scores[rows, cols], rows))
    rows, cols = rows[order], cols[order]
    within = np.arange(len(rows)) - rows.searchsorted(np.arange(rows_n))[rows]
    return cols[within < k].reshape(rows_n, k)


def pick(values: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Per row of ``values`` (2-D), the entries at that row's positions ``cols`` (2-D, one row
    of positions per row): ``out[r, j] = values[r, cols[r, j]]``, as ``np.take_along_axis``
    along the last axis, by one fancy index without its wrapper.

    >>> pick(np.array([[0.1, 0.9, 0.5], [0.3, 0.2, 0.4]]), np.array([[1, 2], [2, 0]])).tolist()
    [[0.9, 0.5], [0.4, 0.3]]
    """
    return values[np.arange(len(cols))[:, None], cols]


def run_starts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins in ``values`` (1-D): 0 and every i with
    values[i] != values[i - 1]. The same as ``np.flatnonzero(np.r_[True, values[1:] !=
    values[:-1]])`` without ``np.r_``, whose Python costs more than the comparison.

    >>> run_starts(np.array([3, 3, 5, 7, 7])).tolist(), run_starts(np.array([], dtype=int)).tolist()
    ([0, 2, 3], [])
    """
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return new.nonzero()[0]


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of ``values`` (1-D, integers: NaNs would not be merged as
    ``np.unique`` merges them), ascending: ``np.unique(values)``, by one sort and the run
    boundaries (``run_starts``).

    >>> distinct(np.array([7, 3, 7, 1])).tolist(), distinct(np.array([], dtype=int)).tolist()
    ([1, 3, 7], [])
    """
    v = values.copy()
    v.sort()
    return v[run_starts(v)]


def distinct_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of a 1-D array: the distinct values, ascending,
    and where each value is among them (``u[inverse] == values``).

    >>> [a.tolist() for a in distinct_inverse(np.array([7, 3, 7, 1]))]
    [[1, 3, 7], [2, 1, 2, 0]]
    """
    u = distinct(values)
    return u, u.searchsorted(values)
