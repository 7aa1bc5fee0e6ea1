"""The BEAM study (``python -m mtsbench.studies.beam``) end to end: on chats written for the tests,
and with ``MTSBENCH_BEAM`` (a folder of BEAM's chats, or of their tarballs) and ``MTSBENCH_LOCOMO``
on one real 100K chat."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

DATA = Path(__file__).parent / "data"
CATEGORIES = {"abstention", "contradiction_resolution", "event_ordering", "information_extraction",
              "instruction_following", "knowledge_update", "multi_session_reasoning", "preference_following",
              "summarization", "temporal_reasoning"}


def plan(tmp_path: Path, targets: str, tune: list[str], sizes: list) -> Path:
    """A small plan: flat and the design on hashing + hybrid, one ablation paired with the design."""
    common = ["retrieval=hybrid", "workload=reply"]
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump({
        "targets": targets, "tune": tune, "sizes": sizes,
        "common": ["evaluation.recall_at_tokens=[256,512,1024,2048,4096,8192]"], "warm": ["flat_exact"],
        "runs": [{"name": "flat_exact", "table": "systems", "overrides": ["preset=flat_rag", *common]},
                 {"name": "mts", "table": "systems", "overrides": common},
                 {"name": "ablate_arousal", "table": "ablation", "base": "mts", "sizes": ["all"],
                  "overrides": [*common, "ablate=arousal"]}]}))
    return path


def study(tmp_path: Path, beam: Path, locomo: Path, plan_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtsbench.studies.beam", "--beam", str(beam), "--locomo", str(locomo),
                           "--work", str(tmp_path / "work"), "--out", str(tmp_path / "out"), "--plan", str(plan_path)],
                          capture_output=True, text=True, timeout=1800)


def check_report(out: Path, sizes: int, categories: set[str]) -> pd.DataFrame:
    summary = pd.read_csv(out / "summary.csv")
    cats = pd.read_csv(out / "categories.csv")
    main = summary[(summary["table"] == "systems") & (summary["scope"] == "all")]
    assert len(main) == 2 * sizes
    for column in ("recall@1024t", "recall@10", "work_per_turn", "distances_per_turn"):
        values = pd.to_numeric(main[column], errors="coerce").dropna()
        assert len(values) and values.between(0, 1 if column.startswith("recall") else 1e12).all(), column
    assert (pd.to_numeric(main["work_per_turn"]) > 0).all()
    assert categories <= set(cats["category"])
    report = (out / "report.md").read_text()
    for section in ("## Targets (all targets)", "## Per category at haystack", "## Each mechanism off"):
        assert section in report
    for figure in ("recall_vs_size.png", "work_vs_size.png", "categories.png"):
        assert (out / figure).stat().st_size > 5000 and f"({figure})" in report
    return summary


def test_the_study_runs_end_to_end_on_small_chats(tmp_path):
    done = study(tmp_path, DATA / "beam_small", DATA / "import" / "locomo_small.json",
                 plan(tmp_path, "beam_100k_1", ["beam_100k_1"], [0, "all"]))
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "flat_exact: ran" in done.stdout
    summary = check_report(tmp_path / "out", 2, {"knowledge_update", "contradiction_resolution", "abstention"})
    sizes = sorted(set(summary["size"]))
    assert sizes[0] == 0 and sizes[1] == 4 + 13          # the other chat's messages and LoCoMo's turns
    again = study(tmp_path, DATA / "beam_small", DATA / "import" / "locomo_small.json", tmp_path / "plan.yaml")
    assert "flat_exact: kept" in again.stdout and "mts: kept" in again.stdout    # a finished study resumes


def test_missing_inputs_are_one_line(tmp_path):
    done = study(tmp_path, tmp_path / "nowhere", DATA / "import" / "locomo_small.json", tmp_path / "p.yaml")
    assert done.returncode == 2 and "--beam" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.skipif(not (os.environ.get("MTSBENCH_BEAM") and os.environ.get("MTSBENCH_LOCOMO")),
                    reason="set MTSBENCH_BEAM (BEAM's chats or tarballs) and MTSBENCH_LOCOMO (locomo10.json)")
def test_one_real_chat_after_a_real_haystack(tmp_path):
    done = study(tmp_path, Path(os.environ["MTSBENCH_BEAM"]), Path(os.environ["MTSBENCH_LOCOMO"]),
                 plan(tmp_path, "beam_100k_10", ["beam_100k_10"], [0, 2000]))
    assert done.returncode == 0, done.stderr
    summary = check_report(tmp_path / "out", 2, CATEGORIES)
    mts = summary[(summary["run"] == "mts") & (summary["scope"] == "all")].set_index("size")
    assert mts.loc[2000, "memories_before"] > 2000 and mts.loc[0, "probes"] == mts.loc[2000, "probes"] > 0
