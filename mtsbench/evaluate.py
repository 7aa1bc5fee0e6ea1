"""Expectations → metric rows (DESIGN §4, §5).

One row per probe (``check`` = ``probe``) and one per expectation. Recall is judged by
provenance: an expected step is found when some memory among the top k lists it.
"""

from __future__ import annotations

import math

import numpy as np

from . import evidence
from .agent import MemoryAgent, StepResult
from .scenario.model import (BeliefCheck, ConjectureCheck, EventCountCheck, Range, Step,
                             StepAttentionCheck, TierCheck)

COLUMNS = ["scenario", "index", "step", "kind", "check", "passed", "value", "expected", "k", "recall",
           "hit", "ranks", "scored", "tiers_searched", "index_queries", "arousal_scored", "llm_calls",
           "tokens", "prompt_tokens", "completion_tokens", "llm_retries", "llm_failures", "latency_ms"]
INT_COLUMNS = ["index", "k", "scored", "tiers_searched", "index_queries", "arousal_scored", "llm_calls",
               "tokens", "prompt_tokens", "completion_tokens", "llm_retries", "llm_failures"]
WALL_CLOCK_COLUMNS = ["latency_ms"]


def describe_range(r: Range | StepAttentionCheck | BeliefCheck) -> str:
    """'>= 6', '<= 2' or '[1, 3]'.

    >>> describe_range(Range(min=6)), describe_range(Range(min=1, max=3))
    ('>= 6', '[1, 3]')
    """
    lo, hi = r.min, r.max
    if lo is not None and hi is not None:
        return f"[{lo:g}, {hi:g}]"
    return f">= {lo:g}" if lo is not None else f"<= {hi:g}" if hi is not None else "any"


def ranks_of(agent: MemoryAgent, ids: np.ndarray, steps: tuple[str, ...]) -> dict[str, int | None]:
    """1-based rank of the first retrieved memory whose provenance names each step."""
    out: dict[str, int | None] = {s: None for s in steps}
    for rank, i in enumerate(ids, start=1):
        for s in agent.store.provenance[int(i)]:
            if s in out and out[s] is None:
                out[s] = rank
    return out


class RowMaker:
    """Builds rows for one scenario, filling the cost columns from the step's result."""

    def __init__(self, scenario: str):
        self.scenario = scenario

    def row(self, result: StepResult, check: str, passed, value, expected, **extra) -> dict:
        step = result.step
        base = {"scenario": self.scenario, "index": step.index, "step": step.id, "kind": step.kind,
                "check": check, "passed": passed, "value": value, "expected": expected,
                "k": None, "recall": None, "hit": None, "ranks": None,
                "scored": result.cost.scored, "tiers_searched": result.cost.tiers_searched,
                "index_queries": result.cost.index_queries, "arousal_scored": result.arousal.scored,
                "llm_calls": result.llm_calls, "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens, "llm_retries": result.llm_retries,
                "llm_failures": result.llm_failures,
                "tokens": result.tokens, "latency_ms": round(result.latency_ms, 3)}
        base.update(extra)
        return base


def observation_rows(rows: RowMaker, result: StepResult) -> list[dict]:
    """The ``attention`` expectation on a say/reply/perceive step (the labelled score)."""
    want = result.step.expect.attention
    if want is None:
        return []
    value = None if result.score is None else round(result.score, 4)
    return [rows.row(result, "attention", want.contains(result.score), value, describe_range(want))]


def probe_rows(rows: RowMaker, agent: MemoryAgent, result: StepResult, depths: tuple[int, ...] = ()) -> list[dict]:
    """A probe row (with evidence recall at ``depths``, see ``mtsbench.evidence``) plus its
    ``recall`` and ``absent`` rows."""
    step, found = result.step, result.retrieval
    k = step.expect.k
    top = found.ids[:k]     # a probe retrieves retrieval.context memories; it is judged on the first k
    out: list[dict] = []
    recall = hit = None
    verdicts = []
    if step.expect.recall:
        ranks = ranks_of(agent, top, step.expect.recall)
        got = sum(r is not None for r in ranks.values())
        recall, hit = got / len(ranks), got == len(ranks)
        verdicts.append(hit)
        out.append(rows.row(result, "recall", hit, round(recall, 4), " ".join(step.expect.recall), k=k,
                            recall=round(recall, 4), hit=hit, ranks=_ranks_text(ranks)))
    if step.expect.absent:
        ranks = ranks_of(agent, top, step.expect.absent)
        false = [s for s, r in ranks.items() if r is not None]
        verdicts.append(not false)
        out.append(rows.row(result, "absent", not false, len(false), "none of " + " ".join(step.expect.absent),
                            k=k, ranks=_ranks_text(ranks)))
    passed = all(verdicts) if verdicts else None
    head = rows.row(result, "probe", passed, recall, " ".join(step.expect.recall) or None, k=k,
                    recall=None if recall is None else round(recall, 4), hit=hit)
    head.update(evidence.probe_fields(step, [agent.store.provenance[int(i)] for i in found.ranked], depths))
    return [head, *out]


def _ranks_text(ranks: dict[str, int | None]) -> str:
    return " ".join(f"{s}:{'-' if r is None else r}" for s, r in ranks.items())


def check_rows(rows: RowMaker, agent: MemoryAgent, result: StepResult, only=None, but=None) -> list[dict]:
    """Rows for the state assertions of a ``check`` step (of type ``only``, or all but ``but``)."""
    out = []
    for c in result.step.checks:
        if (only is not None and not isinstance(c, only)) or (but is not None and isinstance(c, but)):
            continue
        name, passed, value, expected = evaluate_check(agent, c)
        out.append(rows.row(result, name, passed, value, expected))
    return out


def evaluate_check(agent: MemoryAgent, c) -> tuple[str, bool, object, str]:
    """(check name, passed, observed value, expected text) of one state assertion."""
    store, now = agent.store, agent.now
    if isinstance(c, BeliefCheck):
        ids = [i for i in store.by_key.get(c.key, []) if store.alive[i]
               and store.kind_of(i) == "fact" and (c.value is None or store.value[i] == c.value)]
        value = max((float(store.belief[i]) for i in ids), default=None)
        target = f"{c.key}={c.value} " if c.value is not None else f"{c.key} "
        return "belief", Range(c.min, c.max).contains(value), _round(value), target + describe_range(c)
    if isinstance(c, ConjectureCheck):
        present = any(store.alive[i] and store.kind_of(i) == "conjecture" for i in store.by_key.get(c.key, []))
        return "conjecture", present == c.present, present, f"{c.key} present={c.present}"
    if isinstance(c, StepAttentionCheck):
        i = store.by_step.get(c.step)
        value = None if i is None else float(agent.attention.total(store, np.array([i]), now)[0])
        return "attention", Range(c.min, c.max).contains(value), _round(value), f"{c.step} " + describe_range(c)
    if isinstance(c, TierCheck):
        i = store.by_step.get(c.step)
        value = None if i is None else int(store.tier[i])
        return "tier", value is not None and value <= c.max, value, f"{c.step} tier <= {c.max}"
    if isinstance(c, EventCountCheck):
        n = agent.events.count(agent, c.category)
        return "event_count", n == c.equals, n, f"{c.category} == {c.equals}"
    raise TypeError(f"unknown check {type(c).__name__}")


def event_rows(rows: RowMaker, agent: MemoryAgent, result: StepResult) -> list[dict]:
    """The ``event`` expectation, judged once the step has been summarised: the step's event
    is the event memory whose provenance names it (the first, if several do)."""
    want = result.step.expect.event
    if want is None:
        return []
    sid = result.step.id
    events = agent.events.containing(agent, sid)
    if not events:
        return [rows.row(result, "event", False, "no event", _event_text(want))]
    parts = agent.store.provenance[events[0]]
    if want.same_as:
        return [rows.row(result, "event", want.same_as in parts, " ".join(parts), _event_text(want))]
    earlier = parts[: parts.index(sid)]
    return [rows.row(result, "event", not earlier, " ".join(parts), _event_text(want))]


def _event_text(want) -> str:
    return f"same event as {want.same_as}" if want.same_as else "a new event"


def _round(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)
