"""The default run has power (issue 51): ``mtsbench run`` with no override runs the bundled
scenarios and six generated weeks whose 60 evidence probes can fail, reports them as their own
data set, scored by recall, and is not saturated; a run whose every recall is 1 says so."""

from __future__ import annotations

import json


def test_the_default_run_mixes_the_bundled_set_and_a_generated_dialogue(cli, tmp_path):
    out = tmp_path / "run"
    done = cli("run", f"hydra.run.dir={out}")
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("58 of 58 expectations passed; 60 probes of generated data (generated), scored by recall;")
    assert "ceiling" not in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    evidence = summary["overall"]["evidence"]
    assert set(evidence["by_dataset"]) == {"bundled", "generated"}
    generated = evidence["by_dataset"]["generated"]
    assert generated["with_evidence"] == 60 and 0 < generated["recall"] < 1       # room to move either way
    assert summary["scenarios"]["generated_weeks"]["dataset"] == "generated"
    report = (out / "report.md").read_text()
    assert "## Per data set" in report and "| generated | 60 | 60 |" in report


def test_a_run_at_the_ceiling_warns(cli, tmp_path):
    out = tmp_path / "run"
    done = cli("run", "scenarios=[milk_allergy,flu_fades]", f"hydra.run.dir={out}")
    assert done.returncode == 0, done.stderr
    assert "warning: every recall is at its ceiling (1.000)" in done.stdout
    assert "**Every recall is at its ceiling (1.000)" in (out / "report.md").read_text()
