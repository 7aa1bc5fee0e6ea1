"""``mtsbench report DIR``: summary.csv, figures and report.md of a run or sweep directory.

Reads only result files (summary.json, metrics.csv, timelines.parquet, .hydra/overrides.yaml,
failure.json). A tuning study's folder (``study.json``, ``hydra/sweeper=tune``) gets the study's
report instead (``mtsbench.report.study``: both fronts, the trials, parameter importances). A sweep's report has the summary table, the recall-against-cost plots with
their Pareto frontier, the pass matrix and the attention timelines; a single run keeps
its own report (``report.markdown``) with the figures added. A ``notes.md`` beside the
report (what the numbers show, written by hand) is put at the top of a sweep's report.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..evaluation import evidence
from . import data, datasets, html, probes
from ..evaluation.evaluate import PROVENANCE
from .jobs import Job, credit_lines, find_jobs
from .markdown import table, with_intervals, write_report
from .paired import ALPHA, comparison_lines, reference_lines
from .parallel import Drawing, Helper, Task
from .plots import plot_pareto, plot_pass_matrix
from .sources import combined_jobs, leaderboard_lines, source_lines
from .seeds import Config, config_pass_matrix, config_table, configs, cuts
from .sweepplots import plot_heatmaps, plot_llm_cost, plot_recall_curves
from .timeplots import plot_beliefs, plot_timeline, plot_timeline_configs, plot_tiers

COSTS = [("cost_per_turn", "total cost: memories scored per dialogue turn, every kind of search", "pareto_total.png"),
         ("scored", "memories scored per probe (mean)", "pareto_scored.png"),
         ("tokens", "LLM tokens per run (all steps)", "pareto_tokens.png")]
TABLE_COLUMNS = ["job", "config", "status", "checks", "passed", "pass_rate", "recall", PROVENANCE, "scored",
                 "cost_per_turn", "llm_calls", "tokens", "latency_p50_ms", "latency_p95_ms"]
INTERVAL_COLUMNS = ["pass_rate", "recall", PROVENANCE, "scored", "cost_per_turn", "tokens"]


def compared(jobs: list[Job]) -> list[tuple[str, str]]:
    """(column, name, lower is better) of the measures the paired tests compare: earned
    recall@k, recall at the jobs' headline budget (``evidence.headline_budget``), the pass rate,
    and the costs: memories scored per probe, total cost per turn and LLM tokens per scenario."""
    budget = evidence.headline_budget(cuts(jobs)[1])
    at_budget = [] if budget is None else [(f"recall@{budget}t", f"recall@{budget}t", False)]
    return [("recall", "earned recall@k", False), *at_budget, ("pass_rate", "pass rate", False),
            ("scored", "memories scored per probe", True), ("cost_per_turn", "total cost per turn (per scenario)", True),
            ("tokens", "LLM tokens (per scenario)", True)]


def figures(jobs: list[Job], groups: list[Config], summary: pd.DataFrame, out: Path,
            helper: Helper | None = None) -> "Figures":
    """Every figure drawn into ``out``, in this process and ``helper``'s at once: the helper
    starts now, and ``Figures.finish`` draws the rest here (``parallel.Drawing``)."""
    tasks: list[tuple[str, Task]] = []
    if len(groups) > 1:
        for column, label, name in COSTS:
            tasks.append((f"Recall against {label}", (plot_pareto, (summary, column, label, out / name))))
    tasks.append(("Evidence recall at k and at a context budget",
                  (plot_recall_curves, (summary, out / "recall_curves.png"))))
    if len(groups) > 1:
        tasks.append(("Two-dimensional sweep", (plot_heatmaps, (summary, out / "heatmaps.png"))))
    if len(jobs) > 1:
        tasks.append(("Pass matrix", (plot_pass_matrix, (config_pass_matrix(jobs), out / "pass_matrix.png"))))
    tasks.append(("LLM cost per process", (plot_llm_cost, (groups, out / "llm_cost.png"))))
    tasks.append(("Tier occupancy over time", (plot_tiers, (groups, out / "tier_occupancy.png"))))
    tasks.append(("Belief over time", (plot_beliefs, (groups, out / "beliefs.png"))))
    tasks += _timeline_figures(groups, out)
    return Figures([title for title, _ in tasks], Drawing([task for _, task in tasks], helper))


class Figures:
    """A report's figures being drawn (``figures``)."""

    def __init__(self, titles: list[str], drawing: Drawing) -> None:
        self.titles, self.drawing = titles, drawing

    def finish(self) -> list[tuple[str, Path]]:
        """(title, path) of each figure drawn, in the report's order, once all are drawn."""
        return [(title, path) for title, path in zip(self.titles, self.drawing.finish()) if path is not None]


def _timeline_figures(groups: list[Config], out: Path) -> list[tuple[str, Task]]:
    """Per scenario: the reference configuration's timelines, and attention per configuration."""
    if not groups:
        return []
    scenarios = list(dict.fromkeys(s for c in groups if (t := data.timelines(c.first)) is not None
                                   for s in t["scenario"]))
    tasks = []
    for s in scenarios:
        tasks.append((f"Attention timelines: {s}", (plot_timeline, (groups[0], s, out / f"timeline_{s}.png"))))
        if len(groups) > 1:
            tasks.append((f"Attention per configuration: {s}",
                          (plot_timeline_configs, (groups, s, out / f"timeline_{s}_configs.png"))))
    return tasks


def figure_lines(drawn: list[tuple[str, Path]], out: Path) -> list[str]:
    """The report's Figures section: a heading and an image link per figure."""
    lines = ["## Figures", ""]
    for title, path in drawn:
        lines += [f"### {title}", "", f"![{title}]({path.relative_to(out)})", ""]
    return lines


def write(src: Path, out: Path | None = None, helper: Helper | None = None, per_scenario: bool = False) -> Path:
    """Write summary.csv, the figures, report.md and report.html of run or sweep directory
    ``src`` into ``out`` (default: ``src``); returns the report's path. The figures are drawn
    here and in ``helper``'s process at once (``parallel``; None: a helper started here).
    ``per_scenario``: recall per scenario too, beside recall per data set (``report.datasets``)."""
    src = Path(src)
    out = Path(out) if out is not None else src
    if (src / "study.json").is_file():          # a tuning study's folder (hydra/sweeper=tune): its own report
        from .study import write as write_study

        path = write_study(src, out)
        html.write(path, out / "report.html")
        return path
    if helper is None:
        with Helper() as helper:
            return write(src, out, helper, per_scenario)
    jobs = find_jobs(src)
    out.mkdir(parents=True, exist_ok=True)
    groups = configs(jobs)
    summary = config_table(jobs)
    summary.to_csv(out / "summary.csv", index=False)
    drawn = figures(jobs, groups, summary, out, helper)
    if len(jobs) == 1 and jobs[0].ok and src.resolve() == out.resolve():
        job = jobs[0]
        frame = data.current(_metrics(job.dir / "metrics.csv"))
        path = write_report(out, frame, job.summary, extra=figure_lines(drawn.finish(), out),
                            sections=datasets.lines({"": [frame]}, *cuts(jobs), per_scenario))
    else:
        path = _sweep_report(f"`{src}`", out, jobs, summary, drawn, per_scenario=per_scenario)
    html.write(path, out / "report.html", probe_sections(jobs))
    return path


def probe_sections(jobs: list[Job], most: int = 4) -> str:
    """The HTML report's Probes sections (``probes.html_section``): each finished job's, when
    there are at most ``most``; else a line naming the command that shows one probe."""
    done = [j for j in jobs if j.ok and (j.dir / "results.parquet").is_file()]
    if len(done) > most:
        return (f"<h2>Probes</h2><p>{len(done)} jobs: what a probe ranked is shown by <code>mtsbench show JOB_DIR "
                "--probe STEP</code> (<code>mtsbench show JOB_DIR</code> lists the probes).</p>")
    parts = []
    for j in done:
        section = probes.html_section(j.dir)
        parts.append(section if len(done) == 1 else section.replace("<h2>Probes</h2>", f"<h2>Probes: job {j.num} "
                                                                     f"(<code>{j.label}</code>)</h2>", 1))
    return "\n".join(parts)


def write_many(srcs: list[Path], out: Path, per_scenario: bool = False, labels: dict[str, str] | None = None) -> Path:
    """One report of several run or sweep directories side by side (``sources``): the
    sweep report over all their jobs, with a Sources table and a leaderboard across them,
    into ``out``; returns the report's path. ``labels``: path as given -> its name in the
    report (``sources.parse_labels``)."""
    with Helper() as helper:
        jobs, described = combined_jobs([Path(s) for s in srcs], labels)
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        summary = config_table(jobs)
        summary.to_csv(out / "summary.csv", index=False)
        drawn = figures(jobs, configs(jobs), summary, out, helper)
    path = _sweep_report(f"{len(srcs)} sources (above)", out, jobs, summary, drawn,
                         top=source_lines(described), board=leaderboard_lines(summary), per_scenario=per_scenario)
    html.write(path, out / "report.html", probe_sections(jobs))
    return path


COUNTS = ["k", "scored", "tiers_searched", "index_queries", "arousal_scored", "llm_calls", "tokens", "prompt_tokens",
          "completion_tokens", "llm_retries", "llm_failures"]


def _metrics(path: Path) -> pd.DataFrame:
    """metrics.csv with its count columns as integers (empty cells of rows without them,
    such as the LLM accounting rows, turn them into floats on reading)."""
    frame = pd.read_csv(path)
    for column in COUNTS:
        values = pd.to_numeric(frame[column], errors="coerce") if column in frame else None
        if values is not None and (values.dropna() == values.dropna().round()).all():
            frame[column] = values.astype("Int64")
    return frame


def _sweep_report(origin: str, out: Path, jobs: list[Job], summary: pd.DataFrame, drawn: Figures,
                  top: list[str] | None = None, board: list[str] | None = None, per_scenario: bool = False) -> Path:
    """report.md of a sweep (``origin``: where its jobs come from): notes, summary with
    intervals, paired comparisons, failures, pass matrix, frontier, figures (``drawn``, being
    drawn meanwhile); several sources add ``top`` (their table) before the summary and
    ``board`` (the leaderboard) after it."""
    ok = [j for j in jobs if j.ok]
    failed = [j for j in jobs if not j.ok]
    notes = out / "notes.md"     # hand-written reading of the numbers, kept across regenerations
    lines = ["# mtsbench sweep report" if top is None else "# mtsbench comparison report", ""]
    if notes.is_file():
        lines += [notes.read_text(encoding="utf-8").strip(), ""]
    seeded = summary["seeds"].max() > 1 if "seeds" in summary and len(summary) else False
    unreliable = [j for j in jobs if j.status == "unreliable"]
    if unreliable:
        lines += [f"**{len(unreliable)} job(s) unreliable** (more failed LLM calls than `llm.max_failure_rate` allows; "
                  "not reported as results): " + "; ".join(f"job {j.num}: {j.error}" for j in unreliable), ""]
    lines += top or []
    lines += [f"{len(jobs)} jobs from {origin}: {len(ok)} ran, {len(failed)} failed. Each row is one "
             "configuration (the overrides that differ between jobs) on the same scenarios"
             + ("; jobs that differ only in `seed` are pooled into one row (`seeds`, `jobs`)" if seeded else "")
             + ". Numbers in brackets are 95% bootstrap intervals over probes (over expectations for the pass "
             "rate) and over seeds where several ran; they describe each configuration alone: whether two "
             "configurations differ is decided by a paired test (below), not by whether their intervals "
             "overlap. Cost: memories scored per probe (mean), total cost per dialogue turn (memories scored by every kind of search: "
             "probes, replies, association, arousal, background processes) and LLM tokens; recall: mean *earned* "
             "recall at each probe's own k over the probes with evidence (a memory earns an evidence step when its "
             "provenance names the step and its text carries the step's content: docs/metrics.md), as in every "
             f"figure, test and ranking below; `{PROVENANCE}`: the same by provenance alone (any memory naming the "
             "step, however little of it its text keeps), shown for comparison only; latency: wall time per probe. "
             "All numbers: `summary.csv`.", "", *credit_lines(jobs),
             "## Summary", "", table(with_intervals(summary, INTERVAL_COLUMNS), _columns(summary, seeded)), ""]
    lines += separation_lines(summary) + (board or [])
    lines += datasets.lines({c.label: [data.metrics(j) for j in c.jobs] for c in configs(jobs)}, *cuts(jobs),
                            per_scenario)
    paired = comparison_lines(configs(jobs), compared(jobs)) if len(ok) > 1 else []
    if paired:
        lines += ["## Best configurations (paired tests)", "",
                  "Configurations ran on the same probes, so each is compared with the one of highest mean (lowest, "
                  "for a cost) on the paired differences (same seed, scenario and probe; same expectation for the "
                  "pass rate; same seed and scenario for cost per turn and tokens): a sign-flip permutation test, a "
                  f"difference where p < {ALPHA}. Mean difference and p in brackets. A best is named only when every "
                  "other configuration is worse by that test.", "", *paired, ""]
    lines += reference_lines(configs(jobs), compared(jobs)) if len(ok) > 1 else []
    if failed:
        lines += ["## Failed jobs", "", table(summary[summary["status"] != "ok"], ["job", "config", "error"]), ""]
    matrix = config_pass_matrix(jobs)
    if len(matrix.columns):
        lines += ["## Pass matrix", "", "Expectations passed per scenario (passed/checks, summed over seeds).", "",
                  table(matrix.reset_index(names="config"), ["config", *matrix.columns]), ""]
    front = _frontier_lines(summary)
    lines += front + figure_lines(drawn.finish(), out)
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def separation_lines(summary: pd.DataFrame) -> list[str]:
    """A line saying recall does not separate the configurations when every finished one
    (two or more) has the same mean recall@k: the probes are too easy (or too hard) for
    them, and recall says nothing about which is better; and, when every recall figure of
    every configuration (at k, every depth and budget) is 1, that recall is saturated (also
    for one configuration alone); [] otherwise.

    >>> separation_lines(pd.DataFrame({"status": ["ok", "ok"], "recall": [0.5, 0.5]}))[0][:66]
    '**recall does not separate these configurations: all score 0.500**'
    >>> separation_lines(pd.DataFrame({"status": ["ok"], "recall": [1.0], "recall@5": [1.0]}))[0][:46]
    '**Saturated: every recall is at its ceiling (1'
    >>> separation_lines(pd.DataFrame({"status": ["ok", "ok"], "recall": [1.0, 0.9]}))
    []
    """
    if "recall" not in summary:
        return []
    done = summary[summary["status"] == "ok"]
    recall = pd.to_numeric(done["recall"], errors="coerce").dropna()
    cut = [c for c in done.columns if re.fullmatch(r"recall@\d+t?", c)]
    ceiling = [f"**Saturated: {evidence.SATURATED}.**", ""] \
        if len(recall) and evidence.saturated(pd.to_numeric(done[["recall", *cut]].stack(), errors="coerce")) else []
    if len(recall) < 2 or recall.round(4).nunique() != 1:
        return ceiling
    return ceiling + [
        f"**recall does not separate these configurations: all score {recall.iloc[0]:.3f}** (mean earned "
        "recall@k over the same probes). The probes are too easy, or too hard, for these configurations to differ on "
        "them: compare them on cost and on the expectations passed, or add probes that separate them.", ""]


def _columns(summary: pd.DataFrame, seeded: bool) -> list[str]:
    """The summary table's columns: ``jobs`` and ``seeds`` instead of ``job`` when seeds pooled."""
    columns = [c for c in TABLE_COLUMNS if c in summary]
    return ["jobs", "seeds", *columns[1:]] if seeded else columns


def _frontier_lines(summary: pd.DataFrame) -> list[str]:
    """The frontier table: configurations no other beats on recall (pass rate breaking ties) and cost."""
    from .plots import numeric, pareto_front

    t = numeric(summary, "recall", "scored")
    if t.empty:
        return []
    tiebreak = pd.to_numeric(t["pass_rate"], errors="coerce").to_numpy()
    front = t[pareto_front(t["scored"].to_numpy(), t["recall"].to_numpy(), tiebreak)].sort_values("scored")
    return ["## Pareto frontier (recall against memories scored)", "",
            "Configurations that no other beats on both (higher recall, the pass rate breaking ties in recall, "
            "and fewer memories scored):", "",
            table(with_intervals(front, INTERVAL_COLUMNS), ["config", "recall", "scored", "pass_rate"]), ""]


def describe(path: Path) -> str:
    """A one-line account of what was written (for the command's output)."""
    if (path.parent / "trials.csv").is_file() and not (path.parent / "summary.csv").is_file():
        trials = pd.read_csv(path.parent / "trials.csv")
        states = trials["state"].value_counts().to_dict()
        return (f"{path} (a tuning study: {len(trials)} trials, "
                + ", ".join(f"{n} {s}" for s, n in sorted(states.items())) + ") and report.html")
    summary = pd.read_csv(path.parent / "summary.csv", dtype={"jobs": str})
    n_jobs = sum(len(str(j).split()) for j in summary["jobs"]) if "jobs" in summary else len(summary)
    n_failed = int((summary["status"] != "ok").sum())
    configs = f", {len(summary) - n_failed} configurations" if len(summary) < n_jobs else ""
    return f"{path} ({n_jobs} jobs{configs}, {n_failed} failed) and report.html" if n_jobs > 1 else str(path)

