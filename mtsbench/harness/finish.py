"""Writes a run directory: results.parquet, then from it metrics.csv, report.md, report.html
(the same page with every probe's ranking, no figures: ``mtsbench report DIR`` draws them) and
summary.json; beside them trace.parquet and timelines.parquet. Every file is written atomically
(``mtsbench.outputs.atomic``) and scenarios are streamed as they finish (``mtsbench.outputs.stream``), so
an interrupted or failed run leaves what it finished, with its ``status``.

``write_run`` saves what the systems returned (``mtsbench.outputs.results``) and the traces, then
``evaluate_dir`` computes every metric from ``results.parquet`` and the scenarios alone —
the same function ``mtsbench evaluate RUN_DIR`` runs on a finished run.

``summary.json``'s figures are computed by ``mtsbench.evaluation.summary`` (which documents
them); this module writes, evaluates and reports, in that order.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..config.options import Evaluation
from ..evaluation import attention_auc
from ..evaluation.evaluate import metrics_frame, scenario_rows, scored_total
from ..evaluation.summary import aggregate, cost_block, failure_rate, llm_rows, max_failure_rate, sum_processes
from ..outputs import results
from ..scenario.datasets import dataset
from ..report import datasets, html, probes
from ..report.markdown import write_report


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
        summary_scenarios[sid] = aggregates[sid] | {"dataset": dataset(loaded[sid]), "processes": info["processes"],
                                                    "llm": info["llm"]}
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
               "choices": meta.get("choices", {}), "configuration": meta.get("configuration", meta.get("choices", {}))}
    try:
        path = write_report(out_dir, frame, summary, sections=datasets.lines({"": [frame]}, depths, budgets))
        html.write(path, out_dir / "report.html", probes.html_section(out_dir))    # readable with no 2nd command
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
