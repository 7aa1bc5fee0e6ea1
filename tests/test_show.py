"""``mtsbench show RUN [--probe STEP]`` (issue 51), end to end on a real run folder: the run's
probes with the memories each search could see; one probe's ranking with its texts, tiers,
score terms and credit; the HTML report's Probes section; one-line errors; and fast enough to
use on any probe of a finished run (well under two seconds: no pandas is imported)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

MTSBENCH = Path(sys.executable).parent / "mtsbench"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("show") / "run"
    done = subprocess.run([str(MTSBENCH), "run", "scenarios=[milk_allergy,deep_memory]", f"hydra.run.dir={folder}"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (f"7 of 7 expectations passed; report: {folder / 'report.md'} and "
                                            f"report.html; its figures: mtsbench report {folder}")
    return folder


def test_a_run_ends_readable_report_html_and_the_command_for_figures(run):
    page = (run / "report.html").read_text(encoding="utf-8")          # written by mtsbench run itself
    assert "<h2>Probes</h2>" in page and "<h1>mtsbench run report</h1>" in page and "<img" not in page
    assert not list(run.glob("*.png"))


def test_the_probes_of_a_run_with_what_each_search_could_see(cli, run):
    done = cli("show", run)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("3 probes of ") and lines[1].split() == [
        "scenario", "step", "k", "recall", "recall_provenance@k", "scored", "visible", "held"]
    casual = next(line.split() for line in lines if line.startswith("deep_memory") and " casual " in line)
    visible, held = int(casual[-2]), int(casual[-1])
    assert 0 < visible < held          # a casual question searched the top tier only: it saw few memories


def test_one_probe_ranking_lists_text_tier_score_terms_and_credit(cli, run):
    done = cli("show", run, "--probe", "risk")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith('probe risk of milk_allergy (step 9): "Is the milk on the table a risk for the user?"')
    assert "it could see 12 of the 12 memories held" in text and "evidence: allergy; earned recall@k 1.000" in text
    assert "expectations (by provenance): recall passed, absent passed" in text
    head = next(line for line in text.splitlines() if line.lstrip().startswith("rank"))
    assert head.split() == ["rank", "used", "id", "score", "relevance", "attention", "tier", "earns", "names",
                            "tokens", "text"]
    rows = [cells(head, line) for line in text.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == 10 and "... 2 more ranked" in text          # --top 10 of 12
    earning = [r for r in rows if "allergic to milk" in r["text"] and r["earns"] == r["names"] == "allergy"]
    assert earning, rows                                            # the turn itself earns and names its step
    assert [r["used"] for r in rows].count("*") == 3                # k = 3 used
    assert all(r["tier"] == "0" and float(r["attention"]) > 0 and float(r["score"]) >= float(r["relevance"])
               for r in rows)                                       # score = relevance + an attention term
    assert cli("show", run, "--probe", "risk", "--top", "20").stdout.count("\n") > text.count("\n")


def cells(head: str, line: str) -> dict:
    """A row of the ranking table by the header's right-aligned columns (the text: the rest)."""
    names = head.split()
    ends = [head.index(n) + len(n) for n in names[:-1]]
    starts = [0, *ends]
    out = {n: line[a:b].strip() for n, a, b in zip(names, starts, ends)}
    return out | {"text": line[ends[-1]:].strip()}


def test_show_is_fast_and_imports_no_pandas(run):
    code = ("import sys, io, contextlib, time; from mtsbench.cli import main; t = time.perf_counter()\n"
            "with contextlib.redirect_stdout(io.StringIO()): code = main(['show', sys.argv[1], '--probe', 'risk'])\n"
            "print(code, time.perf_counter() - t, 'pandas' in sys.modules)")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True, text=True, timeout=60)
    wall = time.perf_counter() - started
    exit_code, inside, pandas = done.stdout.split()
    assert (exit_code, pandas) == ("0", "False"), done.stderr
    assert float(inside) < 2.0 and wall < 10.0, (inside, wall)


def test_html_report_holds_every_probe_ranking(cli, run):
    assert cli("report", run).returncode == 0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "<h2>Probes</h2>" in page and page.count("<details>") == 3
    assert "milk_allergy / risk: earned recall@k 1.000, scored 12, could see 12 of 12" in page
    assert "mtsbench show RUN_DIR --probe STEP" in (run / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("args, message", [
    (["--probe", "rsk"], "no probe 'rsk'; did you mean risk?"),
    (["--probe", "nope"], "no probe 'nope' (its probes: casual, important, risk)"),
    (["--probe", "risk", "--scenario", "deep_memory"], "no probe 'risk' in scenario deep_memory"),
    (["--scenario", "deep_memory"], "--scenario goes with --probe STEP"),
])
def test_a_wrong_probe_is_one_line(cli, run, args, message):
    done = cli("show", run, *args)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_folder_of_runs_names_them(cli, run):
    done = cli("show", run.parent)
    assert done.returncode == 2 and "not one run but a folder of 1 (run): name one" in done.stderr, done.stderr
