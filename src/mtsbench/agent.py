"""The memory agent: composes store, attention, labelling and retrieval for each step.

``MemoryAgent.step(step)`` handles one scenario step on the simulated clock ``step.at``
(seconds since the scenario start) and returns a ``StepResult`` with what the step cost.
Every change to memory is appended to ``trace`` as one event dict.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .embed import Embedder
from .llm.base import LLM, Item
from .memory.attention import DualAttention
from .memory.retrieval import Retrieval, Retriever, SearchCost
from .memory.store import MemoryStore
from .processes.labelling import Labeller
from .scenario.model import Step

STORED_KIND = {"say": "turn", "reply": "turn", "perceive": "perception"}
SPEAKER = {"say": "user", "reply": "agent", "perceive": "world"}


@dataclass
class StepResult:
    """What a step did: the memory it created, its labelled score, a probe's ranking, cost."""

    step: Step
    memory_id: int | None = None
    score: float | None = None
    retrieval: Retrieval | None = None
    cost: SearchCost = field(default_factory=SearchCost)
    llm_calls: int = 0
    tokens: int = 0
    latency_ms: float = 0.0


class MemoryAgent:
    """An agent whose memory is built from swappable mechanisms."""

    def __init__(self, embedder: Embedder, llm: LLM, attention: DualAttention, labeller: Labeller,
                 retriever: Retriever, language: str = "en"):
        self.embedder = embedder
        self.llm = llm
        self.attention = attention
        self.labeller = labeller
        self.retriever = retriever
        self.language = language
        self.store = MemoryStore(dim=embedder.dim)
        self.now = 0.0
        self.trace: list[dict] = []

    def _emit(self, event: str, **fields) -> None:
        self.trace.append({"t": round(self.now, 3), "event": event, **fields})

    def search(self, vector: np.ndarray, k: int, motivation: float, now: float) -> Retrieval:
        """Search the store (used by probes and by the processes)."""
        return self.retriever.search(self.store, self.attention, vector, k, motivation, now)

    def recall(self, ids: np.ndarray, why: str) -> None:
        """Recalled memories are used: boost them and trace it."""
        if len(ids) == 0:
            return
        self.attention.recall(self.store, ids, self.now)
        self._emit("recalled", ids=[int(i) for i in ids], why=why)

    def step(self, step: Step) -> StepResult:
        started = time.perf_counter()
        calls0, tokens0 = self.llm.meter.snapshot()
        self.now = step.at
        handler = getattr(self, "_" + step.kind)
        result = handler(step)
        calls1, tokens1 = self.llm.meter.snapshot()
        result.llm_calls, result.tokens = calls1 - calls0, tokens1 - tokens0
        result.latency_ms = (time.perf_counter() - started) * 1000.0
        if step.kind == "idle":
            self.now = step.at + step.duration
        return result

    def _observe(self, step: Step) -> StepResult:
        vector = self.embedder.embed([step.text])[0]
        item = Item(step.text, step.kind, step.id, self.language, step.hints)
        labelled = self.labeller.label(self, item, vector, self.now)
        i = self.store.add(step.text, STORED_KIND[step.kind], created=self.now, provenance=(step.id,),
                           vector=vector, meta={"speaker": SPEAKER[step.kind]})
        self.attention.label(self.store, np.array([i]), np.array([labelled.score]), self.now)
        self._emit("created", id=i, kind=self.store.kind_of(i), step=step.id)
        self._emit("scored", id=i, score=labelled.score, associated=[int(j) for j in labelled.associated],
                   scored=labelled.cost.scored)
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
