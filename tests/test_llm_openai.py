"""The openai backend through the real ``openai`` client against a local fake server."""

import copy
import json
import pickle
import time

import pytest

from mtsbench.llm.base import LLM, Association, Fact, Item, LLMError, Relation, Summary
from mtsbench.errors import ConfigError
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.testing import FakeOpenAI, Reply, task_of
from mtsbench.scenario.model import Hints

ITEM = Item("A half-finished glass of milk is on the table.", "perceive", "milk", "en", Hints(salience=1))
SHOWN = [Association("The user is allergic to milk", 8.0, 0.5)]
FAST = {"retry-after-ms": "1"}   # the client honours it, so retry tests take milliseconds


@pytest.fixture
def server():
    with FakeOpenAI() as s:
        yield s


def backend(server, **kw):
    kw = {"timeout": 5.0, "max_retries": 2} | kw
    return OpenAILLM(base_url=server.url, model="any", **kw)


def test_normal_answers_for_every_task(server):
    llm = backend(server)
    assert isinstance(llm, LLM)
    score = llm.rate_attention(ITEM, SHOWN)
    assert 0 <= score <= 10 and score == json.loads(server.answer(server.requests[-1][1]))["score"]
    fact = Fact("user.allergy.milk", True, "The user is allergic to milk", 0.7)
    assert isinstance(llm.summarize([ITEM]), Summary)
    assert isinstance(llm.merge_event("A trip.", "It rained.", "en"), str)
    assert isinstance(llm.judge_relation(fact, fact, "zh"), Relation)
    assert 0 <= llm.reassess_belief(fact, [fact], "en") <= 1
    assert llm.infer(ITEM, []) == ()
    assert [task_of(body) for _, body in server.requests] == [
        "rate_attention", "summarize", "merge_event", "judge_relation", "reassess_belief", "infer"]
    headers, body = server.requests[0]
    assert body["model"] == "any" and body["temperature"] == 0.0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["score"]
    assert "milk is on the table" in body["messages"][1]["content"]
    assert "联想到的记忆" not in body["messages"][1]["content"]
    assert "新事实" in server.requests[3][1]["messages"][1]["content"]      # language="zh"
    # usage comes from the API's usage field, per task
    t = llm.meter.by_task["rate_attention"]
    assert t["prompt_tokens"] == sum(len(m["content"]) // 4 + 1 for m in body["messages"])
    assert t["completion_tokens"] == len(server.answer(body)) // 4 + 1
    assert llm.meter.calls == 6 and llm.meter.failures == 0 and llm.meter.retries == 0


def test_429_then_success_is_retried_and_counted(server):
    server.push(Reply(429, headers=FAST), Reply(429, headers=FAST))
    llm = backend(server)
    assert llm.rate_attention(ITEM, SHOWN) is not None
    assert len(server.requests) == 3
    assert llm.meter.by_task["rate_attention"] == {"calls": 1, "tokens": llm.meter.tokens,
                                                        "prompt_tokens": llm.meter.prompt_tokens,
                                                        "completion_tokens": llm.meter.completion_tokens,
                                                        "retries": 2, "failures": 0}


def test_500_fails_after_the_retries(server):
    server.push(*[Reply(500, headers=FAST)] * 2)
    llm = backend(server, max_retries=1)
    with pytest.raises(LLMError) as e:
        llm.rate_attention(ITEM, SHOWN)
    msg = str(e.value)
    assert msg.startswith("LLM task rate_attention failed: HTTP 500") and "after 1 retry" in msg and "\n" not in msg
    assert len(server.requests) == 2
    assert llm.meter.by_task["rate_attention"]["failures"] == 1 and llm.meter.retries == 1


def test_500_with_skip_returns_none_and_counts_a_failure(server):
    server.push(*[Reply(500, headers=FAST)] * 3)
    llm = backend(server, on_failure="skip")
    assert llm.rate_attention(ITEM, SHOWN) is None
    assert llm.summarize([ITEM]) is not None       # the server is back
    assert llm.meter.by_task["rate_attention"]["failures"] == 1 and llm.meter.failures == 1
    assert llm.meter.by_task["rate_attention"]["retries"] == 2 and llm.meter.calls == 2


def test_a_timeout_fails_the_call_quickly(server):
    server.push(Reply(delay=2.0))
    llm = backend(server, timeout=0.5, max_retries=0, on_failure="skip")
    started = time.perf_counter()
    assert llm.rate_attention(ITEM, SHOWN) is None
    assert time.perf_counter() - started < 1.5      # the server would have answered after 2 s
    assert llm.meter.failures == 1
    with pytest.raises(LLMError, match="no answer within llm.timeout=0.5 s"):
        server.push(Reply(delay=1.5))
        backend(server, timeout=0.5, max_retries=0).infer(ITEM, [])


@pytest.mark.parametrize("bad,reason", [
    ('{"score": 7', "no JSON object"), ("I would say seven.", "no JSON object"),
    ('{"score": 11}', "score: 11 is above the maximum 10"), ('{"score": "high"}', "score: expected a number"),
    ("", "the answer is empty")])
def test_a_bad_answer_gets_one_repair_retry(server, bad, reason):
    server.push(Reply(content=bad))
    llm = backend(server)
    score = llm.rate_attention(ITEM, SHOWN)
    assert len(server.requests) == 2
    repair = server.requests[1][1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == bad and reason in repair[3]["content"]
    assert score == json.loads(server.answer(server.requests[1][1]))["score"]
    t = llm.meter.by_task["rate_attention"]
    assert (t["calls"], t["retries"], t["failures"]) == (1, 1, 0)
    assert t["prompt_tokens"] == sum(len(m["content"]) // 4 + 1 for _, b in server.requests for m in b["messages"])


def test_a_repair_that_is_still_bad_fails_the_call(server):
    server.push(Reply(content='{"score": 11}'), Reply(content='{"score": 12}'))
    with pytest.raises(LLMError) as e:
        backend(server).rate_attention(ITEM, SHOWN)
    assert str(e.value) == ("LLM task rate_attention failed: invalid answer after a repair retry: "
                            "score: 12 is above the maximum 10")
    server.push(Reply(content='{"impressions": 3}'), Reply(content="nope"))
    llm = backend(server, on_failure="skip")
    assert llm.infer(ITEM, []) is None
    assert llm.meter.by_task["infer"]["failures"] == 1 and llm.meter.by_task["infer"]["retries"] == 1
    assert len(server.requests) == 4


def test_a_server_without_json_schema_falls_back_and_remembers():
    with FakeOpenAI(formats=("json_object",)) as server:
        llm = backend(server)
        assert llm.rate_attention(ITEM, SHOWN) is not None
        assert [b.get("response_format", {}).get("type") for _, b in server.requests] == ["json_schema", "json_object"]
        assert llm.meter.retries == 1
        again = backend(server)           # a new backend (next scenario) of the same run
        assert again.infer(ITEM, []) == ()
        assert server.requests[-1][1]["response_format"] == {"type": "json_object",
                                                             "schema": server.requests[-1][1]["response_format"]
                                                             ["schema"]} and len(server.requests) == 3
        assert server.response_formats[-1]["schema"]["required"] == ["impressions"]   # the task's schema


def test_a_500_naming_response_format_falls_back_at_once_and_json_object_carries_the_schema():
    with FakeOpenAI(formats=("json_object",), reject_status=500) as server:    # as llama-cpp-python answers
        llm = backend(server, max_retries=2)
        assert llm.rate_attention(ITEM, SHOWN) is not None
        sent = server.response_formats
        assert [rf["type"] for rf in sent] == ["json_schema", "json_object"]    # no client retry of the 500
        assert sent[1] == {"type": "json_object", "schema": sent[0]["json_schema"]["schema"]}
        assert sent[1]["schema"]["required"] == ["score"]
        assert llm.meter.retries == 1 and llm.meter.failures == 0
        assert llm.meter.by_task["rate_attention"]["retries"] == 1
        assert llm.summarize([ITEM]) is not None                              # the working mode is remembered
        assert server.response_formats[-1]["type"] == "json_object" and len(server.requests) == 3


def test_a_500_naming_response_format_in_any_case_falls_back(server):
    server.push(Reply(500, content="Internal error: unsupported RESPONSE_FORMAT json_schema"))
    llm = backend(server)
    assert llm.rate_attention(ITEM, SHOWN) is not None
    assert [rf["type"] for rf in server.response_formats] == ["json_schema", "json_object"]
    assert llm.meter.retries == 1


def test_a_500_naming_response_format_everywhere_ends_in_plain_text():
    with FakeOpenAI(formats=(), reject_status=500, answer=lambda body: 'Sure: {"score": 3}') as server:
        llm = backend(server)
        assert llm.rate_attention(ITEM, SHOWN) == 3.0
        assert [rf and rf["type"] for rf in server.response_formats] == ["json_schema", "json_object", None]
        assert llm.meter.retries == 2


def test_a_500_not_naming_response_format_is_still_a_transport_failure(server):
    server.push(*[Reply(500, content="model crashed", headers=FAST)] * 3)
    llm = backend(server, max_retries=2, on_failure="skip")
    assert llm.rate_attention(ITEM, SHOWN) is None
    assert [rf["type"] for rf in server.response_formats] == ["json_schema"] * 3    # retried, no fallback
    assert llm.meter.failures == 1 and llm.meter.retries == 2
    server.push(*[Reply(500, content="model crashed", headers=FAST)] * 2)
    with pytest.raises(LLMError, match=r"HTTP 500 .*model crashed \(after 1 retry\)"):
        backend(server, max_retries=1).rate_attention(ITEM, SHOWN)


def test_a_server_without_any_response_format_gets_plain_json():
    with FakeOpenAI(formats=(), answer=lambda body: 'Sure. {"score": 4.5} Hope that helps.') as server:
        llm = backend(server)
        assert llm.rate_attention(ITEM, SHOWN) == 4.5
        assert llm.rate_attention(ITEM, []) == 4.5
        sent = [b.get("response_format", {}).get("type") for _, b in server.requests]
        assert sent == ["json_schema", "json_object", None, None]
        assert llm.meter.retries == 2
        server.push(Reply(400, content="context too long"))      # not a format problem: a failure
        with pytest.raises(LLMError, match="HTTP 400 .*context too long"):
            llm.rate_attention(ITEM, [])


def test_a_bad_key_or_model_always_raises(server):
    server.push(Reply(401, content="invalid api key"))
    with pytest.raises(LLMError, match="HTTP 401"):
        backend(server, on_failure="skip").rate_attention(ITEM, SHOWN)


def test_the_key_comes_from_the_named_variable_and_is_never_recorded(server, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "sk-distinctive-7f3a9c")
    cassette = tmp_path / "c.jsonl"
    llm = backend(server, api_key_env="MY_LLM_KEY", record=str(cassette), on_failure="skip")
    llm.rate_attention(ITEM, SHOWN)
    server.push(Reply(500, content="boom sk-distinctive-7f3a9c", headers=FAST),
                Reply(500, content="boom", headers=FAST),
                Reply(500, content="echo sk-distinctive-7f3a9c", headers=FAST))
    assert llm.infer(ITEM, []) is None
    assert server.requests[0][0]["authorization"] == "Bearer sk-distinctive-7f3a9c"
    text = cassette.read_text()
    assert "sk-distinctive-7f3a9c" not in text and "<redacted>" in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert [("response" in r, r.get("error", "")[:8]) for r in lines] == [(True, ""), (False, "HTTP 500")]
    assert lines[1]["retries"] == 2 and lines[0]["params"] == {"temperature": 0.0}
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend(server).rate_attention(ITEM, SHOWN)
    assert server.requests[-1][0]["authorization"] == "Bearer unused"


def test_missing_settings_are_one_line_errors_at_the_first_call(server):
    for kw, what in [({"model": "m"}, "llm.base_url is not set"), ({"base_url": server.url}, "llm.model is not set")]:
        llm = OpenAILLM(**kw)                       # constructing only stores the parameters
        for _ in range(2):                          # the same error at every call, not just the first
            with pytest.raises(LLMError, match=what) as e:
                llm.rate_attention(ITEM, SHOWN)
            assert str(e.value).startswith("LLM backend: ") and "\n" not in str(e.value)
        assert llm.meter.calls == 0
    assert server.requests == []
    for kw, what in [({"on_failure": "ignore"}, "on_failure: expected one of raise, skip, got 'ignore'"),
                     ({"response_format": "xml"}, "response_format: expected one of json_schema, json_object, text"),
                     ({"max_retry_wait": -1}, "max_retry_wait: expected a number >= 0, got -1")]:
        with pytest.raises(ConfigError, match=f"^{what}"):   # a declared parameter: refused where built
            OpenAILLM(base_url=server.url, model="m", **kw)


def test_the_constructor_only_stores_its_parameters(server, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "sk-distinctive-7f3a9c")
    given = dict(base_url=server.url, model="any", api_key_env="MY_LLM_KEY", temperature=0.5, seed=3,
                 max_tokens=None, timeout=5, max_retries=1, response_format="json_object", on_failure="skip",
                 record=None, max_failure_rate=0.1, max_retry_wait=2.0, logprobs=True, replay_first=None)
    llm = OpenAILLM(**given)
    assert {k: v for k, v in vars(llm).items() if k != "meter"} == given and llm.meter.calls == 0
    assert "sk-distinctive-7f3a9c" not in repr(vars(llm))
    llm.rate_attention(ITEM, SHOWN)
    assert (llm.model_, llm.params_) == ("any", {"temperature": 0.5, "seed": 3})
    assert server.requests[0][0]["authorization"] == "Bearer sk-distinctive-7f3a9c"
    assert server.response_formats[0]["type"] == "json_object"
    assert "sk-distinctive-7f3a9c" not in repr({k: v for k, v in vars(llm).items() if k != "client_"})


def test_a_copy_works_before_and_after_the_client_is_built(server):
    fresh = backend(server)
    twin = copy.deepcopy(fresh)
    assert twin.rate_attention(ITEM, SHOWN) == fresh.rate_attention(ITEM, SHOWN)
    assert twin.meter.calls == fresh.meter.calls == 1
    used = copy.deepcopy(fresh)                     # the client is left out and rebuilt on first use
    assert "client_" in vars(fresh) and "client_" not in vars(used)
    assert used.rate_attention(ITEM, SHOWN) == fresh.rate_attention(ITEM, SHOWN)
    assert used.meter.calls == 2 and fresh.meter.calls == 2 and used.client_ is not fresh.client_
    assert pickle.loads(pickle.dumps(fresh)).infer(ITEM, []) == ()
