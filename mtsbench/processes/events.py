"""Major events (DESIGN §1.4): a tag joins the latest event of its category unless it is stale.

The ``EventTracker`` keeps, per category, the event memories in order of creation, when
each was last updated and the validity the LLM last stated for the category. For a tag of
category c told at time t (the time of its turns, not of the summarization) it asks the
``events`` policy whether the latest event of c is stale (age = t - last update):

- not stale → join: the LLM's ``merge_event`` rewrites the event's text keeping its
  storyline (a failed call leaves the text as it was, traced), the provenance becomes the
  union of the parts, and joining uses the event, so it is recalled (boosted, aroused);
- stale, or no event yet → a new ``event`` memory, labelled like any perception (as
  salient as its source turns: ``hints`` carries their largest ``salience`` hint).

Looking an event up is a dict access per category: nothing scans the store. The tracker
sees memory through ``EventMemory``, stores new events through ``perceive`` and returns its
``EventDecision``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..llm.base import LLM, EventTag, Item
from ..scenario.model import Hints
from .ports import EventMemory, Perceive


@dataclass(frozen=True)
class EventDecision:
    """The event memory a tag went to, and whether it joined an existing event."""

    id: int
    joined: bool


class EventTracker:
    """Event memories per category, and the join-or-split decision for each new tag."""

    def __init__(self, policy):
        self.policy = policy
        self.by_category_: dict[str, list[int]] = {}
        self.updated_: dict[int, float] = {}
        self.valid_: dict[str, float] = {}

    def tag(self, memory: EventMemory, llm: LLM, perceive: Perceive, tag: EventTag, provenance: tuple[str, ...],
            language: str, hints: Hints = Hints(), at: float | None = None) -> EventDecision:
        """File one tag told at time ``at`` (its turns' time; default now): join the latest
        event of its category or start a new one."""
        at = memory.now if at is None else at
        c = tag.category
        if tag.valid is not None:
            self.valid_[c] = tag.valid
        latest = self.latest(memory, c)
        if latest is not None:
            age = at - self.updated_[latest]
            stale = bool(self.policy.stale(np.array([age]), np.array([self.valid_.get(c, math.nan)]))[0])
            if not stale:
                self._join(memory, llm, latest, tag, provenance, language, at)
                return EventDecision(latest, True)
        item = Item(tag.text, "event", provenance[-1], language, hints, tuple(provenance))
        i = perceive(item, "event", provenance, meta={"category": c})
        self.by_category_.setdefault(c, []).append(i)
        self.updated_[i] = at
        memory.emit("event", id=i, category=c, joined=False, steps=list(provenance))
        return EventDecision(i, False)

    def _join(self, memory, llm, i: int, tag: EventTag, provenance: tuple[str, ...], language: str,
              at: float) -> None:
        merged = llm.merge_event(memory.text(i), tag.text, language)
        if merged is None:
            memory.emit("merge_event_failed", id=i, category=tag.category)
            merged = memory.text(i)
        parts = tuple(dict.fromkeys(memory.provenance(i) + tuple(provenance)))
        memory.rewrite(i, merged, parts)
        self.updated_[i] = max(self.updated_[i], at)
        memory.emit("event", id=i, category=tag.category, joined=True, steps=list(provenance))
        memory.recall(np.array([i]), why="event")

    def latest(self, memory, category: str) -> int | None:
        """The newest live event memory of ``category``, or None."""
        live = [i for i in self.by_category_.get(category, ()) if memory.alive(i)]
        return live[-1] if live else None

    def count(self, memory, category: str) -> int:
        """How many live event memories ``category`` has."""
        return sum(1 for i in self.by_category_.get(category, ()) if memory.alive(i))

    def containing(self, memory, step: str) -> list[int]:
        """The live event memories whose provenance names ``step``."""
        return [i for ids in self.by_category_.values() for i in ids
                if memory.alive(i) and step in memory.provenance(i)]
