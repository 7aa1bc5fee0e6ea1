"""The seed design's agent: scheduling only — which step kind does what, and when a session
or a night ends. Memory itself is ``memory.Memory``; the processes are in ``processes/``.

Order within a step: a session that ended (a gap over ``summarize.session_gap``) is
summarized first, and a night that passed is consolidated (``consolidation.nightly_at``);
then the step: an observed item is perceived (labelled and stored), queued for
summarization (summarized once ``summarize.every`` turns wait) and inferred from; a probe
solves its motivation (``motivation`` group: the scenario's number, or from the question's
own labelled attention, raised when the question is asked again), searches and recalls
what it uses; an ``idle`` step summarizes what waits, consolidates,
lets the idle time pass and rebalances; every ``rebalance_every`` steps memory rebalances.
The step's own cost is returned; the background processes' is metered apart, per process
(``processes``). Both by cost scope (``mtsbench.core.costs``): a step opens one, a process opens
one inside it, and what runs inside each is charged to it. The agent reads its parts only
through their public methods and return values.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ...core.costs import Tally, scope
from ...llm.base import LLM, Item, estimate_tokens
from ...mechanisms.motivation import Given
from ...memory.memory import Memory
from ...memory.retrieval import SearchCost
from ...processes.events import EventTracker
from ...processes.meter import INDEX_KEYS, ProcessCosts
from ...processes.perceive import Perception
from ..base import Cost, Idle, Observation, Outcome, Query, Ranking, Tick

STORED_KIND = {"say": "turn", "reply": "turn", "perceive": "perception"}
SPEAKER = {"say": "user", "reply": "agent", "perceive": "world"}


class MemoryAgent:
    """Drives memory and its processes through the steps of one scenario."""

    def __init__(self, memory: Memory, llm: LLM, labeller, summarizer, consolidator, inferrer, events, belief,
                 accumulate, conflict, rebalance_every: int = 20, language: str = "en", day_offset: float = 0.0,
                 context: int | None = None, motivation=None):
        self.memory, self.llm, self.language = memory, llm, language
        calibrate = getattr(llm, "calibrate_relevance", None)   # the mock reads relevance relative to chance
        if calibrate is not None:
            calibrate(memory.embedder)
        self.summarizer, self.consolidator, self.inferrer = summarizer, consolidator, inferrer
        self.events = EventTracker(events)    # events: the ``events`` group's policy (join or split a tag)
        self.belief, self.accumulate, self.conflict = belief, accumulate, conflict
        self.rebalance_every = rebalance_every
        self.day_offset = day_offset          # seconds past midnight at the scenario's start
        self.context = context                # memories a probe uses (None: the probe's k)
        self.motivation = motivation or Given()
        self.perceive = Perception(memory, labeller, llm)
        self.processes = ProcessCosts()       # the background processes' cost, per process
        self.new_facts_: list[int] = []
        self.steps_done_ = 0
        self._last_night = 0.0
        self._summarized: list[str] = []
        self._asked: list[tuple[float, np.ndarray]] = []    # recent probes: (time, question vector)

    # -- background processes ------------------------------------------------------------
    def summarize(self) -> None:
        """Summarize the items waiting; file the event tags; queue the facts for consolidation."""
        if not self.summarizer.waiting():
            return
        m = self.memory
        with self.processes.running("summarize"):
            done = self.summarizer.flush(m, self.llm, self.perceive, self.belief)
            if self.consolidator.enabled:
                self.new_facts_ += done.facts
            for t in done.tags:
                self.events.tag(m, self.llm, self.perceive, t.tag, t.provenance, done.language, t.hints, at=t.at)
        self._summarized += done.steps

    def consolidate(self) -> None:
        """Consolidate the facts formed since the last consolidation ("sleep")."""
        if not self.new_facts_:
            return
        facts, self.new_facts_ = self.new_facts_, []
        with self.processes.running("consolidate"):
            self.consolidator.run(self.memory, self.llm, facts, self.belief, self.conflict, self.language)

    def _night_passed(self) -> bool:
        """``consolidation.nightly_at`` came since the last night's consolidation."""
        night = self.consolidator.last_night(self.memory.now, self.day_offset)
        if night is None or night <= self._last_night:
            return False
        self._last_night = night
        return True

    # -- steps ---------------------------------------------------------------------------
    def _step(self, at: float, do: Callable[[], Outcome], idle_for: float | None = None,
              counts: bool = True) -> Outcome:
        """Run one step's work ``do`` at time ``at``; ``counts``: it is a scenario step (a
        reply retrieval belongs to its turn's step, so it does not advance the schedule)."""
        started = time.perf_counter()
        m = self.memory
        self._summarized = []
        own = Tally()       # what the step itself spends; its processes are charged apart
        with scope(own):
            m.now = at
            if self.summarizer.session_over(at):
                self.summarize()
            if self._night_passed():
                self.consolidate()
            out = do()
            self.steps_done_ += counts
            if idle_for is not None:
                m.now = at + idle_for
                m.rebalance()
            elif counts and self.rebalance_every and self.steps_done_ % self.rebalance_every == 0:
                m.rebalance()
        c = out.cost
        c.llm_calls, c.tokens, c.llm_retries, c.llm_failures = own["calls"], own["tokens"], own["retries"], own["failures"]
        c.prompt_tokens, c.completion_tokens = own["prompt_tokens"], own["completion_tokens"]
        c.arousal_scored = own["arousal_scored"]
        for k, charged in INDEX_KEYS.items():
            setattr(c, k, own[charged])
        out.summarized = tuple(self._summarized)
        c.latency_ms = (time.perf_counter() - started) * 1000.0
        return out

    def observe(self, obs: Observation) -> Outcome:
        return self._step(obs.at, lambda: self._observe(obs))

    def _observe(self, obs: Observation) -> Outcome:
        item = Item(obs.text, obs.kind, obs.step, self.language, obs.hints)
        i, labelled = self.perceive.store(item, STORED_KIND[obs.kind], (obs.step,), meta={"speaker": SPEAKER[obs.kind]})
        if self.summarizer.add(item, self.memory.now):
            self.summarize()
        if self.inferrer.wants(item):
            context = [self.memory.text(j) for j in labelled.associated]
            with self.processes.running("infer"):
                self.inferrer.observe(self.memory, self.llm, self.perceive, self.accumulate, item, context)
        c = labelled.cost
        return Outcome(Cost(c.scored, c.tiers_searched, c.index_queries), memory=i, score=labelled.score)

    def retrieve(self, q: Query) -> Outcome:
        return self._step(q.at, lambda: self._retrieve(q), counts=q.purpose == "probe")

    def _repeats(self, at: float, vector: np.ndarray) -> int:
        """Earlier probes within the policy's window whose question vector has cosine at least
        ``repeat_similarity`` with this one (then this one joins them)."""
        p = self.motivation
        self._asked = [(t, v) for t, v in self._asked if at - t <= p.window()]
        norm = float(np.linalg.norm(vector)) or 1.0
        repeats = sum(float(v @ vector) / ((float(np.linalg.norm(v)) or 1.0) * norm) >= p.repeat_similarity
                      for _, v in self._asked)
        self._asked.append((at, vector))
        return repeats

    def _solve(self, q: Query, vector: np.ndarray) -> tuple[float, SearchCost]:
        """A probe's motivation and the cost of labelling it (none under ``given``)."""
        m, p = self.memory, self.motivation
        repeats = self._repeats(q.at, vector)
        score, cost = None, SearchCost()
        if p.labels:
            labeller = self.perceive.labeller
            labelled = labeller.label(m, self.llm, Item(q.text, "probe", q.step, self.language, q.hints), vector)
            score, cost = labelled.score, labelled.cost
            if labeller.boost:
                m.recall(labelled.associated, why="association")
        motivation = p.solve(q.motivation, score, repeats)
        m.emit("motivation", step=q.step, given=q.motivation, score=score, repeats=repeats,
               motivation=round(motivation, 6), scored=cost.scored)
        return motivation, cost

    def _retrieve(self, q: Query) -> Outcome:
        m = self.memory
        vector = m.embed(q.text)
        motivation, labelling = self._solve(q, vector) if q.purpose == "probe" else (q.motivation, SearchCost())
        found = m.search(vector, self.context or q.k, motivation, rank_to=q.depth, text=q.text)
        c = found.cost
        m.emit("retrieval" if q.purpose == "probe" else "reply", step=q.step, ids=[int(i) for i in found.ids],
               scores=[round(float(s), 6) for s in found.scores], motivation=motivation,
               scored=c.scored, tiers_searched=c.tiers_searched, index_queries=c.index_queries)
        m.recall(found.ids, why=q.purpose)
        ids = [int(i) for i in found.ranked]
        ranking = Ranking(ids, [float(s) for s in found.ranked_scores], [m.provenance(i) for i in ids],
                          [estimate_tokens(m.text(i)) for i in ids], used=len(found.ids),
                          relevance=[float(r) for r in found.relevance])
        if q.purpose == "probe":        # what mtsbench show lists: not needed for a reply's retrieval
            self._explain(ranking, found, c.tiers_searched)
        return Outcome(Cost(c.scored, c.tiers_searched, c.index_queries + labelling.index_queries,
                            association_scored=labelling.scored), ranking=ranking)

    def _explain(self, ranking: Ranking, found, searched: int) -> None:
        """A probe's ranking for inspection: each ranked memory's tier and score terms (relevance,
        attention), the memories the search could see (those of the ``searched`` tiers) and held."""
        store = self.memory.store
        live = store.alive[: store.size]
        ranking.tiers = [int(store.tier[i]) for i in ranking.ids]
        ranking.terms = {"relevance": [float(r) for r in found.ranked_relevance],
                         "attention": [float(a) for a in found.ranked_attention]}
        ranking.visible = int(np.count_nonzero(live & (store.tier[: store.size] < searched)))
        ranking.held = int(np.count_nonzero(live))

    def idle(self, idle: Idle) -> Outcome:
        def do() -> Outcome:
            self.memory.emit("idle", step=idle.step, duration=idle.duration)
            self.summarize()
            self.consolidate()
            return Outcome()
        return self._step(idle.at, do, idle_for=idle.duration)

    def tick(self, tick: Tick) -> Outcome:
        return self._step(tick.at, Outcome)

    def finish(self) -> Outcome:
        """The scenario is over: summarize what still waits."""
        self._summarized = []
        self.summarize()
        return Outcome(summarized=tuple(self._summarized))
