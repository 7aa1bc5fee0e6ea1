"""``mtsbench calibrate A B``: two runs compared task by task, from their saved files."""

import json

import pandas as pd
import pytest

from mtsbench.calibration.calibrate import attention_scores, event_decisions, fact_matches, spearman

SCENARIOS = ["scenarios=[milk_allergy,disneyland_twice,cold_then_fever]"]


def test_spearman_by_hand():
    # ranks of a: 1 2 3 4; of b: 2 1 3 4 -> pearson of the ranks = 0.8
    assert spearman(pd.Series([1.0, 2.0, 3.0, 4.0]), pd.Series([5.0, 4.0, 6.0, 9.0])) == pytest.approx(0.8)
    assert spearman(pd.Series([1.0, 1.0, 1.0]), pd.Series([1.0, 2.0, 3.0])) is None    # a constant side


def test_facts_match_by_key_or_by_text_on_a_shared_step():
    a = pd.DataFrame({"scenario": ["s"] * 3, "steps": [("t1",), ("t2",), ("t3",)],
                      "key": ["user.pet", "", ""],
                      "text": ["Kim has a cat.", "Kim rides a red bicycle to work.", "Kim lives in Oslo."]})
    b = pd.DataFrame({"scenario": ["s"] * 3, "steps": [("t9",), ("t2",), ("t1",)],
                      "key": ["user.pet", "", "x.y"],
                      "text": ["A cat lives with Kim.", "Kim rides her red bicycle to work!", "Oslo is cold."]})
    # a0-b0 by key; a1-b1 by text on t2; a2 unmatched; b2 shares t1 with a0 but not its text
    assert fact_matches(a, b, 0.75) == (2, 2)


def trace(rows):
    return pd.DataFrame([{"scenario": "s", **r} for r in rows])


def test_attention_and_event_decisions_are_matched_by_step():
    t = trace([{"event": "created", "id": 0, "kind": "turn", "steps": ["a"]},
               {"event": "scored", "id": 0, "score": 7.0},
               {"event": "created", "id": 1, "kind": "summary", "steps": ["a", "b"]},
               {"event": "scored", "id": 1, "score": 3.0},
               {"event": "event", "id": 2, "joined": False, "steps": ["a"]},
               {"event": "event", "id": 2, "joined": True, "steps": ["a", "b"]}])
    assert attention_scores(t)[["step", "score"]].values.tolist() == [["a", 7.0]]    # observed items only
    assert event_decisions(t)[["step", "joined"]].values.tolist() == [["a", False], ["b", True]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import mtsbench

    root = tmp_path_factory.mktemp("calibrate")
    clean = mtsbench.run(overrides=SCENARIOS, out=root / "clean")
    noisy = mtsbench.run(overrides=[*SCENARIOS, "llm.noise=0.3", "seed=3"], out=root / "noisy")
    return root, clean.path, noisy.path


def test_a_run_agrees_with_itself(runs, cli):
    root, clean, _ = runs
    r = cli("calibrate", clean, clean, "--out", root / "self")
    assert r.returncode == 0, r.stderr
    c = json.loads((root / "self" / "calibration.json").read_text())
    assert c["attention"]["spearman"] == 1.0 and c["attention"]["mean_abs_diff"] == 0.0
    assert c["facts"]["precision"] == c["facts"]["recall"] == 1.0 and c["facts"]["a"] > 0
    assert c["events"]["agreement"] == 1.0 and c["events"]["both"] > 0
    assert c["impressions"]["agreement"] == 1.0 and c["impressions"]["belief_mean_abs_diff"] == 0.0
    assert c["expectations"]["a_only"] == c["expectations"]["b_only"] == 0
    assert (root / "self" / "attention.png").stat().st_size > 0
    assert "| attention (rate_attention) |" in r.stdout


def test_a_noisy_judge_is_measured_as_such(runs, cli):
    root, clean, noisy = runs
    r = cli("calibrate", clean, noisy, "--out", root / "noisy_vs_clean")
    assert r.returncode == 0, r.stderr
    c = json.loads((root / "noisy_vs_clean" / "calibration.json").read_text())
    assert 0.0 < c["attention"]["mean_abs_diff"] and c["attention"]["spearman"] < 1.0
    assert c["impressions"]["belief_mean_abs_diff"] > 0.0


def test_a_folder_that_is_not_a_run_is_one_line(tmp_path, cli):
    r = cli("calibrate", tmp_path, tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
