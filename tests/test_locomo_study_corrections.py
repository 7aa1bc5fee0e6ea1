"""The LoCoMo study re-scores saved runs against corrected citations, also from ``--report-only``."""

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "import"

PLAN = """\
data: {raw: []}
tune: [locomo_conv_1]
common: []
runs:
  - {name: flat_hashing_dense, table: retrieval, data: raw, overrides: [preset=flat_rag]}
"""


def study(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "mtsbench.studies.locomo", "--data", str(DATA / "locomo_small.json"),
                           "--work", str(tmp_path / "work"), "--plan", str(tmp_path / "plan.yaml"), *args],
                          capture_output=True, text=True, timeout=600)


def test_report_only_with_corrections_scores_the_saved_rankings_again(tmp_path):
    (tmp_path / "plan.yaml").write_text(PLAN)
    first = study(tmp_path, "--out", str(tmp_path / "plain"))
    assert first.returncode == 0, first.stderr
    assert "citation corrections" not in (tmp_path / "plain" / "report.md").read_text()
    again = study(tmp_path, "--out", str(tmp_path / "fixed"), "--report-only",
                  "--corrections", str(DATA / "locomo_corrections.json"))
    assert again.returncode == 0, again.stderr
    report = (tmp_path / "fixed" / "report.md").read_text()
    assert "## With LoCoMo's citation corrections" in report and "| `flat_hashing_dense` | all |" in report
