"""Record/replay: cassettes keyed by request, offline answers, misses, concurrent writers."""

import copy
import json
import subprocess
import sys

import pytest

from mtsbench.llm.base import LLM, Fact, Item, LLMError
from mtsbench.errors import ConfigError
from mtsbench.llm.cassette import read, request_key
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.replay import ReplayLLM
from mtsbench.llm.testing import FakeOpenAI, Reply

FACT = Fact("user.allergy.milk", True, "The user is allergic to milk", 0.7)
FAST = {"retry-after-ms": "1"}


def every_task(llm, text="Milk is on the table."):
    item = Item(text, "perceive", "s", "en")
    return [llm.rate_attention(item, []), llm.summarize([item]), llm.merge_event("A.", "B.", "en"),
            llm.judge_relation(FACT, FACT, "zh"), llm.reassess_belief(FACT, [FACT], "en"), llm.infer(item, [])]


def record(tmp_path, push=(), **kw):
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI() as server:
        server.push(*push)
        llm = OpenAILLM(base_url=server.url, model="m1", record=str(cassette), max_retries=1, **kw)
        answers = every_task(llm)
    return cassette, answers, llm.meter


def test_replay_answers_offline_as_recorded(tmp_path):
    cassette, answers, meter = record(tmp_path, push=[Reply(content='{"score": 42}'), Reply(429, headers=FAST)])
    replay = ReplayLLM(str(cassette))               # the server is gone
    assert isinstance(replay, LLM)
    assert every_task(replay) == answers
    assert replay.meter.by_task == meter.by_task     # tokens, retries (repair and 429) replayed too
    assert meter.by_task["rate_attention"]["retries"] == 2
    lines = read(cassette)
    assert len(lines) == 7                           # six tasks, one repaired
    first = lines[0]
    assert first["key"] == request_key("openai", "m1", "rate_attention", first["messages"], first["params"])


def test_a_recorded_failure_fails_again_on_replay(tmp_path):
    cassette, answers, meter = record(tmp_path, push=[Reply(500, headers=FAST)] * 2, on_failure="skip")
    assert answers[0] is None and meter.failures == 1
    assert every_task(ReplayLLM(str(cassette), on_failure="skip")) == answers
    with pytest.raises(LLMError, match="rate_attention failed: HTTP 500"):
        every_task(ReplayLLM(str(cassette)))


def test_a_miss_names_the_task_and_a_prompt_excerpt(tmp_path):
    cassette, _, _ = record(tmp_path)
    with pytest.raises(LLMError) as e:
        replay = ReplayLLM(str(cassette), on_failure="skip")
        replay.rate_attention(Item("A cat sleeps on the sofa.", "perceive", "s"), [])
    msg = str(e.value)
    assert msg.startswith("LLM task rate_attention failed: no recorded answer in cassette")
    assert "A cat sleeps on the sofa." in msg and "\n" not in msg


def test_parameters_are_part_of_the_key_and_pick_the_recording(tmp_path):
    cassette, answers, _ = record(tmp_path)
    with FakeOpenAI(answer=lambda body: '{"score": 9.5}') as server:
        OpenAILLM(base_url=server.url, model="m1", temperature=0.7, record=str(cassette)).rate_attention(
            Item("Milk is on the table.", "perceive", "s"), [])
    keys = [r["key"] for r in read(cassette) if r["task"] == "rate_attention"]
    assert len(set(keys)) == 2                        # same prompt, other temperature: another key
    item = Item("Milk is on the table.", "perceive", "s")
    with pytest.raises(LLMError, match="several match"):           # raised at the first call
        ReplayLLM(str(cassette)).rate_attention(item, [])
    assert ReplayLLM(str(cassette), temperature=0.7).rate_attention(item, []) == 9.5
    assert ReplayLLM(str(cassette), temperature=0.0).rate_attention(item, []) == answers[0]
    with pytest.raises(LLMError, match="none matches"):
        ReplayLLM(str(cassette), model="m2").rate_attention(item, [])
    with pytest.raises(LLMError, match="does not exist"):
        ReplayLLM(str(tmp_path / "nope.jsonl")).rate_attention(item, [])


def test_the_constructor_only_stores_its_parameters_and_errors_come_at_the_first_call(tmp_path):
    cassette, answers, _ = record(tmp_path)
    given = dict(cassette=str(cassette), model=None, temperature=None, seed=None, on_failure="raise",
                 max_failure_rate=0.1)
    replay = ReplayLLM(**given)
    assert {k: v for k, v in vars(replay).items() if k != "meter"} == given
    twin = copy.deepcopy(replay)
    assert every_task(replay) == answers == every_task(twin)
    assert (replay.backend_, replay.model_, replay.params_) == ("openai", "m1", {"temperature": 0.0})
    assert every_task(copy.deepcopy(replay)) == answers    # a used one copies too (answers repeat the last)
    item = Item("Milk is on the table.", "perceive", "s")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(ConfigError, match="^on_failure: expected one of raise, skip, got 'ignore'$"):
        ReplayLLM(cassette=str(cassette), on_failure="ignore")      # a declared parameter: refused where built
    for kw, what in [({}, "llm.cassette is not set"), ({"cassette": str(bad)}, "is unreadable: .*line 1 is not JSON")]:
        llm = ReplayLLM(**kw)
        with pytest.raises(LLMError, match=what) as e:
            llm.rate_attention(item, [])
        assert str(e.value).startswith("LLM backend: ") and "\n" not in str(e.value)


def test_repeated_prompts_replay_in_recorded_order(tmp_path):
    cassette = tmp_path / "c.jsonl"
    item = Item("Milk is on the table.", "perceive", "s")
    with FakeOpenAI() as server:
        server.push(Reply(content='{"score": 1}'), Reply(content='{"score": 2}'))
        live = OpenAILLM(base_url=server.url, model="m", record=str(cassette))
        assert [live.rate_attention(item, []) for _ in range(2)] == [1.0, 2.0]
    replay = ReplayLLM(str(cassette))
    assert [replay.rate_attention(item, []) for _ in range(3)] == [1.0, 2.0, 2.0]


def test_each_scenario_replays_its_own_answer_to_a_request_two_scenarios_sent(tmp_path):
    """A real model answers one request a little differently from one server session to the
    next: recorded in scenarios a then b, each is served its own answer, in either order and
    alone, and a request outside any scenario gets the file's first."""
    from types import SimpleNamespace

    from mtsbench.scenario.model import RUNNING

    cassette = tmp_path / "c.jsonl"
    item = Item("Milk is on the table.", "perceive", "s")

    def in_scenario(name, llm):
        token = RUNNING.set(SimpleNamespace(id=name))
        try:
            return llm.rate_attention(item, [])
        finally:
            RUNNING.reset(token)

    with FakeOpenAI() as server:
        server.push(Reply(content='{"score": 3}'), Reply(content='{"score": 4}'))
        live = OpenAILLM(base_url=server.url, model="m", record=str(cassette))
        assert [in_scenario("a", live), in_scenario("b", live)] == [3.0, 4.0]
    assert [r["scenario"] for r in read(cassette)] == ["a", "b"]
    assert [in_scenario(s, ReplayLLM(str(cassette))) for s in ["b", "a"]] == [4.0, 3.0]
    replay = ReplayLLM(str(cassette))
    assert [in_scenario("b", replay), in_scenario("a", replay), replay.rate_attention(item, [])] == [4.0, 3.0, 3.0]


def test_the_caller_tells_the_replay_the_scenario_it_serves(tmp_path):
    """ReplayLLM.serve: the told scenario picks its own records (over the one running in the
    context), and a miss of a scenario the cassette holds nothing of names it and the
    scenarios the caller's function returns that the cassette holds; the backend loads none."""
    from datetime import datetime

    from mtsbench.scenario.model import RUNNING, Scenario, Step

    def scenario(name, text):
        return Scenario(name, name, "en", datetime(2026, 1, 1), (), (Step(0, "s1", 0.0, "perceive", text),))

    cassette = tmp_path / "c.jsonl"
    item = Item("Milk is on the table.", "perceive", "s")
    a, b = scenario("a", "Milk is on the table."), scenario("b", "Milk is on the table.")
    with FakeOpenAI() as server:
        server.push(Reply(content='{"score": 3}'), Reply(content='{"score": 4}'))
        live = OpenAILLM(base_url=server.url, model="m", record=str(cassette))
        for s in (a, b):
            token = RUNNING.set(s)
            live.rate_attention(item, [])
            RUNNING.reset(token)
    replay = ReplayLLM(str(cassette))
    replay.serve(b)
    token = RUNNING.set(a)
    try:
        assert replay.rate_attention(item, []) == 4.0           # told b: b's record, whatever runs
    finally:
        RUNNING.reset(token)
    orchid = scenario("orchid", "The orchid has a bud.")
    asked = []

    def bundled():
        asked.append(True)
        return [orchid, b, a]
    replay.serve(orchid, bundled)
    assert not asked                                             # called only for a miss's message
    with pytest.raises(LLMError) as e:
        replay.rate_attention(Item("The orchid has a bud.", "perceive", "s1"), [])
    assert str(e.value).endswith("scenario orchid was not recorded (recorded: b, a; record it with "
                                 "llm.record=PATH, docs/llm.md)") and asked
    replay.serve(orchid)                                         # no function: no recorded list
    with pytest.raises(LLMError, match=r"scenario orchid was not recorded \(record it with llm.record=PATH"):
        replay.rate_attention(Item("The orchid has a bud.", "perceive", "s1"), [])
    replay.serve(None)
    with pytest.raises(LLMError, match="for prompt '.*The orchid has a bud"):
        replay.rate_attention(Item("The orchid has a bud.", "perceive", "s1"), [])


def test_replay_first_answers_what_a_cassette_holds_and_sends_only_the_rest(tmp_path):
    """llm.replay_first: an ablation of a recorded run pays only for its new requests, and its
    own recording is complete (the replayed answers are written as if sent)."""
    first = tmp_path / "first.jsonl"
    old, new = Item("Milk is on the table.", "perceive", "s"), Item("The orchid has a bud.", "perceive", "s")
    with FakeOpenAI() as server:
        server.push(Reply(content='{"score": 3}'))
        assert OpenAILLM(base_url=server.url, model="m", record=str(first)).rate_attention(old, []) == 3.0
    with FakeOpenAI() as server:
        server.push(Reply(content='{"score": 9}'))
        second = tmp_path / "second.jsonl"
        live = OpenAILLM(base_url=server.url, model="m", record=str(second), replay_first=str(first))
        assert [live.rate_attention(old, []), live.rate_attention(new, [])] == [3.0, 9.0]
        assert len(server.requests) == 1 and live.replayed_ == 1 and live.meter.calls == 2
    assert [r["response"]["text"] for r in read(second)] == ['{"score": 3}', '{"score": 9}']
    assert [r["key"] for r in read(second)][0] == read(first)[0]["key"]
    with pytest.raises(LLMError, match="llm.replay_first: cassette .* does not exist"):
        OpenAILLM(base_url="http://127.0.0.1:9/v1", model="m", replay_first=str(tmp_path / "no.jsonl")).rate_attention(old, [])


WRITER = """
import sys
from mtsbench.llm.cassette import append
w = int(sys.argv[2])
for i in range(int(sys.argv[3])):
    append(sys.argv[1], {"key": f"{w}-{i}", "writer": w, "i": i, "pad": chr(0x4e00 + w) * 9000})
"""


def test_concurrent_writers_lose_no_line_and_tear_none(tmp_path):
    path = tmp_path / "shared.jsonl"
    writers, lines = 4, 150
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), str(lines)]) for w in range(writers)]
    assert [p.wait(timeout=60) for p in procs] == [0] * writers
    raw = path.read_bytes().split(b"\n")
    assert raw[-1] == b"" and len(raw) - 1 == writers * lines
    records = [json.loads(line) for line in raw[:-1]]       # every line parses: none torn
    assert sorted((r["writer"], r["i"]) for r in records) == [(w, i) for w in range(writers) for i in range(lines)]
    assert all(r["pad"] == chr(0x4e00 + r["writer"]) * 9000 for r in records)
