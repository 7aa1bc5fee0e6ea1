"""``mtsbench report DIR``: summary.csv, figures and report.md of a run or sweep directory.

Reads only result files (summary.json, metrics.csv, timelines.csv, .hydra/overrides.yaml,
failure.json). A sweep's report has the summary table, the recall-against-cost plots with
their Pareto frontier, the pass matrix and the attention timelines; a single run keeps
its own report (``report.markdown``) with the figures added. A ``notes.md`` beside the
report (what the numbers show, written by hand) is put at the top of a sweep's report.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .jobs import Job, find_jobs, pass_matrix, summary_table
from .markdown import table, write_report
from .plots import plot_pareto, plot_pass_matrix, plot_timelines

COSTS = [("cost_per_turn", "total cost: memories scored per dialogue turn, every kind of search", "pareto_total.png"),
         ("scored", "memories scored per probe (mean)", "pareto_scored.png"),
         ("tokens", "LLM tokens per run (all steps)", "pareto_tokens.png")]
TABLE_COLUMNS = ["job", "config", "status", "checks", "passed", "pass_rate", "recall", "scored", "cost_per_turn",
                 "llm_calls", "tokens", "latency_p50_ms", "latency_p95_ms"]


def figures(jobs: list[Job], summary: pd.DataFrame, out: Path) -> list[tuple[str, Path]]:
    """Draw every figure into ``out``; (title, path) of those drawn."""
    drawn: list[tuple[str, Path | None]] = []
    if len(jobs) > 1:
        for column, label, name in COSTS:
            drawn.append((f"Recall against {label}", plot_pareto(summary, column, label, out / name)))
        drawn.append(("Pass matrix", plot_pass_matrix(pass_matrix(jobs), out / "pass_matrix.png")))
    timelines = {j.label: t for j in jobs if (t := j.read_csv("timelines.csv")) is not None}
    scenarios = list(dict.fromkeys(s for t in timelines.values() for s in t["scenario"]))
    for s in scenarios:
        drawn.append((f"Attention timelines: {s}", plot_timelines(timelines, s, out / f"timeline_{s}.png")))
    return [(title, path) for title, path in drawn if path is not None]


def figure_lines(drawn: list[tuple[str, Path]], out: Path) -> list[str]:
    lines = ["## Figures", ""]
    for title, path in drawn:
        lines += [f"### {title}", "", f"![{title}]({path.relative_to(out)})", ""]
    return lines


def write(src: Path, out: Path | None = None) -> Path:
    """Write summary.csv, the figures and report.md of run or sweep directory ``src``
    into ``out`` (default: ``src``); returns the report's path."""
    src = Path(src)
    out = Path(out) if out is not None else src
    jobs = find_jobs(src)
    out.mkdir(parents=True, exist_ok=True)
    summary = summary_table(jobs)
    summary.to_csv(out / "summary.csv", index=False)
    drawn = figures(jobs, summary, out)
    if len(jobs) == 1 and jobs[0].ok and src.resolve() == out.resolve():
        job = jobs[0]
        return write_report(out, pd.read_csv(job.dir / "metrics.csv"), job.summary, extra=figure_lines(drawn, out))
    return _sweep_report(src, out, jobs, summary, drawn)


def _sweep_report(src: Path, out: Path, jobs: list[Job], summary: pd.DataFrame, drawn) -> Path:
    ok = [j for j in jobs if j.ok]
    failed = [j for j in jobs if not j.ok]
    notes = out / "notes.md"     # hand-written reading of the numbers, kept across regenerations
    lines = ["# mtsbench sweep report", ""]
    if notes.is_file():
        lines += [notes.read_text(encoding="utf-8").strip(), ""]
    lines += [f"{len(jobs)} jobs from `{src}`: {len(ok)} ran, {len(failed)} failed. Each row is one "
             "configuration (the overrides that differ between jobs) on the same scenarios. Cost: memories "
             "scored per probe (mean), total cost per dialogue turn (memories scored by every kind of search: "
             "probes, replies, association, arousal, background processes) and LLM tokens; recall: mean recall@k over the probes with a `recall` "
             "expectation; latency: wall time per probe. All numbers: `summary.csv`.", "",
             "## Summary", "", table(summary, TABLE_COLUMNS), ""]
    if failed:
        lines += ["## Failed jobs", "", table(summary[summary["status"] != "ok"], ["job", "config", "error"]), ""]
    matrix = pass_matrix(jobs)
    if len(matrix.columns):
        lines += ["## Pass matrix", "", "Expectations passed per scenario (passed/checks).", "",
                  table(matrix.reset_index(names="config"), ["config", *matrix.columns]), ""]
    front = _frontier_lines(summary)
    lines += front + figure_lines(drawn, out)
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _frontier_lines(summary: pd.DataFrame) -> list[str]:
    from .plots import pareto_front

    t = summary[summary["status"] == "ok"].copy()
    t["recall"] = pd.to_numeric(t["recall"], errors="coerce")
    t["scored"] = pd.to_numeric(t["scored"], errors="coerce")
    t = t.dropna(subset=["recall", "scored"])
    if t.empty:
        return []
    front = t[pareto_front(t["scored"].to_numpy(), t["recall"].to_numpy())].sort_values("scored")
    return ["## Pareto frontier (recall against memories scored)", "",
            "Configurations that no other beats on both (higher recall, fewer memories scored):", "",
            table(front, ["config", "recall", "scored", "pass_rate"]), ""]


def describe(path: Path) -> str:
    """A one-line account of what was written (for the command's output)."""
    summary = pd.read_csv(path.parent / "summary.csv")
    n_failed = int((summary["status"] != "ok").sum())
    return f"{path} ({len(summary)} jobs, {n_failed} failed)" if len(summary) > 1 else str(path)

