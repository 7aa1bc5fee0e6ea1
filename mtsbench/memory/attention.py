"""Dual attention over a MemoryStore, evaluated lazily in closed form.

For component c with stored (v, t, S) and decay curve r_c, the value at time ``now``
(seconds) is ``v * r_c((now - t) / 3600, S)``. Reading touches only the rows asked for;
writing (label, recall, arouse) first folds the decay into v and sets t = now, and notes
the rows written (``MemoryStore.mark_changed``) for the incremental rebalance.
"""

from __future__ import annotations

import numpy as np

from ..mechanisms.attention import boost, split_score
from ..mechanisms.decay import Decay
from ..core.params import NonNegative, Positive, Share, declared
from ..core.units import HOUR
from .store import MemoryStore
from .topk import distinct, distinct_inverse



@declared
class DualAttention:
    """Long-term + short-term attention with separate decay curves and recall gains.

    Boosts saturate: the long part is clipped to ``cap`` and the short part to
    ``cap - long``, so a memory's total never exceeds ``cap`` through recalls or arousal.

    >>> from mtsbench.mechanisms.decay import Exponential, NoDecay
    >>> s = MemoryStore(dim=2)
    >>> i = s.add("x", "turn", created=0.0, provenance=("s0",), vector=np.zeros(2))
    >>> att = DualAttention(long_decay=NoDecay(), short_decay=Exponential(half_life=1.0), long_share=0.5)
    >>> att.label(s, np.array([i]), np.array([8.0]), now=0.0)
    >>> att.total(s, np.array([i]), now=2 * HOUR).tolist()   # 4 + 4 * 0.25
    [5.0]
    """

    def __init__(self, long_decay: Decay, short_decay: Decay, long_share: Share = 0.3,
                 long_gain: NonNegative = 0.5, short_gain: NonNegative = 2.0, cap: Positive = 10.0):
        self.long_decay = long_decay
        self.short_decay = short_decay
        self.long_share = long_share
        self.long_gain = long_gain
        self.short_gain = short_gain
        self.cap = cap

    def parts(self, store: MemoryStore, ids: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        """Current (long, short) values of the memories ``ids``."""
        long = store.long_v[ids] * self.long_decay.retention((now - store.long_t[ids]) / HOUR, store.long_s[ids])
        short = store.short_v[ids] * self.short_decay.retention((now - store.short_t[ids]) / HOUR, store.short_s[ids])
        return long, short

    def total(self, store: MemoryStore, ids: np.ndarray, now: float) -> np.ndarray:
        long, short = self.parts(store, ids, now)
        return long + short

    def label(self, store: MemoryStore, ids: np.ndarray, scores: np.ndarray, now: float) -> None:
        """Set fresh memories' attention from their labelled scores (0-10)."""
        long, short = split_score(scores, self.long_share)
        store.long_v[ids], store.short_v[ids] = long, short
        store.long_t[ids] = store.short_t[ids] = now
        store.long_s[ids] = self.long_decay.initial_strength
        store.short_s[ids] = self.short_decay.initial_strength
        store.mark_changed(ids)

    def recall(self, store: MemoryStore, ids: np.ndarray, now: float) -> None:
        """A recall is a use: long gains ``long_gain``, short gains ``short_gain``."""
        ids = distinct(ids)
        long, short = self.parts(store, ids, now)
        store.long_v[ids] = long = boost(long, self.long_gain, self.cap)
        store.short_v[ids] = boost(short, self.short_gain, self.cap - long)
        store.long_t[ids] = store.short_t[ids] = now
        store.long_s[ids] = self.long_decay.strengthen(store.long_s[ids])
        store.short_s[ids] = self.short_decay.strengthen(store.short_s[ids])
        store.recalls[ids] += 1
        store.mark_changed(ids)

    def weaken(self, store: MemoryStore, ids: np.ndarray, keep: np.ndarray, now: float) -> None:
        """Scale both parts by ``keep`` (0..1): a fact that lost a contradiction loses attention."""
        ids = np.asarray(ids)
        long, short = self.parts(store, ids, now)
        keep = np.clip(np.asarray(keep, dtype=float), 0.0, 1.0)
        store.long_v[ids], store.short_v[ids] = long * keep, short * keep
        store.long_t[ids] = store.short_t[ids] = now
        store.mark_changed(ids)

    def arouse(self, store: MemoryStore, ids: np.ndarray, amounts: np.ndarray,
               now: float) -> tuple[np.ndarray, np.ndarray]:
        """Regional arousal: add ``amounts`` to the short-term part only (repeated ids add up).

        Returns the distinct ids and the total amount each received.
        """
        ids, where = distinct_inverse(ids)
        summed = np.bincount(where, weights=amounts, minlength=len(ids))    # added in order, as np.add.at
        long, short = self.parts(store, ids, now)
        store.short_v[ids] = boost(short, summed, np.maximum(self.cap - long, 0.0))
        store.short_t[ids] = now
        store.mark_changed(ids)
        return ids, summed
