"""Metric columns and report tables follow the configured depths and budgets (issue 26,
item 4): a run evaluated at ``evaluation.recall_at=[3,7]`` and budgets 100 and 300 has
those columns in metrics.csv, summary.json, report.md and a sweep's summary.csv and
report.md, and none of the default ones (5, 10, 25, 50; 256 ... 2048)."""

from __future__ import annotations

import json
import re

import pandas as pd

from mtsbench.config.composition import compose
from mtsbench.report import aggregate
from mtsbench.harness.runner import run

DEPTHS, BUDGETS = (3, 7), (100, 300)
CUTS = ["recall@3", "recall@7", "recall@100t", "recall@300t"]
DEFAULT_CUT = re.compile(r"recall@(5|10|25|50|256t|512t|1024t|2048t)\b")


def _run(out, seed: int):
    cfg, choices = compose(["scenarios=[deep_memory]", f"seed={seed}", "evaluation.recall_at=[7,3]",
                            "evaluation.recall_at_tokens=[300,100]"])
    return run(cfg, out, choices)


def test_columns_and_tables_follow_the_configured_depths_and_budgets(tmp_path):
    sweep = tmp_path / "sweep"
    for seed in (0, 1):
        _run(sweep / str(seed), seed)
    one = sweep / "0"
    metrics = pd.read_csv(one / "metrics.csv", low_memory=False)
    assert [c for c in metrics.columns if re.fullmatch(r"recall@\d+t?", c)] == CUTS
    assert {f"{p}{c}" for p in ("prov_", "chance_") for c in CUTS} <= set(metrics.columns)
    assert not [c for c in metrics.columns if DEFAULT_CUT.search(c)]
    probes = metrics[(metrics["check"] == "probe") & pd.to_numeric(metrics["recall@7"], errors="coerce").notna()]
    assert len(probes) and (probes["recall@7"] >= probes["recall@3"]).all()

    evidence = json.loads((one / "summary.json").read_text())["overall"]["evidence"]
    assert (tuple(evidence["depths"]), tuple(evidence["budgets"])) == (DEPTHS, BUDGETS)
    assert all(c in evidence for c in CUTS) and not [k for k in evidence if DEFAULT_CUT.search(k)]

    run_report = (one / "report.md").read_text(encoding="utf-8")
    intervals = run_report.split("## Intervals", 1)[1]
    measures = re.findall(r"^\| (recall@\d\S*) \|", intervals, flags=re.M)
    assert measures == CUTS, measures
    assert not DEFAULT_CUT.search(run_report)

    aggregate.write(sweep)
    table = pd.read_csv(sweep / "summary.csv", dtype={"jobs": str})
    assert {f"{c}{end}" for c in CUTS for end in ("", "_lo", "_hi")} <= set(table.columns), list(table.columns)
    assert not [c for c in table.columns if DEFAULT_CUT.search(c)]
    sweep_report = (sweep / "report.md").read_text(encoding="utf-8")
    assert "**recall@300t**" in sweep_report       # the paired tests compare at the headline budget
    assert not DEFAULT_CUT.search(sweep_report)


def test_the_locomo_study_refuses_a_run_evaluated_at_other_depths(tmp_path):
    """The study's tables are set against published figures at fixed depths: a run evaluated
    at others is refused in one line naming it, not read until a column is missing."""
    import pytest

    from mtsbench.errors import ReportError
    from mtsbench.studies.locomo_report import Saved

    evidence = {"depths": list(DEPTHS), "budgets": list(BUDGETS)}
    (tmp_path / "summary.json").write_text(json.dumps({"overall": {"evidence": evidence}, "scenarios": {}}))
    with pytest.raises(ReportError) as e:
        Saved.read(tmp_path, tmp_path)
    assert str(e.value).startswith(f"{tmp_path}: evaluated without recall@5, recall@10, ")
    assert "\n" not in str(e.value)
