"""Writes a run directory: results.parquet, then from it metrics.csv, report.md and
summary.json; beside them trace.parquet and timelines.parquet. Every file is written atomically
(``mtsbench.outputs.atomic``) and scenarios are streamed as they finish (``mtsbench.outputs.stream``), so
an interrupted or failed run leaves what it finished, with its ``status``.

``write_run`` saves what the systems returned (``mtsbench.outputs.results``) and the traces, then
``evaluate_dir`` computes every metric from ``results.parquet`` and the scenarios alone —
the same function ``mtsbench evaluate RUN_DIR`` runs on a finished run.

``summary.json`` holds ``overall`` and ``scenarios.<id>``, each with ``checks`` (number
of expectations), ``passed``, ``pass_rate``, ``recall`` (mean recall@k over probes with a
``recall`` expectation), ``hit_rate``, ``probes``, ``scored`` (mean memories scored per
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
their *estimated* distances; ``index_moves``; ``distances_per_turn``), and the LLM calls and
tokens of steps and processes alike.
``status``, ``scenarios_done``, ``scenarios_planned`` (and ``stopped``: why, for a run that
did not complete) say how far the run got; ``overall.llm_failure_rate`` is failed LLM
calls / calls, ``llm_failure_rate_exceeded`` whether it is above ``llm.max_failure_rate``
(``llm_max_failure_rate``; ``mtsbench run`` then warns and exits 3). ``metrics.csv`` ends with the LLM accounting rows (``llm_rows``), whose LLM
columns add up to ``overall``'s.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..config.options import Evaluation
from ..evaluation import answer as answers
from ..evaluation import attention_auc
from ..evaluation import evidence
from ..outputs import results
from ..evaluation.evaluate import metrics_frame, scenario_rows, scored_total
from ..processes.meter import INDEX_KEYS
from ..outputs.results import STEP_RECORDS
from ..outputs.timelines import COLUMNS as TIMELINE_COLUMNS
from ..report.markdown import write_report


def _mean(series: pd.Series) -> float | None:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return None if values.empty else round(float(values.mean()), 4)


def aggregate(rows: pd.DataFrame, llm: dict, scored_total: int, depths: tuple[int, ...] = (),
              budgets: tuple[int, ...] = (), abstain_threshold: float | None = None) -> dict:
    """Aggregates of one scenario's (or all) metric rows."""
    expectations = rows[rows["check"] != "probe"]
    checks = expectations[expectations["passed"].notna()]
    probes = rows[rows["check"] == "probe"]
    recall_rows = rows[rows["check"] == "recall"]
    passed = int(checks["passed"].astype(bool).sum())
    return {
        "checks": int(len(checks)),
        "unsupported": int(len(expectations) - len(checks)),
        "passed": passed,
        "pass_rate": round(passed / len(checks), 4) if len(checks) else None,
        "recall": _mean(recall_rows["recall"]),
        "hit_rate": _mean(recall_rows["hit"].astype(float)) if len(recall_rows) else None,
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
            "llm_calls": int(llm["calls"]), "tokens": int(llm["tokens"])}


def write_run(out_dir: Path, runs: list, meta: dict) -> pd.DataFrame:
    """Save a finished run at once (``runs``: per scenario its records, trace and timeline
    rows; ``meta``: config, choices, scenarios) and write its metrics; returns the metrics
    table. A run that streams its scenarios uses ``mtsbench.outputs.stream.RunWriter`` instead."""
    from ..outputs.stream import RunWriter

    writer = RunWriter(out_dir, meta, [run.scenario.id for run in runs])
    for run in runs:
        writer.add(run)
    return finish_run(writer, "complete")


def finish_run(writer, status: str, stopped: dict | None = None) -> pd.DataFrame | None:
    """End a streamed run (``RunWriter.finish``) and compute its metrics, report and summary
    from what it wrote (``evaluate_dir``); returns the metrics table, None if a write had
    failed before. An evaluation that raises marks the run as a failed write would."""
    scenarios = writer.finish(status, stopped)
    if scenarios is None:
        return None
    try:
        return evaluate_dir(writer.out_dir, scenarios)
    except BaseException as e:
        writer.fail(status, stopped, e)
        raise


LLM_ROW = "llm"      # the check of metrics.csv's LLM accounting rows


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


def evaluate_dir(out_dir: Path, scenarios: dict | None = None) -> pd.DataFrame:
    """Compute metrics.csv, summary.json and report.md of a run from its results.parquet and
    its scenarios (``scenarios``: id -> Scenario; loaded from the paths saved in the
    results when not given); returns the metrics table (without the ``llm`` rows).
    ``summary.json`` is written last and atomically, with the run's ``status``."""
    from ..outputs.atomic import write_atomic
    from ..errors import OutputError

    records, meta = results.load(out_dir / results.FILE)
    evaluation = Evaluation.of(meta["config"])
    depths, budgets, threshold = evaluation.depths, evaluation.budgets, evaluation.abstain_threshold
    rows, parts, costs, loaded = [], {}, {}, {}
    for sid, info in meta["scenarios"].items():
        scenario = loaded[sid] = (scenarios or {}).get(sid) or _load(out_dir, info["path"])
        mine = records[records["scenario"] == sid]
        rows += scenario_rows(mine, scenario, depths, budgets)
        parts[sid] = (info, scored_total(mine))
        costs[sid] = cost_block(mine, info["processes"], info["llm"])
    frame = metrics_frame(rows, depths, budgets)
    accounting = metrics_frame(llm_rows(records, meta["scenarios"]), depths, budgets)
    write_atomic(out_dir / "metrics.csv", pd.concat([frame, accounting], ignore_index=True).to_csv(index=False))
    summary_scenarios, aggregates = {}, {}
    for sid, (info, scored) in parts.items():
        aggregates[sid] = aggregate(frame[frame["scenario"] == sid], info["llm"], scored, depths, budgets, threshold)
        summary_scenarios[sid] = aggregates[sid] | {"processes": info["processes"], "llm": info["llm"]}
    infos = [info for info, _ in parts.values()]
    totals = {key: sum(i["llm"][key] for i in infos) for key in ("calls", "tokens", "retries", "failures")}
    # a run of one scenario: the run's aggregate and cost are the scenario's (same rows, same totals)
    alone = next(iter(parts)) if len(parts) == 1 and (records["scenario"] == next(iter(parts))).all() else None
    overall = copy.deepcopy(aggregates[alone]) if alone is not None else \
        aggregate(frame, totals, sum(scored for _, scored in parts.values()), depths, budgets, threshold)
    overall["llm_failure_rate"] = failure_rate(totals)
    limit = max_failure_rate(meta["config"])
    overall["llm_max_failure_rate"] = limit
    overall["llm_failure_rate_exceeded"] = bool(overall["llm_failure_rate"] and overall["llm_failure_rate"] > limit)
    overall["processes"] = sum_processes([i["processes"] for i in infos])
    if (labelled := attention_auc.attention_block(records, loaded)) is not None:
        overall["attention"] = labelled
    cost = {"overall": copy.deepcopy(costs[alone]) if alone is not None else
            cost_block(records, overall["processes"], totals), "scenarios": costs}
    summary = {**run_status(meta, overall), "overall": overall, "scenarios": summary_scenarios, "cost": cost,
               "choices": meta.get("choices", {})}
    try:
        write_report(out_dir, frame, summary)
    except OSError as e:
        raise OutputError(out_dir / "report.md", e) from None
    write_atomic(out_dir / "summary.json", json.dumps(summary, indent=2, default=_json) + "\n")
    return frame


def run_status(meta: dict, overall: dict | None = None) -> dict:
    """``status`` (complete, interrupted, failed; running while a run streams; unreliable), the
    scenarios planned and done, and why it stopped (``stopped``), from a results file's metadata
    (a file written before statuses existed is complete). A complete run whose share of failed
    LLM calls is above ``llm.max_failure_rate`` (``overall["llm_failure_rate_exceeded"]``) is
    ``unreliable``, and ``unreliable`` says why: a script reading summary.json alone cannot
    take it for a trustworthy run.

    >>> run_status({"scenarios": ["a"]})["status"]
    'complete'
    >>> s = run_status({"scenarios": ["a"]}, {"llm_failure_rate_exceeded": True, "llm_failures": 3,
    ...                "llm_calls": 20, "llm_failure_rate": 0.15, "llm_max_failure_rate": 0.05})
    >>> s["status"], s["unreliable"]
    ('unreliable', '3 of 20 LLM calls failed (15.0%), above llm.max_failure_rate=0.05')
    """
    done = list(meta.get("scenarios_done", meta["scenarios"]))
    status = {"status": meta.get("status", "complete"), "scenarios_done": done,
              "scenarios_planned": list(meta.get("scenarios_planned", done))}
    if meta.get("stopped"):
        status["stopped"] = meta["stopped"]
    if status["status"] == "complete" and overall and overall.get("llm_failure_rate_exceeded"):
        status["status"] = "unreliable"
        status["unreliable"] = failure_line(overall)
    return status


def failure_line(overall: dict) -> str:
    """Why a run is unreliable, in words: its failed LLM calls against ``llm.max_failure_rate``."""
    return (f"{overall['llm_failures']} of {overall['llm_calls']} LLM calls failed "
            f"({overall['llm_failure_rate']:.1%}), above llm.max_failure_rate={overall['llm_max_failure_rate']:g}")


def evaluate_runs(folder: Path) -> list[Path]:
    """``evaluate_dir`` on a run directory, or on every job of a sweep directory (its
    subfolders holding a results file); returns the run directories evaluated."""
    from ..errors import ReportError

    if (folder / results.FILE).is_file():
        runs = [folder]
    else:
        runs = sorted((d for d in folder.iterdir() if (d / results.FILE).is_file()),     # jobs 0, 1, ..., 10
                      key=lambda d: (not d.name.isdigit(), int(d.name) if d.name.isdigit() else 0, d.name)) \
            if folder.is_dir() else []
    if not runs:
        raise ReportError(f"{folder}: no {results.FILE} here nor in its subfolders (expected a run or sweep directory)")
    for run in runs:
        evaluate_dir(run)
    return runs


def _load(out_dir: Path, path: str):
    """A scenario by the path saved in the results (relative ones: to the run directory)."""
    from ..scenario.loader import load_scenario

    p = Path(path)
    return load_scenario(p if p.is_absolute() else out_dir / p)


def _json(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
