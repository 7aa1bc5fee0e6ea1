"""``mtsbench report A B [C...] --out OUT`` (issue 29): several runs or sweeps side by side,
tested end to end on real run folders: each source labelled by its folder's name (``#1``,
``#2`` when two are named alike), one leaderboard across them, paired tests where they
share probes, a plain "not compared" where they share none; and the line saying recall
does not separate configurations that all score the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

SCENARIOS = "scenarios=[milk_allergy,deep_memory]"
MTSBENCH = Path(sys.executable).parent / "mtsbench"       # the installed command, as the cli fixture runs it


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Two sweeps whose folders are both named ``runs`` and a single run on another scenario
    (made once for the module: the runs are what takes time)."""
    root = tmp_path_factory.mktemp("sources")
    a, b, c = root / "x" / "runs", root / "y" / "runs", root / "single"
    for args in (["-m", "ablate=none,tiers", SCENARIOS, f"hydra.sweep.dir={a}"],
                 ["-m", "ablate=none,summarize", SCENARIOS, f"hydra.sweep.dir={b}"],
                 ["scenarios=[second_thought]", f"hydra.run.dir={c}"]):
        done = subprocess.run([str(MTSBENCH), "run", *args], cwd=root, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    return a, b, c


def test_several_runs_and_sweeps_in_one_report(cli, tmp_path, sources):
    out = tmp_path / "compared"
    done = cli("report", *sources, "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{out / 'report.md'} (5 jobs, 0 failed) and report.html", done.stdout
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# mtsbench comparison report")
    sources_table = text.split("## Sources")[1].split("##")[0]
    for row in ("| runs#1 | sweep |", "| runs#2 | sweep |", "| single | run |"):
        assert row in sources_table, sources_table
    assert "| runs#2 | sweep | " in sources_table and "| 2–3 | 0–1 | 2 | 0 |" in sources_table

    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary["config"]) == ["source=runs#1 ablate=none " + SCENARIOS,
                                         "source=runs#1 ablate=tiers " + SCENARIOS,
                                         "source=runs#2 ablate=none " + SCENARIOS,
                                         "source=runs#2 ablate=summarize " + SCENARIOS,
                                         "source=single scenarios=[second_thought]"]

    board = text.split("## Leaderboard (every source)")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in board.splitlines() if line.startswith("| ") and "rank" not in line]
    assert len(rows) == 5 and {r[1] for r in rows} == {"runs#1", "runs#2", "single"}, board
    assert rows[0][0] == "| 1"                                  # ranked, best first

    paired = text.split("## Best configurations (paired tests)")[1].split("\n## ")[0]
    rate = next(line for line in paired.splitlines() if line.startswith("- **pass rate**"))
    assert "`source=runs#2 ablate=summarize " in rate and "p=" in rate      # compared across sources, paired
    assert "not compared (no probe in common): `source=single scenarios=[second_thought]`" in rate, rate

    assert "**recall does not separate these configurations: all score 1.000**" in text
    for name in ("summary.csv", "report.html", "pareto_total.png", "pass_matrix.png"):
        assert (out / name).is_file(), name


def test_several_sources_need_out_and_existing_folders(cli, tmp_path, sources):
    a, b, _ = sources
    done = cli("report", a, b)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--out OUT" in done.stderr, done.stderr
    done = cli("report", a, b, "--out", b)
    assert done.returncode == 2 and done.stderr == (f"mtsbench: report --out {b}: is one of the runs or sweeps "
                                                    f"compared; expected another folder (their own reports stay "
                                                    f"as they are)\n"), done.stderr
    done = cli("report", a, tmp_path / "nowhere", "--out", tmp_path / "o")
    assert done.returncode == 2 and done.stderr == f"mtsbench: {tmp_path / 'nowhere'}: no such directory\n"


def test_labels_name_the_sources(cli, tmp_path, sources):
    a, b, c = sources
    out = tmp_path / "labelled"
    done = cli("report", a, b, c, "--out", out, "--label", f"{a}=tiers_off,runs#2=summary_off,single=one")
    assert done.returncode == 0, done.stderr
    text = (out / "report.md").read_text(encoding="utf-8")
    table = text.split("## Sources")[1].split("##")[0]
    for row in (f"| tiers_off | sweep | {a} |", f"| summary_off | sweep | {b} |", f"| one | run | {c} |"):
        assert row in table, table
    assert set(pd.read_csv(out / "summary.csv")["config"].str.split().str[0]) == {
        "source=tiers_off", "source=summary_off", "source=one"}


@pytest.mark.parametrize("label, message", [
    ("nowhere=x", "--label nowhere=x: no source 'nowhere'"),
    ("single=a b", "expected SOURCE=NAME, NAME without spaces"),
    ("single=runs#1", "sources named alike"),
])
def test_a_wrong_label_is_one_line(cli, tmp_path, sources, label, message):
    done = cli("report", *sources, "--out", tmp_path / "x", "--label", label)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
