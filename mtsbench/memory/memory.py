"""``Memory``: one facade over the store, the tier indexes, dual attention, tiering,
retrieval, regional arousal and the trace.

Everything that changes memory goes through it — ``remember`` / ``rewrite`` / ``drop``,
``recall`` (a use: boost, arouse the field, promote), ``rebalance`` — and every change is
appended to ``trace`` as one event dict stamped with the simulated time ``now``. It keeps
no ledger of costs: a search charges the memories it scored (``scored``,
``index_queries``), arousal the memories its neighbour searches scored
(``arousal_scored``), and the index its work, to whatever cost scope is open
(``mtsbench.core.costs``: a step's, a background process's).

It knows no LLM and no labeller: a memory arrives with its score (``processes.labelling``
scores it first). Per step it touches only what the step needs: the tiers a search
reaches, the neighbours arousal finds, the memories it recalls; demotion by decay happens
only at ``rebalance``, which looks only at the memories written since the last one or whose
decay is due (``memory.tiering``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..embed import Embedder
from ..embed.chance import measure
from ..core.costs import charge
from ..errors import ConfigError
from ..core.facts import Fact
from ..mechanisms.arousal import Arousal
from ..mechanisms.depth import DepthPolicy
from ..mechanisms.tiers import TierPolicy
from ..core.params import Count, Natural, Number, Seed, Threads, declared
from ..core.units import HOUR
from .attention import DualAttention
from .graph_index import SharedGraphIndex
from .index import TierIndexes
from .retrieval import Retrieval, TieredSearch
from .store import MemoryStore
from .tiering import Tiering
from .topk import distinct, pick, top_per_row


class Memory:
    """The memory of one agent: store, tier indexes, attention, tiers, search and trace."""

    def __init__(self, embedder: Embedder, attention: DualAttention, retriever: TieredSearch, tiers: TierPolicy,
                 depth: DepthPolicy, arousal: Arousal, index: dict | None = None, incremental_rebalance: bool = True,
                 language: str = "en"):
        self.embedder = embedder
        self.language = language              # whose unrelated texts set the embedder's chance level
        self.attention = attention
        self.retriever = retriever
        self.tiers = tiers
        self.depth = depth
        self.arousal = arousal
        self.store = MemoryStore(dim=embedder.dim)
        params = dict(index or {})
        IndexOptions(**params)
        self.linked = params.get("arousal") == "links"
        if self.linked:                          # the indexes scan; arousal reads the links instead
            params["arousal"] = "scan"
        self.links_: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.index = retriever.tier_index(self.store, make_index(embedder.dim, tiers.n_tiers, params))
        self.tiering = Tiering(tiers, attention, incremental=incremental_rebalance)
        self.trace: list[dict] = []
        self.now = 0.0
        self.chance_: tuple[float, float] | None = None    # the embedder's chance level, measured when first needed

    def emit(self, event: str, **fields) -> None:
        """Append one event to the trace, stamped with the simulated time."""
        self.trace.append({"t": round(self.now, 3), "event": event, **fields})

    def embed(self, text: str) -> np.ndarray:
        return self.embedder.embed([text])[0]

    def centroid(self, steps: list[str], texts: list[str]) -> np.ndarray:
        """A query vector for a stretch of dialogue at no encode: the unit mean of the stored
        vectors of the memories ``steps`` created, sum_i v_i / ||sum_i v_i|| (each v_i a unit
        row), a step that stored none counting the vector of its text in ``texts``.

        >>> from mtsbench.embed.hashing import Hashing
        >>> from mtsbench.mechanisms.decay import NoDecay
        >>> from mtsbench.mechanisms.tiers import Flat
        >>> from mtsbench.mechanisms.depth import Full
        >>> from mtsbench.mechanisms.arousal import NoArousal
        >>> m = Memory(Hashing(dim=8), DualAttention(NoDecay(), NoDecay()), TieredSearch(), Flat(), Full(), NoArousal())
        >>> i = m.remember("tea", "turn", ("s0",), score=1.0)
        >>> v = m.centroid(["s0", "s1"], ["tea", "cat"])
        >>> bool(np.allclose(v, (m.vector(i) + m.embed("cat")) / np.linalg.norm(m.vector(i) + m.embed("cat"))))
        True
        """
        rows = [self.store.vectors[i] if (i := self.store.by_step.get(s)) is not None else self.embed(t)
                for s, t in zip(steps, texts)]
        total = np.sum(rows, axis=0, dtype=np.float64)
        norm = float(np.sqrt(total @ total))
        return (total / norm if norm > 0 else total).astype(np.float32)

    def warm(self, texts: list[str]) -> None:
        """Texts about to be stored: a caching embedder encodes them now, in one call, so that
        each one's ``embed`` is then a hit (the hashing embedder does nothing)."""
        self.embedder.warm(texts)

    # -- reading ---------------------------------------------------------------------------
    def text(self, i: int) -> str:
        return self.store.text[i]

    def provenance(self, i: int) -> tuple[str, ...]:
        return self.store.provenance[i]

    def alive(self, i: int) -> bool:
        return bool(self.store.alive[i])

    def kind(self, i: int) -> str:
        return self.store.kind_of(i)

    def key(self, i: int) -> str | None:
        return self.store.key[i]

    def meta(self, i: int) -> dict:
        """Memory ``i``'s free-form record (mutable: a process may note in it)."""
        return self.store.meta_of(i)

    def created(self, i: int) -> float:
        return float(self.store.created[i])

    def vector(self, i: int) -> np.ndarray:
        return self.store.vectors[i]

    def fact(self, i: int) -> Fact:
        """The stored fact ``i`` as the LLM sees it (key, value, text, current belief)."""
        s = self.store
        return Fact(s.key[i], s.value[i], s.text[i], round(float(s.belief[i]), 4))

    def belief(self, i: int) -> float:
        return float(self.store.belief[i])

    def with_key(self, key: str | None) -> list[int]:
        """Ids of the live memories with this key (an exact index: no scan)."""
        return list(self.store.by_key.get(key, []))

    def of_step(self, step: str) -> int | None:
        """The memory a turn or perception step created, if it did."""
        return self.store.by_step.get(step)

    def attention_of(self, ids: np.ndarray) -> np.ndarray:
        """Current total attention of ``ids``."""
        return self.attention.total(self.store, np.asarray(ids, dtype=np.int64), self.now)

    def attention_of_steps(self, steps: tuple[str, ...]) -> float:
        """The largest current attention among the memories of ``steps`` (0 if none is stored)."""
        ids = np.array([self.store.by_step[s] for s in steps if s in self.store.by_step], dtype=np.int64)
        return float(np.max(self.attention_of(ids))) if len(ids) else 0.0

    # -- searching and recalling -------------------------------------------------------------
    def search(self, vector: np.ndarray, k: int, motivation: float, rank_to: int = 0,
               text: str | None = None) -> Retrieval:
        """Search the tiers at this motivation; ``rank_to`` ranks that deep for reporting only;
        ``text`` (the query's) lets a lexical ``retrieval.relevance`` (bm25, hybrid) take part."""
        found = self.retriever.search(self.store, self.attention, self.index, self.depth, vector, k,
                                      motivation, self.now, rank_to=rank_to, text=text, chance=self.chance())
        charge(scored=found.cost.scored, index_queries=found.cost.index_queries)
        return found

    def recall(self, ids: np.ndarray, why: str) -> None:
        """Recalled memories are used: boost them, arouse their field, promote at once."""
        if len(ids) == 0:
            return
        ids = distinct(np.asarray(ids, dtype=np.int64))
        self.attention.recall(self.store, ids, self.now)
        self.emit("recalled", ids=ids.tolist(), why=why)
        aroused = self.arouse(ids)
        self._promote(distinct(np.concatenate((ids, aroused))))

    def attend(self, i: int, sources: tuple[str, ...] = ()) -> None:
        """Memory ``i`` was just perceived and is in focus: when the arousal policy says
        ``perceived``, its field is aroused in every tier (``arouse``) and what rose is
        promoted at once. Not a recall: ``i`` itself gains nothing, and neither do the
        memories of ``sources`` (the steps a summary or an event was made from: its content,
        not its field, as labelling does not associate them)."""
        if not getattr(self.arousal, "perceived", False):
            return
        content = np.array([self.store.by_step[s] for s in sources if s in self.store.by_step], dtype=np.int64)
        aroused = self.arouse(np.array([i], dtype=np.int64), exclude=content)
        if len(aroused):
            self._promote(aroused)

    def chance(self) -> tuple[float, float]:
        """(mean, sd) of the embedder's cosines of unrelated texts of the memory's language
        (``mtsbench.embed.chance.measure``, once): searches score cosines against it, arousal
        reads its neighbours' similarities and labelling its associations' relevance in
        standard deviations above it."""
        if self.chance_ is None:
            self.chance_ = measure(self.embedder, self.language)
        return self.chance_

    def link(self, i: int, ids: np.ndarray, sims: np.ndarray) -> None:
        """``index.arousal=links``: file the memories ``ids`` that memory ``i``'s labelling
        associated (cosine ``sims``) as i's neighbours, and i as each of theirs; every list
        keeps its ``arousal.neighbors`` most similar. Touches only i and its associations."""
        n = self.arousal.neighbors
        if not self.linked or n <= 0 or not len(ids):
            return
        ids, sims = np.asarray(ids, dtype=np.int64), np.asarray(sims, dtype=float)
        self.links_[int(i)] = _best(ids, sims, n)
        for j, sim in zip(ids.tolist(), sims.tolist()):
            have = self.links_.get(j)
            self.links_[j] = (np.array([i]), np.array([sim])) if have is None else \
                _best(np.append(have[0], i), np.append(have[1], sim), n)

    def _linked_neighbours(self, sources: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """(ids, sims, entries read) of the sources' links, one row each, padded with -1 / -inf;
        dead memories get -inf."""
        rows = [self.links_.get(int(s), (np.zeros(0, dtype=np.int64), np.zeros(0))) for s in sources]
        width = max(1, max(len(r[0]) for r in rows))
        ids = np.full((len(rows), width), -1, dtype=np.int64)
        sims = np.full((len(rows), width), -np.inf)
        for row, (a, b) in enumerate(rows):
            ids[row, : len(a)], sims[row, : len(b)] = a, b
        dead = (ids >= 0) & ~self.store.alive[np.maximum(ids, 0)]
        return ids, np.where(dead, -np.inf, sims), int(sum(len(r[0]) for r in rows))

    def arouse(self, sources: np.ndarray, exclude: np.ndarray | None = None) -> np.ndarray:
        """Raise the short-term attention of each source's neighbours, in every tier.

        One batched query answers all the sources over all tiers (``index.query_all``);
        each source keeps its ``neighbors`` most similar candidates (itself excluded) and
        gains ``arousal.amounts`` of their similarities read in standard deviations above the
        embedder's chance level, z = (cosine - mean) / sd (``chance``) — one vectorised call
        for all the sources, no loop over them. With ``index.arousal=links`` the candidates are the
        source's links (``link``: its labelling's associations and the memories that
        associated it), read with no distance computed; each entry read counts as one
        memory scored. ``exclude``: memories that gain nothing. Returns the aroused ids.
        """
        n = self.arousal.neighbors
        if n <= 0 or not len(sources):
            return np.zeros(0, dtype=np.int64)
        if self.linked:
            ids, sims, scored = self._linked_neighbours(sources)
        else:
            ids, sims, per_source = self.index.query_all(self.store.vectors[sources], n + 1)
            scored = per_source * len(sources)
        skip = (ids == sources[:, None]) | (ids < 0)
        if exclude is not None and len(exclude):
            skip |= np.isin(ids, exclude)
        sims = np.where(skip, -np.inf, sims)
        order = top_per_row(sims, min(n, sims.shape[1]))
        mean, sd = self.chance()
        gain = self.arousal.amounts((pick(sims, order) - mean) / sd)
        hit = gain > 0
        targets, amounts = pick(ids, order)[hit], gain[hit]
        charge(arousal_scored=scored)
        if not len(targets):
            return targets
        uniq, total = self.attention.arouse(self.store, targets, amounts, self.now)
        self.store.aroused[uniq] += total          # what a check reads (``arousal``): given, before the cap
        self.emit("aroused", ids=uniq.tolist(), amounts=[round(a, 4) for a in total.tolist()])
        return uniq

    # -- writing -----------------------------------------------------------------------------
    def remember(self, text: str, kind: str, provenance: tuple[str, ...], *, score: float | None,
                 vector: np.ndarray | None = None, meta: dict | None = None, w_plus: float | None = None,
                 w_minus: float | None = None, **fact) -> int:
        """Store a memory with attention ``score`` (None: its labelling failed, so it is never
        attended to), place it in its tier and index it; returns its id. ``fact`` holds key,
        value and belief of facts and conjectures (``w_plus``/``w_minus``: NARS evidence)."""
        vector = self.embed(text) if vector is None else vector
        i = self.store.add(text, kind, created=self.now, provenance=provenance, vector=vector, meta=meta, **fact)
        if w_plus is not None:
            self.store.w_plus[i], self.store.w_minus[i] = w_plus, w_minus
        ids = np.array([i])
        if score is None:
            self.store.meta_of(i)["unlabelled"] = True
            self.emit("label_failed", id=i, step=provenance[-1] if provenance else None)
        self.attention.label(self.store, ids, np.array([score or 0.0]), self.now)
        tier = int(self.tiering.targets(self.store, ids, self.now, full=False)[0])
        self.store.tier[i] = tier
        self.index.add(tier, ids, vector[None, :])
        said = {"key": fact.get("key"), "value": fact.get("value"), "belief": fact.get("belief"), "text": text} \
            if kind in ("fact", "conjecture") else {}      # what the LLM concluded: mtsbench calibrate reads it
        self.emit("created", id=i, kind=kind, steps=list(provenance), tier=tier, **said)
        self._spill(tier)
        return i

    def rewrite(self, i: int, text: str, provenance: tuple[str, ...], reembed: bool = True) -> None:
        """New text (re-embedded and re-indexed unless ``reembed`` is False) and provenance."""
        vector = self.embed(text) if reembed else self.store.vectors[i]
        self.store.rewrite(i, text, vector, provenance)
        if reembed:
            self.index.update(int(self.store.tier[i]), i, vector)

    def drop(self, i: int) -> None:
        """Memory ``i`` dies (merged away, or lost to a newer fact): out of every index."""
        self.store.kill(i)
        self.index.remove(int(self.store.tier[i]), i)
        self.emit("dropped", id=i)

    def move_belief(self, i: int, rule, estimate: float) -> None:
        """Move fact ``i``'s belief toward ``estimate`` by the ``belief`` rule (``update``)."""
        s = self.store
        b, wp, wm = rule.update(s.belief[i:i + 1], s.w_plus[i:i + 1], s.w_minus[i:i + 1], np.array([estimate]))
        s.belief[i], s.w_plus[i], s.w_minus[i] = float(b[0]), float(wp[0]), float(wm[0])

    def weaken(self, i: int, keep: float) -> None:
        """Memory ``i`` keeps the share ``keep`` of its attention (a lost contradiction)."""
        self.attention.weaken(self.store, np.array([i]), np.array([keep]), self.now)

    # -- tiers -------------------------------------------------------------------------------
    def _move(self, ids: np.ndarray, new: np.ndarray, why: str) -> None:
        old = self.store.tier[ids]
        changed = new != old
        if not changed.any():
            return
        ids, old, new = ids[changed], old[changed], new[changed]
        self.index.move(ids, old, new, self.store.vectors[ids])
        self.store.tier[ids] = new
        self.emit("moved", ids=ids.tolist(), to=new.tolist(), why=why)

    def _promote(self, ids: np.ndarray) -> None:
        """Recall or arousal lifted these: move each up at once if its policy says so."""
        ids = ids[self.store.alive[ids]]
        target = self.tiering.targets(self.store, ids, self.now, full=False)
        up = target < self.store.tier[ids]
        if up.any():
            self._move(ids[up], target[up], "promoted")

    def _spill(self, tier: int) -> None:
        """A FIFO top tier (``TierPolicy.fifo`` set) over its size hands its oldest members
        to the policy's ``overflow``."""
        size = self.tiers.fifo
        if size is None or tier != 0 or self.index.tiers[0].size <= size:
            return
        members = np.sort(self.index.tiers[0].members())     # ids grow with arrival time
        out = members[: len(members) - size]
        s = self.store
        target = self.tiers.overflow(self.attention.total(s, out, self.now), s.recalls[out], s.parts[out],
                                     (self.now - s.long_t[out]) / HOUR)
        self._move(out, target, "spilled")

    def rebalance(self) -> None:
        """Re-tier the memories that can have moved (demotion by decay happens only here):
        every live memory for a full pass or, incrementally, only those written since the
        last pass or whose decay is due (``Tiering.to_check``); same tiers either way."""
        ids = self.tiering.to_check(self.store, self.now)
        if len(ids):
            self._move(ids, self.tiering.targets(self.store, ids, self.now, full=True), "rebalance")
            self.tiering.schedule(self.store, ids, self.now)
        self.emit("rebalanced", sizes=self.index.sizes())


def _best(ids: np.ndarray, sims: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The n most similar of a neighbour list, most similar first (ties: earlier first).

    >>> [a.tolist() for a in _best(np.array([4, 7, 9]), np.array([0.2, 0.9, 0.5]), 2)]
    [[7, 9], [0.9, 0.5]]
    """
    order = np.argsort(-sims, kind="stable")[:n]
    return ids[order], sims[order]


@declared(node="index")
@dataclass(frozen=True)
class IndexOptions:
    """The ``index`` config node (``make_index``'s ``params``; see ``configs/config.yaml``)."""

    graph: Literal["shared", "per_tier"] = "shared"
    exact_below: Natural = 2048
    M: Annotated[int, Field(ge=2)] = 16
    ef_construction: Count = 100
    ef: Count = 64
    ef_per_k: Annotated[Number, Field(ge=1)] = 1.0
    arousal: Literal["scan", "walk", "links"] = "scan"
    seed: Seed = 0
    threads: Threads = 1

    def __post_init__(self):
        if self.arousal == "walk" and self.graph == "per_tier":
            raise ConfigError("index.arousal=walk: needs index.graph=shared (one graph over every memory); "
                              "index.graph=per_tier has a graph per tier and scans for arousal")


def make_index(dim: int, n_tiers: int, params: dict | None) -> SharedGraphIndex | TierIndexes:
    """The tier indexes named by ``params["graph"]`` (``shared``, the default, or ``per_tier``)."""
    params = dict(params or {})
    kind = params.pop("graph", "shared")
    return (SharedGraphIndex if kind == "shared" else TierIndexes)(dim, n_tiers, **params)
