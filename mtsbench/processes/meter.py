"""Cost of the background processes (summarize, consolidate, infer), kept apart from steps.

``ProcessCosts`` holds per process: runs, LLM calls, tokens (prompt and completion),
retries, failures, memories scored by its searches (``scored``), index queries, the
memories scored by the arousal its recalls caused (``arousal_scored``) and the index work
it caused (``INDEX_KEYS``: distance computations, graph inserts and their estimated
distances, tier moves). ``running(name)`` opens a cost scope (``mtsbench.core.costs``) for the
process: what runs inside is charged to it, and so not to the step it runs in. The agent
that runs the processes holds the ledger; memory keeps none.
"""

from __future__ import annotations

from contextlib import contextmanager

from ..core.costs import Tally, scope

LLM_KEYS = ("calls", "tokens", "prompt_tokens", "completion_tokens", "retries", "failures")
SEARCH_KEYS = ("scored", "index_queries", "arousal_scored")
INDEX_KEYS = {"distances": "distances", "index_inserts": "inserts", "insert_distances_est": "insert_distances_est",
              "index_moves": "moves"}       # cost column -> what the index charges (IndexWork field)


def _empty() -> dict:
    return {"runs": 0, **{k: 0 for k in LLM_KEYS}, **{k: 0 for k in SEARCH_KEYS}, **{k: 0 for k in INDEX_KEYS}}


class ProcessCosts:
    """Totals per process name; ``active`` is the process running now (None: the step itself).

    >>> from mtsbench.core.costs import charge
    >>> costs = ProcessCosts()
    >>> with costs.running("infer"):
    ...     charge(calls=1, tokens=12, scored=3)
    >>> costs.totals["infer"]["runs"], costs.totals["infer"]["calls"], costs.totals["infer"]["scored"]
    (1, 1, 3)
    """

    def __init__(self):
        self.totals: dict[str, dict] = {}
        self.active: str | None = None

    @contextmanager
    def running(self, name: str):
        """Charge everything done inside to process ``name`` (a nested process counts under the outer)."""
        if self.active is not None:
            yield
            return
        spent = Tally()
        self.active = name
        try:
            with scope(spent):
                yield
        finally:
            self.active = None
            t = self.totals.setdefault(name, _empty())
            t["runs"] += 1
            for k in (*LLM_KEYS, *SEARCH_KEYS):
                t[k] += spent[k]
            for k, charged in INDEX_KEYS.items():
                t[k] += spent[charged]
