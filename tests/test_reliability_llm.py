"""Every LLM fault counted, none silent (issue 16, item 5): a fault-injecting loopback
server (``mtsbench.llm.testing.FakeOpenAI``) drives the real openai client through each
fault mode; each ends as a counted, retried failure (``on_failure: skip``: None, never an
invented value; ``raise``: one line). Through the CLI, metrics.csv's LLM accounting rows
add up to summary.json's, and a run with too many failed calls warns and exits 3."""

import json
import math

import pandas as pd
import pytest

from mtsbench.llm.base import Item, LLMError
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.testing import FakeOpenAI, Reply, task_of, valid_answer
from mtsbench.scenario.model import Hints

ITEM = Item("I started a fever this morning.", "say", "s0", "en", Hints())
FAST = {"retry-after-ms": "1"}
def impressions(ttl_days: float) -> str:
    return json.dumps({"impressions": [{"key": "k", "text": "t", "belief": 0.5, "ttl_days": ttl_days}]})


BAD_TTL = impressions(1e308)

# every fault mode: the replies the server sends (repeated for every request of the call)
FAULTS = {
    "http_429": Reply(429, headers=FAST),
    "http_500": Reply(500, headers=FAST),
    "http_503": Reply(503, headers=FAST),
    "http_200_html_body": Reply(200, raw=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
    "http_200_json_type_not_json": Reply(200, raw=b"<html>oops</html>"),
    "http_200_truncated_json": Reply(200, raw=b'{"id": "x", "choices": [{"message": {"cont'),
    "http_200_empty_body": Reply(200, raw=b""),
    "http_200_no_choices": Reply(200, raw=b'{"id": "x", "object": "chat.completion"}'),
    "answer_not_json": Reply(200, content="I think it is about a seven."),
    "answer_off_schema": Reply(200, content='{"impressions": "none"}'),
    "answer_absurd_ttl_1e308": Reply(200, content=BAD_TTL),
    "answer_nan": Reply(200, content='{"impressions": [{"key": "k", "text": "t", "belief": NaN, "ttl_days": 3}]}'),
}


def backend(server, **kw):
    return OpenAILLM(base_url=server.url, model="any", **({"timeout": 5.0, "max_retries": 2} | kw))


@pytest.mark.parametrize("mode", sorted(FAULTS))
def test_every_fault_mode_is_a_counted_retried_failure(mode):
    with FakeOpenAI() as server:
        server.push(*[FAULTS[mode]] * 12)
        llm = backend(server, on_failure="skip")
        assert llm.infer(ITEM, []) is None                  # no invented value
        t = llm.meter.by_task["infer"]
        assert (t["calls"], t["failures"]) == (1, 1) and t["retries"] >= 1
        assert t["retries"] == len(server.requests) - 1     # every re-sent request counted
        raising = backend(server, on_failure="raise")
        with pytest.raises(LLMError) as e:
            raising.infer(ITEM, [])
        assert "\n" not in str(e.value) and str(e.value).startswith("LLM task infer failed:")
        assert raising.meter.failures == 1


def test_a_200_with_a_non_json_body_recovers_when_the_next_answer_is_good():
    with FakeOpenAI() as server:
        server.push(Reply(200, raw=b"<html>proxy</html>"))
        llm = backend(server)
        assert llm.infer(ITEM, []) == ()
        assert (llm.meter.calls, llm.meter.retries, llm.meter.failures) == (1, 1, 0)


def test_an_absurd_ttl_is_refused_by_its_documented_bound_and_repaired():
    with FakeOpenAI() as server:
        server.push(Reply(200, content=BAD_TTL))
        llm = backend(server)
        assert llm.infer(ITEM, []) == ()                     # the repair retry got a valid answer
        repair = server.requests[1][1]["messages"][-1]["content"]
        assert "ttl_days" in repair and "36500" in repair
        assert llm.meter.retries == 1 and llm.meter.failures == 0


def test_a_bounded_ttl_is_kept_in_seconds():
    with FakeOpenAI() as server:
        server.push(Reply(200, content=impressions(36500)))
        (impression,) = backend(server).infer(ITEM, [])
        assert math.isfinite(impression.ttl) and impression.ttl == 36500 * 86400


def _half_fail(body: dict) -> str:
    """Answers every task but ``infer`` (HTTP 200 with a prose answer: a malformed one)."""
    return "no JSON from me" if task_of(body) == "infer" else valid_answer(body)


def test_cli_counts_add_up_and_too_many_failures_exit_3(cli, tmp_path):
    with FakeOpenAI(answer=_half_fail) as server:
        r = cli("run", "scenarios=[cold_then_fever]", "llm=openai", f"llm.base_url={server.url}", "llm.model=fake",
                "llm.on_failure=skip", "llm.max_retries=0", f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 3, r.stderr
    warning = [line for line in r.stderr.splitlines() if "llm.max_failure_rate" in line]
    assert len(warning) == 1 and warning[0].startswith("mtsbench: warning:") and "Traceback" not in r.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    overall = summary["overall"]
    assert overall["llm_failures"] > 0 and overall["llm_failure_rate_exceeded"] and summary["status"] == "complete"
    metrics = pd.read_csv(tmp_path / "run" / "metrics.csv")
    llm = metrics[metrics["check"] == "llm"]
    for column, key in (("llm_calls", "llm_calls"), ("tokens", "tokens"), ("llm_retries", "llm_retries"),
                        ("llm_failures", "llm_failures")):
        assert llm[column].sum() == overall[key], column
    infer = llm[llm["step"] == "infer"]                         # the background process on its own row
    assert infer["kind"].tolist() == ["process"] and infer["llm_failures"].sum() == overall["llm_failures"]
    assert infer["llm_failures"].sum() == overall["processes"]["infer"]["failures"]


def test_a_higher_limit_lets_the_same_run_pass(cli, tmp_path):
    with FakeOpenAI(answer=_half_fail) as server:
        r = cli("run", "scenarios=[cold_then_fever]", "llm=openai", f"llm.base_url={server.url}", "llm.model=fake",
                "llm.on_failure=skip", "llm.max_retries=0", "llm.max_failure_rate=1", f"hydra.run.dir={tmp_path}/r")
    assert r.returncode == 0, r.stderr
    assert "llm.max_failure_rate" not in r.stderr
