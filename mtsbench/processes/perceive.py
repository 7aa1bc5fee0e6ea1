"""Perception: the path every observed or derived item takes into memory.

``Perception(memory, labeller, llm)`` embeds the item, has the labeller score it (which
may search for its associated memories and ask the LLM), stores it with that score, traces
the labelling and, when the labeller boosts, recalls the associated memories (they were
used); then the item, now in focus, arouses its own field (``Memory.attend``, when the
arousal policy's ``perceived`` says so). Turns, perceptions, summaries, events and conjectures all arrive this way; facts
are stored directly with the attention they inherit (``processes.summarize``).
"""

from __future__ import annotations

from ..llm.base import LLM, Item
from ..memory.memory import Memory
from .labelling import Labelled, Labeller


class Perception:
    """Label and store items (callable: the ``Perceive`` protocol of the processes)."""

    def __init__(self, memory: Memory, labeller: Labeller, llm: LLM):
        self.memory = memory
        self.labeller = labeller
        self.llm = llm

    def __call__(self, item: Item, kind: str, provenance: tuple[str, ...], meta: dict | None = None, **fact) -> int:
        """Store ``item`` labelled; returns its id (``store`` also returns the labelling)."""
        return self.store(item, kind, provenance, meta, **fact)[0]

    def store(self, item: Item, kind: str, provenance: tuple[str, ...], meta: dict | None = None,
              **fact) -> tuple[int, Labelled]:
        """Store ``item`` labelled; returns its id and the labelling (score, associations, cost)."""
        m = self.memory
        vector = m.embed(item.text)
        labelled = self.labeller.label(m, self.llm, item, vector)
        i = m.remember(item.text, kind, provenance, score=labelled.score, vector=vector, meta=meta, **fact)
        m.emit("scored", id=i, score=labelled.score, associated=[int(j) for j in labelled.associated],
               scored=labelled.cost.scored, tiers_searched=labelled.cost.tiers_searched)
        m.link(i, labelled.associated, labelled.relevance)
        if self.labeller.boost:
            m.recall(labelled.associated, why="association")
        m.attend(i, item.sources)
        return i, labelled
