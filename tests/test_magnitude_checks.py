"""Expectations that say how much and in what order (issue 53): a probe's ``order``, a tier's
lower bound (``tier: {min: N}``), attention compared with another memory's (``above``), the
arousal a memory received (``arousal: {step, since, min, max, above}``) and the work a step did
(``expect.cost: {KIND: {min, max}}``).

Each kind passes and fails on one small scenario written here, run in-process under the
reference configuration (the values are read from the run, nothing is mocked); a malformed
form is one loader line; the JSON Schema agrees with the loader; and end to end, a scenario
whose order expectation fails makes ``mtsbench check`` exit 1 with its one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mtsbench.config.composition import compose
from mtsbench.harness.runner import run_scenario
from mtsbench.scenario import ScenarioError, load_scenario
from mtsbench.scenario.model import ArousalCheck, Range, StepAttentionCheck, TierCheck

# The garden's field on day 0, two unrelated remarks, six weeks of quiet, then the garden returns
# (``back``): it arouses the garden's memories and, with the hashing embedder, nothing of the whales.
HEAD = """\
id: mag
title: Magnitude and order checks
language: en
start: 2026-03-02T08:00:00
steps:
  - id: roses
    at: d0 10:00
    say: "I pruned the roses in the garden this morning, they had grown wild."
    hints: {salience: 4}
  - id: hose
    at: d0 10:15
    say: "I bought a longer hose for watering the garden."
    hints: {salience: 3}
  - {at: d0 23:00, idle: 8h}
  - id: whales
    at: d6 09:00
    say: "I watched a documentary about whales yesterday."
    hints: {salience: 2}
  - {at: d20 23:00, idle: 8h}
  - id: back
    at: d42 10:00
    say: "Today I am planting tomatoes in the garden again."
    hints: {salience: 4}
"""

# (name, spec, passes, value shown)
CHECKS = [
    ("arousal", {"step": "roses", "since": "back", "min": 0.5}, True, None),
    ("arousal", {"step": "roses", "since": "back", "max": 0}, False, None),
    ("arousal", {"step": "whales", "since": "back", "max": 0}, True, 0.0),
    ("arousal", {"step": "whales", "since": "back", "min": 0.1}, False, 0.0),
    ("arousal", {"step": "roses", "since": "back", "above": "whales"}, True, None),
    ("arousal", {"step": "whales", "since": "back", "above": "roses"}, False, None),
    ("tier", {"step": "whales", "min": 2}, True, 2),
    ("tier", {"step": "whales", "min": 3}, False, 2),
    ("tier", {"step": "whales", "min": 1, "max": 2}, True, 2),
    ("attention", {"step": "roses", "above": "whales"}, True, None),
    ("attention", {"step": "whales", "above": "roses"}, False, None),
]


def write(tmp_path: Path, text: str, name: str = "mag") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.replace("id: mag\n", f"id: {name}\n", 1), encoding="utf-8")
    return path


def probe(order: list[str]) -> str:
    return ("  - id: ask\n    at: d42 10:30\n    probe: \"What did I buy for watering the garden?\"\n"
            f"    motivation: 1.0\n    expect: {{order: [{', '.join(order)}]}}\n")


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    checks: dict[str, list] = {}
    for name, spec, _, _ in CHECKS:
        checks.setdefault(name, []).append(spec)
    text = (HEAD + "  - at: d42 10:00\n    check: " + yaml.safe_dump(checks, default_flow_style=True, width=10_000)
            + probe(["hose", "roses"]).replace("id: ask", "id: right") + probe(["whales", "hose"]).replace(
                "id: ask", "id: wrong").replace("10:30", "10:31"))
    scenario = load_scenario(write(tmp_path_factory.mktemp("mag"), text))
    return run_scenario(compose([])[0], scenario).rows


@pytest.mark.parametrize("n", range(len(CHECKS)), ids=[f"{c[0]}:{c[1]}" for c in CHECKS])
def test_each_check_passes_and_fails(rows, n):
    name, spec, passes, value = CHECKS[n]
    checked = [r for r in rows if r["kind"] == "check"]
    row = [r for r in checked if r["check"] == name][[c for c in CHECKS if c[0] == name].index(CHECKS[n])]
    assert row["passed"] is passes, row
    if value is not None:
        assert row["value"] == value, row


def test_arousal_scales_with_what_the_return_evokes(rows):
    """The returning garden arouses the roses (one topic) and nothing of the whales: the radius."""
    got = {r["expected"]: r["value"] for r in rows if r["check"] == "arousal"}
    assert got["roses aroused since back >= 0.5"] > 0.5
    assert got["whales aroused since back <= 0"] == 0.0
    assert got["roses aroused since back > whales"].endswith("vs whales 0")


def test_the_order_row(rows):
    order = {r["step"]: r for r in rows if r["check"] == "order"}
    assert order["right"]["passed"] is True and order["right"]["expected"] == "hose > roses"
    assert order["wrong"]["passed"] is False and order["wrong"]["value"].startswith("whales:")
    probes = {r["step"]: r["passed"] for r in rows if r["check"] == "probe"}
    assert probes == {"right": True, "wrong": False}


def test_the_expected_column(rows):
    expected = [r["expected"] for r in rows if r["kind"] == "check"]
    assert [e for e in expected if " tier " in e] == ["whales tier >= 2", "whales tier >= 3", "whales tier [1, 2]"]
    assert "roses > whales" in expected and "roses aroused since back > whales" in expected


def test_the_loader_keeps_the_new_forms(tmp_path):
    checks = {"tier": {"step": "whales", "min": 2}, "attention": {"step": "roses", "min": 1, "above": "whales"},
              "arousal": {"step": "roses", "since": "back", "max": 3, "above": "hose"}}
    text = HEAD + "  - at: d42 10:00\n    check: " + yaml.safe_dump(checks, default_flow_style=True, sort_keys=False) + probe(
        ["hose", "roses", "whales"])
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.steps[-2].checks == (TierCheck("whales", None, 2), StepAttentionCheck("roses", 1.0, None, "whales"),
                                         ArousalCheck("roses", None, 3.0, "back", "hose"))
    assert scenario.steps[-1].expect.order == ("hose", "roses", "whales")


BAD = {
    "check: {tier: {step: whales}}":
        "check.tier: expected 'max: N' (sits in tier N or above) or 'min: N' (has sunk to tier N or below), or both",
    "check: {tier: {step: whales, min: 3, max: 1}}": "check.tier: expected min <= max, got min 3 above max 1",
    "check: {tier: {step: whales, min: -1}}": "check.tier.min: expected an integer >= 0, got -1",
    "check: {arousal: {step: roses, since: bck}}": "check.arousal.since: refers to unknown step 'bck'; did you mean 'back'?",
    "check: {arousal: {step: roses, since: later}}":
        "check.arousal.since: refers to step 'later' that comes later; expected an earlier step",
    "check: {arousal: {step: roses, min: -0.5}}": "check.arousal.min: expected a number >= 0, got -0.5",
    "check: {arousal: {step: roses, amount: 1}}":
        "check.arousal.amount: 'amount' is not a known key (expected one of step, since, min, max, above)",
    "check: {attention: {step: roses, from: roses}}": "check.attention: give either 'step' or 'from', not both",
    "check: {attention: {min: 1}}":
        "check.attention: expected 'step: STEP' (that step's own memory) or 'from: STEP' (the facts derived from it)",
    "check: {attention: {from: roses, above: hose}}":
        "check.attention.above: compares a step's own memory; use it with 'step', not 'from'",
    "check: {attention: {step: roses, above: roses}}":
        "check.attention.above: names the checked step 'roses' itself; expected another step to compare with",
    "probe: Where?\n    expect: {order: [hose]}":
        "expect.order: expected a list of two or more step ids, best first, such as [milk, weather], got ['hose']",
    "probe: Where?\n    expect: {order: [hose, roses, hose]}":
        "expect.order: names step 'hose' twice; expected distinct steps, best first",
    "probe: Where?\n    expect: {order: [hose, rose]}": "expect.order[1]: refers to unknown step 'rose'; did you mean 'roses'?",
    "say: Hello.\n    expect: {order: [hose, roses]}": "expect.order: only allowed on probe steps, not on a 'say' step",
    "probe: Where?\n    expect: {cost: {arousal_score: {max: 1}}}":
        "expect.cost.arousal_score: 'arousal_score' is not a known key; did you mean 'arousal_scored'?",
    "probe: Where?\n    expect: {cost: {scored: {min: -1}}}": "expect.cost.scored.min: expected an integer >= 0, got -1",
    "probe: Where?\n    expect: {cost: {scored: {min: 3, max: 1}}}":
        "expect.cost.scored: expected min <= max, got min 3 above max 1",
    "probe: Where?\n    expect: {cost: {scored: {}}}": "expect.cost.scored: expected 'min: N', 'max: N' or both",
    "probe: Where?\n    expect: {cost: {scored: null}}": "expect.cost.scored: expected a mapping {min?, max?}, got None",
    "probe: Where?\n    expect: {cost: {scored: {max: 2.5}}}": "expect.cost.scored.max: expected an integer >= 0, got 2.5",
    "idle: 1h\n    expect: {cost: {scored: {max: 1}}}":
        "expect.cost: only allowed on say, reply, perceive and probe steps, not on an 'idle' step",
}


@pytest.mark.parametrize("step", list(BAD), ids=range(len(BAD)))
def test_a_bad_form_is_one_loader_line(tmp_path, step):
    path = write(tmp_path, HEAD + f"  - at: d42 10:00\n    {step}\n  - {{id: later, at: d43 10:00, say: Bye.}}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: step 6 (s6): {BAD[step]}"


def test_the_schema_agrees(schema_valid):
    def valid(step: str) -> bool:
        doc = yaml.safe_load(HEAD + f"  - at: d42 10:00\n    {step}\n")
        doc["start"] = "2026-03-02T08:00:00"
        return schema_valid(doc)

    assert valid("check: {tier: {step: whales, min: 2}}") and valid("check: {tier: {step: whales, max: 1}}")
    assert valid("check: {arousal: {step: roses, since: back, max: 0, above: hose}}")
    assert valid("probe: Where?\n    expect: {order: [hose, roses]}")
    assert not valid("check: {tier: {step: whales}}")
    assert not valid("check: {arousal: {step: roses, amount: 1}}")
    assert not valid("probe: Where?\n    expect: {order: [hose]}")
    assert valid("probe: Where?\n    expect: {cost: {scored: {max: 3}, tiers_searched: {min: 1}}}")
    assert valid("say: Hi.\n    expect: {cost: {llm_calls: {max: 1}}}")
    assert not valid("probe: Where?\n    expect: {cost: {arousal_score: {max: 1}}}")
    assert not valid("probe: Where?\n    expect: {cost: {scored: {}}}")
    assert not valid("probe: Where?\n    expect: {cost: {}}")
    assert not valid("probe: Where?\n    expect: {cost: {scored: null}}")
    assert not valid("probe: Where?\n    expect: {cost: {scored: {max: 2.5}}}")
    assert valid("check: {attention: {from: roses, min: 1}}")
    assert not valid("check: {attention: {from: roses, above: hose}}")
    assert not valid("check: {attention: {step: roses, from: roses}}")


def test_a_failing_order_is_exit_1_and_one_line(cli, tmp_path):
    path = write(tmp_path, HEAD + probe(["whales", "hose"]), "mag_fails")
    done = cli("check", path)
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "| order |" in line)
    assert line.startswith("| mag_fails | 6 | ask | order | whales:") and line.endswith("| whales > hose |"), line


# Three turns of one morning (no summary yet, every memory in reach), then a probe using 2 memories.
COST = """\
id: mag
title: The work of a step
language: en
start: 2026-03-02T08:00:00
steps:
  - {id: a, at: d0 10:00, say: "I pruned the roses in the garden this morning.", hints: {salience: 4}}
  - {id: b, at: d0 10:05, say: "I bought a longer hose for watering the garden.", hints: {salience: 3}}
  - id: c
    at: d0 10:10
    say: "The compost heap at the back of the garden is ready."
    hints: {salience: 3}
    expect: {cost: {scored: {min: 2, max: 2}, llm_calls: {max: 0}, arousal_scored: {min: 9, max: 9}}}
  - id: ask
    at: d0 10:30
    probe: "What did I buy for watering the garden?"
    motivation: 1.0
    expect: {recall: [b], k: 2, cost: {scored: {min: 3, max: 3}, tiers_searched: {min: 4}, arousal_scored: {max: 5},
                                        distances: {min: 9, max: 9}}}
"""


def test_cost_rows_hold_the_hand_counted_work(tmp_path):
    """By hand: labelling ``c`` scores the 2 memories held and asks the LLM once; it recalls the 2 it
    associates and perceives ``c``, each arousing its field by scanning all 3 memories: 3 x 3 = 9.
    The probe at motivation 1 searches all 4 tiers, scores the 3 memories, and recalling the 2 it
    uses scans all 3 for each: 6 scored by arousal, 3 + 6 = 9 distances."""
    rows = run_scenario(compose([])[0], load_scenario(write(tmp_path, COST, "cost"))).rows
    cost = {(r["step"], r["expected"]): (r["passed"], r["value"]) for r in rows if r["check"] == "cost"}
    assert cost == {("c", "scored [2, 2]"): (True, 2), ("c", "arousal_scored [9, 9]"): (True, 9),
                    ("c", "llm_calls <= 0"): (False, 1),
                    ("ask", "scored [3, 3]"): (True, 3), ("ask", "tiers_searched >= 4"): (True, 4),
                    ("ask", "arousal_scored <= 5"): (False, 6), ("ask", "distances [9, 9]"): (True, 9)}
    probe = next(r for r in rows if r["check"] == "probe")
    assert probe["passed"] is True         # the probe row is its recall's verdict; the cost rows stand apart


def test_the_loader_keeps_the_cost_bounds(tmp_path):
    steps = load_scenario(write(tmp_path, COST, "cost")).steps
    assert steps[2].expect.cost == (("scored", Range(2, 2)), ("arousal_scored", Range(9, 9)), ("llm_calls", Range(None, 0)))
    assert steps[3].expect.cost[:2] == (("scored", Range(3, 3)), ("tiers_searched", Range(4, None)))


def test_a_failing_cost_is_exit_1_and_one_line_per_kind(cli, tmp_path):
    done = cli("check", write(tmp_path, COST, "cost_fails"))
    assert done.returncode == 1, done.stdout + done.stderr
    failed = [line for line in done.stdout.splitlines() if "| cost |" in line]
    assert failed == ["| cost_fails | 2 | c | cost | 1.0 | llm_calls <= 0 |",
                      "| cost_fails | 3 | ask | cost | 6.0 | arousal_scored <= 5 |"], done.stdout


# A fact stated twice (0.9) meets a weak contradicting claim (0.35): at night the claim loses
# belief and attention, keeping 1 - strength x the winner's belief of it.
CONFLICT = """\
id: mag
title: The loser's attention
language: en
start: 2026-05-18T18:00:00
steps:
  - id: berlin
    at: d0 18:00
    say: "I have lived in Berlin for twelve years now."
    hints: {salience: 5, facts: [{key: user.city, text: The user lives in Berlin, value: Berlin, belief: 0.9}]}
  - {id: chat, at: d0 18:05, say: "The weather was lovely today.", hints: {salience: 2}}
  - id: slip
    at: d6 18:00
    say: "Here in Hamburg, I mean, back when I was in Hamburg, it rained a lot."
    hints: {salience: 3, facts: [{key: user.city, text: The user lives in Hamburg, value: Hamburg, belief: 0.35}]}
  - at: d6 22:59
    check: {attention: [{from: slip}, {from: berlin}]}
  - {at: d6 23:00, idle: 8h}
  - at: d7 09:00
    check: {attention: [{from: slip}, {from: berlin}, {from: chat, max: 10}], belief: {from: slip}}
"""


def test_attention_from_a_step_reads_its_facts_and_the_loser_keeps_its_share(tmp_path):
    """Both facts exist before the night; after it, the Hamburg fact keeps 1 - 1 x b(Berlin) of the
    attention decay alone leaves it (the same run under ablate=consolidation, read at 09:00)."""
    scenario = load_scenario(write(tmp_path, CONFLICT, "conflict"))
    assert scenario.steps[-1].checks[0] == StepAttentionCheck(None, None, None, None, "slip")

    def read(overrides):
        rows = [r for r in run_scenario(compose(overrides)[0], scenario).rows if r["check"] == "attention"]
        return {(r["index"], r["expected"].split(" ")[1]): r for r in rows}

    on, off = read([]), read(["ablate=consolidation"])
    evening, morning = 3, 5
    assert on[(evening, "slip")]["value"] == off[(evening, "slip")]["value"] > 1.0     # the same before the night
    belief_berlin = 0.9                       # the winner's belief; the mock judges the contradiction at strength 1
    kept = on[(morning, "slip")]["value"] / off[(morning, "slip")]["value"]
    assert kept == pytest.approx(1 - belief_berlin, abs=0.06), kept      # restarted decay clocks move it a little
    assert on[(morning, "berlin")]["value"] == pytest.approx(off[(morning, "berlin")]["value"], rel=0.02)
    assert on[(morning, "chat")]["passed"] is False and on[(morning, "chat")]["value"] == "no live fact from chat"
    assert on[(morning, "slip")]["expected"] == "from slip any"
