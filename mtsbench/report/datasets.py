"""Recall per data set (and per scenario, on request) in run and sweep reports.

A run that mixes data sets (the bundled scenarios, a generated dialogue, imported LoCoMo and
BEAM: ``mtsbench.scenario.datasets``) is never summed up by one pooled figure alone: each
report has a table with, per data set (per configuration in a sweep), the probes, those with
evidence, earned recall at each probe's own k (``recall``), at every configured depth and
budget (``recall@5``, ``recall@1024t``, ...), recall by provenance alone
(``recall_provenance@k``) and, for hand-written or generated scenarios, the expectations
passed (imported benchmark data has none: its probes are scored by recall). With
``per_scenario`` (``mtsbench report DIR --per-scenario``) the same per scenario.

Read from ``metrics.csv`` only (its ``dataset`` column; a table written before it has none,
and gets no per-data-set table). A configuration's number is the mean over its seeds of each
seed's mean over probes with evidence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..evaluation import evidence
from ..evaluation.evaluate import PROVENANCE
from ..scenario.datasets import scored_by_recall
from .markdown import table

DATASET, SCENARIO = "dataset", "scenario"


def measures(depths, budgets) -> list[str]:
    """The recall columns of the table: earned at own k, at each cut-off, by provenance.

    >>> measures((5,), (256,))
    ['recall', 'recall@5', 'recall@256t', 'recall_provenance@k']
    """
    return ["recall", *evidence.cut_columns(depths, budgets), PROVENANCE]


def _mean(values: pd.Series) -> float:
    v = pd.to_numeric(values, errors="coerce").dropna()
    return float(v.mean()) if len(v) else np.nan


def _count(x: float) -> str:
    """A count per seed: whole when it is.

    >>> _count(20.0), _count(2.5)
    ('20', '2.5')
    """
    return f"{x:g}" if x != int(x) else str(int(x))


def group_rows(frames: list[pd.DataFrame], by: str, depths, budgets) -> list[dict]:
    """One row per value of column ``by`` over the metrics tables ``frames`` (the seeds of one
    configuration): probes (per seed), probes with evidence, each measure (mean over seeds of
    each seed's mean) and 'passed/checks' of the judged expectations ('' where none)."""
    frames = [f for f in frames if f is not None and by in f]
    names = sorted({str(v) for f in frames for v in f[by].dropna()})
    rows = []
    for name in names:
        parts = [f[f[by].astype(str) == name] for f in frames]
        probes = [p[p["check"] == "probe"] for p in parts]
        first = f"recall@{depths[0]}" if depths else "recall"
        judged = [p[~p["check"].isin(["probe", "llm"]) & p["passed"].notna()] for p in parts]
        checks, passed = sum(len(j) for j in judged), sum(int(j["passed"].astype(str).isin(["True", "1", "1.0"]).sum())
                                                          for j in judged)
        row = {by: name, "probes": _count(np.mean([len(p) for p in probes])),
               "evidence": _count(np.mean([pd.to_numeric(p.get(first), errors="coerce").notna().sum()
                                           for p in probes])),
               "passed": f"{passed}/{checks}" if checks else ""}
        for column in measures(depths, budgets):
            means = [_mean(p[column]) for p in probes if column in p]
            means = [m for m in means if not np.isnan(m)]
            row[column] = f"{np.mean(means):.3f}" if means else "-"
        rows.append(row)
    return rows


def lines(groups: dict[str, list[pd.DataFrame]], depths, budgets, per_scenario: bool = False) -> list[str]:
    """The report's 'Per data set' section (and 'Per scenario' with ``per_scenario``):
    ``groups`` maps a configuration's label ('' for a single run) to its seeds' metrics
    tables; [] when there is one data set only and no per-scenario table was asked for."""
    out = []
    for by, asked in ((DATASET, False), (SCENARIO, per_scenario)):
        rows = [{"config": label, **row} for label, frames in groups.items()
                for row in group_rows(frames, by, depths, budgets)]
        if not rows or (not asked and len({r[by] for r in rows}) < 2):
            continue
        columns = (["config"] if any(groups) else []) + [by, "probes", "evidence", *measures(depths, budgets),
                                                         "passed"]
        title = "Per data set" if by == DATASET else "Per scenario"
        names = sorted({r[DATASET] for r in rows if scored_by_recall(r[DATASET])}) if by == DATASET else []
        note = (f" Imported or generated data ({', '.join(names)}): its probes are questions with evidence, scored "
                "by recall; it has no expectations to pass." if names else "")
        out += [f"## {title}", "",
                f"Recall {'per data set' if by == DATASET else 'per scenario'}, never pooled alone: `recall` is "
                "earned recall at each probe's own k, `recall@N` and `recall@Nt` earned recall at a depth or a "
                f"context budget, `{PROVENANCE}` the figure by provenance alone; means over probes with evidence "
                "(over seeds' means when several ran); `passed`: expectations passed / judged." + note, "",
                table(pd.DataFrame(rows).reindex(columns=columns), columns), ""]
    return out
