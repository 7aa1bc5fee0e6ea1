"""Writes a run directory: results.parquet, then from it metrics.csv, summary.json and
report.md; beside them trace.jsonl and timelines.csv.

``write_run`` saves what the systems returned (``mtsbench.results``) and the traces, then
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
``mtsbench.evidence``). The LLM figures
are the steps' own costs plus the background processes'. ``processes`` (per scenario and
overall) gives the background processes apart — ``summarize``, ``consolidate``, ``infer``,
each with runs, LLM calls, tokens, retries, failures, memories scored by their searches
(``scored``), index queries and ``arousal_scored`` — so consolidation's cost never hides in
probe cost. ``cost`` (``overall`` and ``scenarios.<id>``) is the total cost: memories
scored by every kind of search — ``probe``, ``reply`` (``workload=reply``), ``association``
(labelling), ``arousal`` and the background ``processes`` (their searches and their
arousal) — with their ``total``, ``per_turn`` (per dialogue turn, say and reply),
index queries of every kind, and the LLM calls and tokens of steps and processes alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from . import evidence, results
from .evaluate import metrics_frame, scenario_rows, scored_total
from .results import STEP_RECORDS
from .timelines import COLUMNS as TIMELINE_COLUMNS
from .report.markdown import write_report


def _mean(series: pd.Series) -> float | None:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return None if values.empty else round(float(values.mean()), 4)


def aggregate(rows: pd.DataFrame, llm: dict, scored_total: int, depths: tuple[int, ...] = (),
              budgets: tuple[int, ...] = ()) -> dict:
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
        "evidence": evidence.summarize(rows, depths, budgets),
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
    >>> c["scored"], c["total"], c["per_turn"], c["index_queries"]
    ({'probe': 12, 'reply': 10, 'association': 3, 'arousal': 10, 'processes': 6}, 41, 41.0, 5)
    """
    steps = records[records["record"].isin(STEP_RECORDS)]

    def scored(record: str) -> int:
        return int(steps.loc[steps["record"] == record, "scored"].sum())

    parts = {"probe": scored("probe"), "reply": scored("reply"), "association": scored("observe"),
             "arousal": int(steps["arousal_scored"].sum()),
             "processes": int(sum(p["scored"] + p["arousal_scored"] for p in processes.values()))}
    total = sum(parts.values())
    turns = int(((steps["record"] == "observe") & steps["kind"].isin(["say", "reply"])).sum())
    return {"scored": parts, "total": total, "turns": turns,
            "per_turn": round(total / turns, 4) if turns else None,
            "index_queries": int(steps["index_queries"].sum()) + sum(int(p["index_queries"]) for p in processes.values()),
            "llm_calls": int(llm["calls"]), "tokens": int(llm["tokens"])}


def write_run(out_dir: Path, runs: list, meta: dict) -> pd.DataFrame:
    """Save a run (``runs``: per scenario its records, trace and timeline rows; ``meta``:
    config, choices, scenarios) and write its metrics; returns the metrics table."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results.save(out_dir / results.FILE, [r for run in runs for r in run.records], meta)
    with open(out_dir / "trace.jsonl", "w", encoding="utf-8") as f:
        for run in runs:
            for event in run.trace:
                f.write(json.dumps(event, ensure_ascii=False, default=_json) + "\n")
    pd.DataFrame([r for run in runs for r in run.timeline], columns=TIMELINE_COLUMNS).to_csv(
        out_dir / "timelines.csv", index=False)
    return evaluate_dir(out_dir, {run.scenario.id: run.scenario for run in runs})


def evaluate_dir(out_dir: Path, scenarios: dict | None = None) -> pd.DataFrame:
    """Compute metrics.csv, summary.json and report.md of a run from its results.parquet and
    its scenarios (``scenarios``: id -> Scenario; loaded from the paths saved in the
    results when not given); returns the metrics table."""
    records, meta = results.load(out_dir / results.FILE)
    depths, budgets = evidence.depths_of(meta["config"]), evidence.budgets_of(meta["config"])
    rows, parts, costs = [], {}, {}
    for sid, info in meta["scenarios"].items():
        scenario = (scenarios or {}).get(sid) or _load(out_dir, info["path"])
        mine = records[records["scenario"] == sid]
        rows += scenario_rows(mine, scenario, depths, budgets)
        parts[sid] = (info, scored_total(mine))
        costs[sid] = cost_block(mine, info["processes"], info["llm"])
    frame = metrics_frame(rows, depths, budgets)
    frame.to_csv(out_dir / "metrics.csv", index=False)
    summary_scenarios = {}
    for sid, (info, scored) in parts.items():
        part = frame[frame["scenario"] == sid]
        summary_scenarios[sid] = (aggregate(part, info["llm"], scored, depths, budgets)
                                  | {"processes": info["processes"], "llm": info["llm"]})
    infos = [info for info, _ in parts.values()]
    totals = {key: sum(i["llm"][key] for i in infos) for key in ("calls", "tokens", "retries", "failures")}
    overall = aggregate(frame, totals, sum(scored for _, scored in parts.values()), depths, budgets)
    overall["processes"] = sum_processes([i["processes"] for i in infos])
    cost = {"overall": cost_block(records, overall["processes"], totals), "scenarios": costs}
    summary = {"overall": overall, "scenarios": summary_scenarios, "cost": cost, "choices": meta.get("choices", {})}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=_json) + "\n", encoding="utf-8")
    write_report(out_dir, frame, summary)
    return frame


def evaluate_runs(folder: Path) -> list[Path]:
    """``evaluate_dir`` on a run directory, or on every job of a sweep directory (its
    subfolders holding a results file); returns the run directories evaluated."""
    from .errors import ReportError

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
    from .scenario.loader import load_scenario

    p = Path(path)
    return load_scenario(p if p.is_absolute() else out_dir / p)


def _json(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
