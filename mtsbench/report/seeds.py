"""Configurations of a sweep: jobs that differ only in ``seed`` aggregated, with intervals.

``configs`` groups the finished jobs by their label without ``seed=``; ``config_table``
is ``summary.csv``: one row per configuration (a job that did not finish keeps its own
row), ``seeds`` and ``jobs`` saying which jobs it pools, and beside each headline number
its 95% bootstrap interval (``recall_lo``, ``recall_hi``, ``recall@10_lo``, ...; see
``intervals``). The recall columns are those of the depths and budgets the jobs were
evaluated at (``probe_metrics``; read from their summary.json), whatever they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..evaluation import evidence
from ..evaluation.evaluate import PROVENANCE
from . import data
from .intervals import bootstrap, bootstrap_totals, config_label
from .jobs import Job, pass_matrix, summary_table

RUN_METRICS = ["cost_per_turn", "tokens", "llm_calls"]
ROUND = {"passed": 2, "latency_p50_ms": 3, "latency_p95_ms": 3, "checks": 2}


def cuts(jobs: list[Job]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The depths and budgets any of the finished ``jobs`` was evaluated at, sorted."""
    found = [evidence.cuts_of_summary(j.summary) for j in jobs if j.ok]
    return tuple(sorted({d for f in found for d in f[0]})), tuple(sorted({b for f in found for b in f[1]}))


def probe_metrics(depths, budgets) -> list[str]:
    """The per-probe columns given intervals: earned recall@k, each cut-off's recall, recall@k
    by provenance alone, memories scored.

    >>> probe_metrics((3,), (100,))
    ['recall', 'recall@3', 'recall@100t', 'recall_provenance@k', 'scored']
    """
    return ["recall", *evidence.cut_columns(depths, budgets), PROVENANCE, "scored"]


def interval_metrics(depths, budgets) -> list[str]:
    """Every column of summary.csv given a ``_lo``/``_hi`` interval."""
    return ["pass_rate", *probe_metrics(depths, budgets), *RUN_METRICS]


@dataclass
class Config:
    label: str
    jobs: list[Job]

    @property
    def first(self) -> Job:
        return self.jobs[0]


def configs(jobs: list[Job]) -> list[Config]:
    """The finished jobs grouped by configuration (label without ``seed=``), in job order."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        if job.ok:
            groups.setdefault(config_label(job.label) if len(jobs) > 1 else job.label, []).append(job)
    return [Config(label, members) for label, members in groups.items()]


def _probes(frame: pd.DataFrame | None) -> pd.DataFrame:
    return frame[frame["check"] == "probe"] if frame is not None else pd.DataFrame()


def passed(frame: pd.DataFrame | None) -> np.ndarray:
    """1.0 / 0.0 per judged expectation row of a metrics table (unsupported ones left out)."""
    if frame is None:
        return np.array([])
    judged = frame[(frame["check"] != "probe") & frame["passed"].notna()]
    return judged["passed"].map(lambda v: str(v).lower() in ("true", "1", "1.0")).to_numpy(dtype=float)


def intervals(config: Config, rows: pd.DataFrame) -> dict:
    """Mean, ``_lo`` and ``_hi`` of every interval metric of ``config`` (``rows``: the
    summary rows of its jobs, for the per-run numbers)."""
    frames = [data.metrics(j) for j in config.jobs]
    out = {}
    groups = {"pass_rate": [passed(f) for f in frames]}
    probes = [_probes(f) for f in frames]
    for column in probe_metrics(*cuts(config.jobs)):
        groups[column] = [pd.to_numeric(p.get(column, pd.Series(dtype=float)), errors="coerce").to_numpy()
                          for p in probes]
    for column, values in groups.items():
        mean, lo, hi = bootstrap(values)
        if not np.isnan(mean):
            out |= {column: round(mean, 4), f"{column}_lo": round(lo, 4), f"{column}_hi": round(hi, 4)}
    for column in RUN_METRICS:
        parts = [scenario_parts(j.summary, column) for j in config.jobs]
        if all(parts):            # seeds and scenarios resampled (intervals.bootstrap_totals)
            mean, lo, hi = bootstrap_totals(parts, ratio=column == "cost_per_turn")
        else:                     # a summary.json without per-scenario figures: seeds only
            mean, lo, hi = bootstrap([[v] for v in pd.to_numeric(rows[column], errors="coerce")])
        if not np.isnan(mean):
            out |= {column: round(mean, 4), f"{column}_lo": round(lo, 4), f"{column}_hi": round(hi, 4)}
    return out


def scenario_parts(summary: dict | None, column: str) -> list[tuple[float, float]]:
    """Per scenario of a job's summary.json, (amount, turns) of a per-run number: cost per
    turn's (total memories scored, dialogue turns), or (tokens, 1), (llm_calls, 1); [] when
    the summary has no per-scenario figures.

    >>> scenario_parts({"cost": {"scenarios": {"a": {"total": 40, "turns": 8}}}}, "cost_per_turn")
    [(40.0, 8.0)]
    >>> scenario_parts({"scenarios": {"a": {"tokens": 9}, "b": {"tokens": 3}}}, "tokens")
    [(9.0, 1.0), (3.0, 1.0)]
    """
    summary = summary or {}
    if column == "cost_per_turn":
        per = ((summary.get("cost") or {}).get("scenarios") or {}).values()
        rows = [(c.get("total"), c.get("turns")) for c in per]
    else:
        rows = [(s.get(column), 1) for s in (summary.get("scenarios") or {}).values()]
    return [(float(a), float(t)) for a, t in rows if a is not None and t is not None]


def config_table(jobs: list[Job]) -> pd.DataFrame:
    """summary.csv: a row per configuration (seeds pooled, with intervals) and one per
    job that did not finish."""
    per_job = summary_table(jobs)
    by_num = {j.num: i for i, j in enumerate(jobs)}
    rows = []
    for config in configs(jobs):
        own = per_job.iloc[[by_num[j.num] for j in config.jobs]]
        row = own.iloc[0].to_dict()
        for column in ("checks", "passed", "probes", "scored_total", "cost_total", "llm_calls", "tokens",
                       "hit_rate", "latency_p50_ms", "latency_p95_ms"):
            if column in own:
                values = pd.to_numeric(own[column], errors="coerce")
                row[column] = None if values.isna().all() else round(float(values.mean()), ROUND.get(column, 4))
        row |= {"config": config.label, "seeds": len(config.jobs), "jobs": " ".join(str(j.num) for j in config.jobs)}
        row |= intervals(config, own)
        rows.append(row)
    rows += [r | {"seeds": 0, "jobs": str(r["job"])} for r in per_job.to_dict("records") if r["status"] != "ok"]
    rows.sort(key=lambda r: r["job"])
    columns = list(per_job.columns)
    columns[columns.index("config") + 1:columns.index("config") + 1] = ["seeds", "jobs"]
    extra = [c for m in interval_metrics(*cuts(jobs)) for c in (m, f"{m}_lo", f"{m}_hi") if c not in columns]
    frame = pd.DataFrame(rows)
    frame = frame.reindex(columns=columns + [c for c in extra if c in frame.columns])
    counts = ("checks", "passed", "probes", "scored_total", "cost_total", "llm_calls", "tokens")
    return frame.astype({c: "Int64" for c in counts if c in frame and _whole(frame[c])})


def _whole(values: pd.Series) -> bool:
    v = pd.to_numeric(values, errors="coerce").dropna()
    return bool((v == v.round()).all())


def config_pass_matrix(jobs: list[Job]) -> pd.DataFrame:
    """Configuration x scenario: 'passed/checks' summed over the configuration's seeds
    (a job that did not finish keeps its own 'failed' row)."""
    per_job = pass_matrix(jobs)
    rows: dict[str, dict] = {}
    for job, (_, cells) in zip(jobs, per_job.iterrows()):
        label = config_label(job.label) if job.ok and len(jobs) > 1 else job.label
        if not job.ok:
            rows[label] = cells.to_dict()
            continue
        row = rows.setdefault(label, {})
        for scenario, cell in cells.items():
            row[scenario] = _add(row.get(scenario), cell)
    return pd.DataFrame.from_dict(rows, orient="index", columns=per_job.columns)


def _add(a: str | None, b: str) -> str:
    """Two 'p/c' cells summed ('' stays '').

    >>> _add("1/2", "2/2"), _add(None, "1/3"), _add("", "")
    ('3/4', '1/3', '')
    """
    if not a:
        return b
    if not b:
        return a
    (p1, c1), (p2, c2) = (map(int, x.split("/")) for x in (a, b))
    return f"{p1 + p2}/{c1 + c2}"
