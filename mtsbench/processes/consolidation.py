"""Consolidation at idle time, "sleep" (DESIGN §1.5).

On every ``idle`` step (and, with ``nightly_at: "HH:MM"``, at that hour of each simulated
night) each fact formed since the last consolidation, oldest first, recalls related
memories with a high ``motivation`` search (its ``related`` best hits that are older live
facts, plus every older live fact with the same key: the key is the LLM's own name for
what a fact is about, so that lookup is a free exact index). A fact without a key
(imported data, an LLM that names none) has no such index: its candidates are the
``related`` older live facts most similar to it with relevance of at least
``min_relevance`` (``processes.identity.similar``), and the LLM's judgement alone decides.
The LLM's ``judge_relation`` labels each pair. Restatements are merged as they are
found; contradictions are settled afterwards, once per pair of surviving facts, so that a
claim restated several times meets its rival with the belief all its restatements gave it:

- ``same`` → merge: the new fact folds into the older one, which survives with the union
  of provenance; the LLM re-estimates its belief given the restatement
  (``reassess_belief``) and the ``belief`` rule moves the belief toward that estimate; the
  survivor is recalled, so its attention rises. The survivor stands for the new fact from
  then on.
- ``contradicts`` → the ``conflict`` rule picks the loser (the seed: the side with less
  belief; mem0: the older side, "newer" meaning the fact stated last, a merged fact
  counting as stated when its newest part was). The LLM re-estimates the loser's belief given the winner, the belief rule
  moves it, and the loser keeps ``keep`` of its attention. With a rule that drops the
  loser (mem0's newest-wins) the old fact dies instead.
- ``unrelated`` → nothing.

A failed LLM call skips that pair (counted in the meter, traced). Cost — LLM calls and
memories scored — is metered apart from the steps' own (the agent's ``processes``). The
consolidator sees memory through ``FactMemory``; the LLM, the belief rule and the conflict
rule are passed in; ``run`` returns what it did (``Consolidated``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..llm.base import LLM
from ..llm.tasks import keyless
from ..core.params import Natural, Share, TimeOfDay, declared
from ..core.units import DAY
from .identity import similar
from .ports import FactMemory


@dataclass
class Consolidated:
    """What one consolidation did: (survivor, merged-away) pairs and (loser, winner) pairs."""

    merged: list[tuple[int, int]] = field(default_factory=list)
    contradicted: list[tuple[int, int]] = field(default_factory=list)


def night_seconds(at) -> float:
    """Seconds past midnight of ``consolidation.nightly_at`` ("HH:MM", checked by ``Consolidator``).

    >>> night_seconds("03:30")
    12600.0
    """
    hours, _, minutes = str(at).strip().partition(":")
    return float(int(hours) * 3600 + int(minutes) * 60)


def _survivor(i: int, merged_into: dict[int, int]) -> int:
    """Follow merges to the memory that now stands for ``i``.

    >>> _survivor(9, {9: 4, 4: 2})
    2
    """
    while i in merged_into:
        i = merged_into[i]
    return i


def _stated(memory, i: int) -> float:
    """When fact ``i`` was last stated (its newest merged part), else when it was stored."""
    return float(memory.meta(i).get("stated", memory.created(i)))


@declared
class Consolidator:
    """Merge restated facts and settle contradictions, for the facts formed since last time."""

    def __init__(self, motivation: Share = 1.0, related: Natural = 5, nightly_at: TimeOfDay | None = None,
                 enabled: bool = True, min_relevance: Share = 0.1):
        self.motivation = motivation
        self.related = related
        self.min_relevance = min_relevance
        self.nightly_at = nightly_at
        self.enabled = enabled
        self.night_ = None if nightly_at is None else night_seconds(nightly_at)

    def run(self, memory: FactMemory, llm: LLM, facts: list[int], belief, conflict,
            language: str = "en") -> Consolidated:
        """Consolidate ``facts`` (the fact ids formed since last time): restatements are merged
        first, then every contradiction found is settled once, between the survivors."""
        done = Consolidated()
        if not self.enabled or not facts:
            return done
        run = _Run(memory, llm, belief, conflict, language, self, done)
        memory.emit("consolidation", facts=[int(i) for i in facts])
        merged_into: dict[int, int] = {}
        conflicts: list[tuple[int, int, float]] = []
        for n in facts:
            if memory.alive(n):
                run.relate(n, merged_into, conflicts)
        settled: set[tuple[int, int]] = set()
        for a, b, strength in conflicts:
            a, b = _survivor(a, merged_into), _survivor(b, merged_into)
            pair = (min(a, b), max(a, b))
            if a == b or pair in settled or not (memory.alive(a) and memory.alive(b)):
                continue
            settled.add(pair)
            newer, older = sorted(pair, key=lambda i: (_stated(memory, i), i), reverse=True)
            run.contradict(new=newer, old=older, strength=strength)
        return done

    def last_night(self, now: float, day_offset: float = 0.0) -> float | None:
        """When the latest night (``nightly_at``) came at or before ``now`` (seconds since the
        scenario's start, which is ``day_offset`` seconds past midnight); None when nightly
        consolidation is off or the first night has not come yet.

        >>> Consolidator(nightly_at="03:00").last_night(30 * 3600.0), Consolidator().last_night(9e9)
        (97200.0, None)
        """
        if self.night_ is None or not self.enabled:
            return None
        since_first = now + day_offset - self.night_
        if since_first < 0:
            return None
        return math.floor(since_first / DAY) * DAY - day_offset + self.night_


class _Run:
    """One consolidation's collaborators, so the steps below read as the rules they are."""

    def __init__(self, memory, llm, belief, conflict, language, settings: Consolidator, done: Consolidated):
        self.memory, self.llm, self.belief, self.conflict = memory, llm, belief, conflict
        self.language, self.settings, self.done = language, settings, done

    def candidates(self, n: int) -> list[int]:
        m, s = self.memory, self.settings
        if keyless(m.key(n)):
            ids = set(similar(m, m.vector(n), "fact", s.related + 1, s.motivation, s.min_relevance))
        else:
            found = m.search(m.vector(n), s.related, s.motivation)
            ids = {int(i) for i in found.ids} | set(m.with_key(m.key(n)))
        return sorted(i for i in ids if i < n and m.alive(i) and m.kind(i) == "fact")

    def relate(self, n: int, merged_into: dict, conflicts: list) -> None:
        """Judge ``n`` against its candidates: merge restatements now, queue contradictions."""
        m = self.memory
        current = n
        for o in self.candidates(n):
            if not m.alive(o):
                continue
            relation = self.llm.judge_relation(m.fact(current), m.fact(o), self.language)
            if relation is None or relation.label == "unrelated":
                continue
            if relation.label == "same":
                survivor, gone = min(o, current), max(o, current)
                self.merge(survivor, gone)
                merged_into[gone] = survivor
                current = survivor
            else:
                conflicts.append((current, o, relation.strength))

    def merge(self, survivor: int, gone: int) -> None:
        m = self.memory
        before = m.belief(survivor)
        estimate = self.llm.reassess_belief(m.fact(survivor), [m.fact(gone)], self.language)
        if estimate is not None:
            m.move_belief(survivor, self.belief, estimate)
        parts = tuple(dict.fromkeys(m.provenance(survivor) + m.provenance(gone)))
        m.rewrite(survivor, m.text(survivor), parts, reembed=False)
        m.meta(survivor)["stated"] = max(_stated(m, survivor), _stated(m, gone))
        m.drop(gone)
        m.emit("merged", id=survivor, merged=[gone], belief=[round(before, 4), round(m.belief(survivor), 4)])
        m.recall(np.array([survivor]), why="merge")
        self.done.merged.append((survivor, gone))

    def contradict(self, new: int, old: int, strength: float) -> None:
        """Settle one contradiction between the newer fact ``new`` and the older ``old``."""
        m, rule = self.memory, self.conflict
        new_loses, keep = rule.resolve(np.array([m.belief(new)]), np.array([m.belief(old)]), np.array([strength]))
        loser, winner = (new, old) if new_loses[0] else (old, new)
        before = m.belief(loser)
        if rule.drops_loser:
            m.drop(loser)
        else:
            estimate = self.llm.reassess_belief(m.fact(loser), [m.fact(winner)], self.language)
            if estimate is not None:
                m.move_belief(loser, self.belief, estimate)
            m.weaken(loser, float(keep[0]))
        m.emit("contradicted", loser=loser, winner=winner, dropped=rule.drops_loser,
               belief=[round(before, 4), round(m.belief(loser), 4)], keep=round(float(keep[0]), 4))
        self.done.contradicted.append((loser, winner))
