"""A sweep's end writes its report into the sweep's folder (issue 29, item 2), as
``mtsbench report SWEEP_DIR`` would, and its last line gives the report's path."""

from __future__ import annotations

import pandas as pd


def test_a_sweep_writes_its_report(cli, tmp_path):
    sweep = tmp_path / "sweep"
    done = cli("run", "-m", "seed=0,1", "scenarios=[milk_allergy]", f"hydra.sweep.dir={sweep}")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"mtsbench: 2 jobs done; 10 of 10 expectations passed; report: {sweep / 'report.md'}", last
    for name in ("report.md", "report.html", "summary.csv"):
        assert (sweep / name).is_file(), sorted(p.name for p in sweep.iterdir())
    assert "2 jobs from" in (sweep / "report.md").read_text(encoding="utf-8")
    summary = pd.read_csv(sweep / "summary.csv", dtype={"jobs": str})
    assert list(summary["status"]) == ["ok"] and summary["jobs"].iloc[0].split() == ["0", "1"], summary


def test_a_sweep_whose_report_cannot_be_written_says_so_in_its_line(cli, tmp_path):
    """Every job failed (a scenario file that does not parse): the line still comes, in one
    piece, and names the command to write the report with."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [unclosed\n", encoding="utf-8")
    sweep = tmp_path / "sweep"
    done = cli("run", "-m", "seed=0,1", f"scenarios=[{bad}]", f"hydra.sweep.dir={sweep}")
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"mtsbench: 2 jobs done; 2 failed: 0 (seed=0 scenarios=[{bad}]; {sweep / '0' / 'failure.json'}), "
                           f"1 (seed=1 scenarios=[{bad}]; {sweep / '1' / 'failure.json'}); report: "), last
    assert last.endswith(str(sweep / "report.md")) or f"mtsbench report {sweep}" in last, last
