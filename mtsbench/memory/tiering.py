"""Which memories a rebalance must look at: all of them, or only those that can have moved.

A rebalance re-tiers memories by their policy (``TierPolicy.assign`` with ``full=True``);
demotion by decay happens only there. The full pass looks at every live memory, O(store)
per pass. ``Tiering`` makes the pass incremental for a *local* policy (``policy.local``
is True: a memory's target depends on its own state only, and between two writes of its
state the target only ever moves down, because attention only decays and idle time only
grows — ``Thresholds``, ``Heat``, ``Flat``). A pass then looks only at

- the memories whose attention state was written since the last pass (the store's
  ``take_changed()``: labelled, recalled, aroused), and
- the memories whose *due time* has come: the earliest time their target can differ from
  their current tier by decay alone.

The due time of a memory in tier c is the root of cond(T) = assign(inputs(T), c) != c,
which is False and then True for ever (monotone). Its inputs are closed forms of T: the
attention ``DualAttention.total`` at T and the idle hours (T - long_t) / 3600. A sum of
two decay curves (power law plus exponential) has no closed-form inverse, so the root is
bracketed by vectorised bisection on x = ln(1 + dt_hours) over [0, ln(1 + horizon)];
the due time is the lower bracket, where cond is still False, so a memory is never
re-tiered late — at worst it is looked at a little early (24 halvings of x: about 1e-6
of its wait) and scheduled again. A memory in
the bottom tier (it cannot move down) or whose cond is still False at the horizon gets
due = inf and is not scheduled.

The schedule is a calendar queue: buckets of ``bucket_hours`` (bucket -> list of id
arrays) and a heap of bucket numbers. A pass pops every bucket up to now; an entry whose
memory was scheduled again since (its due falls in another bucket) is stale and dropped.

For a local policy the incremental pass gives the same tiers as the full pass at every
rebalance (tests/test_tiering.py checks it with hypothesis). A policy that is not local
(``Capacity``: tier sizes by attention rank) gets the full pass.
"""

from __future__ import annotations

import heapq
from types import SimpleNamespace

import numpy as np

from ..mechanisms.tiers import TierPolicy
from .attention import HOUR, DualAttention
from .store import MemoryStore
from .topk import run_starts

_STATE = ("long_v", "long_t", "long_s", "short_v", "short_t", "short_s", "recalls", "parts")


class Tiering:
    """Tier targets of memories and the schedule of incremental rebalances.

    >>> from mtsbench.mechanisms.decay import Exponential, NoDecay
    >>> from mtsbench.mechanisms.tiers import Thresholds
    >>> s = MemoryStore(dim=2)
    >>> att = DualAttention(NoDecay(), Exponential(half_life=1.0), long_share=0.0)
    >>> ids = s.add_many(["a", "b"], "turn", created=0.0, vectors=np.eye(2), provenance=[("a",), ("b",)])
    >>> att.label(s, ids, np.array([8.0, 1.0]), now=0.0)
    >>> t = Tiering(Thresholds(cutoffs=[4.0], hysteresis=0.0), att)
    >>> s.tier[ids] = t.targets(s, ids, 0.0, full=True)
    >>> t.schedule(s, t.to_check(s, 0.0), 0.0)
    >>> round(float(t.due_[0]) / HOUR, 6)        # 8 * 0.5 ** h < 4 from h = 1
    1.0
    >>> t.to_check(s, 0.5 * HOUR).tolist(), t.to_check(s, 1.5 * HOUR).tolist()
    ([], [0])
    """

    def __init__(self, policy: TierPolicy, attention: DualAttention, incremental: bool = True,
                 bucket_hours: float = 1.0, horizon_hours: float = 1e7, iterations: int = 24):
        self.policy = policy
        self.attention = attention
        self.incremental = bool(incremental and policy.local)
        self.bucket = bucket_hours * HOUR
        self.horizon_hours = horizon_hours
        self.iterations = iterations
        self.due_ = np.zeros(0)
        self._buckets: dict[int, list[np.ndarray]] = {}
        self._keys: list[int] = []

    def targets(self, store: MemoryStore, ids: np.ndarray, now: float, full: bool) -> np.ndarray:
        """The policy's tiers for ``ids`` at ``now``."""
        return self._assign(_rows(store, ids), store.tier[ids], now, full)

    def _assign(self, rows, current, now, full):
        idle = (now - rows.long_t) / HOUR
        return self.policy.assign(self.attention.total(rows, slice(None), now), current, rows.recalls,
                                  rows.parts, idle, full=full)

    # -- the schedule -----------------------------------------------------------------
    def due(self, store: MemoryStore, ids: np.ndarray, now: float) -> np.ndarray:
        """Earliest time (seconds) each memory's target can leave its current tier; inf if never."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.full(len(ids), np.inf)
        current = store.tier[ids]
        movable = current < self.policy.n_tiers - 1
        if not movable.any():
            return out
        sel = np.flatnonzero(movable)
        rows, cur = _rows(store, ids[sel]), current[sel]

        def moved(x):
            return self._assign(rows, cur, now + np.expm1(x) * HOUR, True) != cur

        lo, hi = np.zeros(len(sel)), np.full(len(sel), np.log1p(self.horizon_hours))
        ever = moved(hi)
        already = moved(lo)
        for _ in range(self.iterations):
            mid = 0.5 * (lo + hi)
            m = moved(mid)
            hi, lo = np.where(m, mid, hi), np.where(m, lo, mid)
        out[sel] = np.where(already, now, np.where(ever, now + np.expm1(lo) * HOUR, np.inf))
        return out

    def schedule(self, store: MemoryStore, ids: np.ndarray, now: float) -> None:
        """Compute and file the due times of ``ids`` (after their tiers were set at ``now``)."""
        if not self.incremental or not len(ids):
            return
        if len(self.due_) < store.size:
            grown = np.full(max(store.size, 2 * len(self.due_)), np.inf)
            grown[: len(self.due_)] = self.due_
            self.due_ = grown
        ids = np.asarray(ids, dtype=np.int64)
        due = self.due(store, ids, now)
        self.due_[ids] = due
        finite = np.isfinite(due)
        if not finite.any():
            return
        keys = np.floor(due[finite] / self.bucket).astype(np.int64)
        order = np.argsort(keys, kind="stable")
        keys, members = keys[order], ids[finite][order]
        starts = run_starts(keys)
        ends = [*starts[1:].tolist(), len(keys)]
        for key, start, end in zip(keys[starts].tolist(), starts.tolist(), ends):
            self._file(key, members[start:end])

    def _file(self, key: int, ids: np.ndarray) -> None:
        if key not in self._buckets:
            self._buckets[key] = []
            heapq.heappush(self._keys, key)
        self._buckets[key].append(ids)

    def to_check(self, store: MemoryStore, now: float) -> np.ndarray:
        """Sorted live ids a rebalance at ``now`` must re-tier (and then ``schedule``)."""
        changed = store.take_changed()
        if not self.incremental:
            return store.live_ids()
        parts = [changed]
        last = int(np.floor(now / self.bucket))
        while self._keys and self._keys[0] <= last:
            key = heapq.heappop(self._keys)
            ids = np.unique(np.concatenate(self._buckets.pop(key)))
            due = self.due_[ids]
            current = np.floor(due / self.bucket) == key       # the others were scheduled again
            ready = current & (due <= now)
            parts.append(ids[ready])
            later = ids[current & ~ready]
            if len(later):
                self._file(key, later)
                break       # only this (the last) bucket can hold memories not yet due
        ids = np.unique(np.concatenate(parts)).astype(np.int64)
        return ids[store.alive[ids]]


def _rows(store: MemoryStore, ids: np.ndarray) -> SimpleNamespace:
    """The attention state and policy inputs of ``ids``, gathered once, under the store's column
    names (so ``DualAttention.total(rows, slice(None), T)`` evaluates them at any T)."""
    return SimpleNamespace(**{name: getattr(store, name)[ids] for name in _STATE})
