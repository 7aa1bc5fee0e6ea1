"""A run's summary figures, computed from its records (the blocks of ``summary.json``).

``summary.json`` holds ``overall`` and ``scenarios.<id>``, each with ``checks`` (number
of expectations), ``passed``, ``pass_rate``, ``recall`` (mean *earned* recall at each probe's
own k over the probes with evidence, ``mtsbench.evaluation.evaluate``; None when the system
shows no memory texts, and then ``no_earned_credit`` says why), ``hit_rate`` (the share of those
probes whose every evidence step is earned), ``recall_provenance@k`` (the same mean by
provenance alone), ``probes``, ``scored`` (mean memories scored per
probe), ``scored_total`` (every search of the steps themselves, labelling included; the
background processes' searches are in ``processes``), ``unsupported`` (expectations the
system has no state for: not counted in ``checks``), ``llm_calls``, ``tokens``,
``llm_retries`` and ``llm_failures``; each scenario's ``llm`` has the same per task;
``evidence`` (recall@k at the configured depths, overall and per category: see
``mtsbench.evaluation.evidence``). The LLM figures
are the steps' own costs plus the background processes'. ``processes`` (per scenario and
overall) gives the background processes apart — ``summarize``, ``consolidate``, ``infer``,
each with runs, LLM calls, tokens, retries, failures, memories scored by their searches
(``scored``), index queries and ``arousal_scored`` — so consolidation's cost never hides in
probe cost. ``cost`` (``overall`` and ``scenarios.<id>``) is the total cost: memories
scored by every kind of search — ``probe``, ``reply`` (``workload=reply``), ``association``
(labelling: observed items', and probes' own under ``motivation=from_attention``), ``arousal`` and the background ``processes`` (their searches and their
arousal) — with their ``total``, ``per_turn`` (per dialogue turn, say and reply),
index queries of every kind, the index work (``distances``: vector distance computations
of every query, measured; ``index_inserts`` and ``insert_distances_est``: graph inserts and
their *estimated* distances; ``index_moves``; ``distances_per_turn``; ``index_work_per_turn``: the
queries' distances plus the inserts' estimate, per turn — an approximate index's whole work), and the LLM calls and
tokens of steps and processes alike.
``status``, ``scenarios_done``, ``scenarios_planned`` (and ``stopped``: why, for a run that
did not complete) say how far the run got; ``overall.llm_failure_rate`` is failed LLM
calls / calls, ``llm_failure_rate_exceeded`` whether it is above ``llm.max_failure_rate``
(``llm_max_failure_rate``; ``mtsbench run`` then warns and exits 3). ``metrics.csv`` ends with the LLM accounting rows (``llm_rows``), whose LLM
columns add up to ``overall``'s.
"""

from __future__ import annotations

import pandas as pd

from ..outputs.results import STEP_RECORDS
from ..processes.meter import INDEX_KEYS
from . import answer as answers
from . import evidence
from .evaluate import PROVENANCE

NO_TEXTS = ("the system shows no memory texts (no context_texts method), so no memory can earn an evidence step: "
            "recall by provenance alone is recall_provenance@k")

LLM_ROW = "llm"      # the check of metrics.csv's LLM accounting rows


def _mean(series: pd.Series) -> float | None:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return None if values.empty else round(float(values.mean()), 4)


def aggregate(rows: pd.DataFrame, llm: dict, scored_total: int, depths: tuple[int, ...] = (),
              budgets: tuple[int, ...] = (), abstain_threshold: float | None = None) -> dict:
    """Aggregates of one scenario's (or all) metric rows."""
    expectations = rows[rows["check"] != "probe"]
    checks = expectations[expectations["passed"].notna()]
    probes = rows[rows["check"] == "probe"]
    passed = int(checks["passed"].astype(bool).sum())
    recall, provenance = _mean(probes["recall"]), _mean(probes[PROVENANCE])
    return {
        "checks": int(len(checks)),
        "unsupported": int(len(expectations) - len(checks)),
        "passed": passed,
        "pass_rate": round(passed / len(checks), 4) if len(checks) else None,
        "recall": recall,
        "hit_rate": _mean(probes["hit"].astype(float)),
        PROVENANCE: provenance,
        **({"no_earned_credit": NO_TEXTS} if recall is None and provenance is not None else {}),
        "probes": int(len(probes)),
        "scored": _mean(probes["scored"]),
        "scored_total": int(scored_total),
        "llm_calls": int(llm["calls"]),
        "tokens": int(llm["tokens"]),
        "llm_retries": int(llm["retries"]),
        "llm_failures": int(llm["failures"]),
        "evidence": evidence.summarize(rows, depths, budgets, abstain_threshold),
        **({"answer": a} if (a := answers.summarize(rows)) is not None else {}),
    }


def sum_processes(parts: list[dict]) -> dict:
    """Per-process totals added up over scenarios.

    >>> sum_processes([{"infer": {"runs": 1, "calls": 2}}, {"infer": {"runs": 2, "calls": 0}}])
    {'infer': {'runs': 3, 'calls': 2}}
    """
    out: dict = {}
    for part in parts:
        for name, totals in part.items():
            acc = out.setdefault(name, dict.fromkeys(totals, 0))
            for k, v in totals.items():
                acc[k] = acc.get(k, 0) + v
    return out


def cost_block(records: pd.DataFrame, processes: dict, llm: dict) -> dict:
    """Total cost of one scenario's (or all) records, every kind of search apart and summed.

    >>> recs = pd.DataFrame({"record": ["observe", "reply", "probe", "check"], "kind": ["say", "say", "probe", "check"],
    ...                      "scored": [3, 10, 12, 12], "arousal_scored": [4, 0, 6, 6], "index_queries": [1, 1, 2, 2]})
    >>> c = cost_block(recs, {"infer": {"scored": 5, "arousal_scored": 1, "index_queries": 1}}, {"calls": 2, "tokens": 9})
    >>> c["scored"], c["total"], c["per_turn"], c["index_queries"], c["distances"]
    ({'probe': 12, 'reply': 10, 'association': 3, 'arousal': 10, 'processes': 6}, 41, 41.0, 5, 0)
    >>> recs["distances"], recs["insert_distances_est"] = [3, 10, 12, 12], [40, 0, 0, 0]
    >>> c = cost_block(recs, {}, {"calls": 0, "tokens": 0})
    >>> c["distances"], c["insert_distances_est"], c["distances_per_turn"], c["index_work_per_turn"]
    (25, 40, 25.0, 65.0)
    """
    steps = records[records["record"].isin(STEP_RECORDS)]

    def scored(record: str) -> int:
        return int(steps.loc[steps["record"] == record, "scored"].sum())

    association = scored("observe") + (int(steps["association_scored"].sum()) if "association_scored" in steps else 0)
    parts = {"probe": scored("probe"), "reply": scored("reply"), "association": association,
             "arousal": int(steps["arousal_scored"].sum()),
             "processes": int(sum(p["scored"] + p["arousal_scored"] for p in processes.values()))}
    total = sum(parts.values())
    turns = int(((steps["record"] == "observe") & steps["kind"].isin(["say", "reply"])).sum())
    index = {k: int(steps[k].sum()) + sum(int(p.get(k, 0)) for p in processes.values()) if k in steps else 0
             for k in INDEX_KEYS}
    return {"scored": parts, "total": total, "turns": turns,
            "per_turn": round(total / turns, 4) if turns else None,
            "index_queries": int(steps["index_queries"].sum()) + sum(int(p["index_queries"]) for p in processes.values()),
            **index, "distances_per_turn": round(index["distances"] / turns, 4) if turns else None,
            "index_work_per_turn": round((index["distances"] + index["insert_distances_est"]) / turns, 4) if turns else None,
            "llm_calls": int(llm["calls"]), "tokens": int(llm["tokens"])}



def llm_rows(records: pd.DataFrame, infos: dict) -> list[dict]:
    """metrics.csv's LLM accounting rows (``check`` = ``llm``), per scenario: ``step`` =
    ``steps`` (the LLM use of all its steps, from their records), one per background
    process (``step`` = its name, ``kind`` = ``process``), and ``unattributed`` if the
    scenario's totals hold more (never for the bundled systems). Their ``llm_calls``,
    ``tokens``, ``llm_retries`` and ``llm_failures`` add up to ``summary.json``'s.

    >>> recs = pd.DataFrame({"scenario": ["a", "a"], "record": ["observe", "check"], "llm_calls": [2, 9],
    ...                      "tokens": [10, 9], "prompt_tokens": [8, 9], "completion_tokens": [2, 0],
    ...                      "llm_retries": [1, 9], "llm_failures": [0, 9]})
    >>> info = {"llm": {"calls": 3, "tokens": 14, "prompt_tokens": 11, "completion_tokens": 3, "retries": 2,
    ...                 "failures": 1},
    ...         "processes": {"infer": {"calls": 1, "tokens": 4, "prompt_tokens": 3, "completion_tokens": 1,
    ...                                 "retries": 1, "failures": 1}}}
    >>> [(r["step"], r["llm_calls"], r["llm_retries"], r["llm_failures"]) for r in llm_rows(recs, {"a": info})]
    [('steps', 2, 1, 0), ('infer', 1, 1, 1)]
    """
    keys = {"llm_calls": "calls", "tokens": "tokens", "prompt_tokens": "prompt_tokens",
            "completion_tokens": "completion_tokens", "llm_retries": "retries", "llm_failures": "failures"}
    out = []
    for sid, info in infos.items():
        mine = records[(records["scenario"] == sid) & records["record"].isin(STEP_RECORDS)]
        parts = [("steps", "steps", {col: int(mine[col].sum()) for col in keys})]
        parts += [(name, "process", {col: int(p.get(key, 0)) for col, key in keys.items()})
                  for name, p in sorted((info.get("processes") or {}).items())]
        rest = {col: int(info["llm"].get(key, 0)) - sum(part[col] for _, _, part in parts) for col, key in keys.items()}
        if any(rest.values()):
            parts.append(("unattributed", "steps", rest))
        out += [{"scenario": sid, "index": None, "step": step, "kind": kind, "check": LLM_ROW, **values}
                for step, kind, values in parts]
    return out


def failure_rate(llm: dict) -> float | None:
    """Failed LLM calls / calls (None when there were none).

    >>> failure_rate({"calls": 8, "failures": 2}), failure_rate({"calls": 0, "failures": 0})
    (0.25, None)
    """
    return round(llm["failures"] / llm["calls"], 4) if llm.get("calls") else None


MAX_FAILURE_RATE = 0.05    # llm.max_failure_rate when the backend has none (the mock never fails)


def max_failure_rate(config: dict) -> float:
    """``llm.max_failure_rate`` of a run's config (``MAX_FAILURE_RATE`` when not set).

    >>> max_failure_rate({"llm": {"max_failure_rate": 0.2}}), max_failure_rate({"llm": {}})
    (0.2, 0.05)
    """
    value = ((config or {}).get("llm") or {}).get("max_failure_rate")
    return MAX_FAILURE_RATE if value is None else float(value)
