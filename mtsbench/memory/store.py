"""Column store of memories: numpy columns for numbers and vectors, lists for text.

Rows are appended into preallocated arrays that double when full (``reserve`` sizes them
once for a bulk load), so adding a memory is amortised O(1) and the vector matrix is never
copied per insert. ``add`` is ``add_many`` of one row: both set the same columns. A memory is never
removed; a merged-away memory is marked dead (``alive`` False) and skipped by searches.

A fact's belief is ``belief`` with its NARS evidence ``w_plus``/``w_minus`` (see
``mechanisms.belief``). Attention is held per component c in {long, short} as (value ``c_v``, time of last
update ``c_t`` in seconds, strength ``c_s``); its current value is computed lazily by
``memory.attention.DualAttention``, which notes every row it writes (``mark_changed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

KINDS = ("turn", "perception", "fact", "summary", "event", "impression", "conjecture")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}

_FLOAT_COLUMNS = ("created", "belief", "w_plus", "w_minus", "long_v", "long_t", "long_s", "short_v", "short_t",
                  "short_s", "aroused")     # aroused: the arousal amounts a memory received, summed (Memory.arouse)


@dataclass
class Memory:
    """A read-only view of one stored memory (for tests, traces and reports)."""

    id: int
    text: str
    kind: str
    created: float
    provenance: tuple[str, ...]
    key: str | None
    value: object
    belief: float
    tier: int
    meta: dict = field(default_factory=dict)


class MemoryStore:
    """Append-only columnar store.

    >>> s = MemoryStore(dim=4)
    >>> i = s.add("hello", "turn", created=0.0, provenance=("s0",), vector=np.eye(4)[0])
    >>> s.size, s.kind_of(i), s.provenance[i]
    (1, 'turn', ('s0',))
    """

    def __init__(self, dim: int, capacity: int = 1024):
        self.dim = dim
        self.size = 0
        self._cap = max(1, capacity)
        self.vectors = np.zeros((self._cap, dim), dtype=np.float32)
        self.kind = np.zeros(self._cap, dtype=np.int8)
        self.tier = np.zeros(self._cap, dtype=np.int8)
        self.recalls = np.zeros(self._cap, dtype=np.int32)
        self.parts = np.zeros(self._cap, dtype=np.int32)
        self.alive = np.zeros(self._cap, dtype=bool)
        for name in _FLOAT_COLUMNS:
            setattr(self, name, np.zeros(self._cap, dtype=np.float64))
        self.text: list[str] = []
        self.provenance: list[tuple[str, ...]] = []
        self.key: list[str | None] = []
        self.value: list[object] = []
        self.meta: list[dict] = []
        self.by_step: dict[str, int] = {}
        self.by_key: dict[str, list[int]] = {}
        self._changed: list[np.ndarray] = []

    def _grow(self, need: int) -> None:
        """Double the capacity (at least to ``need``): amortised O(1) per row, one copy per column."""
        self._cap = max(need, 2 * self._cap)
        for name in ("vectors", "kind", "tier", "recalls", "parts", "alive", *_FLOAT_COLUMNS):
            old = getattr(self, name)
            new = np.zeros((self._cap, *old.shape[1:]), dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def reserve(self, capacity: int) -> None:
        """Make room for ``capacity`` rows at once (one copy instead of repeated doubling)."""
        if capacity > self._cap:
            self._grow(capacity)

    def add(self, text: str, kind: str, *, created: float, provenance: tuple[str, ...],
            vector: np.ndarray, key: str | None = None, value: object = None,
            belief: float = 1.0, meta: dict | None = None) -> int:
        """Append one memory with zero attention and return its id (its row): ``add_many`` of one."""
        return int(self.add_many([text], kind, created=created, vectors=np.asarray(vector)[None, :],
                                 provenance=[provenance], keys=[key], values=[value], belief=belief,
                                 metas=[meta])[0])

    def add_many(self, texts: list[str], kind: str, *, created, vectors: np.ndarray,
                 provenance: list[tuple[str, ...]], keys: list | None = None, values: list | None = None,
                 belief=1.0, metas: list | None = None) -> np.ndarray:
        """Append memories of one kind with zero attention (columns set vectorised); returns their ids.

        ``created`` and ``belief`` are one value or one per memory; ``keys``, ``values`` and
        ``metas`` default to None (an empty meta is None until ``meta_of`` makes it a dict:
        a million pre-loaded memories hold no million empty dicts).

        >>> s = MemoryStore(dim=2, capacity=1)
        >>> s.add_many(["a", "b"], "fact", created=[1.0, 2.0], vectors=np.eye(2), provenance=[("s0",), ()],
        ...            keys=["k", None], values=[True, None]).tolist()
        [0, 1]
        >>> s.by_key, s.parts[:2].tolist(), s.long_t[:2].tolist()
        ({'k': [0]}, [1, 0], [1.0, 2.0])
        """
        n = len(texts)
        if self.size + n > self._cap:
            self._grow(self.size + n)
        rows = slice(self.size, self.size + n)
        ids = np.arange(self.size, self.size + n)
        self.vectors[rows] = vectors
        self.kind[rows] = KIND_CODE[kind]
        self.created[rows] = created
        self.belief[rows] = belief
        self.long_t[rows] = self.short_t[rows] = self.created[rows]
        self.alive[rows] = True
        self.parts[rows] = [len(p) for p in provenance]
        self.text += texts
        self.provenance += [tuple(p) for p in provenance]
        self.key += [None] * n if keys is None else list(keys)
        self.value += [None] * n if values is None else list(values)
        self.meta += [None] * n if metas is None else [dict(m) if m else None for m in metas]   # {} made on use
        if kind in ("turn", "perception"):
            for i, p in enumerate(provenance):
                if p:
                    self.by_step.setdefault(p[0], self.size + i)
        if keys is not None:
            for i, k in enumerate(keys):
                if k is not None:
                    self.by_key.setdefault(k, []).append(self.size + i)
        self.size += n
        return ids

    def rewrite(self, i: int, text: str, vector: np.ndarray, provenance: tuple[str, ...]) -> None:
        """Give memory ``i`` new text, vector and provenance (a merged event or fact)."""
        self.text[i] = text
        self.vectors[i] = vector
        self.provenance[i] = tuple(provenance)
        self.parts[i] = len(provenance)
        self.mark_changed(np.array([i]))       # a tier policy may read the number of parts

    def kill(self, i: int) -> None:
        """Mark memory ``i`` dead (merged away or dropped): searches skip it from now on, and
        the key index forgets it."""
        self.alive[i] = False
        if self.key[i] is not None and i in self.by_key.get(self.key[i], ()):
            self.by_key[self.key[i]].remove(i)
    def mark_changed(self, ids: np.ndarray) -> None:
        """Note that the attention state (or recall count) of ``ids`` was written.

        Every such write must be noted: an incremental rebalance (``memory.tiering``)
        re-tiers exactly the noted memories plus those whose decay is due.
        """
        self._changed.append(np.asarray(ids, dtype=np.int64).ravel())

    def take_changed(self) -> np.ndarray:
        """The distinct ids noted since the last call (sorted), and forget them."""
        changed, self._changed = self._changed, []
        return np.unique(np.concatenate(changed)) if changed else np.zeros(0, dtype=np.int64)

    def meta_of(self, i: int) -> dict:
        """Memory ``i``'s free-form record, made an empty dict on first use (mutable)."""
        if self.meta[i] is None:
            self.meta[i] = {}
        return self.meta[i]

    def kind_of(self, i: int) -> str:
        return KINDS[int(self.kind[i])]

    def live_ids(self) -> np.ndarray:
        """Ids of the memories that searches may return."""
        return np.flatnonzero(self.alive[: self.size])

    def view(self, i: int) -> Memory:
        return Memory(i, self.text[i], self.kind_of(i), float(self.created[i]), self.provenance[i],
                      self.key[i], self.value[i], float(self.belief[i]), int(self.tier[i]), dict(self.meta[i] or {}))
