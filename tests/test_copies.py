"""The output-side check of ``mtsbench calibrate``: answers that copy a prompt's example (issue 27)."""

import json

import pytest

from mtsbench.evaluation.copies import copied
from mtsbench.llm.tasks import REGISTRY

# a model that copies the examples: the mock answers from these hints, as Qwen2.5-Coder-1.5B did
COPYING = """id: copying
title: An answerer that copies the prompts' examples
language: en
start: 2026-03-02T09:00:00
steps:
  - id: flight
    at: d0 09:00
    say: "We fly to Lisbon on Friday for a week."
    hints:
      salience: 5
      event: {category: course.flight, text: The family flies to Lisbon, valid: 14d}
      infer:
        - {key: user.weather, text: Muddy boots by the door suggest the user walked in the rain, belief: 1.0, ttl: 2d}
  - id: lunch
    at: d0 12:00
    say: "Lunch was a bowl of noodles."
    hints:
      salience: 2
      infer:
        - {key: user.food, text: The user likes noodles, belief: 0.6, ttl: 30d}
"""


@pytest.mark.parametrize("answer, example, source, expected", [
    ("Muddy boots by the door: a walk", "muddy boots by the door", "", True),
    ("The user walked in the rain", "muddy boots by the door", "", False),
    ("The boots were muddy after the trail", "muddy boots by the door", "my boots got muddy on the trail", False),
    ("course.flight", "course.sailing", "We fly to Lisbon", True),
    ("course.pottery", "course.sailing", "I signed up for a pottery course", False),
    ("user.skill.chess", "user.skill.chess", "I like board games", True),
    ("user.skill.cooking", "user.skill.chess", "I cook", False),
    ("门口沾泥的靴子说明下过雨", "门口沾泥的靴子", "今天下雨", True),
])
def test_an_answer_copies_an_example_only_with_what_its_scenario_does_not_say(answer, example, source, expected):
    assert copied(answer, example, source) is expected


def test_a_trace_without_answers_counts_nothing():
    import pandas as pd

    from mtsbench.evaluation.copies import answers, count

    said = answers(pd.DataFrame({"scenario": ["s"], "t": [0.0], "event": ["scored"]}))
    assert list(said.columns) == ["scenario", "task", "what", "answer"] and said.empty
    assert count(said, pd.DataFrame(columns=["scenario", "task", "what", "answer", "example"])) == {}


def test_the_tasks_name_the_examples_their_prompts_showed():
    assert "muddy boots by the door" in REGISTRY["infer"].examples
    assert "course.sailing" in REGISTRY["summarize"].examples


def test_calibrate_counts_the_copies_per_task(tmp_path, cli):
    import mtsbench

    scenario = tmp_path / "copying.yaml"
    scenario.write_text(COPYING, encoding="utf-8")
    copying = mtsbench.run(overrides=[f"scenarios=[{scenario}]"], out=tmp_path / "copying")
    clean = mtsbench.run(overrides=["scenarios=[milk_allergy]"], out=tmp_path / "clean")
    r = cli("calibrate", clean.path, copying.path, "--out", tmp_path / "cal")
    assert r.returncode == 0, r.stderr
    c = json.loads((tmp_path / "cal" / "calibration.json").read_text())["copies"]
    assert c["b"]["infer"]["copies"] >= 1 and c["b"]["infer"]["examples"].get("muddy boots by the door", 0) >= 1
    assert c["b"]["summarize"]["examples"] == {"course.sailing": 1}     # the course.flight category
    assert all(t["copies"] == 0 for t in c["a"].values())               # the mock on a bundled scenario copies none
    md = (tmp_path / "cal" / "calibration.md").read_text()
    assert "| copies a prompt example | A | B |" in md and "'muddy boots by the door'" in md
