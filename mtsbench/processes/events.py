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

Looking an event up is a dict access per category: nothing scans the store.

A tag without a category (``llm.tasks.keyless``: imported data, an LLM that names none)
is matched by memory search instead: the ``related`` live events most similar to its text
(relevance at least ``min_relevance``, ``processes.identity.similar``), best first, are
put to the LLM's ``same_event`` until one is judged the same storyline; the tag then
belongs to that event's category (for a keyless event, its group ``#<id of its first
event>``) and joins or splits by the rule above. If none is, it starts a new event, in a
group of its own. A failed call counts as "not the same" (traced). The tracker
sees memory through ``EventMemory``, stores new events through ``perceive`` and returns its
``EventDecision``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..llm.base import LLM, EventTag, Item
from ..llm.tasks import keyless
from ..scenario.model import Hints
from .identity import similar
from .ports import EventMemory, Perceive


@dataclass(frozen=True)
class EventDecision:
    """The event memory a tag went to, and whether it joined an existing event."""

    id: int
    joined: bool


class EventTracker:
    """Event memories per category, and the join-or-split decision for each new tag."""

    def __init__(self, policy, related: int = 5, min_relevance: float = 0.1, motivation: float = 1.0):
        self.policy = policy
        self.related = related
        self.min_relevance = min_relevance
        self.motivation = motivation
        self.by_category_: dict[str, list[int]] = {}
        self.group_: dict[int, str] = {}
        self.updated_: dict[int, float] = {}
        self.valid_: dict[str, float] = {}

    def tag(self, memory: EventMemory, llm: LLM, perceive: Perceive, tag: EventTag, provenance: tuple[str, ...],
            language: str, hints: Hints = Hints(), at: float | None = None) -> EventDecision:
        """File one tag told at time ``at`` (its turns' time; default now): join the latest
        event of its category or start a new one."""
        at = memory.now if at is None else at
        c = self.match(memory, llm, tag, language) if keyless(tag.category) else tag.category
        if tag.valid is not None and c is not None:
            self.valid_[c] = tag.valid
        latest = None if c is None else self.latest(memory, c)
        if latest is not None:
            age = at - self.updated_[latest]
            stale = bool(self.policy.stale(np.array([age]), np.array([self.valid_.get(c, math.nan)]))[0])
            if not stale:
                self._join(memory, llm, latest, c, tag, provenance, language, at)
                return EventDecision(latest, True)
        item = Item(tag.text, "event", provenance[-1], language, hints, tuple(provenance))
        i = perceive(item, "event", provenance, meta={"category": "" if keyless(tag.category) else c})
        if c is None:                       # a storyline of its own, named by its first event
            c = f"#{i}"
            if tag.valid is not None:
                self.valid_[c] = tag.valid
        self.by_category_.setdefault(c, []).append(i)
        self.group_[i] = c
        self.updated_[i] = at
        memory.emit("event", id=i, category=c, joined=False, steps=list(provenance))
        return EventDecision(i, False)

    def _join(self, memory, llm, i: int, c: str, tag: EventTag, provenance: tuple[str, ...], language: str,
              at: float) -> None:
        merged = llm.merge_event(memory.text(i), tag.text, language)
        if merged is None:
            memory.emit("merge_event_failed", id=i, category=c)
            merged = memory.text(i)
        parts = tuple(dict.fromkeys(memory.provenance(i) + tuple(provenance)))
        memory.rewrite(i, merged, parts)
        self.updated_[i] = max(self.updated_[i], at)
        memory.emit("event", id=i, category=c, joined=True, steps=list(provenance))
        memory.recall(np.array([i]), why="event")

    def match(self, memory: EventMemory, llm: LLM, tag: EventTag, language: str) -> str | None:
        """The category of the stored event the LLM judges ``tag`` continues, or None."""
        for i in similar(memory, memory.embed(tag.text or ""), "event", self.related, self.motivation,
                         self.min_relevance):
            if i not in self.group_:
                continue                    # an event this tracker did not file (pre-loaded)
            same = llm.same_event(EventTag(memory.meta(i).get("category", ""), memory.text(i)), tag, language)
            if same is None:
                memory.emit("same_event_failed", id=i)
            elif same:
                return self.group_[i]
        return None

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
