"""Checks that name their subject by provenance (issue 15): ``belief: {from: STEP}``,
``conjecture: {from: [STEP, ...]}``, ``event_count: {containing: STEP}``.

A real LLM names keys and categories its own way; these forms name the fact, conjecture or
events by the steps they were derived from instead. Each form passes and fails on a small
scenario written here (run in-process under the reference configuration), a malformed form
is one loader line, the key forms still work as before, and the bundled scenarios converted
to the provenance forms pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mtsbench.config.composition import compose
from mtsbench.harness.runner import run_scenario
from mtsbench.scenario import ScenarioError, load_scenario
from mtsbench.scenario.model import BeliefCheck, ConjectureCheck, EventCountCheck

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# One session, summarized by the night's idle: a fact stated by `allergy` (under a key no
# expectation below names), two impressions of a cold from `cough` and `fever` (0.5 and 0.6:
# noisy-or 0.8, past the 0.7 threshold, so a conjecture forms at `fever`), a weak impression
# from `allergy` alone (0.3: none), an event told by `trip`; `weather` states nothing.
HEAD = """\
id: prov
title: Provenance checks
language: en
start: 2026-03-02T09:00:00
steps:
  - id: allergy
    at: d0 09:00
    say: "I'm allergic to milk, even a drop makes me ill."
    hints:
      salience: 8
      facts: [{key: llm.chose.this, text: The user is allergic to milk, value: true, belief: 0.9}]
      infer: [{key: user.cautious, text: The user is cautious about food, belief: 0.3, ttl: 7d}]
  - id: cough
    at: d0 09:05
    say: "I have been coughing all day."
    hints: {salience: 4, infer: [{key: illness.x, text: The user may have a cold, belief: 0.5, ttl: 7d}]}
  - id: fever
    at: d0 09:10
    say: "And now I have a fever too."
    hints: {salience: 5, infer: [{key: illness.x, text: The user may have a cold, belief: 0.6, ttl: 7d}]}
  - id: trip
    at: d0 09:15
    say: "We fly to Rome on Friday."
    hints: {salience: 6, event: {category: travel.whatever, text: A trip to Rome on Friday, valid: 14d}}
  - id: weather
    at: d0 09:20
    say: "Nice weather today."
    hints: {salience: 2}
  - id: question
    at: d0 09:25
    probe: "What is the user allergic to?"
    expect: {recall: [allergy]}
  - {at: d0 23:00, idle: 8h}
"""

# (check name, mapping, passes under the reference configuration, value shown)
CASES = [
    ("belief", {"from": "allergy", "min": 0.8}, True, 0.9),
    ("belief", {"from": "allergy", "max": 0.5}, False, 0.9),
    ("belief", {"from": "allergy", "value": True, "min": 0.8, "max": 1}, True, 0.9),
    ("belief", {"from": "allergy", "value": False}, False, "no live fact from allergy"),
    ("belief", {"from": "weather"}, False, "no live fact from weather"),
    ("belief", {"from": "cough", "max": 1}, False, "no live fact from cough"),
    ("belief", {"key": "llm.chose.this", "min": 0.8}, True, 0.9),               # the key form, unchanged
    ("belief", {"key": "user.allergy.milk"}, False, None),
    ("conjecture", {"from": ["cough", "fever"]}, True, True),
    ("conjecture", {"from": "fever"}, True, True),                                # one step, no list
    ("conjecture", {"from": ["cough", "fever"], "present": False}, False, True),
    ("conjecture", {"from": ["allergy"]}, False, False),                          # 0.3: no conjecture
    ("conjecture", {"from": ["allergy"], "present": False}, True, False),
    ("conjecture", {"from": ["allergy", "cough", "fever"]}, False, False),        # every step must support it
    ("conjecture", {"key": "illness.x"}, True, True),                             # the key form, unchanged
    ("event_count", {"containing": "trip", "equals": 1}, True, 1),
    ("event_count", {"containing": "trip", "equals": 0}, False, 1),
    ("event_count", {"containing": "weather", "equals": 0}, True, 0),
    ("event_count", {"containing": ["trip", "weather"], "equals": 1}, True, 1),  # any of them, each event once
    ("event_count", {"category": "travel.whatever", "equals": 1}, True, 1),       # the category form, unchanged
]


def scenario_text(checks: dict) -> str:
    """HEAD and one check step with ``checks`` ({name: mapping or list of mappings})."""
    return HEAD + "  - at: d1 09:00\n    check: " + yaml.safe_dump(checks, default_flow_style=True, width=10_000)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prov.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def check_rows(tmp_path_factory) -> list[dict]:
    """The check rows of one run of HEAD with every case as a check (in CASES order)."""
    checks: dict[str, list] = {}
    for name, spec, _, _ in CASES:
        checks.setdefault(name, []).append(spec)
    scenario = load_scenario(write(tmp_path_factory.mktemp("prov"), scenario_text(checks)))
    cfg, _ = compose([])
    rows = [r for r in run_scenario(cfg, scenario).rows if r["kind"] == "check"]
    by_name = {name: [r for r in rows if r["check"] == name] for name in checks}
    return [by_name[name].pop(0) for name, *_ in CASES]


@pytest.mark.parametrize("n", range(len(CASES)), ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_each_form_passes_and_fails(check_rows, n):
    name, spec, passes, value = CASES[n]
    row = check_rows[n]
    assert (row["check"], row["passed"], row["value"]) == (name, passes, value), row


def test_the_expected_column_names_the_steps(check_rows):
    expected = [r["expected"] for r in check_rows]
    assert expected[0] == "from allergy >= 0.8"
    assert expected[2] == "from allergy=True [0.8, 1]"
    assert expected[8] == "from [cough, fever] present=True"
    assert expected[9] == "from fever present=True"
    assert expected[15] == "containing trip == 1"
    assert expected[18] == "containing [trip, weather] == 1"
    assert expected[6] == "llm.chose.this >= 0.8" and expected[19] == "travel.whatever == 1"


def test_the_loader_keeps_the_steps(tmp_path):
    checks = {"belief": {"from": "allergy", "min": 0.5}, "conjecture": {"from": ["cough", 7, "cough"]},
              "event_count": {"containing": "trip", "equals": 1}}
    text = scenario_text(checks).replace("id: weather", "id: 7")
    got = load_scenario(write(tmp_path, text)).steps[-1].checks
    assert got == (BeliefCheck(None, None, 0.5, None, "allergy"), ConjectureCheck(None, True, ("cough", "7")),
                   EventCountCheck(None, 1, ("trip",)))


BAD = {  # check mapping -> the loader's message after "step 7 (s7): "
    "{belief: {key: a.b, from: allergy}}": "check.belief: give either 'key' or 'from', not both",
    "{belief: {key: null, from: allergy}}": "check.belief.key: expected non-empty text, got None",
    "{belief: {min: 0.5}}": "check.belief: expected 'key: KEY' (the facts' key) or 'from: STEP' "
                            "(the step that stated the fact)",
    "{belief: [{from: allergy}, {value: true}]}": "check.belief[1]: expected 'key: KEY' (the facts' key) or "
                                                  "'from: STEP' (the step that stated the fact)",
    "{conjecture: {present: false}}": "check.conjecture: expected 'key: KEY' (the conjecture's key) or "
                                      "'from: [STEP, ...]' (the steps whose impressions formed it)",
    "{conjecture: {key: a, from: [cough]}}": "check.conjecture: give either 'key' or 'from', not both",
    "{event_count: {equals: 1}}": "check.event_count: expected 'category: CATEGORY' or 'containing: STEP' "
                                  "(a step that told of the events)",
    "{event_count: {category: c, containing: trip, equals: 1}}":
        "check.event_count: give either 'category' or 'containing', not both",
    "{event_count: {containing: trip}}": "check.event_count.equals: missing (required)",
    "{belief: {from: alergy}}": "check.belief.from: refers to unknown step 'alergy'; did you mean 'allergy'?",
    "{belief: {from: [allergy]}}": "check.belief.from: expected non-empty text, got ['allergy']",
    "{belief: {from: question}}": "check.belief.from: refers to step 'question', a probe step that is not "
                                  "observed, so nothing is derived from it; expected a say, reply or perceive step",
    "{belief: {from: s6}}": "check.belief.from: refers to step 's6', an idle step that leaves no memory; "
                            "expected a say, reply or perceive step",
    "{conjecture: {from: [cough, fevr]}}": "check.conjecture.from[1]: refers to unknown step 'fevr'; "
                                           "did you mean 'fever'?",
    "{conjecture: {from: []}}": "check.conjecture.from: expected a step id or a non-empty list of step ids "
                                "such as [cough, fever], got []",
    "{conjecture: {from: null}}": "check.conjecture.from: expected a step id or a non-empty list of step ids "
                                  "such as [cough, fever], got None",
    "{event_count: {containing: [trip, later], equals: 1}}":
        "check.event_count.containing[1]: refers to step 'later' that comes later; expected an earlier step",
    "{event_count: {containing: s7, equals: 1}}":
        "check.event_count.containing: refers to this step 's7' itself; expected an earlier step",
}


@pytest.mark.parametrize("check", list(BAD), ids=range(len(BAD)))
def test_a_bad_form_is_one_loader_line(tmp_path, check):
    text = HEAD + f"  - at: d1 09:00\n    check: {check}\n  - {{id: later, at: d1 10:00, say: Bye.}}\n"
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: step 7 (s7): {BAD[check]}"


def test_the_schema_refuses_both_and_neither(schema_valid):
    def valid(check: dict) -> bool:
        doc = yaml.safe_load(scenario_text(check))
        doc["start"] = "2026-03-02T09:00:00"           # as an editor reads it: text, not a datetime
        return schema_valid(doc)

    assert valid({"belief": {"from": "allergy", "min": 0.5}})
    assert valid({"conjecture": {"from": ["cough", "fever"]}, "event_count": {"containing": "trip", "equals": 1}})
    assert not valid({"belief": {"key": "a", "from": "allergy"}})
    assert not valid({"belief": {"min": 0.5}})
    assert not valid({"conjecture": {"present": True}})
    assert not valid({"event_count": {"category": "c", "containing": "trip", "equals": 1}})
    assert not valid({"conjecture": {"from": []}})


# the bundled checks converted to the provenance forms: scenario -> how many of its checks use them
CONVERTED = {"cold_then_fever": 2, "cold_then_fever_zh": 2, "contradiction": 5, "disneyland_twice": 1,
             "disneyland_twice_zh": 1, "flu_fades": 1, "milk_allergy": 1, "milk_allergy_zh": 1,
             "noisy_belief": 11, "personality": 2}


def provenance_checks(scenario) -> list:
    return [c for s in scenario.steps for c in s.checks
            if getattr(c, "from_", None) or getattr(c, "containing", None)]


@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_bundled_scenarios_use_the_provenance_forms(name):
    scenario = load_scenario(SCENARIOS / f"{name}.yaml")
    assert len(provenance_checks(scenario)) == CONVERTED[name]
    keyed = [c for c in provenance_checks(scenario) if getattr(c, "key", None) or getattr(c, "category", None)]
    assert keyed == []


def test_the_converted_bundled_scenarios_pass(cli):
    paths = [SCENARIOS / f"{name}.yaml" for name in sorted(CONVERTED)]
    done = cli("check", *paths)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"in {len(paths)} scenarios" in done.stdout
