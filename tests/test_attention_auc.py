"""Attention measured against what is later asked (mtsbench.evaluation.attention_auc): by hand and end to end."""

import json

import numpy as np
import pandas as pd

from mtsbench.evaluation.attention_auc import attention_block, later_evidence, roc_auc
from mtsbench.scenario.loader import load_scenario

SCENARIO = """\
id: auc_demo
title: Two turns a later question needs, two it does not
language: en
start: 2026-03-02T09:00:00
steps:
  - id: allergy
    at: d0 09:00
    say: "I'm allergic to milk, remember!"
    hints: {salience: 9}
  - id: train
    at: d0 10:00
    say: "The train was late again."
    hints: {salience: 2}
  - id: dentist
    at: d0 11:00
    say: "My dentist is Dr. Lee."
    hints: {salience: 6}
  - id: weather
    at: d0 12:00
    say: "Nice weather."
    hints: {salience: 7}
  - at: d1 09:00
    probe: "What is the user allergic to and who is their dentist?"
    expect: {recall: [allergy, dentist], k: 2}
  - id: late
    at: d1 10:00
    say: "I'm allergic to cats, too!"
"""


def test_roc_auc_matches_the_pairwise_definition():
    rng = np.random.default_rng(0)
    scores, labels = rng.integers(0, 11, 40).astype(float), rng.random(40) < 0.3
    pos, neg = scores[labels], scores[~labels]
    pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
    assert abs(roc_auc(scores, labels) - np.mean(pairs)) < 1e-12


def test_later_evidence_and_block_by_hand(tmp_path):
    path = tmp_path / "auc_demo.yaml"
    path.write_text(SCENARIO)
    scenario = load_scenario(path)
    assert later_evidence(scenario) == {"allergy": True, "train": False, "dentist": True, "weather": False,
                                        "late": False}        # 'late' comes after the only probe
    records = pd.DataFrame({"scenario": "auc_demo", "record": "observe",
                            "step": ["allergy", "train", "dentist", "weather", "late"],
                            "score": [9.0, 2.0, 6.0, 7.0, None]})
    block = attention_block(records, {"auc_demo": scenario})
    # pairs (evidence, other): 9>2, 9>7, 6>2, 6<7 -> 3 of 4
    assert (block["attention_auc"], block["turns"], block["evidence_turns"]) == (0.75, 4, 2)
    assert block["histogram"]["evidence"][9] == 1 and block["histogram"]["other"][2] == 1
    assert block["share_ge_8"] == 0.25


def test_run_reports_attention_auc(cli, tmp_path):
    path = tmp_path / "auc_demo.yaml"
    path.write_text(SCENARIO)
    out = tmp_path / "run"
    done = cli("run", f"scenarios=[{path}]", f"hydra.run.dir={out}")
    assert done.returncode == 0, done.stderr
    block = json.loads((out / "summary.json").read_text())["overall"]["attention"]
    assert block["turns"] == 5 and block["evidence_turns"] == 2 and 0.0 <= block["attention_auc"] <= 1.0
    assert "## Attention against what is later asked" in (out / "report.md").read_text()
    assert "attention AUC for later-asked evidence" in done.stdout
    bundled = tmp_path / "bundled"        # no scenario with evidence of a later question: no block
    done = cli("run", "scenarios=[noisy_belief]", f"hydra.run.dir={bundled}")
    assert done.returncode == 0, done.stderr
    assert "attention" not in json.loads((bundled / "summary.json").read_text())["overall"]
