"""Cost scopes: what runs inside a scope is charged to it.

Whatever counts a cost calls ``charge(key=amount, ...)`` as it spends: the LLM meter
(``calls``, ``tokens``, ``prompt_tokens``, ``completion_tokens``, ``retries``,
``failures``), an index (``distances``, ``graph_distances``, ``inserts``,
``insert_distances_est``, ``moves``, ``queries``), memory's searches (``scored``,
``index_queries``) and arousal (``arousal_scored``). The amount goes to the innermost
scope open in this context, and to no scope when none is open (the counters keep their own
running totals regardless). A step opens a scope, a background process opens one inside
it: what the process spends is the process's, not the step's, with no before-and-after
subtraction anywhere.

>>> with scope() as step:
...     charge(calls=1, tokens=10)
...     with scope() as process:
...         charge(calls=2, tokens=5)
...     charge(tokens=1)
>>> step["calls"], step["tokens"], process["calls"], process["tokens"], step["moves"]
(1, 11, 2, 5, 0)

Below every other module: it imports nothing of mtsbench.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


# The work one step is charged (a row of results.parquet, a probe's ``expect.cost``), in column order:
# name -> what it counts (mtsbench.systems.base.Cost holds them; background processes are reported apart).
STEP_COSTS: dict[str, str] = {
    "scored": "memories scored by the step's searches",
    "tiers_searched": "the deepest tier the step's search reached",
    "index_queries": "index queries",
    "arousal_scored": "memories scored by regional arousal's neighbour searches",
    "distances": "vector distances computed by every index query",
    "index_inserts": "vectors inserted into a graph index",
    "insert_distances_est": "distances of those inserts (estimated)",
    "index_moves": "memories moved between tiers",
    "llm_calls": "LLM calls",
    "tokens": "LLM tokens, prompt and completion",
    "prompt_tokens": "LLM prompt tokens",
    "completion_tokens": "LLM completion tokens",
    "llm_retries": "LLM calls retried",
    "llm_failures": "LLM calls that failed after their retries",
    "association_scored": "memories scored by a probe's own labelling",
}


class Tally(dict):
    """What a scope was charged, by key; a key never charged reads 0."""

    def __missing__(self, key: str) -> int:
        return 0


_OPEN: ContextVar[tuple[Tally, ...]] = ContextVar("mtsbench_cost_scopes", default=())


def charge(**amounts) -> None:
    """Charge ``amounts`` (key -> number) to the innermost open scope (none open: nowhere)."""
    open_ = _OPEN.get()
    if open_:
        tally = open_[-1]
        for key, amount in amounts.items():
            tally[key] = tally.get(key, 0) + amount


@contextmanager
def scope(tally: Tally | None = None) -> Iterator[Tally]:
    """Open a cost scope: everything charged inside, and not inside a scope opened within
    it, is added to ``tally`` (a new one when not given), which the ``with`` yields."""
    tally = Tally() if tally is None else tally
    token = _OPEN.set(_OPEN.get() + (tally,))
    try:
        yield tally
    finally:
        _OPEN.reset(token)
