"""A memory system of your own, plugged into mtsbench: one class, one YAML file.

``RecencySystem`` remembers every observed item and answers a probe with the most recent
memories, newest first, whatever is asked; a memory's score is minus its age in hours.
It has no attention, tiers or beliefs, so every state check reads as unsupported.
``configs/system/recency.yaml`` names it with ``_target_: mtsbench_recency.RecencySystem``
(see README.md for the command line).
"""

from __future__ import annotations

from mtsbench.llm.base import estimate_tokens
from mtsbench.systems.base import Context, Cost, Observation, Outcome, PlainSystem, Query, Ranking


class RecencySystem(PlainSystem):
    """The newest ``query.depth`` memories, newest first, score = -(age in hours).

    >>> s = RecencySystem()
    >>> s.start(Context("demo"))
    >>> for i, text in enumerate(["milk", "tea", "coffee"]):
    ...     _ = s.observe(Observation(f"s{i}", 3600.0 * i, "say", text))
    >>> r = s.retrieve(Query("p", 7200.0, "what do I drink?", depth=2)).ranking
    >>> r.ids, r.scores, r.provenance, s.context_texts(r.ids)
    ([2, 1], [0.0, -1.0], [('s2',), ('s1',)], ['coffee', 'tea'])
    """

    def __init__(self, limit: int | None = None):
        self.limit = limit                   # forget all but the newest `limit` memories (None: keep all)

    def start(self, context: Context) -> None:
        self.memories_: list[tuple[float, str, str]] = []   # (time, step, text); the id is the index
        self.trace_: list[dict] = []

    def observe(self, item: Observation) -> Outcome:
        self.memories_.append((item.at, item.step, item.text))
        i = len(self.memories_) - 1
        self.trace_.append({"t": item.at, "event": "created", "id": i, "kind": "turn", "steps": [item.step]})
        return Outcome(memory=i)

    def retrieve(self, query: Query) -> Outcome:
        """Rank without reading the query: only the ``limit`` newest memories are held."""
        ids = list(reversed(self._held()))[: query.depth]
        ranking = Ranking(ids=ids, scores=[(self.memories_[i][0] - query.at) / 3600.0 for i in ids],
                          provenance=[(self.memories_[i][1],) for i in ids],
                          tokens=[estimate_tokens(self.memories_[i][2]) for i in ids])
        return Outcome(cost=Cost(scored=len(ids), tiers_searched=1, index_queries=1), ranking=ranking)

    def context_texts(self, ids) -> list[str]:
        """The texts of memories ``ids``. With it, a memory earns an evidence step when its text
        carries the step's content, so the run reports earned recall, the headline; without it
        the report has none and says why (recall by provenance alone only)."""
        return [self.memories_[int(i)][2] for i in ids]

    # idle, tick, finish, read (UNSUPPORTED: no belief, attention, tier or event state),
    # waiting, sample and totals come from PlainSystem

    def memories_count(self) -> int:
        return len(self._held())

    def _held(self) -> range:
        n = len(self.memories_)
        return range(max(0, n - self.limit) if self.limit else 0, n)
