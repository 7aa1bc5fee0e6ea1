"""False recall of abstaining probes: the best score an unanswerable question returned,
against ``evaluation.abstain_threshold`` (``mtsbench.evaluation.evidence``)."""

import json

import pandas as pd

from mtsbench.evaluation import evidence
from mtsbench.scenario.model import Expect, Step

SCENARIO = """\
id: abstain_demo
title: One answerable and one unanswerable question
language: en
start: 2026-03-02T09:00:00
steps:
  - id: allergy
    at: d0 09:00
    say: "I'm allergic to milk."
    hints: {salience: 8}
  - id: train
    at: d0 10:00
    say: "The train was late again."
    hints: {salience: 3}
  - at: d1 09:00
    probe: "Is milk a risk for the user?"
    expect: {recall: [allergy], k: 2}
  - at: d1 09:05
    probe: "What is the name of the user's dentist?"
    abstain: true
    expect: {k: 2}
"""


def probe(abstain):
    return Step(9, "q", 0.0, "probe", "?", abstain=abstain, expect=Expect())


def test_abstain_score_is_the_best_used_score_of_abstaining_probes_only():
    got = evidence.probe_fields(probe(True), [("a",), ("b",)], (5,), used_scores=[0.61, 0.7])
    assert got["abstain_score"] == 0.7
    assert evidence.probe_fields(probe(False), [("a",)], (5,), used_scores=[0.9])["abstain_score"] is None
    assert evidence.probe_fields(probe(True), [], (5,), used_scores=[])["abstain_score"] is None   # returned nothing
    assert "abstain_score" not in evidence.probe_fields(probe(True), [], ())                        # no depths
    assert evidence.probe_fields(probe(False), [("a",)], (5,), used_relevance=[0.2, 0.4])["top_relevance"] == 0.4


def test_false_recall_by_hand():
    frame = pd.DataFrame({"check": "probe", "category": ["x", "x", "y", "y"], "abstain": [True, True, True, None],
                          "recall@5": [None, None, None, 1.0], "session_recall@5": None, "scored": 3,
                          "abstain_score": [0.8, 0.4, None, None]})
    out = evidence.summarize(frame, (5,), (), abstain_threshold=0.5)
    assert (out["abstain"], out["false_recall"], out["abstain_threshold"]) == (3, 0.3333, 0.5)
    assert out["by_category"]["x"]["false_recall"] == 0.5 and out["by_category"]["y"]["false_recall"] == 0.0
    assert evidence.summarize(frame, (5,), (), abstain_threshold=0.3)["false_recall"] == 0.6667
    assert evidence.summarize(frame[frame["abstain"].isna()], (5,), ())["false_recall"] is None
    assert "false recall of the 3 abstaining probes: 0.333" in evidence.console(out)


def test_run_reports_false_recall_at_the_configured_threshold(cli, tmp_path):
    path = tmp_path / "abstain_demo.yaml"
    path.write_text(SCENARIO)
    rates = []
    for threshold in (0.0, 5.0):
        out = tmp_path / f"run{threshold}"
        done = cli("run", f"scenarios=[{path}]", f"evaluation.abstain_threshold={threshold}", f"hydra.run.dir={out}")
        assert done.returncode == 0, done.stderr
        ev = json.loads((out / "summary.json").read_text())["overall"]["evidence"]
        rates.append(ev["false_recall"])
        metrics = pd.read_csv(out / "metrics.csv")
        probes = metrics[metrics["check"] == "probe"]
        assert probes["abstain_score"].notna().sum() == 1      # the abstaining probe only
        # relevance alone (no attention term) for every probe: at most the score, which adds attention
        assert probes["top_relevance"].notna().all()
        abstaining = probes[probes["abstain_score"].notna()].iloc[0]
        assert abstaining["top_relevance"] <= abstaining["abstain_score"] + 1e-9
    assert rates == [1.0, 0.0]     # it returned something (any score >= 0); nothing scores 5
