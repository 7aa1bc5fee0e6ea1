"""The frontier study at scale (``python -m mtsbench.studies.frontier_beam``, issue 55): its split of
BEAM's chats, its plan, and the whole study end to end on chats written for the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from mtsbench.core.resources import CONFIG_DIR
from mtsbench.studies.frontier_beam import haystack, load_plan, split

DATA = Path(__file__).parent / "data"
VECTOR = "tune.objectives=[overall.evidence.recall@1024t,cost.overall.index_work_per_turn]"


def test_targets_split_into_tuning_and_held_out_chats_and_the_rest_is_haystack(tmp_path):
    beam = tmp_path / "beam"
    beam.mkdir()
    for name in ("beam_100k_1", "beam_100k_2", "beam_100k_3", "beam_500k_1"):
        (beam / f"{name}.yaml").write_text(f"id: {name}\n")
    plan = {"targets": "beam_100k_", "tune": ["beam_100k_2"]}
    folders = split(plan, beam, tmp_path / "work")
    names = {k: sorted(p.stem for p in v.glob("*.yaml")) for k, v in folders.items()}
    assert names == {"tune": ["beam_100k_2"], "held_out": ["beam_100k_1", "beam_100k_3"], "haystack": ["beam_500k_1"]}
    with pytest.raises(SystemExit, match="no target chat beam_100k_9"):
        split({**plan, "tune": ["beam_100k_9"]}, beam, tmp_path / "work")
    with pytest.raises(SystemExit, match="none is left to hold out"):
        split({**plan, "tune": ["beam_100k_1", "beam_100k_2", "beam_100k_3"]}, beam, tmp_path / "work")


def test_the_packaged_plan_holds_the_design_against_an_hnsw_index_with_one_embedder(tmp_path):
    plan = load_plan()
    roles = {s["name"]: s["role"] for s in plan["systems"]}
    assert roles["mts"] == "design" and roles["flat_hnsw"] == "rival" and plan["tune_size"] >= 10000
    for s in plan["systems"]:
        assert (Path(CONFIG_DIR) / "experiment" / f"{s['experiment']}.yaml").is_file()
        if s["name"] != "bm25":
            assert any("sentence_transformers" in str(o) for o in s["overrides"]), s["name"]
    bad = tmp_path / "p.yaml"
    bad.write_text(yaml.safe_dump({**plan, "systems": [s for s in plan["systems"] if s["role"] != "rival"]}))
    with pytest.raises(SystemExit, match="one with role rival"):
        load_plan(bad)
    bad.write_text(yaml.safe_dump({**plan, "tune_size": 5000}))
    with pytest.raises(SystemExit, match="tune_size: expected a number of messages among sizes"):
        load_plan(bad)


def test_every_packaged_system_composes_in_both_phases(tmp_path):
    """Each system's tuning and held-out overrides are a valid configuration (a bad one would stop
    the study at that system, hours in)."""
    from mtsbench.config.composition import compose_full
    from mtsbench.studies.beam import flat

    plan = load_plan()
    folders = {"haystack": tmp_path, "locomo": tmp_path}
    for s in plan["systems"]:
        for sizes in ([plan["tune_size"]], plan["sizes"]):
            cfg = compose_full([f"experiment={s['experiment']}", *flat(plan.get("common") or []),
                                *flat(s.get("overrides") or []), *haystack(folders, sizes)])
            assert list(cfg.haystack.messages) == sizes, s["name"]


def _study(tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtsbench.studies.frontier_beam", "--beam", str(DATA / "beam_small"),
                           "--locomo", str(DATA / "import" / "locomo_small.json"), "--work", str(tmp_path / "work"),
                           "--out", str(tmp_path / "out"), "--plan", str(tmp_path / "plan.yaml")],
                          capture_output=True, text=True, timeout=1800)


def test_the_study_runs_end_to_end_on_small_chats(tmp_path):
    pytest.importorskip("optuna")
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump({
        "targets": "beam_100k_", "tune": ["beam_100k_1"], "tune_size": 5, "sizes": [5, "all"], "trials": 2,
        "common": ["evaluation.recall_at_tokens=[256,512,1024,2048,4096,8192]", "retrieval=hybrid"],
        "systems": [
            {"name": "mts", "experiment": "frontier_mts", "role": "design",
             "overrides": ["hydra.sweeper.params.embedder=hashing", "hydra.sweeper.params.retrieval=hybrid", VECTOR]},
            {"name": "flat_hnsw", "experiment": "frontier_hnsw", "role": "rival",
             "overrides": ["embedder=hashing", "hydra.sweeper.params.retrieval=hybrid", "index.exact_below=4", VECTOR]}]}))
    done = _study(tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    points = pd.read_csv(out / "summary.csv")
    assert set(points["system"]) == {"mts", "flat_hnsw"}
    assert sorted(set(points["size"])) == [5, 13]        # all: LoCoMo's 13 turns; no target chat is haystack
    assert points["recall"].between(0, 1).all() and (points["index_work"] > 0).all() and (points["scored"] > 0).all()
    assert (points["work"] == points["index_work"]).all()           # the measure both searches minimised
    report = (out / "report.md").read_text()
    for section in ("## The question, at the full haystack (13 messages)", "## How each point moves",
                    "## From tuning to held-out chats", "## Per BEAM category at 13 messages"):
        assert section in report
    assert "index_work_per_turn" in report
    for figure in ("fronts_5.png", "fronts_13.png", "slopes.png"):
        assert (out / figure).stat().st_size > 5000 and f"({figure})" in report
    again = _study(tmp_path)                                       # a finished study resumes and runs nothing
    assert again.returncode == 0, again.stderr
    assert "0 run(s)" in (tmp_path / "work" / "logs" / "mts_held_out.log").read_text().split("$ ")[-1]
    assert pd.read_csv(out / "summary.csv").equals(points)
