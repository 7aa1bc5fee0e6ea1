"""Attention labelling (DESIGN §1.1): the ``attention`` config group.

``Associative`` first recalls the item's associated memories — a shallow search at its
own ``motivation``, keeping at most ``associations`` hits whose relevance is at least
``min_relevance`` standard deviations above the embedder's chance level (z = (cosine - m)
/ sd, ``Associations.chance``: the same reading as the mock's and arousal's; an absolute
cosine of 0.08 let every stored memory through with an embedder whose unrelated texts score
0.8) — and asks the LLM to score the item in the light of their attention.
Those memories were recalled and used, so they are boosted (``boost``). A summary or
an event does not associate the memories of its own source steps (a conjecture does).
``CommonSense`` asks the LLM about the item alone: the ablation. ``Constant`` gives every
item the same score without asking anyone: designs that rate nothing (recency, MemoryBank,
MemoryOS).

A labeller sees memory only through ``Associations`` (search, text, provenance) and gets
the LLM passed in; it returns a ``Labelled`` and changes nothing: the caller stores the
item and boosts the associations (``processes.perceive``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..llm.base import LLM, Association, Item
from ..memory.retrieval import SearchCost
from ..core.params import Natural, Number, Score, Share, declared
from .ports import Associations


@dataclass
class Labelled:
    """A labelling's outcome: the score (None: the LLM call failed), the memories it used
    and their relevance to the item, and the search cost."""

    score: float | None
    associated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    cost: SearchCost = field(default_factory=SearchCost)
    relevance: np.ndarray = field(default_factory=lambda: np.zeros(0))


class Labeller(Protocol):
    """Scores a new item 0-10; ``boost``: its associated memories are recalled afterwards."""

    boost: bool

    def label(self, memory: Associations, llm: LLM, item: Item, vector: np.ndarray) -> Labelled: ...


@declared
class Associative:
    """Score the item in the light of the attention of its associated memories."""

    boost = True

    def __init__(self, associations: Natural = 3, min_relevance: Number = 1.0,
                 motivation: Share = 0.3, boost: bool = True):
        self.associations = associations
        self.min_relevance = min_relevance
        self.motivation = motivation
        self.boost = boost

    def label(self, memory, llm, item, vector):
        found = memory.search(vector, self.associations, self.motivation)
        mean, sd = memory.chance()
        keep = (found.relevance - mean) / sd >= self.min_relevance
        if item.sources:    # a derived item's own sources are its content, not associations
            sources = set(item.sources)
            keep &= np.array([not sources.intersection(memory.provenance(i)) for i in found.ids], dtype=bool)
        shown = [Association(memory.text(i), float(a), float(r))
                 for i, a, r in zip(found.ids[keep], found.attention[keep], found.relevance[keep])]
        return Labelled(llm.rate_attention(item, shown), found.ids[keep], found.cost, found.relevance[keep])


class CommonSense:
    """Score the item alone, by common sense (no association, no search)."""

    boost = False

    def label(self, memory, llm, item, vector):
        return Labelled(llm.rate_attention(item, []))


@declared
class Constant:
    """Every item gets ``score``: no LLM call, no search (designs that rate nothing).

    >>> Constant().label(None, None, None, None).score
    5.0
    """

    boost = False

    def __init__(self, score: Score = 5.0):
        self.score = score

    def label(self, memory, llm, item, vector):
        return Labelled(float(self.score))
