"""Identity without exact strings (issue 14 item 3): keyless facts, events and impressions
are matched by memory search and judged by the LLM; the mock judges them by text similarity."""

import numpy as np
import pytest

from mtsbench.llm.base import EventTag, Fact, Impression, Item
from mtsbench.llm.heuristics import fact_relation, same_event, text_similarity
from mtsbench.llm.mock import MockLLM
from mtsbench.llm.tasks import TASKS, keyless
from mtsbench.scenario.model import Hints

# hand-made pairs: (new, old, what a careful judge says)
FACT_PAIRS = [
    ("Melanie has kids.", "Melanie has kids!", "same"),
    ("Melanie has two kids.", "Melanie has kids.", "same"),
    ("Kim rides a red bicycle to work.", "Kim rides her red bicycle to work.", "same"),
    ("Melanie went camping in the mountains with her kids.", "Melanie has kids.", "unrelated"),
    ("Melanie made a bowl in pottery class.", "Melanie signed up for a pottery class.", "unrelated"),
    ("Caroline went to a support group.", "Caroline went to the beach.", "unrelated"),
    ("我对牛奶过敏。", "我对牛奶过敏！", "same"),
]


@pytest.mark.parametrize("new,old,want", FACT_PAIRS)
def test_mock_judges_keyless_facts_by_text_similarity(new, old, want):
    assert fact_relation(Fact("", True, new, 0.9), Fact("", True, old, 0.9)) == want
    assert MockLLM().judge_relation(Fact("", True, new, 0.9), Fact("", True, old, 0.9)).label == want


def test_a_similar_keyless_fact_with_another_value_contradicts_and_keys_behave_as_before():
    assert fact_relation(Fact("", "Oslo", "Kim lives in Oslo.", 0.9), Fact("", "Bergen", "Kim lives in Oslo.", 0.9)) \
        == "contradicts"
    # with keys: the key decides, whatever the texts say
    assert fact_relation(Fact("a", True, "x y", 0.7), Fact("a", True, "something else", 0.7)) == "same"
    assert fact_relation(Fact("a", True, "same text", 0.7), Fact("b", True, "same text", 0.7)) == "unrelated"


def test_same_event_by_category_or_by_a_sentence_of_the_storyline():
    trip = EventTag("", "Kim flew to Oslo for a conference. The hotel was noisy.")
    assert same_event(trip, EventTag("", "Kim moved to a quieter Oslo hotel."))
    assert not same_event(trip, EventTag("", "Kim adopted a cat."))
    assert same_event(EventTag("trip", "anything"), EventTag("TRIP", "unrelated words"))
    assert not same_event(EventTag("trip", "Kim flew to Oslo."), EventTag("illness", "Kim flew to Oslo."))
    llm = MockLLM()
    assert llm.same_event(trip, EventTag("", "Kim adopted a cat.")) is False
    assert llm.meter.by_task["same_event"]["calls"] == 1 and "same_event" in TASKS
    assert TASKS["same_event"].parse('{"same": true}') is True


def test_text_similarity_ignores_function_words_and_case():
    assert text_similarity("The cat is on the mat", "cat MAT") == 1.0
    assert text_similarity("", "x") == 0.0 and keyless("") and keyless(None) and not keyless("k")


def _run(tmp_path, yaml_text, name="keyless"):
    from mtsbench.config.composition import compose
    from mtsbench.harness.runner import run
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml_text)
    cfg, choices = compose([f"scenarios=[{path}]"])
    run(cfg, tmp_path / "run", choices)
    from mtsbench.outputs.stream import trace_events
    return trace_events(tmp_path / "run")


KEYLESS = """
id: keyless
title: keyless facts, events and impressions
language: en
start: 2026-03-02T09:00:00
steps:
  - {id: a, at: d0 09:00, say: "I flew to Oslo for the conference.",
     hints: {facts: [{text: Kim often travels to Oslo for work., value: true}], event: {text: Kim flew to Oslo for a conference.},
             infer: [{text: Kim may be tired from travelling., belief: 0.5, ttl: 3d}]}}
  - {id: b, at: d0 09:05, say: "The Oslo hotel was noisy, I moved.",
     hints: {event: {text: Kim moved to a quieter Oslo hotel.},
             infer: [{text: Kim may be tired from all the travelling., belief: 0.5, ttl: 3d}]}}
  - {id: c, at: d0 09:10, say: "Also, we adopted a cat last week.",
     hints: {event: {text: Kim adopted a cat.}, infer: [{text: Kim likes animals., belief: 0.3, ttl: 30d}]}}
  - {at: d0 23:00, idle: 8h}
  - {id: d, at: d1 09:00, say: "As I said, I often travel to Oslo for work!",
     hints: {facts: [{text: Kim often travels to Oslo for work!, value: true}]}}
  - {at: d1 23:00, idle: 8h}
"""


def test_keyless_items_are_matched_by_search_and_judgement(tmp_path):
    trace = _run(tmp_path, KEYLESS)
    events = [(e["category"], e["joined"], e["steps"]) for e in trace if e["event"] == "event"]
    first = events[0][0]
    assert first.startswith("#") and events[1] == (first, True, ["b"])       # the hotel continues the trip
    assert events[2][0] != first and events[2][1] is False                  # the cat is another event
    merged = [e for e in trace if e["event"] == "merged"]
    assert len(merged) == 1                                                  # the restated fact, in other words
    keys = [e["key"] for e in trace if e["event"] == "impression"]
    assert keys[0] == keys[1] != keys[2] and keys[0].startswith("#")
    conj = [e for e in trace if e["event"] == "conjecture"]
    assert len(conj) == 1 and conj[0]["steps"] == ["a", "b"]                 # 1 - 0.5 * 0.5 = 0.75 >= 0.7


def test_keyless_hints_load_and_an_inferrer_keeps_keyless_keys_apart():
    from mtsbench.processes.inference import Inferrer

    class Memory:
        now = 0.0

        def embed(self, text):
            v = np.zeros(8)
            v[hash(text.split()[0]) % 8] = 1.0
            return v

        def emit(self, *a, **k):
            pass

    llm, inf = MockLLM(), Inferrer()
    a = inf.match(Memory(), llm, Impression("", "Kim may be tired.", 0.5, 1.0), "en")
    b = inf.match(Memory(), llm, Impression("", "Kim may be tired!", 0.5, 1.0), "en")
    c = inf.match(Memory(), llm, Impression("", "Lee likes tea.", 0.5, 1.0), "en")
    assert (a, b, c) == ("#0", "#0", "#1")    # the restatement joins the first key; another opens its own
    assert Item("x", "say", "s", hints=Hints(facts=(Fact("", True, "x"),))).hints.facts[0].key == ""
