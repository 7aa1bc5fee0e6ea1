"""Consolidation at idle time, "sleep" (DESIGN §1.5).

On every ``idle`` step (and, with ``nightly_at: "HH:MM"``, at that hour of each simulated
night) each fact formed since the last consolidation, oldest first, recalls related
memories with a high ``motivation`` search (its ``related`` best hits that are older live
facts, plus every older live fact with the same key: the key is the LLM's own name for
what a fact is about, so that lookup is a free exact index). The LLM's ``judge_relation``
labels each pair. Restatements are merged as they are found; contradictions are settled
afterwards, once per pair of surviving facts, so that a claim restated several times
meets its rival with the belief all its restatements gave it:

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
memories scored — is metered apart from the steps' own (``MemoryAgent.process``).
"""

from __future__ import annotations

import re

import numpy as np

from ..llm.base import Fact


def night_seconds(at) -> float:
    """Seconds past midnight of ``consolidation.nightly_at`` ("HH:MM"); ConfigError otherwise.

    >>> night_seconds("03:30")
    12600.0
    >>> night_seconds("25:00")
    Traceback (most recent call last):
    mtsbench.config.ConfigError: consolidation.nightly_at: expected a time of day HH:MM (00:00 to 23:59) or null, got '25:00'
    """
    from ..config import ConfigError

    m = re.fullmatch(r"(\d{1,2}):(\d{2})", str(at).strip())
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise ConfigError(f"consolidation.nightly_at: expected a time of day HH:MM (00:00 to 23:59) or null, got {str(at)!r}")
    return float(int(m.group(1)) * 3600 + int(m.group(2)) * 60)


def _survivor(i: int, merged_into: dict[int, int]) -> int:
    """Follow merges to the memory that now stands for ``i``.

    >>> _survivor(9, {9: 4, 4: 2})
    2
    """
    while i in merged_into:
        i = merged_into[i]
    return i


def _stated(store, i: int) -> float:
    """When fact ``i`` was last stated (its newest merged part), else when it was stored."""
    return float(store.meta[i].get("stated", store.created[i]))


def fact_of(store, i: int) -> Fact:
    """The stored fact ``i`` as the LLM sees it (key, value, text, current belief)."""
    return Fact(store.key[i], store.value[i], store.text[i], round(float(store.belief[i]), 4))


class Consolidator:
    """Merge restated facts and settle contradictions, for the facts formed since last time."""

    def __init__(self, motivation: float = 1.0, related: int = 5, nightly_at: str | None = None,
                 enabled: bool = True):
        self.motivation = motivation
        self.related = related
        self.nightly_at = nightly_at
        self.enabled = enabled
        self.night_ = None if nightly_at is None else night_seconds(nightly_at)

    def run(self, memory) -> None:
        """Consolidate ``memory.new_facts`` (then empty it): restatements are merged first,
        then every contradiction found is settled once, between the survivors."""
        new, memory.new_facts = list(memory.new_facts), []
        if not self.enabled or not new:
            return
        memory.emit("consolidation", facts=[int(i) for i in new])
        merged_into: dict[int, int] = {}
        conflicts: list[tuple[int, int, float]] = []
        for n in new:
            if memory.store.alive[n]:
                self._relate(memory, n, merged_into, conflicts)
        settled: set[tuple[int, int]] = set()
        for a, b, strength in conflicts:
            a, b = _survivor(a, merged_into), _survivor(b, merged_into)
            pair = (min(a, b), max(a, b))
            if a == b or pair in settled or not (memory.store.alive[a] and memory.store.alive[b]):
                continue
            settled.add(pair)
            newer, older = sorted(pair, key=lambda i: (_stated(memory.store, i), i), reverse=True)
            self._contradict(memory, new=newer, old=older, strength=strength)

    def _candidates(self, memory, n: int) -> list[int]:
        store = memory.store
        found = memory.search(store.vectors[n], self.related, self.motivation, memory.now)
        same_key = store.by_key.get(store.key[n], [])
        ids = {int(i) for i in found.ids} | set(same_key)
        return sorted(i for i in ids if i < n and store.alive[i] and store.kind_of(i) == "fact")

    def _relate(self, memory, n: int, merged_into: dict, conflicts: list) -> None:
        """Judge ``n`` against its candidates: merge restatements now, queue contradictions."""
        store, llm, lang = memory.store, memory.llm, memory.language
        current = n
        for o in self._candidates(memory, n):
            if not store.alive[o]:
                continue
            relation = llm.judge_relation(fact_of(store, current), fact_of(store, o), lang)
            if relation is None or relation.label == "unrelated":
                continue
            if relation.label == "same":
                survivor, gone = min(o, current), max(o, current)
                self._merge(memory, survivor, gone)
                merged_into[gone] = survivor
                current = survivor
            else:
                conflicts.append((current, o, relation.strength))

    def _merge(self, memory, survivor: int, gone: int) -> None:
        store = memory.store
        before = float(store.belief[survivor])
        estimate = memory.llm.reassess_belief(fact_of(store, survivor), [fact_of(store, gone)], memory.language)
        if estimate is not None:
            self._move_belief(memory, survivor, estimate)
        parts = tuple(dict.fromkeys(store.provenance[survivor] + store.provenance[gone]))
        memory.rewrite(survivor, store.text[survivor], parts, reembed=False)
        store.meta[survivor]["stated"] = max(_stated(store, survivor), _stated(store, gone))
        memory.drop(gone)
        memory.emit("merged", id=survivor, merged=[gone], belief=[round(before, 4), round(float(store.belief[survivor]), 4)])
        memory.recall(np.array([survivor]), why="merge")

    def _contradict(self, memory, new: int, old: int, strength: float) -> None:
        """Settle one contradiction between the newer fact ``new`` and the older ``old``."""
        store = memory.store
        new_loses, keep = memory.conflict.resolve(np.array([store.belief[new]]), np.array([store.belief[old]]),
                                                  np.array([strength]))
        loser, winner = (new, old) if new_loses[0] else (old, new)
        before = float(store.belief[loser])
        if memory.conflict.drops_loser:
            memory.drop(loser)
        else:
            estimate = memory.llm.reassess_belief(fact_of(store, loser), [fact_of(store, winner)], memory.language)
            if estimate is not None:
                self._move_belief(memory, loser, estimate)
            memory.attention.weaken(store, np.array([loser]), keep, memory.now)
        memory.emit("contradicted", loser=loser, winner=winner, dropped=memory.conflict.drops_loser,
                    belief=[round(before, 4), round(float(store.belief[loser]), 4)], keep=round(float(keep[0]), 4))

    @staticmethod
    def _move_belief(memory, i: int, estimate: float) -> None:
        s = memory.store
        b, wp, wm = memory.belief.update(s.belief[i:i + 1], s.w_plus[i:i + 1], s.w_minus[i:i + 1],
                                         np.array([estimate]))
        s.belief[i], s.w_plus[i], s.w_minus[i] = float(b[0]), float(wp[0]), float(wm[0])
