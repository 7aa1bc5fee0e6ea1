"""Writes a run directory: metrics.csv, summary.json, trace.jsonl, timelines.csv, report.md.

``summary.json`` holds ``overall`` and ``scenarios.<id>``, each with ``checks`` (number
of expectations), ``passed``, ``pass_rate``, ``recall`` (mean recall@k over probes with a
``recall`` expectation), ``hit_rate``, ``probes``, ``scored`` (mean memories scored per
probe), ``scored_total`` (every search of the steps themselves, labelling included; the
background processes' searches are in ``processes``), ``llm_calls``, ``tokens``,
``llm_retries`` and ``llm_failures``; each scenario's ``llm`` has the same per task;
``evidence`` (recall@k at the configured depths, overall and per category: see
``mtsbench.evidence``). The LLM figures
are the steps' own costs plus the background processes'. ``processes`` (per scenario and
overall) gives the background processes apart — ``summarize``, ``consolidate``, ``infer``,
each with runs, LLM calls, tokens, retries, failures, memories scored by their searches
(``scored``), index queries and ``arousal_scored`` — so consolidation's cost never hides in
probe cost.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from . import evidence
from .evaluate import COLUMNS, INT_COLUMNS
from .timelines import COLUMNS as TIMELINE_COLUMNS
from .report.markdown import write_report


def _mean(series: pd.Series) -> float | None:
    values = pd.to_numeric(series, errors="coerce").dropna()
    return None if values.empty else round(float(values.mean()), 4)


def aggregate(rows: pd.DataFrame, llm: dict, scored_total: int, depths: tuple[int, ...] = ()) -> dict:
    """Aggregates of one scenario's (or all) metric rows."""
    checks = rows[rows["check"] != "probe"]
    probes = rows[rows["check"] == "probe"]
    recall_rows = rows[rows["check"] == "recall"]
    passed = int(checks["passed"].astype(bool).sum())
    return {
        "checks": int(len(checks)),
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
        "evidence": evidence.summarise(rows, depths),
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


def write_outputs(out_dir: Path, runs: list, config: dict, choices: dict) -> pd.DataFrame:
    out_dir.mkdir(parents=True, exist_ok=True)
    depths = evidence.depths_of(config)
    frame = pd.DataFrame([r for run in runs for r in run.rows], columns=COLUMNS + evidence.columns(depths))
    frame = frame.astype({c: "Int64" for c in INT_COLUMNS})
    frame.to_csv(out_dir / "metrics.csv", index=False)
    scenarios = {}
    for run in runs:
        part = frame[frame["scenario"] == run.scenario.id]
        scenarios[run.scenario.id] = (aggregate(part, run.llm, run.searches["scored_total"], depths)
                                      | {"processes": run.processes, "llm": run.llm})
    totals = {key: sum(r.llm[key] for r in runs) for key in ("calls", "tokens", "retries", "failures")}
    overall = aggregate(frame, totals, sum(r.searches["scored_total"] for r in runs), depths)
    overall["processes"] = sum_processes([r.processes for r in runs])
    summary = {"overall": overall, "scenarios": scenarios, "choices": choices}
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=_json) + "\n", encoding="utf-8")
    with open(out_dir / "trace.jsonl", "w", encoding="utf-8") as f:
        for run in runs:
            for event in run.trace:
                f.write(json.dumps(event, ensure_ascii=False, default=_json) + "\n")
    pd.DataFrame([r for run in runs for r in run.timeline], columns=TIMELINE_COLUMNS).to_csv(
        out_dir / "timelines.csv", index=False)
    write_report(out_dir, frame, summary)
    return frame


def _json(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
