"""Column store of memories: numpy columns for numbers and vectors, lists for text.

Rows are appended into preallocated arrays that double when full, so adding a memory is
amortised O(1) and the vector matrix is never copied per insert. A memory is never
removed; a merged-away memory is marked dead (``alive`` False) and skipped by searches.

A fact's belief is ``belief`` with its NARS evidence ``w_plus``/``w_minus`` (see
``mechanisms.belief``). Attention is held per component c in {long, short} as (value ``c_v``, time of last
update ``c_t`` in seconds, strength ``c_s``); its current value is computed lazily by
``memory.attention.DualAttention``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

KINDS = ("turn", "perception", "fact", "summary", "event", "impression", "conjecture")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}

_FLOAT_COLUMNS = ("created", "belief", "w_plus", "w_minus", "long_v", "long_t", "long_s", "short_v", "short_t",
                  "short_s")


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

    def _grow(self) -> None:
        self._cap *= 2
        for name in ("vectors", "kind", "tier", "recalls", "parts", "alive", *_FLOAT_COLUMNS):
            old = getattr(self, name)
            new = np.zeros((self._cap, *old.shape[1:]), dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def add(self, text: str, kind: str, *, created: float, provenance: tuple[str, ...],
            vector: np.ndarray, key: str | None = None, value: object = None,
            belief: float = 1.0, meta: dict | None = None) -> int:
        """Append a memory with zero attention and return its id (its row)."""
        if self.size == self._cap:
            self._grow()
        i = self.size
        self.vectors[i] = vector
        self.kind[i] = KIND_CODE[kind]
        self.created[i] = created
        self.belief[i] = belief
        self.long_t[i] = self.short_t[i] = created
        self.alive[i] = True
        self.parts[i] = len(provenance)
        self.text.append(text)
        self.provenance.append(tuple(provenance))
        self.key.append(key)
        self.value.append(value)
        self.meta.append(dict(meta or {}))
        if kind in ("turn", "perception") and provenance:
            self.by_step.setdefault(provenance[0], i)
        if key is not None:
            self.by_key.setdefault(key, []).append(i)
        self.size += 1
        return i

    def add_many(self, texts: list[str], kind: str, *, created: np.ndarray, vectors: np.ndarray,
                 provenance: list[tuple[str, ...]]) -> np.ndarray:
        """Append many memories of one kind at once (vectorised columns); returns their ids."""
        n = len(texts)
        while self.size + n > self._cap:
            self._grow()
        ids = np.arange(self.size, self.size + n)
        self.vectors[ids] = vectors
        self.kind[ids] = KIND_CODE[kind]
        self.created[ids] = created
        self.belief[ids] = 1.0
        self.long_t[ids] = self.short_t[ids] = created
        self.alive[ids] = True
        self.parts[ids] = [len(p) for p in provenance]
        self.text += list(texts)
        self.provenance += [tuple(p) for p in provenance]
        self.key += [None] * n
        self.value += [None] * n
        self.meta += [{} for _ in range(n)]
        if kind in ("turn", "perception"):
            for i, p in zip(ids.tolist(), provenance):
                self.by_step.setdefault(p[0], i)
        self.size += n
        return ids

    def rewrite(self, i: int, text: str, vector: np.ndarray, provenance: tuple[str, ...]) -> None:
        """Give memory ``i`` new text, vector and provenance (a merged event or fact)."""
        self.text[i] = text
        self.vectors[i] = vector
        self.provenance[i] = tuple(provenance)
        self.parts[i] = len(provenance)

    def kill(self, i: int) -> None:
        """Mark memory ``i`` dead (merged away or dropped): searches skip it from now on, and
        the key index forgets it."""
        self.alive[i] = False
        if self.key[i] is not None and i in self.by_key.get(self.key[i], ()):
            self.by_key[self.key[i]].remove(i)

    def kind_of(self, i: int) -> str:
        return KINDS[int(self.kind[i])]

    def live_ids(self) -> np.ndarray:
        """Ids of the memories that searches may return."""
        return np.flatnonzero(self.alive[: self.size])

    def view(self, i: int) -> Memory:
        return Memory(i, self.text[i], self.kind_of(i), float(self.created[i]), self.provenance[i],
                      self.key[i], self.value[i], float(self.belief[i]), int(self.tier[i]), self.meta[i])
