"""Major events (DESIGN §1.4): a tag joins the latest event of its category unless it is stale.

The ``EventTracker`` keeps, per category, the event memories in order of creation, when
each was last updated and the validity the LLM last stated for the category. For a tag of
category c told at time t (the time of its turns, not of the summarisation) it asks the
``events`` policy whether the latest event of c is stale (age = t - last update):

- not stale → join: the LLM's ``merge_event`` rewrites the event's text keeping its
  storyline (a failed call leaves the text as it was, traced), the provenance becomes the
  union of the parts, and joining uses the event, so it is recalled (boosted, aroused);
- stale, or no event yet → a new ``event`` memory, labelled like any perception (as
  salient as its source turns: ``hints`` carries their largest ``salience`` hint).

Looking an event up is a dict access per category: nothing scans the store.
"""

from __future__ import annotations

import math

import numpy as np

from ..llm.base import EventTag, Item
from ..scenario.model import Hints


class EventTracker:
    """Event memories per category, and the join-or-split decision for each new tag."""

    def __init__(self, policy):
        self.policy = policy
        self.by_category_: dict[str, list[int]] = {}
        self.updated_: dict[int, float] = {}
        self.valid_: dict[str, float] = {}

    def tag(self, memory, tag: EventTag, provenance: tuple[str, ...], language: str, hints: Hints = Hints(),
            at: float | None = None) -> int:
        """File one tag told at time ``at`` (its turns' time; default now); returns the id of
        the event memory it joined or created."""
        at = memory.now if at is None else at
        c = tag.category
        if tag.valid is not None:
            self.valid_[c] = tag.valid
        latest = self.latest(memory, c)
        if latest is not None:
            age = at - self.updated_[latest]
            stale = bool(self.policy.stale(np.array([age]), np.array([self.valid_.get(c, math.nan)]))[0])
            if not stale:
                self._join(memory, latest, tag, provenance, language, at)
                return latest
        text = tag.text
        item = Item(text, "event", provenance[-1], language, hints, tuple(provenance))
        i = memory.remember(text, "event", provenance, item=item, meta={"category": c})
        self.by_category_.setdefault(c, []).append(i)
        self.updated_[i] = at
        memory.emit("event", id=i, category=c, joined=False, steps=list(provenance))
        return i

    def _join(self, memory, i: int, tag: EventTag, provenance: tuple[str, ...], language: str, at: float) -> None:
        store = memory.store
        merged = memory.llm.merge_event(store.text[i], tag.text, language)
        if merged is None:
            memory.emit("merge_event_failed", id=i, category=tag.category)
            merged = store.text[i]
        parts = tuple(dict.fromkeys(store.provenance[i] + tuple(provenance)))
        memory.rewrite(i, merged, parts)
        self.updated_[i] = max(self.updated_[i], at)
        memory.emit("event", id=i, category=tag.category, joined=True, steps=list(provenance))
        memory.recall(np.array([i]), why="event")

    def latest(self, memory, category: str) -> int | None:
        """The newest live event memory of ``category``, or None."""
        live = [i for i in self.by_category_.get(category, ()) if memory.store.alive[i]]
        return live[-1] if live else None

    def count(self, memory, category: str) -> int:
        """How many live event memories ``category`` has."""
        return sum(1 for i in self.by_category_.get(category, ()) if memory.store.alive[i])

    def containing(self, memory, step: str) -> list[int]:
        """The live event memories whose provenance names ``step``."""
        return [i for ids in self.by_category_.values() for i in ids
                if memory.store.alive[i] and step in memory.store.provenance[i]]
