"""Synthetic memories: fill a store with ``n`` memories without simulating their turns.

The pieces, each vectorised over the n memories and drawn from one seeded generator:

- ``draw_history`` — when each memory was made and how it was used: creation times
  uniform over ``span_days`` before ``now``; a labelled score, 1-4 (common chatter) or 6-9
  for a share ``important``; a number of recalls r ~ Poisson(``recall_rate``) at evenly
  spaced moments from creation to a last recall drawn uniformly between creation and now.
- ``field_texts`` — a sentence per memory on one of ``fields`` topic fields (the
  generator's vocabulary and templates, Zipf popularity), so that a memory lies near the
  other memories of its field, and near generated dialogue on that field.
- ``fill`` — append the memories to a store and replay their history through
  ``DualAttention`` (label at creation, each recall at its moment), so decay curves and
  gains are exactly the configured ones; ``place`` — assign tiers at ``now`` in one full
  pass, build each tier's index in one go, and schedule the incremental rebalance.

``synthetic_agent_memory`` is the retrieval benchmark's store: random clustered vectors
with about ``awake`` of the memories labelled 6-9 at ``now`` and the rest 0-1.5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...mechanisms.decay import Decay, Exponential, PowerLaw
from ...mechanisms.tiers import TierPolicy
from ...memory.attention import DualAttention
from ...memory.index import TierIndexes
from ...memory.store import MemoryStore
from ...memory.tiering import Tiering
from ...core.seeding import generator
from ...core.units import DAY

CHUNK = 100_000          # rows per batch when embedding or indexing, to bound temporary memory


@dataclass
class History:
    """Per memory: creation time, labelled score, recall count, last recall (seconds; = created if none)."""

    created: np.ndarray
    score: np.ndarray
    recalls: np.ndarray
    last: np.ndarray


def draw_history(rng: np.random.Generator, n: int, span_days: float, now: float = 0.0, important: float = 0.05,
                 recall_rate: float = 0.5) -> History:
    """Creation times (sorted, oldest first), scores, recall counts and last recalls of n memories.

    >>> h = draw_history(generator(0, "doc"), 1000, span_days=10.0)
    >>> bool(np.all(np.diff(h.created) >= 0) and h.created.min() >= -10 * DAY and h.created.max() < 0)
    True
    >>> bool(np.all((h.last >= h.created) & (h.last <= 0)) and np.all(h.last[h.recalls == 0] == h.created[h.recalls == 0]))
    True
    """
    created = np.sort(now - span_days * DAY * rng.random(n))
    score = np.where(rng.random(n) < important, rng.integers(6, 10, n), rng.integers(1, 5, n)).astype(float)
    recalls = rng.poisson(recall_rate, n)
    last = np.where(recalls > 0, created + (now - created) * rng.random(n), created)
    return History(created, score, recalls, last)


def field_texts(rng: np.random.Generator, n: int, language: str = "en", fields: int = 12) -> tuple[list[str], np.ndarray]:
    """A chatter sentence per memory and its field number (Zipf popularity over ``fields`` fields).

    >>> texts, f = field_texts(generator(0, "doc"), 3)
    >>> len(texts), f.tolist()
    (3, [8, 4, 0])
    """
    from ...scenario.vocab import SAY, field_words

    vocab = list(field_words(language).values())[:fields]
    popularity = 1.0 / np.arange(1, len(vocab) + 1)
    field = rng.choice(len(vocab), n, p=popularity / popularity.sum())
    words = rng.random((n, 3))
    templates = SAY[language]
    which = rng.integers(0, len(templates), n)
    texts = []
    for f, w, t in zip(field.tolist(), words.tolist(), which.tolist()):
        pool = vocab[f]
        texts.append(templates[t].format(a=pool[int(w[0] * len(pool))], b=pool[int(w[1] * len(pool))],
                                         c=pool[int(w[2] * len(pool))]))
    return texts, field


def fill(store: MemoryStore, attention: DualAttention, history: History, vectors: np.ndarray, texts: list[str],
         kind: str = "turn", provenance: tuple[str, ...] = ("preload",)) -> np.ndarray:
    """Append the memories and replay their history through ``attention``; returns their ids."""
    n = len(texts)
    # room for as many again: untouched pages cost no memory (calloc), and the dialogue that
    # follows a bulk load does not pay for copying the whole store at its first insert
    store.reserve(2 * (store.size + n))
    ids = store.add_many(texts, kind, created=history.created, vectors=vectors, provenance=[provenance] * n)
    attention.label(store, ids, history.score, history.created)
    for k in range(1, int(history.recalls.max(initial=0)) + 1):
        sel = history.recalls >= k
        moment = history.created[sel] + (history.last[sel] - history.created[sel]) * k / history.recalls[sel]
        attention.recall(store, ids[sel], moment)
    return ids


def place(store: MemoryStore, index: TierIndexes, tiering: Tiering, ids: np.ndarray, now: float) -> None:
    """Tier ``ids`` at ``now`` (from the bottom, one full pass), index each tier, schedule rebalances."""
    bottom = tiering.policy.n_tiers - 1
    store.tier[ids] = bottom
    store.tier[ids] = tiering.targets(store, ids, now, full=True)
    for t in range(tiering.policy.n_tiers):
        members = ids[store.tier[ids] == t]
        for start in range(0, len(members), CHUNK):
            part = members[start:start + CHUNK]
            index.add(t, part, store.vectors[part])
    store.take_changed()
    tiering.schedule(store, ids, now)


@dataclass
class SyntheticMemory:
    store: MemoryStore
    attention: DualAttention
    index: TierIndexes
    awake_ids: np.ndarray
    now: float


def clustered_vectors(rng: np.random.Generator, n: int, dim: int, fields: int, spread: float = 0.6) -> np.ndarray:
    """Unit vectors around ``fields`` random centres: v = normalise(centre + spread * noise / sqrt(dim))."""
    centres = rng.standard_normal((fields, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    v = centres[rng.integers(0, fields, n)] + spread * rng.standard_normal((n, dim)).astype(np.float32) / np.sqrt(dim)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.astype(np.float32)


def synthetic_agent_memory(n: int, tiers: TierPolicy, dim: int = 64, fields: int = 200, awake: float = 0.005,
                           span_days: float = 365.0, seed: int = 0, exact_below: int = 5000,
                           long_decay: Decay | None = None, short_decay: Decay | None = None) -> SyntheticMemory:
    """The retrieval benchmark's store: clustered vectors, ~``awake`` labelled 6-9 at ``now``, the rest 0-1.5."""
    rng = generator(seed, "synthetic", str(n))
    vectors = clustered_vectors(rng, n, dim, fields)
    now = span_days * DAY
    history = History(np.sort(rng.uniform(0, now, n)), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n))
    store = MemoryStore(dim=dim, capacity=n)
    att = DualAttention(long_decay or PowerLaw(), short_decay or Exponential())
    ids = fill(store, att, history, vectors, [f"m{i}" for i in range(n)])
    is_awake = rng.random(n) < awake
    # labelled "now" so the drawn scores are the current attention; ages stay in `created`
    att.label(store, ids, np.where(is_awake, rng.uniform(6.0, 9.0, n), rng.uniform(0.0, 1.5, n)), now)
    index = TierIndexes(dim, tiers.n_tiers, exact_below=exact_below, seed=seed)
    place(store, index, Tiering(tiers, att, incremental=False), ids, now)
    return SyntheticMemory(store, att, index, ids[is_awake], now)
