"""The ``motivation`` group: a probe's solving motivation, given or from its labelled attention."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import mtsbench
from mtsbench.mechanisms.motivation import FromAttention, Given

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "scenarios" / "solving_motivation.yaml"
scores = st.floats(0.0, 10.0, allow_nan=False)


@given(scores, scores, st.integers(0, 5), st.floats(0.0, 1.0))
def test_from_attention_is_monotone_and_bounded(a, b, repeats, given_):
    p = FromAttention(low=1.0, high=9.0, repeat_boost=0.25)
    lo, hi = sorted((a, b))
    assert 0.0 <= p.solve(given_, lo, repeats) <= p.solve(given_, hi, repeats) <= 1.0
    assert p.solve(given_, lo, repeats) <= p.solve(given_, lo, repeats + 1)


def test_policies_by_hand():
    p = FromAttention(low=2.0, high=6.0, repeat_boost=0.1)
    assert p.solve(0.9, 3.0, 0) == pytest.approx(0.25)        # (3 - 2) / (6 - 2)
    assert p.solve(0.9, 3.0, 2) == pytest.approx(0.45)        # + 2 * 0.1
    assert p.solve(0.9, 1.0, 0) == 0.0 and p.solve(0.0, 7.0, 3) == 1.0
    assert Given().solve(0.7, 9.0, 4) == 0.7                  # the scenario's number, whatever the score
    assert Given(repeat_boost=0.2).solve(0.7, None, 1) == pytest.approx(0.9)


@pytest.mark.xfail(strict=True, reason="regression of the arousal repair (issue 36), open: with hashing, perceived "
                   "arousal keeps lifting generic turns ('... late again', '... broken again'); the casual question "
                   "associates with them and is labelled 8.1, so it searches every tier (passes with "
                   "arousal.perceived=false)")
def test_important_question_reaches_deep_because_of_its_attention(cli):
    """Neither probe scripts a motivation; only labelling them separates the two."""
    solved = cli("check", EXAMPLE, "motivation=from_attention")
    assert solved.returncode == 0, solved.stdout + solved.stderr
    scripted = cli("check", EXAMPLE)                          # motivation=given: both at 0.5
    assert scripted.returncode == 1
    assert "| solving_motivation | 28 | important | recall |" in scripted.stdout


SCENARIO = """\
id: asked_twice
title: The same question twice in a minute, then once more a day later
language: en
start: 2026-01-05T08:00:00
steps:
  - {id: code, at: d0 09:00, say: "The door code of the studio is 7781.", hints: {salience: 3}}
  - {id: first, at: d0 10:00, probe: "What is the door code of the studio?", motivation: 0.3, expect: {recall: [code]}}
  - {id: again, at: d0 10:01, probe: "What is the door code of the studio?", motivation: 0.3, expect: {recall: [code]}}
  - {id: later, at: d1 10:00, probe: "What is the door code of the studio?", motivation: 0.3, expect: {recall: [code]}}
"""


def motivations(tmp_path, *overrides):
    path = tmp_path / "asked_twice.yaml"
    path.write_text(SCENARIO)
    run = mtsbench.run(overrides=[f"scenarios=[{path}]", *overrides], out=tmp_path / "out")
    trace = run.trace
    rows = trace[trace["event"] == "motivation"]
    retrievals = run.results[run.results["record"] == "probe"]
    return rows, retrievals


def test_a_repeated_question_is_raised_and_labelling_is_counted(tmp_path):
    rows, probes = motivations(tmp_path, "motivation.repeat_boost=0.3")
    assert list(rows["repeats"]) == [0, 1, 0]                 # a day later is outside the 1h window
    assert list(rows["motivation"]) == pytest.approx([0.3, 0.6, 0.3])
    assert list(probes["association_scored"]) == [0, 0, 0]   # given: the probe is not labelled


def test_from_attention_labels_the_probe_and_counts_its_association_search(tmp_path):
    rows, probes = motivations(tmp_path, "motivation=from_attention")
    assert rows["score"].notna().all()
    assert (probes["association_scored"] > 0).all()
    assert (probes["llm_calls"] == 1).all()                   # one rate_attention call per probe


def test_high_must_exceed_low(cli):
    r = cli("check", EXAMPLE, "motivation=from_attention", "motivation.low=5", "motivation.high=5")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "motivation.high" in r.stderr
