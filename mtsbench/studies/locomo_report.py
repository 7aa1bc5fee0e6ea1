"""The LoCoMo study's report, from saved runs only (``WORK/runs/NAME``).

Every figure is computed from each run's ``metrics.csv`` (probe rows), ``summary.json``
(cost, attention) and ``results.parquet`` (labelled attention), twice: over all ten
conversations and over the five held out from tuning (``tune`` in the plan). Intervals are
95% percentile bootstraps over probes (``mtsbench.report.intervals.bootstrap``);
comparisons with a ``base`` run are paired: the per-probe difference, bootstrapped
(``paired_diff``). Recall is earned credit (``mtsbench.evaluation.credit``) unless named ``prov_``.

The study's tables are set against published figures at fixed depths (DRAGON's R@5 ...
R@50) and budgets, so it does not follow ``evaluation.recall_at``: it needs its runs
evaluated at ``DEPTHS`` and ``BUDGETS`` (the defaults), and refuses, naming the run and the
missing columns, a run that was not (``Saved.read``: ``ReportError``) instead of failing
on a missing column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..evaluation.attention_auc import attention_block, roc_auc
from ..errors import ReportError
from ..evaluation.evidence import cut_columns, cuts_of_summary
from ..report.intervals import bootstrap
from ..outputs.results import load
from ..scenario.loader import load_scenario

DEPTHS = (5, 10, 25, 50)               # the study's own cut-offs (module docstring), not the configured ones
BUDGETS = (256, 512, 1024, 2048)
KINDS = ("probe", "reply", "association", "arousal", "processes")
SEED = 20_251_204
RELEVANCE_THRESHOLD = 0.5     # false recall on relevance alone: an adversarial question whose best used memory is this relevant


def paired_diff(a: pd.Series, b: pd.Series, resamples: int = 2000, seed: int = SEED) -> tuple[float, float, float]:
    """Mean of b - a over the probes both have, with a seeded 95% bootstrap interval over probes.

    >>> paired_diff(pd.Series([0.0, 0.5, 1.0]), pd.Series([0.0, 0.5, 1.0]))
    (0.0, 0.0, 0.0)
    >>> m, lo, hi = paired_diff(pd.Series([0.0] * 50), pd.Series([0.0, 1.0] * 25)); (m, 0 < lo < m < hi)
    (0.5, True)
    """
    d = (b - a).dropna().to_numpy(dtype=float)
    if d.size == 0:
        return (float("nan"),) * 3
    means = d[np.random.default_rng(seed).integers(0, d.size, (resamples, d.size))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(d.mean()), float(lo), float(hi)


@dataclass
class Saved:
    """What a run saved, read once: its metric rows, summary, records and scenarios."""

    metrics: pd.DataFrame
    summary: dict
    records: pd.DataFrame
    scenarios: dict

    @classmethod
    def read(cls, run: Path, data: Path) -> "Saved":
        summary = json.loads((run / "summary.json").read_text())
        depths, budgets = cuts_of_summary(summary)
        missing = [c for c in cut_columns(DEPTHS, BUDGETS) if c not in cut_columns(depths, budgets)]
        if missing:
            raise ReportError(f"{run}: evaluated without {', '.join(missing)}; the LoCoMo study reports at depths "
                              f"{list(DEPTHS)} and budgets {list(BUDGETS)} (evaluation.recall_at, recall_at_tokens)")
        records, _ = load(run / "results.parquet")
        return cls(pd.read_csv(run / "metrics.csv", low_memory=False), summary, records,
                   {sid: load_scenario(data / f"{sid}.yaml") for sid in summary["scenarios"]})

    def probes(self) -> pd.DataFrame:
        """The probe rows with evidence, indexed by (scenario, step)."""
        m = self.metrics[self.metrics["check"] == "probe"]
        m = m[pd.to_numeric(m["prov_recall@5"], errors="coerce").notna()]
        return m.set_index(["scenario", "step"])

    def rescored(self, data: Path) -> "Saved":
        """The same run scored against the scenarios in ``data`` (the same conversations with
        other evidence, e.g. LoCoMo's citation corrections): the system never saw the evidence,
        so its saved rankings and earned steps are re-scored, nothing re-runs."""
        from ..evaluation.evaluate import metrics_frame, scenario_rows

        scenarios = {sid: load_scenario(data / f"{sid}.yaml") for sid in self.scenarios}
        rows = [row for sid, sc in scenarios.items()
                for row in scenario_rows(self.records[self.records["scenario"] == sid], sc, DEPTHS, BUDGETS)]
        return Saved(metrics_frame(rows, DEPTHS, BUDGETS), self.summary, self.records, scenarios)


def _mean(frame: pd.DataFrame, column: str) -> float | None:
    if column not in frame:
        return None
    v = pd.to_numeric(frame[column], errors="coerce").dropna()
    return None if v.empty else float(v.mean())


def measure(saved: Saved, probes: pd.DataFrame, scenarios: list[str]) -> dict:
    """One run's figures over ``scenarios`` (``probes``: its probe rows with evidence)."""
    probes = probes[probes.index.get_level_values("scenario").isin(scenarios)]
    summary, allp = saved.summary, saved.metrics
    out: dict = {"probes": int(len(probes))}
    for c in cut_columns(DEPTHS, BUDGETS):
        for prefix in ("", "prov_", "chance_"):
            out[prefix + c] = _mean(probes, prefix + c)
    for c in ("recall@10", "recall@1024t"):
        _, lo, hi = bootstrap([pd.to_numeric(probes[c], errors="coerce").to_numpy(dtype=float)])
        out[c + "_lo"], out[c + "_hi"] = lo, hi
    out["answer_proxy"] = _mean(probes, "answer_proxy")
    abstain = allp[(allp["check"] == "probe") & (allp["abstain"].astype(str) == "True")
                   & allp["scenario"].isin(scenarios)]
    threshold = summary["overall"]["evidence"]["abstain_threshold"]
    scores = pd.to_numeric(abstain["abstain_score"], errors="coerce").fillna(-np.inf)
    out["false_recall"] = float(np.mean(scores >= threshold)) if len(abstain) else None
    # abstention on relevance alone (no attention term): comparable across systems sharing a relevance
    if "top_relevance" in allp and pd.to_numeric(abstain["top_relevance"], errors="coerce").notna().any():
        rel = pd.to_numeric(abstain["top_relevance"], errors="coerce").fillna(-np.inf)
        out["false_recall_relevance"] = float(np.mean(rel >= RELEVANCE_THRESHOLD))
        answerable = pd.to_numeric(probes["top_relevance"], errors="coerce").fillna(-np.inf)
        out["abstention_auc"] = roc_auc(np.r_[answerable.to_numpy(), rel.to_numpy()],
                                        np.r_[np.ones(len(answerable), bool), np.zeros(len(rel), bool)])
    else:
        out["false_recall_relevance"] = out["abstention_auc"] = None
    costs = [summary["cost"]["scenarios"][s] for s in scenarios]
    turns = sum(c["turns"] for c in costs)
    out["work_per_turn"] = sum(c["total"] for c in costs) / turns
    for kind in KINDS:
        out[f"work_{kind}"] = sum(c["scored"].get(kind, 0) for c in costs) / turns
    out["llm_calls_per_turn"] = sum(c["llm_calls"] for c in costs) / turns
    out["tokens_per_turn"] = sum(c["tokens"] for c in costs) / turns
    att = attention_block(saved.records[saved.records["scenario"].isin(scenarios)],
                          {sid: saved.scenarios[sid] for sid in scenarios})
    out["attention_auc"] = att["attention_auc"] if att else None
    out["share_ge_8"] = att["share_ge_8"] if att else None
    out["attention_hist"] = att["histogram"] if att else None
    return out


CORRECTED = "corrected"      # the data variant with LoCoMo's citation corrections (scopes all_corrected, ...)


def collect(plan: dict, runs: Path) -> tuple[pd.DataFrame, dict]:
    """summary.csv rows (one per run and scope) and the probe tables by run name. With a
    ``corrected`` data folder (``--corrections``), every run on the raw turns is also scored
    against the corrected evidence (scopes ``all_corrected`` and ``held_out_corrected``)."""
    rows, probes = [], {}
    tune = list(plan["tune"])
    corrected = runs.parent / "data" / CORRECTED
    for run in plan["runs"]:
        folder = runs / run["name"]
        saved = Saved.read(folder, (runs.parent / "data" / run["data"]).resolve())
        probes[run["name"]] = saved.probes()
        every = list(saved.summary["scenarios"])
        wall = json.loads((folder / ".study-wall.json").read_text()) if (folder / ".study-wall.json").exists() else None
        held = [s for s in every if s not in tune]
        versions = [("", saved)]
        if run["data"] == "raw" and (corrected / ".imported").exists():
            versions.append(("_corrected", saved.rescored(corrected.resolve())))
        for suffix, version in versions:
            table = version.probes()
            for scope, scenarios in (("all", every), ("held_out", held)):
                figures = measure(version, table, scenarios)
                hist = figures.pop("attention_hist")
                rows.append({"run": run["name"], "table": run["table"], "scope": scope + suffix, "data": run["data"],
                             "overrides": " ".join(run["overrides"]), "base": run.get("base"), "wall_s": wall,
                             **figures, **({"attention_hist": json.dumps(hist)} if hist else {})})
    return pd.DataFrame(rows), probes
