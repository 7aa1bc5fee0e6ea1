"""Saved results + scenario → metric rows (DESIGN §4, §5). Nothing here sees a live system.

One row per probe (``check`` = ``probe``) and one per expectation, in the order the
records were made. A probe row's ``recall`` is **earned** recall at the probe's own k: the
share of its evidence steps (``expect.recall``) that some memory among the first k it used
earns (its provenance names the step and its text carries the step's content,
``mtsbench.evaluation.credit``); ``hit`` is 1 when every one is earned. The figure by
provenance alone (any used memory naming the step) is ``recall_provenance@k``, never
unlabelled. A system that shows no memory texts (no ``context_texts``) has no earned credit:
its ``recall`` and ``hit`` are empty. A scenario's own expectations (the ``recall`` and
``absent`` rows: pass or fail) stay judged by provenance, which names what the scenario's
author meant. ``k`` is the scenario's; the evidence depths are the evaluator's
(``evaluation.recall_at``). A state the system does not have is reported as ``unsupported``
(``passed`` empty), never as a failure.
"""

from __future__ import annotations

import bisect
import json
import math
import zlib

import pandas as pd

from . import evidence
from .answer import COLUMNS as ANSWER_COLUMNS
from ..outputs.results import COST_COLUMNS, STEP_RECORDS
from ..scenario.datasets import dataset, scored_by_recall
from ..scenario.model import (OBSERVED_KINDS, ArousalCheck, BeliefCheck, ConjectureCheck, EventCountCheck, Range, Scenario,
                              StepAttentionCheck, TierCheck)

PROVENANCE = evidence.PROVENANCE      # recall at the probe's own k by provenance alone (module docstring)
COLUMNS = ["scenario", "dataset", "index", "step", "kind", "check", "passed", "value", "expected", "k", "recall",
           PROVENANCE,
           "hit", "ranks", *COST_COLUMNS, "latency_ms"]
INT_COLUMNS = ["index", "k", *COST_COLUMNS]
WALL_CLOCK_COLUMNS = ["latency_ms"]
UNSUPPORTED_VALUE = "unsupported"
CHECK_NAMES = {BeliefCheck: "belief", ConjectureCheck: "conjecture", StepAttentionCheck: "attention",
               TierCheck: "tier", EventCountCheck: "event_count", ArousalCheck: "arousal"}


def describe_range(r) -> str:
    """'>= 6', '<= 2' or '[1, 3]'.

    >>> describe_range(Range(min=6)), describe_range(Range(min=1, max=3))
    ('>= 6', '[1, 3]')
    """
    lo, hi = r.min, r.max
    if lo is not None and hi is not None:
        return f"[{lo:g}, {hi:g}]"
    return f">= {lo:g}" if lo is not None else f"<= {hi:g}" if hi is not None else "any"


def _row(rec, check: str, passed, value, expected, **extra) -> dict:
    """A metric row with the cost columns of the record's step."""
    base = {"scenario": rec.scenario, "dataset": None, "index": int(rec.index), "step": rec.step, "kind": rec.kind,
            "check": check, "passed": passed, "value": value, "expected": expected,
            "k": None, "recall": None, PROVENANCE: None, "hit": None, "ranks": None,
            **{c: int(getattr(rec, c)) for c in COST_COLUMNS}, "latency_ms": round(float(rec.latency_ms), 3)}
    base.update(extra)
    return base


def observation_rows(rec, step) -> list[dict]:
    """The ``attention`` expectation on a say/reply/perceive step (the labelled score), then its ``cost``."""
    want = step.expect.attention
    if want is None:
        return cost_rows(rec, step)
    if rec.unsupported:           # the system labels nothing: not applicable, never a failure
        row = _row(rec, "attention", None, UNSUPPORTED_VALUE, describe_range(want))
    else:
        score = None if pd.isna(rec.score) else float(rec.score)
        row = _row(rec, "attention", want.contains(score), None if score is None else round(score, 4),
                   describe_range(want))
    return [row, *cost_rows(rec, step)]


def cost_rows(rec, step) -> list[dict]:
    """One ``cost`` row per bounded cost column: the step's own count of that work in [min, max]."""
    counts = {name: int(getattr(rec, name)) for name, _ in step.expect.cost}
    return [_row(rec, "cost", bounds.contains(counts[name]), counts[name], f"{name} {describe_range(bounds)}")
            for name, bounds in step.expect.cost]


def _provenance(rec, column: str = "ranked_provenance") -> list[tuple[str, ...]] | None:
    ranked = getattr(rec, column, None)
    return None if ranked is None or (not hasattr(ranked, "__len__") and pd.isna(ranked)) \
        else [tuple(p) for p in ranked]


def probe_rows(rec, step, depths: tuple[int, ...] = (), budgets: tuple[int, ...] = (),
               pool: tuple[str, ...] = (), evidence_only: bool = False) -> list[dict]:
    """A probe row (earned ``recall`` and ``hit`` at its own k, ``recall_provenance@k``, and
    evidence recall at ``depths``, see ``mtsbench.evaluation.evidence``: earned credit,
    provenance-only and the chance baseline over ``pool``, the steps observed before it)
    plus its ``recall`` and ``absent`` rows, judged by provenance on the first k memories the
    probe used (a scenario's own expectations name the memories' sources). ``evidence_only``
    (a probe of imported benchmark data, whose ``recall`` lists its evidence, not an
    assertion): the probe row alone, scored by recall, with no pass/fail row."""
    k = step.expect.k
    provenance = _provenance(rec) or []
    earned = _provenance(rec, "ranked_earned")
    used = len(provenance) if pd.isna(rec.used) else int(rec.used)
    top = provenance[: min(k, used)]
    out: list[dict] = []
    verdicts = []
    own = {"recall": None, PROVENANCE: None, "hit": None}
    if step.expect.recall:
        ranks = evidence.first_ranks(top, step.expect.recall)
        got = sum(r is not None for r in ranks.values())
        prov, hit = round(got / len(ranks), 4), got == len(ranks)
        own = earned_at_k(earned, min(k, used), step.expect.recall) | {PROVENANCE: prov}
        if not evidence_only:
            verdicts.append(hit)
            out.append(_row(rec, "recall", hit, prov, " ".join(step.expect.recall), k=k, hit=hit,
                            ranks=_ranks_text(ranks), **{PROVENANCE: prov}))
    if step.expect.absent and not evidence_only:
        ranks = evidence.first_ranks(top, step.expect.absent)
        false = [s for s, r in ranks.items() if r is not None]
        verdicts.append(not false)
        out.append(_row(rec, "absent", not false, len(false), "none of " + " ".join(step.expect.absent),
                        k=k, ranks=_ranks_text(ranks)))
    if step.expect.order:
        ranks = evidence.first_ranks(provenance, step.expect.order)
        verdicts.append(in_order(ranks, step.expect.order))
        out.append(_row(rec, "order", verdicts[-1], _ranks_text(ranks), " > ".join(step.expect.order), k=k,
                        ranks=_ranks_text(ranks)))
    out += cost_rows(rec, step)
    passed = all(verdicts) if verdicts else None
    head = _row(rec, "probe", passed, own["recall"], " ".join(step.expect.recall) or None, k=k, **own)
    tokens = [] if rec.ranked_tokens is None else [int(t) for t in rec.ranked_tokens]
    scores = [] if rec.ranked_scores is None else [float(x) for x in rec.ranked_scores][: min(k, used)]
    relevance = getattr(rec, "used_relevance", None)
    relevance = [] if relevance is None or not hasattr(relevance, "__len__") else [float(x) for x in relevance]
    head.update(evidence.probe_fields(step, provenance, depths, tokens, budgets, used_scores=scores,
                                      used_relevance=relevance[: min(k, used)], earned=earned, pool=pool,
                                      seed=zlib.crc32(f"{rec.scenario}\0{step.id}".encode())))
    for column in ANSWER_COLUMNS:          # mtsbench.evaluation.answer: set when the run scored the probe's answer
        value = getattr(rec, column, None)
        if value is not None and not pd.isna(value):
            head[column] = float(value)
    return [head, *out]


def in_order(ranks: dict[str, int | None], order: tuple[str, ...]) -> bool:
    """Each step of ``order`` ranks strictly above the next (an unranked step ranks below all).

    >>> in_order({"a": 1, "b": 4}, ("a", "b")), in_order({"a": 1, "b": None}, ("a", "b"))
    (True, True)
    >>> in_order({"a": None, "b": None}, ("a", "b")), in_order({"a": 2, "b": 2}, ("a", "b"))
    (False, False)
    """
    place = [math.inf if ranks[s] is None else ranks[s] for s in order]
    return all(a < b for a, b in zip(place, place[1:]))


def earned_at_k(earned: list[tuple[str, ...]] | None, used: int, steps: tuple[str, ...]) -> dict:
    """``recall`` (the share of ``steps`` some of the first ``used`` memories earns) and
    ``hit`` (all earned) of a probe; both None when the system showed no texts (``earned`` None).

    >>> earned_at_k([("a",), (), ("b",)], 2, ("a", "b")), earned_at_k(None, 2, ("a",))
    ({'recall': 0.5, 'hit': False}, {'recall': None, 'hit': None})
    """
    if earned is None:
        return {"recall": None, "hit": None}
    ranks = evidence.first_ranks(earned[:used], steps)
    got = sum(r is not None for r in ranks.values())
    return {"recall": round(got / len(ranks), 4), "hit": got == len(ranks)}


def _ranks_text(ranks: dict[str, int | None]) -> str:
    return " ".join(f"{s}:{'-' if r is None else r}" for s, r in ranks.items())


def judge_check(c, value) -> tuple[str, bool | None, object, str]:
    """(check name, passed, value shown, expected text) of one state assertion and the value
    the system gave for it (``UNSUPPORTED_VALUE``: passed None)."""
    if isinstance(c, BeliefCheck):
        subject = c.key if c.from_ is None else f"from {c.from_}"
        target = f"{subject}={c.value} " if c.value is not None else f"{subject} "
        expected = target + describe_range(c)
    elif isinstance(c, ConjectureCheck):
        expected = f"{c.key if not c.from_ else 'from ' + steps_text(c.from_)} present={c.present}"
    elif isinstance(c, StepAttentionCheck):
        expected = f"{c.step if c.from_ is None else 'from ' + c.from_} " + _bounds(c)
    elif isinstance(c, ArousalCheck):
        expected = f"{c.step} aroused{f' since {c.since}' if c.since else ''} " + _bounds(c)
    elif isinstance(c, TierCheck):
        expected = f"{c.step} tier " + describe_range(Range(c.min, c.max))
    elif isinstance(c, EventCountCheck):
        expected = f"{c.category if not c.containing else 'containing ' + steps_text(c.containing)} == {c.equals}"
    else:
        raise TypeError(f"unknown check {type(c).__name__}")
    name = CHECK_NAMES[type(c)]
    if value is UNSUPPORTED_VALUE:
        return name, None, UNSUPPORTED_VALUE, expected
    if isinstance(c, (BeliefCheck, StepAttentionCheck)) and c.from_ is not None and value is None:
        return name, False, f"no live fact from {c.from_}", expected
    if isinstance(c, (StepAttentionCheck, ArousalCheck)) and isinstance(value, dict):
        own, other = value["value"], value["above"]
        passed = Range(c.min, c.max).contains(own) and other is not None and own > other
        shown = f"{_shown(own)} vs {c.above} {_shown(other)}"
        return name, passed, shown, expected
    if isinstance(c, (BeliefCheck, StepAttentionCheck, ArousalCheck)):
        return name, Range(c.min, c.max).contains(value), _round(value), expected
    if isinstance(c, ConjectureCheck):
        return name, value == c.present, value, expected
    if isinstance(c, TierCheck):
        return name, Range(c.min, c.max).contains(value), value, expected
    return name, value == c.equals, value, expected


def _bounds(c) -> str:
    """The bounds of an attention or arousal check as ``expected`` shows them: ``>= 6``, ``> other``.

    >>> _bounds(StepAttentionCheck("a", min=1, above="b")), _bounds(ArousalCheck("a", max=0))
    ('>= 1, > b', '<= 0')
    """
    parts = [describe_range(c)] if c.min is not None or c.max is not None else []
    return ", ".join(parts + ([f"> {c.above}"] if c.above else [])) or "any"


def _shown(x) -> str:
    return "no memory" if x is None else f"{x:.4g}"


def steps_text(steps: tuple[str, ...]) -> str:
    """A provenance reference as ``expected`` shows it: ``allergy`` or ``[cough, fever]``.

    >>> steps_text(("allergy",)), steps_text(("cough", "fever"))
    ('allergy', '[cough, fever]')
    """
    return steps[0] if len(steps) == 1 else f"[{', '.join(steps)}]"


def event_row(rec, step) -> dict:
    """The ``event`` expectation, from the provenance of the event holding the step."""
    want = step.expect.event
    text = f"same event as {want.same_as}" if want.same_as else "a new event"
    if rec.unsupported:
        return _row(rec, "event", None, UNSUPPORTED_VALUE, text)
    parts = _value(rec)
    if parts is None:
        return _row(rec, "event", False, "no event", text)
    if want.same_as:
        return _row(rec, "event", want.same_as in parts, " ".join(parts), text)
    earlier = parts[: parts.index(step.id)]
    return _row(rec, "event", not earlier, " ".join(parts), text)


def _value(rec):
    return UNSUPPORTED_VALUE if rec.unsupported else json.loads(rec.value)


def _round(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def scenario_rows(records: pd.DataFrame, scenario: Scenario, depths: tuple[int, ...],
                  budgets: tuple[int, ...] = ()) -> list[dict]:
    """The metric rows of one scenario's records, in record order, each with the scenario's
    data set (``mtsbench.scenario.datasets``); the probes of an imported benchmark or a generated
    dialogue get no pass/fail rows (``probe_rows``'s ``evidence_only``)."""
    rows: list[dict] = []
    steps = scenario.steps
    data_set = dataset(scenario)
    evidence_only = scored_by_recall(data_set)
    observed = [s for s in steps if s.kind in OBSERVED_KINDS]
    at = [s.index for s in observed]
    for rec in records.itertuples(index=False):
        step = steps[int(rec.index)]
        if rec.record == "observe":
            rows += observation_rows(rec, step)
        elif rec.record == "probe":
            before = bisect.bisect_left(at, step.index)
            pool = tuple(s.id for s in observed[:before]) if step.expect.recall else ()
            rows += probe_rows(rec, step, depths, budgets, pool, evidence_only)
        elif rec.record == "check":
            name, passed, value, expected = judge_check(step.checks[int(rec.check_no)], _value(rec))
            rows.append(_row(rec, name, passed, value, expected))
        elif rec.record == "event":
            rows.append(event_row(rec, step))
    for row in rows:
        row["dataset"] = data_set
    return rows


def scored_total(records: pd.DataFrame) -> int:
    """Memories scored by every step's own searches (labelling included)."""
    return int(records.loc[records["record"].isin(STEP_RECORDS), "scored"].sum())


def metrics_frame(rows: list[dict], depths: tuple[int, ...], budgets: tuple[int, ...] = ()) -> pd.DataFrame:
    answers = list(ANSWER_COLUMNS) if any(c in r for r in rows for c in ANSWER_COLUMNS) else []   # when scored
    frame = pd.DataFrame(rows, columns=COLUMNS + evidence.columns(depths, budgets) + answers)
    return frame.astype({c: "Int64" for c in INT_COLUMNS})

