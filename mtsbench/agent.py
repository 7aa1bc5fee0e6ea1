"""The memory agent: composes store, attention, labelling, tiers, arousal, retrieval and the
background processes (summarisation with events, consolidation, inference).

``MemoryAgent.step(step)`` handles one scenario step on the simulated clock ``step.at``
(seconds since the scenario start) and returns a ``StepResult`` with what the step itself
cost; the background processes' cost is metered apart, per process, in ``processes``.
Every change to memory is appended to ``trace`` as one event dict.

Per step the agent touches only what the step needs: the tiers a search reaches, the
neighbours arousal finds, the memories it recalls. Demotion by decay happens only at
rebalance points (``idle`` steps and every ``rebalance_every`` steps), looking only at the
memories written since the last one or whose decay is due (``memory.tiering``).

Order within a step: a session that ended (a gap over ``summarize.session_gap``) is
summarised first, and a night that passed is consolidated (``consolidation.nightly_at``);
then the step: an observed item is labelled and stored, queued for summarisation
(summarised once ``summarize.every`` turns wait) and inferred from; an ``idle`` step
summarises what waits, consolidates, then lets the idle time pass and rebalances.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .embed import Embedder
from .llm.base import LLM, Item
from .mechanisms.accumulate import NoisyOr
from .mechanisms.arousal import Arousal
from .mechanisms.belief import Ema
from .mechanisms.conflict import WeakerLoses
from .mechanisms.depth import DepthPolicy
from .mechanisms.events import PerCategory
from .mechanisms.tiers import TierPolicy
from .memory.attention import HOUR, DualAttention
from .memory.index import TierIndexes
from .memory.retrieval import Retrieval, SearchCost, TieredSearch, rank
from .memory.store import MemoryStore
from .memory.tiering import Tiering
from .processes.consolidation import Consolidator
from .processes.events import EventTracker
from .processes.inference import Inferrer
from .processes.labelling import Labeller, Labelled
from .processes.meter import ProcessCosts
from .processes.summarize import Summariser
from .scenario.model import Step

STORED_KIND = {"say": "turn", "reply": "turn", "perceive": "perception"}
SPEAKER = {"say": "user", "reply": "agent", "perceive": "world"}
DAY = 86400.0


@dataclass
class StepResult:
    """What a step did: the memory it created, its labelled score, a probe's ranking, cost.

    ``cost`` is the cost of the step's own searches; ``arousal`` that of arousal's neighbour
    searches (kept apart so a probe's search cost stays comparable across arousal options).
    The LLM columns count the step's own calls; background processes are metered apart.
    ``summarised`` lists the steps whose summary was made during this step.
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
    summarised: list[str] = field(default_factory=list)


class MemoryAgent:
    """An agent whose memory is built from swappable mechanisms and processes."""

    def __init__(self, embedder: Embedder, llm: LLM, attention: DualAttention, labeller: Labeller,
                 retriever: TieredSearch, tiers: TierPolicy, depth: DepthPolicy, arousal: Arousal,
                 index: dict | None = None, rebalance_every: int = 20, language: str = "en",
                 summariser: Summariser | None = None, consolidator: Consolidator | None = None,
                 inferrer: Inferrer | None = None, events=None, belief=None, accumulate=None, conflict=None,
                 day_offset: float = 0.0, rank_to: int = 0,
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
        self.summariser = summariser or Summariser()
        self.consolidator = consolidator or Consolidator()
        self.inferrer = inferrer or Inferrer()
        self.events = EventTracker(events or PerCategory())
        self.belief = belief or Ema()
        self.accumulate = accumulate or NoisyOr()
        self.conflict = conflict or WeakerLoses()
        self.day_offset = day_offset          # seconds past midnight at the scenario's start
        self.rank_to = rank_to    # probes rank this deep for evaluation; only their top k are recalled
        self.store = MemoryStore(dim=embedder.dim)
        self.index = TierIndexes(embedder.dim, tiers.n_tiers, **(index or {}))
        self.processes = ProcessCosts()
        self.new_facts: list[int] = []
        self.tiering = Tiering(tiers, attention, incremental=incremental_rebalance)
        self.now = 0.0
        self.steps_done = 0
        self.trace: list[dict] = []
        self._arousal_cost = SearchCost()
        self._summarised: list[str] = []
        self._last_night = 0.0
        self.last_labelled: Labelled | None = None

    def emit(self, event: str, **fields) -> None:
        """Append one event to the trace, stamped with the simulated time."""
        self.trace.append({"t": round(self.now, 3), "event": event, **fields})

    # -- searching and recalling -------------------------------------------------------
    def search(self, vector: np.ndarray, k: int, motivation: float, now: float, rank_to: int = 0) -> Retrieval:
        """Search the tiers at this motivation (used by probes and by the processes)."""
        found = self.retriever.search(self.store, self.attention, self.index, self.depth, vector, k,
                                      motivation, now, rank_to=rank_to)
        self.processes.add_search(scored=found.cost.scored, index_queries=found.cost.index_queries)
        return found

    def recall(self, ids: np.ndarray, why: str) -> None:
        """Recalled memories are used: boost them, arouse their field, promote at once."""
        if len(ids) == 0:
            return
        ids = np.unique(ids)
        self.attention.recall(self.store, ids, self.now)
        self.emit("recalled", ids=[int(i) for i in ids], why=why)
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
        cost = SearchCost()
        for tier in range(self.index.n_tiers):
            t_ids, t_sims, scored = self.index.query_many(tier, queries, n + 1)
            cost.scored += scored * len(sources)
            cost.index_queries += len(sources)
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
        if self.processes.active is None:
            self._arousal_cost.scored += cost.scored
            self._arousal_cost.index_queries += cost.index_queries
            self._arousal_cost.tiers_searched = self.index.n_tiers
        else:
            self.processes.add_search(arousal_scored=cost.scored)
        targets, amounts = np.concatenate(targets), np.concatenate(amounts)
        if not len(targets):
            return targets
        uniq, total = self.attention.arouse(self.store, targets, amounts, self.now)
        self.emit("aroused", ids=[int(i) for i in uniq], amounts=[round(float(a), 4) for a in total])
        return uniq

    # -- storing -----------------------------------------------------------------------
    def remember(self, text: str, kind: str, provenance: tuple[str, ...], *, item: Item | None = None,
                 score: float | None = None, meta: dict | None = None, **fact) -> int:
        """Store a memory: labelled by the labeller when ``item`` is given (its associations
        are recalled), else given ``score``; placed in its tier and indexed. ``fact`` holds
        key, value, belief, w_plus, w_minus of facts and conjectures."""
        vector = self.embedder.embed([text])[0]
        labelled = self.labeller.label(self, item, vector, self.now) if item is not None else Labelled(score or 0.0)
        self.last_labelled = labelled
        w_plus, w_minus = fact.pop("w_plus", None), fact.pop("w_minus", None)
        i = self.store.add(text, kind, created=self.now, provenance=provenance, vector=vector, meta=meta, **fact)
        if w_plus is not None:
            self.store.w_plus[i], self.store.w_minus[i] = w_plus, w_minus
        ids = np.array([i])
        if labelled.score is None:   # the LLM call failed (llm.on_failure=skip): never attended to
            self.store.meta[i]["unlabelled"] = True
            self.emit("label_failed", id=i, step=provenance[-1] if provenance else None)
        self.attention.label(self.store, ids, np.array([labelled.score or 0.0]), self.now)
        tier = int(self._targets(ids, full=False)[0])
        self.store.tier[i] = tier
        self.index.add(tier, ids, vector[None, :])
        self.emit("created", id=i, kind=kind, steps=list(provenance), tier=tier)
        self._spill(tier)
        if item is not None:
            self.emit("scored", id=i, score=labelled.score, associated=[int(j) for j in labelled.associated],
                      scored=labelled.cost.scored, tiers_searched=labelled.cost.tiers_searched)
            if self.labeller.boost:
                self.recall(labelled.associated, why="association")
        return i

    def rewrite(self, i: int, text: str, provenance: tuple[str, ...], reembed: bool = True) -> None:
        """New text (re-embedded and re-indexed) and provenance for memory ``i``."""
        vector = self.embedder.embed([text])[0] if reembed else self.store.vectors[i]
        self.store.rewrite(i, text, vector, provenance)
        if reembed:
            self.index.update(int(self.store.tier[i]), i, vector)

    def drop(self, i: int) -> None:
        """Memory ``i`` dies (merged away, or lost to a newer fact): out of every index."""
        self.store.kill(i)
        self.index.remove(int(self.store.tier[i]), i)
        self.emit("dropped", id=i)

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
        self.emit("moved", ids=[int(i) for i in ids], to=[int(t) for t in new], why=why)

    def _promote(self, ids: np.ndarray) -> None:
        """Recall or arousal lifted these: move each up at once if its policy says so."""
        ids = ids[self.store.alive[ids]]
        target = self._targets(ids, full=False)
        up = target < self.store.tier[ids]
        self._move(ids[up], target[up], "promoted")

    def _spill(self, tier: int) -> None:
        """A FIFO top tier (``tiers.fifo``) over its size hands its oldest members to ``overflow``."""
        size = getattr(self.tiers, "fifo", None)
        if size is None or tier != 0 or self.index.tiers[0].size <= size:
            return
        members = np.sort(self.index.tiers[0].members())     # ids grow with arrival time
        out = members[: len(members) - size]
        s = self.store
        target = self.tiers.overflow(self.attention.total(s, out, self.now), s.recalls[out], s.parts[out],
                                     (self.now - s.long_t[out]) / HOUR)
        self._move(out, target, "spilled")

    def rebalance(self) -> None:
        """Re-tier the memories that can have moved (demotion by decay happens only here).

        ``Tiering.to_check`` gives every live memory for a full pass, or, incrementally,
        only those written since the last pass or whose decay is due; same tiers either way.
        """
        ids = self.tiering.to_check(self.store, self.now)
        if len(ids):
            self._move(ids, self._targets(ids, full=True), "rebalance")
            self.tiering.schedule(self.store, ids, self.now)
        self.emit("rebalanced", sizes=self.index.sizes())

    # -- background processes ----------------------------------------------------------
    def summarise(self) -> None:
        """Summarise the items waiting (a session ended, or enough turns wait)."""
        if not self.summariser.pending_:
            return
        with self.processes.running("summarize", self.llm.meter):
            self._summarised += self.summariser.flush(self)

    def consolidate(self) -> None:
        """Consolidate the facts formed since the last consolidation ("sleep")."""
        if not self.new_facts:
            return
        with self.processes.running("consolidate", self.llm.meter):
            self.consolidator.run(self)

    def _night_passed(self) -> bool:
        """``consolidation.nightly_at`` came since the last night's consolidation."""
        night_at = self.consolidator.night_
        if night_at is None or not self.consolidator.enabled:
            return False
        since_first = self.now + self.day_offset - night_at
        night = math.floor(since_first / DAY) * DAY - self.day_offset + night_at
        if since_first < 0 or night <= self._last_night:
            return False
        self._last_night = night
        return True

    def finish(self) -> list[str]:
        """The scenario is over: summarise what still waits; returns the summarised steps."""
        self._summarised = []
        self.summarise()
        return self._summarised

    # -- steps -------------------------------------------------------------------------
    def step(self, step: Step) -> StepResult:
        started = time.perf_counter()
        before, bg_before = self.llm.meter.totals(), self.processes.llm_totals()
        self._arousal_cost = SearchCost()
        self._summarised = []
        self.now = step.at
        if self.summariser.session_over(self.now):
            self.summarise()
        if self._night_passed():
            self.consolidate()
        result = getattr(self, "_" + step.kind)(step)
        self.steps_done += 1
        if step.kind == "idle":
            self.now = step.at + step.duration
            self.rebalance()
        elif self.rebalance_every and self.steps_done % self.rebalance_every == 0:
            self.rebalance()
        after, bg_after = self.llm.meter.totals(), self.processes.llm_totals()
        own = {k: (after[k] - before[k]) - (bg_after[k] - bg_before[k]) for k in after}
        result.llm_calls, result.tokens = own["calls"], own["tokens"]
        result.prompt_tokens, result.completion_tokens = own["prompt_tokens"], own["completion_tokens"]
        result.llm_retries, result.llm_failures = own["retries"], own["failures"]
        result.arousal = self._arousal_cost
        result.summarised = list(self._summarised)
        result.latency_ms = (time.perf_counter() - started) * 1000.0
        return result

    def _observe(self, step: Step) -> StepResult:
        item = Item(step.text, step.kind, step.id, self.language, step.hints)
        i = self.remember(step.text, STORED_KIND[step.kind], (step.id,), item=item,
                          meta={"speaker": SPEAKER[step.kind]})
        labelled = self.last_labelled
        if self.summariser.add(item, self.now):
            self.summarise()
        if self.inferrer.wants(item):
            context = [self.store.text[j] for j in labelled.associated]
            with self.processes.running("infer", self.llm.meter):
                self.inferrer.observe(self, item, context)
        return StepResult(step, memory_id=i, score=labelled.score, cost=labelled.cost)

    _say = _reply = _perceive = _observe

    def _probe(self, step: Step) -> StepResult:
        vector = self.embedder.embed([step.text])[0]
        context = getattr(self.retriever, "context", None)   # the working context; judged on its first k
        found = self.search(vector, context or step.expect.k, step.motivation, self.now, rank_to=self.rank_to)
        self.emit("retrieval", step=step.id, ids=[int(i) for i in found.ids],
                  scores=[round(float(s), 6) for s in found.scores], motivation=step.motivation,
                  scored=found.cost.scored, tiers_searched=found.cost.tiers_searched,
                  index_queries=found.cost.index_queries)
        self.recall(found.ids, why="probe")
        return StepResult(step, retrieval=found, cost=found.cost)

    def _idle(self, step: Step) -> StepResult:
        self.emit("idle", step=step.id, duration=step.duration)
        self.summarise()
        self.consolidate()
        return StepResult(step)

    def _check(self, step: Step) -> StepResult:
        return StepResult(step)
