"""The memory agent: composes store, attention, labelling, tiers, arousal and retrieval.

``MemoryAgent.step(step)`` handles one scenario step on the simulated clock ``step.at``
(seconds since the scenario start) and returns a ``StepResult`` with what the step cost.
Every change to memory is appended to ``trace`` as one event dict.

Per step the agent touches only what the step needs: the tiers a search reaches, the
neighbours arousal finds, the memories it recalls. Demotion by decay happens only at
rebalance points (``idle`` steps and every ``rebalance_every`` steps), looking only at the
memories written since the last one or whose decay is due (``memory.tiering``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .embed import Embedder
from .llm.base import LLM, Item
from .mechanisms.arousal import Arousal
from .mechanisms.depth import DepthPolicy
from .mechanisms.tiers import TierPolicy
from .memory.attention import DualAttention
from .memory.index import TierIndexes
from .memory.retrieval import Retrieval, SearchCost, TieredSearch, rank
from .memory.store import MemoryStore
from .memory.tiering import Tiering
from .processes.labelling import Labeller
from .scenario.model import Step

STORED_KIND = {"say": "turn", "reply": "turn", "perceive": "perception"}
SPEAKER = {"say": "user", "reply": "agent", "perceive": "world"}


@dataclass
class StepResult:
    """What a step did: the memory it created, its labelled score, a probe's ranking, cost.

    ``cost`` is the cost of the step's searches; ``arousal`` that of arousal's neighbour
    searches (kept apart so a probe's search cost stays comparable across arousal options).
    """

    step: Step
    memory_id: int | None = None
    score: float | None = None
    retrieval: Retrieval | None = None
    cost: SearchCost = field(default_factory=SearchCost)
    arousal: SearchCost = field(default_factory=SearchCost)
    llm_calls: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_retries: int = 0
    llm_failures: int = 0
    latency_ms: float = 0.0


class MemoryAgent:
    """An agent whose memory is built from swappable mechanisms."""

    def __init__(self, embedder: Embedder, llm: LLM, attention: DualAttention, labeller: Labeller,
                 retriever: TieredSearch, tiers: TierPolicy, depth: DepthPolicy, arousal: Arousal,
                 index: dict | None = None, rebalance_every: int = 20, language: str = "en",
                 incremental_rebalance: bool = True):
        self.embedder = embedder
        self.llm = llm
        self.attention = attention
        self.labeller = labeller
        self.retriever = retriever
        self.tiers = tiers
        self.depth = depth
        self.arousal = arousal
        self.rebalance_every = rebalance_every
        self.language = language
        self.store = MemoryStore(dim=embedder.dim)
        self.index = TierIndexes(embedder.dim, tiers.n_tiers, **(index or {}))
        self.tiering = Tiering(tiers, attention, incremental=incremental_rebalance)
        self.now = 0.0
        self.steps_done = 0
        self.trace: list[dict] = []
        self._arousal_cost = SearchCost()

    def _emit(self, event: str, **fields) -> None:
        self.trace.append({"t": round(self.now, 3), "event": event, **fields})

    # -- searching and recalling -------------------------------------------------------
    def search(self, vector: np.ndarray, k: int, motivation: float, now: float) -> Retrieval:
        """Search the tiers at this motivation (used by probes and by the processes)."""
        return self.retriever.search(self.store, self.attention, self.index, self.depth, vector, k,
                                     motivation, now)

    def recall(self, ids: np.ndarray, why: str) -> None:
        """Recalled memories are used: boost them, arouse their field, promote at once."""
        if len(ids) == 0:
            return
        ids = np.unique(ids)
        self.attention.recall(self.store, ids, self.now)
        self._emit("recalled", ids=[int(i) for i in ids], why=why)
        aroused = self._arouse(ids)
        self._promote(np.union1d(ids, aroused))

    def _arouse(self, sources: np.ndarray) -> np.ndarray:
        """Raise the short-term attention of each source's neighbours, in every tier.

        Each tier answers all the sources in one batched query; each source then keeps its
        ``neighbors`` most similar candidates (itself excluded) over all tiers.
        """
        n = self.arousal.neighbors
        if n <= 0:
            return np.zeros(0, dtype=np.int64)
        queries = self.store.vectors[sources]
        ids, sims = [], []
        for tier in range(self.index.n_tiers):
            t_ids, t_sims, scored = self.index.query_many(tier, queries, n + 1)
            self._arousal_cost.scored += scored * len(sources)
            self._arousal_cost.index_queries += len(sources)
            ids.append(np.broadcast_to(t_ids, t_sims.shape) if t_ids.ndim == 1 else t_ids)
            sims.append(t_sims)
        ids, sims = np.concatenate(ids, axis=1), np.concatenate(sims, axis=1)
        targets, amounts = [], []
        for row, src in enumerate(sources):
            keep = ids[row] != src
            s_ids, s_sims = ids[row][keep], sims[row][keep]
            order = rank(s_sims, n)
            gain = self.arousal.amounts(s_sims[order])
            hit = gain > 0
            targets.append(s_ids[order][hit])
            amounts.append(gain[hit])
        self._arousal_cost.tiers_searched = self.index.n_tiers
        targets, amounts = np.concatenate(targets), np.concatenate(amounts)
        if not len(targets):
            return targets
        uniq, total = self.attention.arouse(self.store, targets, amounts, self.now)
        self._emit("aroused", ids=[int(i) for i in uniq], amounts=[round(float(a), 4) for a in total])
        return uniq

    # -- tiers -------------------------------------------------------------------------
    def _targets(self, ids: np.ndarray, full: bool) -> np.ndarray:
        return self.tiering.targets(self.store, ids, self.now, full=full)

    def _move(self, ids: np.ndarray, new: np.ndarray, why: str) -> None:
        old = self.store.tier[ids]
        changed = new != old
        if not changed.any():
            return
        ids, old, new = ids[changed], old[changed], new[changed]
        self.index.move(ids, old, new, self.store.vectors[ids])
        self.store.tier[ids] = new
        self._emit("moved", ids=[int(i) for i in ids], to=[int(t) for t in new], why=why)

    def _promote(self, ids: np.ndarray) -> None:
        """Recall or arousal lifted these: move each up at once if its policy says so."""
        target = self._targets(ids, full=False)
        up = target < self.store.tier[ids]
        self._move(ids[up], target[up], "promoted")

    def rebalance(self) -> None:
        """Re-tier the memories that can have moved (demotion by decay happens only here).

        ``Tiering.to_check`` gives every live memory for a full pass, or, incrementally,
        only those written since the last pass or whose decay is due; same tiers either way.
        """
        ids = self.tiering.to_check(self.store, self.now)
        if len(ids):
            self._move(ids, self._targets(ids, full=True), "rebalance")
            self.tiering.schedule(self.store, ids, self.now)
        self._emit("rebalanced", sizes=self.index.sizes())

    # -- steps -------------------------------------------------------------------------
    def step(self, step: Step) -> StepResult:
        started = time.perf_counter()
        before = self.llm.meter.totals()
        self._arousal_cost = SearchCost()
        self.now = step.at
        result = getattr(self, "_" + step.kind)(step)
        self.steps_done += 1
        if step.kind == "idle":
            self.now = step.at + step.duration
            self.rebalance()
        elif self.rebalance_every and self.steps_done % self.rebalance_every == 0:
            self.rebalance()
        after = self.llm.meter.totals()
        result.llm_calls, result.tokens = after["calls"] - before["calls"], after["tokens"] - before["tokens"]
        result.prompt_tokens = after["prompt_tokens"] - before["prompt_tokens"]
        result.completion_tokens = after["completion_tokens"] - before["completion_tokens"]
        result.llm_retries = after["retries"] - before["retries"]
        result.llm_failures = after["failures"] - before["failures"]
        result.arousal = self._arousal_cost
        result.latency_ms = (time.perf_counter() - started) * 1000.0
        return result

    def _observe(self, step: Step) -> StepResult:
        vector = self.embedder.embed([step.text])[0]
        item = Item(step.text, step.kind, step.id, self.language, step.hints)
        labelled = self.labeller.label(self, item, vector, self.now)
        i = self.store.add(step.text, STORED_KIND[step.kind], created=self.now, provenance=(step.id,),
                           vector=vector, meta={"speaker": SPEAKER[step.kind]})
        ids = np.array([i])
        if labelled.score is None:   # the LLM call failed (llm.on_failure=skip): never attended to
            self.store.meta[i]["unlabelled"] = True
            self._emit("label_failed", id=i, step=step.id)
        self.attention.label(self.store, ids, np.array([labelled.score or 0.0]), self.now)
        tier = int(self._targets(ids, full=False)[0])
        self.store.tier[i] = tier
        self.index.add(tier, ids, vector[None, :])
        self._emit("created", id=i, kind=self.store.kind_of(i), step=step.id, tier=tier)
        self._emit("scored", id=i, score=labelled.score, associated=[int(j) for j in labelled.associated],
                   scored=labelled.cost.scored, tiers_searched=labelled.cost.tiers_searched)
        if self.labeller.boost:
            self.recall(labelled.associated, why="association")
        return StepResult(step, memory_id=i, score=labelled.score, cost=labelled.cost)

    _say = _reply = _perceive = _observe

    def _probe(self, step: Step) -> StepResult:
        vector = self.embedder.embed([step.text])[0]
        found = self.search(vector, step.expect.k, step.motivation, self.now)
        self._emit("retrieval", step=step.id, ids=[int(i) for i in found.ids],
                   scores=[round(float(s), 6) for s in found.scores], motivation=step.motivation,
                   scored=found.cost.scored, tiers_searched=found.cost.tiers_searched,
                   index_queries=found.cost.index_queries)
        self.recall(found.ids, why="probe")
        return StepResult(step, retrieval=found, cost=found.cost)

    def _idle(self, step: Step) -> StepResult:
        self._emit("idle", step=step.id, duration=step.duration)
        return StepResult(step)

    def _check(self, step: Step) -> StepResult:
        return StepResult(step)
