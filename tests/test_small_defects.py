"""Small defects of issue 29 (item 4): calibrate's markdown table, mtsbench.load's dtypes, and
llm=recorded on a scenario the recording does not hold."""

from __future__ import annotations

import re

import mtsbench
from mtsbench.calibration.calibrate import markdown


def _comparison() -> dict:
    return {"a": "runs/a", "b": "runs/b",
            "attention": {"pairs": 2, "spearman": None, "mean_abs_diff": 0.5, "mean_a": 4.0, "mean_b": 4.5},
            "facts": {"a": 0, "b": 3, "matched_a": 0, "matched_b": 0, "precision": 0.0, "recall": None,
                      "same_text": 0.75},
            "events": {"steps_a": 0, "steps_b": 2, "both": 0, "agreement": None},
            "impressions": {"steps_a": 0, "steps_b": 0, "both": 0, "agreement": None,
                            "belief_mean_abs_diff": None, "ttl_days_mean_abs_diff": None},
            "counts": {"conjecture": {"a": 1, "b": 2}},
            "expectations": {"compared": 3, "both": 1, "a_only": 1, "b_only": 1, "neither": 0}}


def test_calibrate_table_escapes_pipes_and_never_says_none():
    text = markdown(_comparison())
    assert "None" not in text, text
    table = [line for line in text.splitlines() if line.startswith("| ") and line.count("---") == 0]
    for line in table:
        cells = re.split(r"(?<!\\)\|", line)[1:-1]          # unescaped pipes only
        assert len(cells) == 3, line
    assert "mean \\|A-B\\| 0.5" in text
    assert "agreement n/a (no step decided in both)" in text
    assert "Spearman n/a (fewer than 3 pairs or one side constant)" in text
    assert "recall n/a (A summarized no fact)" in text


def test_load_gives_nullable_dtypes(tmp_path):
    mtsbench.run(["scenarios=[milk_allergy]"], out=tmp_path / "r")
    run = mtsbench.load(tmp_path / "r")
    m = run.metrics
    for column in ("passed", "hit", "abstain"):
        assert str(m[column].dtype) == "boolean", (column, m[column].dtype)
    for column in ("index", "k", "scored", "llm_calls"):
        assert str(m[column].dtype) == "Int64", (column, m[column].dtype)
    assert run.probes["passed"].notna().all() and bool(run.expectations["passed"].all())


def test_recorded_on_an_unrecorded_scenario_names_it_and_the_recorded_ones(cli, tmp_path):
    scenario = tmp_path / "orchid.yaml"
    scenario.write_text("id: orchid\ntitle: An orchid\nlanguage: en\nstart: 2026-03-02T09:00:00\nsteps:\n"
                        "  - {id: s1, at: d0 09:00, say: The orchid on the windowsill has a new bud.}\n")
    r = cli("run", "llm=recorded", f"scenarios=[{scenario}]", f"hydra.run.dir={tmp_path}/run")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "scenario orchid was not recorded (recorded: " in lines[0], lines[0]
    assert "milk_allergy" in lines[0] and "windowsill" not in lines[0], lines[0]
