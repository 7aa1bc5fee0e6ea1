"""The belief study (issue 52), end to end on the small chats written for the tests (tests/data/beam_small):
the plan's runs, the model's part recorded against the fake server (``--record --server-url``) and then
replayed from the cassettes to the same report; with ``MTSBENCH_BEAM`` (a folder of BEAM's chats) a
dry run on one real chat (mock only, no haystack). Not the study's result: a proof that it runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from mtsbench.llm.testing import FakeOpenAI, extracting_answer
from mtsbench.studies.belief import Cassettes, adjusted, command

BEAM = Path(__file__).parent / "data" / "beam_small"
PLAN = yaml.safe_load((Path(__import__("mtsbench").__file__).parent / "studies" / "belief_plan.yaml").read_text())


def tiny_plan(tmp_path: Path, chats: list[str], sample: list[str]) -> Path:
    """The packaged plan on the hashing embedder, at haystack 0, over ``chats``."""
    plan = {**PLAN, "tune": chats[:1], "sizes": [0], "sample": sample, "embedder": []}
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def study(tmp_path: Path, beam: Path, plan: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtsbench.studies.belief", "--beam", str(beam), "--work",
                           str(tmp_path / "work"), "--out", str(tmp_path / "out"), "--cassettes",
                           str(tmp_path / "cassettes"), "--plan", str(plan), *extra],
                          capture_output=True, text=True, timeout=1800, cwd=tmp_path)


def test_the_study_records_the_model_then_rebuilds_from_its_cassettes(tmp_path):
    plan = tiny_plan(tmp_path, ["beam_100k_1", "beam_100k_2"], ["beam_100k_1"])
    with FakeOpenAI(answer=extracting_answer) as server:
        done = study(tmp_path, BEAM, plan, "--record", "--server-url", server.url)
        assert done.returncode == 0, done.stdout + done.stderr
        asked = len(server.requests)
    cassettes = tmp_path / "cassettes"
    recorded = sorted(p.name for p in cassettes.glob("*.jsonl"))
    assert recorded == ["extractor.jsonl", "flat_exact.jsonl", "mts.jsonl", "recency_only.jsonl", "silver.jsonl",
                        "silver_no_consolidation.jsonl"], recorded
    assert asked > 0 and all((cassettes / f"{n[:-6]}.wall.json").is_file() for n in recorded)
    first = {name: pd.read_csv(tmp_path / "out" / name) for name in ("summary.csv", "extraction.csv", "path.csv")}
    answered = first["summary.csv"].dropna(subset=["judged_correct"])
    assert set(answered["run"]) == {"flat_exact", "recency_only", "mts", "silver", "silver_no_consolidation"}
    assert (answered["judged_correct_n"] == answered["probes"]).all()      # every question answered and judged
    ex = first["extraction.csv"]
    assert list(ex["scenario"]) == ["beam_100k_1_h0"] and ex["model_facts"].iloc[0] > 0
    assert ex["oracle_contradictions"].iloc[0] == 2 and ex["statements_extracted"].iloc[0] >= 1
    report = (tmp_path / "out" / "report.md").read_text()
    for heading in ("## Targets", "## Per category at haystack 0 (all)", "## From consolidation to the probe's ranking",
                    "## The real extractor against the oracle", "## What the model cost"):
        assert heading in report, heading
    shutil.rmtree(tmp_path / "work" / "runs")        # offline: every run again, from the cassettes alone
    done = study(tmp_path, BEAM, plan)
    assert done.returncode == 0, done.stdout + done.stderr
    for name, frame in first.items():
        pd.testing.assert_frame_equal(frame, pd.read_csv(tmp_path / "out" / name), check_exact=False)


def test_without_cassettes_the_model_runs_are_left_out_and_said(tmp_path):
    plan = tiny_plan(tmp_path, ["beam_100k_1"], ["beam_100k_1"])
    done = study(tmp_path, BEAM / "100K" / "1", plan, "--only", "silver", "silver_no_consolidation", "extractor")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "extractor: left out (no cassette" in done.stdout
    report = (tmp_path / "out" / "report.md").read_text()
    assert "not run: extractor" in report and "No cassette recorded yet" in report
    path = pd.read_csv(tmp_path / "out" / "path.csv")
    assert set(path["probe"]) == {"q_knowledge_update_1", "q_contradiction_resolution_1"} and path["found"].all()


def test_missing_inputs_are_one_line(tmp_path):
    done = study(tmp_path, tmp_path / "nowhere", tiny_plan(tmp_path, ["beam_100k_1"], []))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--beam" in done.stderr


def test_mock_only_reads_no_cassette_and_drops_the_embedder(tmp_path):
    """--mock-only: a finished cassette is not replayed, the real extractor has no command, and the
    plan's embedder overrides are gone while its sizes follow --sizes."""
    plan = adjusted({**PLAN, "runs": PLAN["runs"]}, [0], True)
    (tmp_path / "flat_exact.jsonl").write_text("")
    (tmp_path / "extractor.jsonl").write_text("")
    folders = {k: tmp_path / k for k in ("beam", "default", "silver", "sample")}
    off, on = (Cassettes(tmp_path, False, "m", 1, off=o) for o in (True, False))
    runs = {r["name"]: r for r in plan["runs"]}
    cmd = command(runs["flat_exact"], plan, folders, tmp_path / "out", off)
    assert not any(c.startswith(("llm", "answer", "embedder=")) for c in cmd) and "haystack.messages=[0]" in cmd
    assert command(runs["extractor"], plan, folders, tmp_path / "out", off) is None
    assert any(c.startswith("llm.real.cassette=") for c in command(runs["flat_exact"], plan, folders, tmp_path, on))
    full = command(runs["flat_exact"], adjusted(PLAN, None, False), folders, tmp_path, on)
    assert "embedder=sentence_transformers" in full and "haystack.messages=[0,10000]" in full


@pytest.mark.skipif(not os.environ.get("MTSBENCH_BEAM"), reason="set MTSBENCH_BEAM to a folder of BEAM's chats")
def test_a_dry_run_on_one_real_chat(tmp_path):
    """A tiny slice of the real study: one 100K chat, no haystack, the mock only (no cassette)."""
    source = Path(os.environ["MTSBENCH_BEAM"])
    chat = next(p for p in sorted(source.rglob("chat.json")) if p.parent.parent.name.lower() == "100k").parent
    one = tmp_path / "beam" / "100K" / chat.name
    one.parent.mkdir(parents=True)
    shutil.copytree(chat, one)
    sid = f"beam_100k_{chat.name}"
    plan = tiny_plan(tmp_path, [sid], [sid])
    done = study(tmp_path, tmp_path / "beam", plan, "--mock-only", "--only", "flat_exact", "silver",
                 "silver_no_consolidation")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert summary["judged_correct"].isna().all()                   # the mock-only round answers nothing
    assert set(summary["category"]) == {"knowledge_update", "contradiction_resolution"}
    assert pd.read_csv(tmp_path / "out" / "path.csv")["facts"].sum() > 0
