"""The scenario format: a full valid file, one malformed file per error class, the commands."""

import copy
import re
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtsbench.scenario import (BeliefCheck, ConjectureCheck, EventCountCheck, EventExpect, EventTag, Expect,
                               Fact, Hints, Impression, Range, ScenarioError, StepAttentionCheck, TierCheck,
                               bundled_dir, describe, load_scenario, resolve)
from mtsbench.scenario.commands import scenarios_main, validate_main
from mtsbench.scenario.times import parse_duration
from mtsbench.core.units import DAY

DATA = Path(__file__).parent / "data"
VALID = DATA / "valid" / "full_format.yaml"
KINDS = "a step has exactly one of say, reply, perceive, probe, idle, check"
DURATION = "expected a duration: a number and a unit s, m, h, d, w, mo or y (e.g. 90s, 30m, 1.5h, 3d, 2w, 6mo, 1y)"

# file stem -> the message after "PATH: "
MALFORMED = {
    # the file as a whole
    "bad_yaml": "invalid YAML at line 9, column 1: found unexpected end of stream "
                "(while scanning a quoted scalar that starts at line 7, column 10)",
    "duplicate_key": "invalid YAML at line 8, column 5: duplicate key 'say' (first given at line 7)",
    "impossible_date": "invalid YAML at line 4, column 8: impossible date or time '2026-02-30T09:00:00' "
                       "(day is out of range for month)",
    "empty": "the file is empty; expected a mapping with id, title, language, start and steps",
    "not_mapping": "expected a mapping with id, title, language, start and steps at the top level, "
                   "got ['just', 'a list']",
    # top-level fields
    "missing_field": "language: missing (required)",
    "unknown_top_key": "stpes: 'stpes' is not a known key; did you mean 'steps'?",
    "bad_language": "language: expected one of en, zh, got 'fr'",
    "bad_id": "id: expected lowercase letters, digits and '_' only, got 'Bad_Id'",
    "id_mismatch": "id: expected the file's name 'id_mismatch', got 'id_mismatch_oops' (a scenario is named by its "
                   "file: in a copy, set id: id_mismatch)",
    "bad_start": "start: expected an ISO datetime such as 2026-03-02T09:00:00, got 'next monday'",
    "bad_tags": "tags: expected a list such as [attention, events], got 'attention'",
    "no_steps": "steps: expected at least one step, got []",
    # step structure
    "step_not_mapping": "step 0 (s0): expected a mapping with 'at' and one of say, reply, perceive, probe, idle, "
                        "check, got 'say hi at nine'",
    "unknown_key": "step 0 (s0): hint: 'hint' is not a known key; did you mean 'hints'?",
    "two_kinds": f"step 0 (s0): has both 'say' and 'probe'; {KINDS}",
    "no_kind": f"step 0 (s0): has no step kind; {KINDS}",
    "duplicate_id": "step 1 (a): id: duplicate step id 'a', already used by step 0",
    "default_id_dup": "step 1 (s1): id: duplicate step id 's1', already used by step 0 "
                      "(the default id of step 1; give it an id)",
    # time line
    "missing_at": "step 0 (s0): at: missing (required); expected 'dN HH:MM' or an ISO datetime",
    "bad_at": "step 0 (s0): at: expected 'dN HH:MM' (e.g. d3 08:00) or an ISO datetime (e.g. 2026-03-05T08:00:00), "
              "got 'day 3 at 9'",
    "bad_clock": "step 0 (s0): at: expected HH:MM with hours 00-23 and minutes 00-59, got 'd1 25:00'",
    "before_start": "step 0 (s0): at: d0 08:00 is before the scenario start (d0 09:00)",
    "backwards": "step 1 (milk): at: goes back in time (d3 08:00 after d3 09:00)",
    "inside_idle": "step 1 (s1): at: d0 12:00 falls inside the idle of step 0 (s0), which lasts until d0 17:00",
    "bad_duration": f"step 0 (s0): idle: {DURATION}, got '8 hours'",
    # types and ranges
    "wrong_type": "step 0 (s0): hints.salience: expected a number from 0 to 10, got 'high'",
    "salience_range": "step 0 (s0): hints.salience: expected a number from 0 to 10, got 12",
    "out_of_range": "step 0 (s0): motivation: expected a number from 0 to 1, got 2.0",
    "belief_range": "step 0 (s0): hints.facts[0].belief: expected a number from 0 to 1, got 1.5",
    "bad_k": "step 1 (s1): expect.k: expected an integer from 1 to 10,000, got 0",
    "min_above_max": "step 0 (s0): expect.attention: expected min <= max, got min 8 above max 3",
    # hints
    "bad_fact": "step 0 (s0): hints.facts[0].value: missing (required)",
    "bad_infer": "step 0 (s0): hints.infer[0].ttl: missing (required)",
    "bad_event_valid": f"step 0 (s0): hints.event.valid: {DURATION}, got 30",
    "hints_on_idle": "step 0 (s0): hints: only allowed on say, reply, perceive and probe steps, not on an 'idle' step",
    # expectations in the wrong place
    "wrong_place": "step 0 (s0): expect.recall: only allowed on probe steps, not on a 'say' step",
    "k_on_say": "step 0 (s0): expect.k: only allowed on probe steps, not on a 'say' step",
    "attention_place": "step 0 (s0): expect.attention: only allowed on say, reply and perceive steps, "
                       "not on a 'probe' step",
    "motivation_place": "step 0 (s0): motivation: only allowed on probe steps, not on a 'say' step",
    "event_both": "step 1 (s1): expect.event: give either 'same_as: STEP' or 'new: true', not both",
    "event_neither": "step 0 (s0): expect.event.new: expected true (or 'same_as: STEP' instead), got False",
    # references
    "unknown_ref": "step 1 (s1): expect.recall: refers to unknown step 'alergy'; did you mean 'allergy'?",
    "later_ref": "step 0 (s0): expect.recall: refers to step 'later' that comes later; expected an earlier step",
    "later_same_as": "step 0 (s0): expect.event.same_as: refers to step 'trip' that comes later; "
                     "expected an earlier step",
    "self_ref": "step 0 (risk): expect.recall: refers to this step 'risk' itself; expected an earlier step",
    "idle_ref": "step 1 (s1): expect.recall: refers to step 'nap', an idle step that leaves no memory; "
                "expected a say, reply, perceive or probe step",
    "unknown_check_ref": "step 1 (s1): check.tier.step: refers to unknown step 'alergy'; did you mean 'allergy'?",
    # checks
    "bad_check": "step 1 (s1): check.belief.minimum: 'minimum' is not a known key; did you mean 'min'?",
    "bad_belief_check": "step 1 (s1): check.belief[1].max: expected a number from 0 to 1, got 2",
    "empty_check": "step 0 (s0): check: expected one or more of belief, conjecture, attention, tier, event_count, arousal",
    # probe fields for imported benchmarks
    "category_place": "step 0 (allergy): category: only allowed on probe steps, not on a 'say' step",
    "bad_category": "step 1 (s1): category: expected non-empty text, got ''",
    "bad_abstain": "step 1 (s1): abstain: expected true or false, got 'yes'",
    "role_not_evidence": "step 2 (s2): expect.recall_roles.original_info: step 'old' is not in expect.recall; "
                         "expected every step of a role to be evidence too",
    "abstain_recall": "step 1 (s1): expect.recall: an abstaining probe (abstain: true) has no evidence to recall; "
                      "drop one of them",
    "bad_sessions": "step 1 (s1): expect.recall_sessions: expected a mapping {SESSION: [STEP...]}, got ['allergy']",
    "empty_session": "step 1 (s1): expect.recall_sessions.first: expected a non-empty list of step ids, got []",
    "sessions_ref": "step 1 (s1): expect.recall_sessions.first[1]: refers to unknown step 'alergy'; "
                    "did you mean 'allergy'?",
}
SHAPE = re.compile(r"^(?:step \d+ \([^)]*\): )?(?:[a-z_]+(?:\[\d+\])?(?:\.[a-z_]+(?:\[\d+\])?)*: )?\S")


def test_every_malformed_file_is_covered():
    assert {p.stem for p in (DATA / "malformed").glob("*.yaml")} == set(MALFORMED)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_gets_its_one_line(name):
    path = DATA / "malformed" / f"{name}.yaml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith(f"{path}: ")
    rest = message[len(f"{path}: "):]
    assert rest == MALFORMED[name]
    assert SHAPE.match(rest)


def test_full_format_parses_into_typed_objects():
    s = load_scenario(VALID)
    assert (s.id, s.title, s.language, s.start, s.tags, s.path) == (
        "full_format", "Every part of the format", "en", datetime(2026, 3, 2, 9), ("format", "attention", "events"),
        VALID)
    assert [x.kind for x in s.steps] == ["say", "reply", "perceive", "probe", "idle", "say", "probe", "check",
                                         "idle", "check"]
    assert [x.id for x in s.steps] == ["allergy", "s1", "table", "s3", "nap", "s5", "s6", "s7", "s8", "later"]
    assert [x.index for x in s.steps] == list(range(10))
    assert [x.at for x in s.steps] == [0.0, 60.0, 23 * 3600.0, 23 * 3600.0 + 60, 37 * 3600.0, 39 * 3600.0,
                                       39 * 3600.0 + 300, 48 * 3600.0, 48 * 3600.0 + 1800,
                                       48 * 3600.0 + 1800 + 180 * 86400]
    allergy, reply, table, risk, nap, awake, plain, check, sleep, later = s.steps
    assert allergy.text == "I'm allergic to milk, and I'm 30."
    assert allergy.hints == Hints(
        salience=8.0,
        facts=(Fact(key="user.allergy.milk", value=True, text="The user is allergic to milk", belief=0.7),
               Fact(key="user.age", value=30, text="The user is 30", belief=0.9)),
        event=EventTag("health", "allergy disclosed", 30 * DAY),
        infer=(Impression("user.diet", "The user avoids dairy", 0.4, 365 * DAY),
               Impression("user.careful", "The user is careful about food", 0.25, 14 * DAY)))
    assert allergy.expect == Expect(attention=Range(2.0, 10.0), event=EventExpect(new=True))
    assert (reply.text, reply.hints, reply.expect) == ("Noted.", Hints(salience=2.5), Expect())
    assert table.hints == Hints(salience=1.0, event=EventTag("health"))
    assert table.expect == Expect(attention=Range(min=6.0), event=EventExpect(same_as="allergy"))
    assert (risk.text, risk.motivation, risk.expect) == (
        "Is anything on the table risky for the user?", 0.9, Expect(recall=("allergy", "table"), absent=("s1",), k=3))
    assert (nap.duration, nap.text, nap.end) == (5400.0, None, 37 * 3600.0 + 5400)
    assert awake.hints == Hints() and awake.expect == Expect()
    assert (plain.motivation, plain.expect.k) == (0.5, 5)
    assert check.checks == (
        BeliefCheck("user.allergy.milk", True, 0.6, None), BeliefCheck("user.age", None, None, 1.0),
        ConjectureCheck("user.diet", False), ConjectureCheck("user.careful", True),
        StepAttentionCheck("allergy", 0.5, 20.0), TierCheck("table", 2), EventCountCheck("health", 1))
    assert sleep.duration == 180 * 86400.0 and later.at == sleep.end
    assert later.checks == (BeliefCheck("user.allergy.milk", None, 0.5, None),)
    assert s.days_spanned == 183   # d0 .. d182, inclusive
    assert s.step_by_id("table") is table and later.label == "step 9 (later)"
    with pytest.raises(KeyError):
        s.step_by_id("nowhere")


def test_benchmark_probe_fields_parse():
    s = load_scenario(DATA / "valid" / "benchmark_probes.yaml")
    temporal, update, adversarial = s.steps[3], s.steps[4], s.steps[5]
    assert (temporal.category, temporal.abstain, temporal.expect.recall) == ("temporal", False, ("D1:1",))
    assert temporal.expect.recall_sessions == (("session_1", ("D1:1", "D1:2")), ("session_2", ("D2:1",)))
    assert update.expect.recall_roles == (("original_info", ("D1:1",)), ("updated_info", ("D2:1",)))
    assert (adversarial.category, adversarial.abstain, adversarial.expect) == ("adversarial", True, Expect())
    assert [x.category for x in s.steps[:3]] == [None, None, None]


def test_range_contains():
    assert Range(min=6).contains(6) and not Range(min=6).contains(5.9)
    assert Range(1, 3).contains(3) and not Range(1, 3).contains(3.1) and not Range().contains(None)


@pytest.mark.parametrize("name", ["milk_allergy", "milk_allergy_zh"])
def test_bundled_scenarios_load(name):
    s = load_scenario(bundled_dir() / f"{name}.yaml")
    assert s.id == name and s.steps[0].id == "allergy" and s.days_spanned == 5
    assert describe(s) == {"id": name, "title": s.title, "language": name[-2:] if name.endswith("zh") else "en",
                           "tags": ["attention", "association"], "steps": 12, "days": 5}


def test_missing_file_and_folder_are_one_line(tmp_path):
    with pytest.raises(ScenarioError, match=r"^nowhere\.yaml: no such file$"):
        load_scenario("nowhere.yaml")
    with pytest.raises(ScenarioError, match=r": is a folder; expected a scenario file \(\.yaml\)$"):
        load_scenario(tmp_path)
    (tmp_path / "latin.yaml").write_bytes(b"id: latin\ntitle: caf\xe9\n")
    with pytest.raises(ScenarioError, match=r"latin\.yaml: not UTF-8 text \(bad byte at offset 20\); expected a YAML file$"):
        load_scenario(tmp_path / "latin.yaml")


def test_resolve_names_files_and_folders(tmp_path):
    names = [p.name for p in resolve([])]
    assert names == sorted(names) and {"milk_allergy.yaml", "milk_allergy_zh.yaml"} <= set(names)
    assert resolve(["milk_allergy"]) == [bundled_dir() / "milk_allergy.yaml"]
    assert resolve([str(VALID)]) == [VALID]
    (tmp_path / "b.yml").write_text("x")
    (tmp_path / "a.yaml").write_text("x")
    (tmp_path / "notes.txt").write_text("x")
    assert [p.name for p in resolve([str(tmp_path)])] == ["a.yaml", "b.yml"]
    with pytest.raises(ScenarioError, match=r"^milk_alergy: no such file, folder or bundled scenario; "
                                            r"did you mean 'milk_allergy'\?$"):
        resolve(["milk_alergy"])
    with pytest.raises(ScenarioError, match=r"a\.yml: no such file or folder; did you mean '.*a\.yaml'\?$"):
        resolve([str(tmp_path / "a.yml")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError, match=r"empty: no scenario files \(\*\.yaml, \*\.yml\) in this folder$"):
        resolve([str(tmp_path / "empty")])


def test_validate_command(capsys):
    assert validate_main([str(bundled_dir()), str(VALID)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"ok  {VALID} (10 steps)" and len(out) >= 3
    bad = DATA / "malformed" / "two_kinds.yaml"
    assert validate_main([str(VALID), str(bad), "nowhere.yaml"]) == 2
    captured = capsys.readouterr()
    assert captured.out == f"ok  {VALID} (10 steps)\n"
    assert captured.err.splitlines() == [f"{bad}: {MALFORMED['two_kinds']}", "nowhere.yaml: no such file or folder"]
    assert validate_main([str(DATA / "malformed")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == len(MALFORMED) and "Traceback" not in "".join(err)
    assert validate_main([]) == 2 and "usage: mtsbench validate" in capsys.readouterr().err


def test_scenarios_command(capsys):
    assert scenarios_main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "title", "language", "tags", "steps", "days"]
    zh = next(line for line in lines if line.startswith("milk_allergy_zh "))
    en = next(line for line in lines if line.startswith("milk_allergy "))
    assert zh.split()[-4:] == ["zh", "attention,association", "12", "5"]
    assert en.index(" en ") == lines[0].index("language") - 1   # aligned under its header
    assert scenarios_main([str(VALID), str(DATA / "malformed" / "backwards.yaml")]) == 2
    captured = capsys.readouterr()
    assert "full_format" in captured.out and captured.err.count("\n") == 1 and "goes back in time" in captured.err


# --- fuzzing: any damage to a valid file is one ScenarioError line, never another exception ----------------

BASE = yaml.safe_load(VALID.read_text())
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 400), st.floats(allow_nan=True), st.text(max_size=12),
                 st.sampled_from(["d1 08:00", "d0 07:00", "30d", "0h", "allergy", "later", "s3", "[", "zh"]),
                 st.lists(st.sampled_from(["allergy", "nap", "s1", 3, None]), max_size=3),
                 st.dictionaries(st.sampled_from(["min", "max", "key", "step", "x"]), st.integers(-1, 3), max_size=2))


def _places(node, path=()):
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _places(child, (*path, key))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_files_fail_in_one_line(tmp_path, data):
    doc = copy.deepcopy(BASE)
    for _ in range(data.draw(st.integers(1, 3))):
        places = [p for p in _places(doc) if p]
        place = data.draw(st.sampled_from(places))
        parent = doc
        for key in place[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete":
            del parent[place[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["hint", "say", "probe", "idle", "k", "extra", "motivation"]))] = \
                data.draw(JUNK)
        else:
            parent[place[-1]] = data.draw(JUNK)
    path = tmp_path / "full_format.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    try:
        load_scenario(path)
    except ScenarioError as e:
        message = str(e)
        assert message.startswith(f"{path}: ") and "\n" not in message
        assert SHAPE.match(message[len(f"{path}: "):]), message


# --- values that would overflow: refused at load time, one line (bounds: the loader's docstring)

def _scenario(tmp_path, steps: str, start: str = "2026-03-02T09:00:00"):
    path = tmp_path / "big.yaml"
    path.write_text(f"id: big\ntitle: t\nlanguage: en\nstart: {start}\nsteps:\n{steps}", encoding="utf-8")
    return path


BIG = {  # steps -> the message after "PATH: "
    "  - {at: d1000000000 08:00, say: hi}\n":
        "step 0 (s0): at: expected a moment at most 100 years (36500 days) after the scenario start, "
        "got 'd1000000000 08:00'",
    "  - {at: d36500 09:01, say: hi}\n":
        "step 0 (s0): at: expected a moment at most 100 years (36500 days) after the scenario start, "
        "got 'd36500 09:01'",
    "  - {at: '2200-01-01T00:00:00', say: hi}\n":
        "step 0 (s0): at: expected a moment at most 100 years (36500 days) after the scenario start, "
        "got '2200-01-01T00:00:00'",
    "  - {at: d0 10:00, idle: 1000000000y}\n":
        "step 0 (s0): idle: expected a duration of at most 100 years (36500d), got '1000000000y'",
    "  - {at: d36000 10:00, idle: 3y}\n":
        "step 0 (s0): idle: lasts until d37095 10:00, past the end of the clock (d36500 09:00, 36500 days after "
        "the start)",
    "  - {at: d0 10:00, say: hi, hints: {event: {category: trip, valid: 200y}}}\n":
        "step 0 (s0): hints.event.valid: expected a duration of at most 100 years (36500d), got '200y'",
    "  - {id: a, at: d0 10:00, say: hi}\n  - {at: d0 11:00, probe: hi?, expect: {recall: [a], "
    "k: 1000000000000000000000000000000}}\n":
        "step 1 (s1): expect.k: expected an integer from 1 to 10,000, got 1000000000000000000000000000000",
    "  - {id: a, at: d0 10:00, say: hi}\n  - {at: d0 11:00, probe: hi?, expect: {recall: [a], k: 10001}}\n":
        "step 1 (s1): expect.k: expected an integer from 1 to 10,000, got 10001",
    # full-width digits (which int() reads) are refused: ASCII digits only
    "  - {at: d0 10:00, idle: ３h}\n":
        "step 0 (s0): idle: expected a duration: a number and a unit s, m, h, d, w, mo or y (e.g. 90s, 30m, "
        "1.5h, 3d, 2w, 6mo, 1y), got '３h'",
    "  - {at: d３ 10:00, say: hi}\n":
        "step 0 (s0): at: expected 'dN HH:MM' (e.g. d3 08:00) or an ISO datetime (e.g. 2026-03-05T08:00:00), "
        "got 'd３ 10:00'",
}


@pytest.mark.parametrize("steps", list(BIG), ids=range(len(BIG)))
def test_overflowing_values_are_one_line(tmp_path, steps):
    path = _scenario(tmp_path, steps)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: {BIG[steps]}"
    assert SHAPE.match(BIG[steps])


def test_a_start_too_late_for_the_clock(tmp_path):
    path = _scenario(tmp_path, "  - {at: d1 08:00, say: hi}\n", start="9999-06-01T09:00:00")
    with pytest.raises(ScenarioError, match=r"big\.yaml: start: expected an ISO datetime no later than 9899-12-31 "
                                            r"\(the clock runs 100 years from the start\), got '9999-06-01T09:00:00'$"):
        load_scenario(path)


def test_the_bounds_themselves_load(tmp_path):
    s = load_scenario(_scenario(tmp_path, "  - {id: a, at: d0 10:00, say: hi}\n"
                                          "  - {at: d0 11:00, probe: hi?, expect: {recall: [a], k: 10000}}\n"
                                          "  - {at: d0 12:00, idle: 99y}\n"))
    assert s.steps[1].expect.k == 10_000 and s.steps[2].duration == 99 * 365 * DAY
    assert parse_duration("100y") == 36500 * DAY
    s = load_scenario(_scenario(tmp_path, "  - {at: d36500 09:00, say: hi}\n"))
    assert s.steps[0].at == 36500 * DAY


def test_overflowing_values_fail_validate_in_one_line(tmp_path, capsys):
    path = _scenario(tmp_path, "  - {at: d1000000000 08:00, say: hi}\n")
    assert validate_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "100 years" in err
