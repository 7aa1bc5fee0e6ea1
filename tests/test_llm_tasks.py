"""Typed LLM tasks: schemas and parsers, prompts in both languages, and the mock's answers."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtsbench.llm import prompts
from mtsbench.llm.base import LLM, Association, EventTag, Fact, Impression, Item, Relation, Summary, estimate_tokens
from mtsbench.llm.mock import MockLLM, call_inputs
from mtsbench.llm.tasks import REGISTRY, TASKS, AnswerError, extract_json, validate
from mtsbench.scenario.model import Hints
from mtsbench.core.seeding import generator
from mtsbench.core.units import DAY

ALLERGY = Fact(key="user.allergy.milk", value=True, text="The user is allergic to milk", belief=0.8)
TURNS = [
    Item("I'm allergic to milk. Even a little makes me ill.", "say", "a", "en", Hints(facts=(ALLERGY,))),
    Item("Thanks, noted! I'll remember.", "reply", "b", "en"),
    Item("We fly to Disneyland on Friday. So excited.", "say", "c", "en",
         Hints(event=EventTag("trip.disneyland", None, 30 * DAY))),
]
INFO = Item("My throat is sore this morning.", "say", "t", "en",
            Hints(infer=(Impression("user.health.cold", "The user may have a cold", 0.4, 5 * DAY),)))


def calls(llm):
    """One call of every task, with hints present."""
    old = Fact("user.allergy.milk", True, "The user is allergic to milk", 0.7)
    return {
        "rate_attention": llm.rate_attention(Item("Milk is on the table.", "perceive", "m", "en", Hints(salience=1)),
                                             [Association("The user is allergic to milk", 3.15, 0.3)]),
        "summarize": llm.summarize(TURNS),
        "merge_event": llm.merge_event("The user flies to Disneyland on Friday", "The flight was delayed.", "en"),
        "judge_relation": llm.judge_relation(Fact("user.allergy.milk", False, "Not allergic", 0.6), old, "en"),
        "reassess_belief": llm.reassess_belief(old, [Fact("user.allergy.milk", True, "Allergic, said again", 0.5)],
                                               "en"),
        "infer": llm.infer(INFO, ["The user slept badly"]),
        "same_event": llm.same_event(EventTag("trip.disneyland", "The user flies to Disneyland on Friday."),
                                     EventTag("trip.disneyland", "The flight was delayed."), "en"),
    }


# -- schemas and parsers ---------------------------------------------------------------
def test_every_task_parses_a_valid_answer_into_its_result_type():
    answers = {
        "rate_attention": ({"score": 7.5}, 7.5),
        "summarize": ({"summary": "S.", "facts": [{"key": "k", "value": "tea", "text": "t", "belief": 0.6,
                                                   "turns": [2]}],
                       "events": [{"category": "trip", "text": "x", "valid_days": 2, "turns": [1, 2]}]},
                      Summary("S.", (Fact("k", "tea", "t", 0.6, (2,)),), (EventTag("trip", "x", 2 * DAY, (1, 2)),))),
        "merge_event": ({"text": " A then B. "}, "A then B."),
        "judge_relation": ({"label": "contradicts", "strength": 0.9}, Relation("contradicts", 0.9)),
        "reassess_belief": ({"belief": 0.25}, 0.25),
        "infer": ({"impressions": [{"key": "k", "text": "t", "belief": 0.3, "ttl_days": 0.5}]},
                  (Impression("k", "t", 0.3, 0.5 * DAY),)),
        "same_event": ({"same": False}, False),
    }
    assert set(answers) == set(TASKS)
    for name, (obj, want) in answers.items():
        assert TASKS[name].parse("Here you go: " + json.dumps(obj)) == want


@pytest.mark.parametrize("name,obj,reason", [
    ("rate_attention", {"score": 10.5}, "score: 10.5 is above the maximum 10"),
    ("rate_attention", {"score": -1}, "score: -1 is below the minimum 0"),
    ("rate_attention", {"score": "7"}, "score: expected a number"),
    ("rate_attention", {"rating": 7}, "missing key 'score'"),
    ("summarize", {"summary": "s", "facts": [{"key": "k", "value": None, "text": "t", "belief": 0.5}], "events": []},
     "facts[0].value: expected one of string, number, boolean"),
    ("summarize", {"summary": "s", "facts": [], "events": [{"category": "c", "text": "t", "valid_days": 0}]},
     "events[0].valid_days: 0 must be above 0"),
    ("summarize", {"summary": " ", "facts": [], "events": []}, "summary: must not be empty"),
    ("judge_relation", {"label": "maybe", "strength": 0.5}, "label: \"maybe\" is not one of same, contradicts"),
    ("judge_relation", {"label": "same", "strength": 2}, "strength: 2 is above the maximum 1"),
    ("reassess_belief", {"belief": True}, "belief: expected a number, got true"),
    ("infer", {"impressions": [{"key": "k", "text": "t", "belief": 0.5, "ttl_days": -3}]},
     "impressions[0].ttl_days: -3 must be above 0"),
])
def test_invalid_answers_are_refused_with_a_one_line_reason(name, obj, reason):
    with pytest.raises(AnswerError) as e:
        TASKS[name].parse(json.dumps(obj))
    assert reason in str(e.value) and "\n" not in str(e.value)


def test_json_is_found_in_prose_fences_and_after_thinking():
    assert extract_json('<think>maybe {"score": 1}</think>\n```json\n{"score": 4}\n```') == {"score": 4}
    assert extract_json('{broken {"score": 2} trailing') == {"score": 2}
    for bad in ["", "   ", "[1, 2]", '{"score": 7']:
        with pytest.raises(AnswerError):
            extract_json(bad)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_a_score_is_accepted_exactly_when_it_lies_in_0_10(score):
    try:
        validate(TASKS["rate_attention"].schema, {"score": score})
        ok = True
    except AnswerError:
        ok = False
    assert ok == (0 <= score <= 10)


def test_schemas_are_strict_mode_objects():
    def walk(schema):
        if schema.get("type") == "object":
            assert schema["additionalProperties"] is False
            assert set(schema["required"]) == set(schema["properties"])
            for sub in schema["properties"].values():
                walk(sub)
        for sub in schema.get("anyOf", []) + ([schema["items"]] if "items" in schema else []):
            walk(sub)
    for task in TASKS.values():
        walk(task.schema)
        assert task.response_format("json_schema")["json_schema"]["name"] == task.name


def test_a_summary_without_turns_names_no_turn():
    obj = {"summary": "S.", "facts": [{"key": "k", "value": 1, "text": "t", "belief": 0.5}],
           "events": [{"category": "trip", "text": "x", "valid_days": None}]}
    s = TASKS["summarize"].parse(json.dumps(obj))
    assert s.facts[0].turns == () and s.events[0].turns == ()
    bad = {**obj, "facts": [{**obj["facts"][0], "turns": ["one"]}]}
    with pytest.raises(AnswerError, match=r"facts\[0\]\.turns\[0\]: expected an integer"):
        TASKS["summarize"].parse(json.dumps(bad))


# -- prompts ----------------------------------------------------------------------------
def test_every_task_has_an_english_and_a_chinese_prompt():
    fact = Fact("user.drink", "tea", "The user drinks tea", 0.7)
    for language in ("en", "zh"):
        item = Item("桌上有一杯牛奶。" if language == "zh" else "Milk is on the table.", "perceive", "s", language)
        rendered = [REGISTRY["rate_attention"].prompt(item, []), REGISTRY["summarize"].prompt([item]),
                    REGISTRY["merge_event"].prompt("A", "B", language),
                    REGISTRY["judge_relation"].prompt(fact, fact, language),
                    REGISTRY["reassess_belief"].prompt(fact, [fact], language), REGISTRY["infer"].prompt(item, []),
                    REGISTRY["same_event"].prompt(EventTag("trip", "A"), EventTag("", "B"), language),
                    REGISTRY["answer"].prompt("Q?", ["A"], language),
                    REGISTRY["judge_answer"].prompt("Q?", "A", "B", language),
                    prompts.system_prompt(language),
                    prompts.repair_prompt("score: 11 is above the maximum 10", language)]
        for text in rendered:
            cjk = sum(1 for c in text if "\u4e00" <= c <= "\u9fff")
            assert (cjk > 5) == (language == "zh"), text[:80]
    assert REGISTRY["merge_event"].prompt("A", "B", "fr") == REGISTRY["merge_event"].prompt("A", "B", "en")
    assert all(set(t.templates) == set(prompts.LANGUAGES) for t in REGISTRY.values())


# -- the mock ---------------------------------------------------------------------------
def test_mock_answers_every_task_from_the_hints():
    # relevance is read in sd above the chance level (issue 25): at chance (0, 0.15) the shown 0.3 is
    # z = 2, fully relevant; at attention_ref 3.5 the allergy's 3.15 reads as 9
    out = calls(MockLLM(chance_mean=0.0, chance_std=0.15, attention_ref=3.5))
    assert out["rate_attention"] == 9.0       # follows the allergy's attention (3.15, read as 9), not 10
    s = out["summarize"]
    assert s.facts == (Fact("user.allergy.milk", True, "The user is allergic to milk", 0.8, (1,)),)
    assert s.events == (EventTag("trip.disneyland", "We fly to Disneyland on Friday.", 30 * DAY, (3,)),)
    assert s.text == "I'm allergic to milk. Thanks, noted! We fly to Disneyland on Friday."
    assert out["merge_event"] == "The user flies to Disneyland on Friday. The flight was delayed."
    assert out["judge_relation"] == Relation("contradicts", 1.0)
    assert out["reassess_belief"] == pytest.approx(1 - 0.3 * 0.5)   # restated: noisy-or of 0.7 and 0.5
    assert out["infer"] == (Impression("user.health.cold", "The user may have a cold", 0.4, 5 * DAY),)
    assert out["same_event"] is True


def test_mock_fallbacks_without_hints():
    llm = MockLLM()
    bare = [Item(t.text, t.kind, t.step, "zh") for t in TURNS[:1]] + [Item("我们周五去迪士尼。很开心。", "say", "z", "zh")]
    s = llm.summarize(bare)
    assert s.facts == () and s.events == ()
    assert s.text == "I'm allergic to milk.我们周五去迪士尼。"
    assert llm.infer(Item(INFO.text, "say", "t"), []) == ()
    a = Fact("user.drink", "Tea", "tea", 0.7)
    assert llm.judge_relation(Fact("user.drink", " tea", "tea", 0.5), a).label == "same"
    assert llm.judge_relation(Fact("user.drink", "coffee", "coffee", 0.5), a).label == "contradicts"
    assert llm.judge_relation(Fact("user.food", "Tea", "tea", 0.5), a).label == "unrelated"
    flag = Fact("user.flag", True, "yes", 0.5)
    assert llm.judge_relation(Fact("user.flag", 1, "one", 0.5), flag).label == "contradicts"
    assert llm.merge_event("用户去了迪士尼", "航班延误了。", "zh") == "用户去了迪士尼。航班延误了。"
    assert llm.merge_event("Flight delayed. Then rain.", "Then rain.") == "Flight delayed. Then rain."


def numbers(out) -> list[float]:
    s, r, imp = out["summarize"], out["judge_relation"], out["infer"]
    return [out["rate_attention"], s.facts[0].belief, s.events[0].valid, r.strength, out["reassess_belief"],
            imp[0].belief, imp[0].ttl]


def test_mock_noise_reaches_every_number_stays_in_range_and_is_seeded_per_call():
    clean = numbers(calls(MockLLM()))
    noisy = numbers(calls(MockLLM(seed=3, noise=0.2)))
    some_seed_moves = [any(numbers(calls(MockLLM(seed=s, noise=0.2)))[i] != c for s in range(6))
                       for i, c in enumerate(clean)]
    assert all(some_seed_moves)                                # every number is noised (bounds clip half)
    assert numbers(calls(MockLLM(seed=3, noise=0.2))) == noisy  # same seed, same answers
    assert numbers(calls(MockLLM(seed=4, noise=0.2))) != noisy
    for seed in range(20):
        out = calls(MockLLM(seed=seed, noise=0.5))
        n = numbers(out)
        assert 0 <= n[0] <= 10 and all(0 <= x <= 1 for x in (n[1], n[3], n[4], n[5])) and n[2] > 0 and n[6] > 0
    # a call's answer does not depend on the calls before it
    llm = MockLLM(seed=3, noise=0.2)
    llm.infer(INFO, [])
    assert llm.summarize(TURNS) == calls(MockLLM(seed=3, noise=0.2))["summarize"]


def test_mock_rate_attention_noise_is_the_documented_draw():
    item = Item("Milk is on the table.", "perceive", "m", "en", Hints(salience=1))
    inputs = "perceive: Milk is on the table."          # the call's inputs, not the prompt's wording
    assert call_inputs("rate_attention", item, []) == inputs
    want = round(float(np.clip(1.0 + generator(7, "rate_attention", inputs).normal(0.0, 0.2 * 10), 0, 10)), 3)
    assert MockLLM(seed=7, noise=0.2).rate_attention(item, []) == want


def test_mock_meters_every_task_with_prompt_and_answer_tokens():
    llm = MockLLM()
    calls(llm)
    assert set(llm.meter.by_task) == set(TASKS) and llm.meter.calls == 7
    for t in llm.meter.by_task.values():
        assert t["calls"] == 1 and t["prompt_tokens"] > 50 and t["completion_tokens"] > 0
        assert t["tokens"] == t["prompt_tokens"] + t["completion_tokens"] and t["retries"] == t["failures"] == 0
    item = Item("Milk is on the table.", "perceive", "m", "en", Hints(salience=1))
    m = MockLLM()
    m.rate_attention(item, [])
    assert m.meter.snapshot() == (1, estimate_tokens(REGISTRY["rate_attention"].prompt(item, []))
                                  + estimate_tokens('{"score": 1.0}'))
    assert m.meter.totals() == {"calls": 1, "tokens": m.meter.tokens, "prompt_tokens": m.meter.prompt_tokens,
                                "completion_tokens": m.meter.completion_tokens, "retries": 0, "failures": 0}


def test_mock_is_an_llm():
    assert isinstance(MockLLM(), LLM)
