"""Dialogue summarization (DESIGN §1.4): summaries, the facts they state, their event tags.

The ``Summarizer`` collects the items of the perception stream (say, reply, perceive) and
summarizes them with the LLM's ``summarize`` task every ``every`` dialogue turns (say and
reply; perceptions ride along and yield their facts too) and when a session ends: when a
step comes more than ``session_gap`` after the last item, on an ``idle`` step, and at the
end of the scenario. A summary yields

- a ``summary`` memory whose provenance is the summarized steps, labelled for attention
  like any perception (a perfect labeller rates it as its most salient part: the mock is
  given the largest ``salience`` hint of the items) — unless fewer than ``min_items``
  items were summarized: a summary of one turn would only repeat it;
- a ``fact`` memory per extracted fact, with key, value and the belief rule's initial state
  for the LLM's belief; its provenance is the turns the fact names (all summarized steps if
  it names none). A fact inherits the attention its source turns hold now (the largest),
  rather than costing another labelling call, and records when it was stated
  (``meta.stated``: its latest source turn's time). New facts wait for consolidation;
- each event tag, handed to the event tracker (``processes.events``) with the time of the
  latest turn it names (a session summarized days later keeps its own time), unless
  ``tag_events`` is off (a design without major events).

The model keeps names memory already holds (issue 15): before asking, one memory search for
the summarized items (``motivation``; ``processes.identity.similar_by_kind``) finds
the live facts and events most similar to them, relevance at least ``min_relevance``; the
keys of the ``known_keys`` best facts and the categories of the ``known_keys`` best events
(distinct, keyless ones left out) are shown in the prompt, so the model reuses a key for
the same subject and a category for the same storyline instead of inventing a new name
each time. ``known_keys: 0`` shows none and searches nothing. The search's query is the
items' centroid (``Memory.centroid``: the unit mean of their stored vectors), not an
encoding of their texts joined: a model embedder reads only its first few hundred word
pieces of a joined text (MiniLM 256: about one turn of real dialogue) and would encode
12-15k characters per summary for it; the centroid weighs every item alike at no encode. The search is metered as the
summarizer's cost; the mock ignores what it is shown (its hints name the keys).

The texts a summary creates (the summary and its facts) are encoded in one embedder call
(``warm``) before they are stored one by one.

``flush`` stores the summary and the facts and *returns* what it produced (``Summarized``:
the steps, the new fact ids, the event tags with their sources and times); filing the tags
with the event tracker and queueing the facts for consolidation is the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..llm.base import LLM, EventTag, Item, Known, Summary
from ..llm.tasks import keyless
from ..core.params import Count, Duration, Natural, Share, declared
from ..scenario.model import Hints
from ..scenario.times import seconds
from .identity import similar_by_kind
from .ports import Perceive, SummaryMemory


@dataclass
class TagToFile:
    """An event tag of a summary, with the steps it names, their salience and its time."""

    tag: EventTag
    provenance: tuple[str, ...]
    hints: Hints
    at: float


@dataclass
class Summarized:
    """What one summarization produced: the steps it covered, the ids of the facts it
    stored (in order), and the event tags to file (in order)."""

    steps: list[str] = field(default_factory=list)
    facts: list[int] = field(default_factory=list)
    tags: list[TagToFile] = field(default_factory=list)
    language: str = "en"


@declared
class Summarizer:
    """Summarize every ``every`` dialogue turns and at the end of each session."""

    def __init__(self, every: Count = 8, session_gap: Duration = "3h", min_items: Count = 2, tag_events: bool = True,
                 enabled: bool = True, known_keys: Natural = 8, motivation: Share = 1.0, min_relevance: Share = 0.05):
        self.every = every
        self.known_keys = known_keys
        self.motivation = motivation
        self.min_relevance = min_relevance
        self.session_gap = session_gap
        self.min_items = min_items
        self.tag_events = tag_events
        self.enabled = enabled
        self.gap_ = seconds(session_gap)      # parsed once: session_over runs on every step
        self.pending_: list[Item] = []
        self.times_: list[float] = []          # when each waiting item came

    def session_over(self, now: float) -> bool:
        """Items are waiting and the last came more than ``session_gap`` before ``now``."""
        return bool(self.times_) and now - self.times_[-1] > self.gap_

    def add(self, item: Item, now: float) -> bool:
        """Queue an item; True when ``every`` dialogue turns are waiting (time to summarize)."""
        if not self.enabled:
            return False
        self.pending_.append(item)
        self.times_.append(now)
        return sum(1 for i in self.pending_ if i.kind in ("say", "reply")) >= self.every

    def waiting(self) -> tuple[Item, ...]:
        """The items queued and not yet summarized, in order."""
        return tuple(self.pending_)

    def flush(self, memory: SummaryMemory, llm: LLM, perceive: Perceive, belief) -> Summarized:
        """Summarize what is waiting (nothing if nothing is). ``belief`` is the belief rule
        whose ``initial`` state each fact starts from."""
        items, times, self.pending_, self.times_ = self.pending_, self.times_, [], []
        if not items:
            return Summarized()
        when = dict(zip((i.step for i in items), times))
        steps = [i.step for i in items]
        out = Summarized(steps, language=items[0].language)
        known_facts, known_events = self.known(memory, items)
        summary: Summary | None = llm.summarize(items, known_facts, known_events)
        if summary is None:
            memory.emit("summarize_failed", steps=steps)
            return out
        memory.warm([summary.text, *(f.text for f in summary.facts)])     # one encoder call for the new texts
        language = items[0].language
        sid = None
        if len(items) >= self.min_items:
            item = Item(summary.text, "summary", steps[-1], language, salience_of(items), tuple(steps))
            sid = perceive(item, "summary", tuple(steps))
        memory.emit("summarized", id=sid, steps=steps, facts=len(summary.facts), events=len(summary.events))
        for fact in summary.facts:
            source = _named(steps, fact.turns)
            score = memory.attention_of_steps(source)
            b, wp, wm = (float(x[0]) for x in belief.initial(np.array([fact.belief])))
            key = None if keyless(fact.key) else fact.key     # no key: identity by search (consolidation)
            out.facts.append(memory.remember(fact.text, "fact", source, score=score, key=key, value=fact.value,
                                             belief=b, w_plus=wp, w_minus=wm,
                                             meta={"stated": max(when[s] for s in source)}))
        for tag in summary.events if self.tag_events else ():
            source = _named(steps, tag.turns)
            out.tags.append(TagToFile(tag, source, salience_of([i for i in items if i.step in source]),
                                      max(when[s] for s in source)))
        return out


    def known(self, memory: SummaryMemory, items: list[Item]) -> tuple[tuple[Known, ...], tuple[Known, ...]]:
        """The keys of the stored facts and the categories of the live events most similar to
        ``items`` (one search; see the module docstring), each with its memory's text."""
        if self.known_keys <= 0:
            return (), ()
        vector = memory.centroid([i.step for i in items], [i.text for i in items])
        found = similar_by_kind(memory, vector, ("fact", "event"), self.known_keys, self.motivation,
                                self.min_relevance)
        facts: dict[str, str] = {}
        events: dict[str, str] = {}
        for i in found["fact"]:                 # best first; a key shown once, with its best fact's text
            if not keyless(memory.key(i)):
                facts.setdefault(memory.key(i), memory.text(i))
        for i in found["event"]:
            category = memory.meta(i).get("category", "")
            if not keyless(category):
                events.setdefault(category, memory.text(i))
        return tuple(Known(k, t) for k, t in facts.items()), tuple(Known(c, t) for c, t in events.items())


def salience_of(items: list[Item]) -> Hints:
    """Hints for a derived item: the largest ``salience`` hint of its source items (if any has one).

    >>> salience_of([Item("a", "say", "s0", hints=Hints(salience=3)), Item("b", "say", "s1")]).salience
    3
    """
    known = [i.hints.salience for i in items if i.hints.salience is not None]
    return Hints(salience=max(known)) if known else Hints()


def _named(steps: list[str], turns: tuple[int, ...]) -> tuple[str, ...]:
    """The step ids of the 1-based ``turns`` that exist (all steps if none does).

    >>> _named(["a", "b", "c"], (3, 9)), _named(["a", "b"], ())
    (('c',), ('a', 'b'))
    """
    named = [steps[t - 1] for t in dict.fromkeys(turns) if 1 <= t <= len(steps)]
    return tuple(named or steps)
