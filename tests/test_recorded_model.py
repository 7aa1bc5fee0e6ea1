"""The real-model path, offline: ``llm=recorded`` replays the packaged cassette (a 1.5B
instruct model recorded with ``llm=local``) and must reproduce the committed metrics.

``tests/data/recorded/metrics.csv`` is the replayed run's ``metrics.csv`` (every check,
probe and LLM count of every recorded scenario). A change that alters what memory does with
the real model's answers fails here; if the change is intended, regenerate it::

    mtsbench run llm=recorded "scenarios=[SCENARIOS]" hydra.run.dir=/tmp/rec
    cp /tmp/rec/metrics.csv tests/data/recorded/metrics.csv

A change to a prompt makes every affected request miss the cassette: re-record it with
``llm=local`` (docs/llm.md, "The packaged cassette").
"""

import json
from pathlib import Path

import pandas as pd

from mtsbench.evaluation.evaluate import WALL_CLOCK_COLUMNS
from mtsbench.llm.cassette import read
from mtsbench.core.resources import CASSETTE_DIR

GOLDEN = Path(__file__).parent / "data" / "recorded" / "metrics.csv"
CASSETTE = CASSETTE_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.jsonl"
CHECKER_CALLS = 6                   # the component checker's requests (recordings/checker.jsonl: one per task)


def test_the_recorded_model_reproduces_the_committed_metrics(cli, tmp_path):
    golden = pd.read_csv(GOLDEN)
    scenarios = list(dict.fromkeys(golden["scenario"]))
    r = cli("run", "llm=recorded", f"scenarios=[{','.join(scenarios)}]", f"hydra.run.dir={tmp_path}/run", timeout=600)
    assert r.returncode == 0, r.stderr
    got = pd.read_csv(tmp_path / "run" / "metrics.csv")
    pd.testing.assert_frame_equal(got.drop(columns=WALL_CLOCK_COLUMNS), golden.drop(columns=WALL_CLOCK_COLUMNS))

    # every recorded request is asked exactly once: the cassette holds this run's requests (its calls
    # and their re-sent requests: a repair is one) and the checker's calls
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    records = read(CASSETTE)
    overall = summary["overall"]
    assert overall["llm_calls"] + overall["llm_retries"] == len(records) - CHECKER_CALLS
    assert summary["overall"]["llm_failures"] == sum("error" in rec for rec in records)
    assert {rec["model"] for rec in records} == {"qwen2.5-coder-1.5b-instruct-q4_k_m"}


def test_a_dialogue_the_recording_does_not_hold_fails_in_one_line(cli, tmp_path):
    scenario = tmp_path / "unrecorded.yaml"
    scenario.write_text("id: unrecorded\ntitle: An orchid\nlanguage: en\nstart: 2026-03-02T09:00:00\nsteps:\n"
                        "  - {id: s1, at: d0 09:00, say: The orchid on the windowsill has a new bud.}\n")
    r = cli("run", "llm=recorded", f"scenarios=[{scenario}]", f"hydra.run.dir={tmp_path}/run")
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "no recorded answer in cassette" in lines[0] and "Traceback" not in r.stderr


def test_an_unknown_cassette_names_the_packaged_ones(cli, tmp_path):
    r = cli("run", "llm=recorded", "llm.cassette=nosuch", "scenarios=[milk_allergy]", f"hydra.run.dir={tmp_path}/run")
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert "cassette nosuch does not exist (nor is it a packaged cassette: qwen2.5-coder-1.5b-instruct-q4_k_m)" \
        in r.stderr
