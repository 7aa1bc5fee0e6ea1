"""Cost of the background processes (summarize, consolidate, infer), kept apart from steps.

``ProcessCosts`` holds per process: runs, LLM calls, tokens (prompt and completion),
retries, failures, memories scored by its searches (``scored``), index queries, the
memories scored by the arousal its recalls caused (``arousal_scored``) and the index work
it caused (``INDEX_KEYS``: distance computations, graph inserts and their estimated
distances, tier moves), read from the ``work`` callable (the index's ``IndexWork``).
"""

from __future__ import annotations

from contextlib import contextmanager

LLM_KEYS = ("calls", "tokens", "prompt_tokens", "completion_tokens", "retries", "failures")
SEARCH_KEYS = ("scored", "index_queries", "arousal_scored")
INDEX_KEYS = {"distances": "distances", "index_inserts": "inserts", "insert_distances_est": "insert_distances_est",
              "index_moves": "moves"}       # cost column -> IndexWork field


def _empty() -> dict:
    return {"runs": 0, **{k: 0 for k in LLM_KEYS}, **{k: 0 for k in SEARCH_KEYS}, **{k: 0 for k in INDEX_KEYS}}


class ProcessCosts:
    """Totals per process name; ``active`` is the process running now (None: the step itself).

    >>> from mtsbench.llm.base import Meter
    >>> m, costs = Meter(), ProcessCosts()
    >>> with costs.running("infer", m):
    ...     m.record("infer", 10, 2); costs.add_search(scored=3)
    >>> costs.totals["infer"]["calls"], costs.totals["infer"]["tokens"], costs.totals["infer"]["scored"]
    (1, 12, 3)
    """

    def __init__(self, work=None):
        self.totals: dict[str, dict] = {}
        self.active: str | None = None
        self.work = work

    def index_work(self) -> dict:
        """The index work counters now (INDEX_KEYS), zeros without a ``work`` source."""
        w = self.work() if self.work is not None else None
        return {k: getattr(w, f) if w is not None else 0 for k, f in INDEX_KEYS.items()}

    @contextmanager
    def running(self, name: str, meter):
        """Meter everything done inside under ``name`` (a nested process counts under the outer)."""
        if self.active is not None:
            yield
            return
        before, work_before = meter.totals(), self.index_work()
        self.active = name
        try:
            yield
        finally:
            self.active = None
            after, work_after = meter.totals(), self.index_work()
            t = self.totals.setdefault(name, _empty())
            t["runs"] += 1
            for k in LLM_KEYS:
                t[k] += after[k] - before[k]
            for k in INDEX_KEYS:
                t[k] += work_after[k] - work_before[k]

    def add_search(self, scored: int = 0, index_queries: int = 0, arousal_scored: int = 0) -> None:
        """Add search cost to the running process (ignored when no process runs)."""
        if self.active is None:
            return
        t = self.totals.setdefault(self.active, _empty())
        t["scored"] += scored
        t["index_queries"] += index_queries
        t["arousal_scored"] += arousal_scored

    def llm_totals(self) -> dict:
        """LLM totals over every process (to take away from the steps' own)."""
        return {k: sum(t[k] for t in self.totals.values()) for k in LLM_KEYS}

    def index_totals(self) -> dict:
        """Index work over every process (to take away from the steps' own)."""
        return {k: sum(t[k] for t in self.totals.values()) for k in INDEX_KEYS}
