"""``make bench``'s summary (benchmarks/conftest.py ``summary``) is built from the committed
results: every target with its ratio and verdict, then the bench's own tables; a results file
of another shape beside them (``make profile``'s component_floor.json, any new one) is not read."""

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"

pytestmark = pytest.mark.skipif(not (BENCH / "results" / "targets.json").is_file(),
                                reason="needs the repository's benchmarks/ folder")


@pytest.fixture
def bench(import_file):
    return import_file("bench_conftest", BENCH / "conftest.py")


def test_the_committed_summary_is_built_from_the_committed_results(bench):
    results = BENCH / "results"
    text = bench.summary(results)
    assert text == (results / "summary.md").read_text()
    rows = [line for line in text.split("\n\n## ")[0].splitlines() if line.startswith("| ")][1:]
    targets = json.loads((results / "targets.json").read_text())
    assert len(rows) == len(targets)
    for row, t in zip(rows, targets):
        assert row.startswith(f"| {t['target']} |") and row.endswith(f"| {t['met']} |")
        assert t["ratio"] is None or f"| {t['ratio']} |" in row
    assert any(t["met"] == "MISSED" for t in targets) and "| MISSED |" in text
    assert [h[3:] for h in text.splitlines() if h.startswith("## ")][1:] == \
        [n for n in bench.TABLES if (results / f"{n}.json").exists()]


def test_a_results_file_of_another_shape_does_not_change_the_summary(bench, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(BENCH / "results", results)
    before = bench.summary(results)
    (results / "component_floor.json").write_text(json.dumps({"summary": {"a": 1}, "calls": [{"b": 2}]}))
    (results / "new_script.json").write_text(json.dumps({"x": [1, 2], "y": {"z": 3}}))
    (results / "scalars.json").write_text(json.dumps([1, 2, 3]))
    assert bench.summary(results) == before
