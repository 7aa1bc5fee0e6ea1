"""Every LLM fault counted, none silent (issue 16, item 5): a fault-injecting loopback
server (``mtsbench.llm.testing.FakeOpenAI``) drives the real openai client through each
fault mode; each ends as a counted, retried failure (``on_failure: skip``: None, never an
invented value; ``raise``: one line). Through the CLI, metrics.csv's LLM accounting rows
add up to summary.json's, and a run with too many failed calls warns and exits 3."""

import json
import logging
import math
import time

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
# a chat completion whose valid answer (to infer) comes with the usage given (%-formatted in)
COMPLETION = b'{"choices": [{"message": {"role": "assistant", "content": "{\\"impressions\\": []}"}}], "usage": %s}'

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
    # HTTP 200 bodies that are JSON but no chat completion (issue 28, item 4): the shape is checked
    "http_200_choices_not_a_list": Reply(200, raw=b'{"choices": "nope"}'),
    "http_200_choices_of_numbers": Reply(200, raw=b'{"choices": [1, 2]}'),
    "http_200_tokens_not_a_number": Reply(200, raw=COMPLETION % b'{"prompt_tokens": "abc", "completion_tokens": 1}'),
    "http_200_tokens_1e999": Reply(200, raw=COMPLETION % b'{"prompt_tokens": 1e999, "completion_tokens": 1}'),
    "http_200_content_1e999": Reply(200, raw=b'{"choices": [{"message": {"content": 1e999}}]}'),
    "http_200_a_json_list": Reply(200, raw=b'[1, 2]'),
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
    assert overall["llm_failures"] > 0 and overall["llm_failure_rate_exceeded"]
    # issue 27, item 7: summary.json alone says the run is not to be trusted, and the report at its top
    assert summary["status"] == "unreliable" and summary["unreliable"].endswith("above llm.max_failure_rate=0.05")
    assert summary["unreliable"].startswith(f"{overall['llm_failures']} of {overall['llm_calls']} LLM calls failed")
    report = (tmp_path / "run" / "report.md").read_text().splitlines()
    assert report[2].startswith("**Unreliable run**: " + summary["unreliable"])
    metrics = pd.read_csv(tmp_path / "run" / "metrics.csv")
    llm = metrics[metrics["check"] == "llm"]
    for column, key in (("llm_calls", "llm_calls"), ("tokens", "tokens"), ("llm_retries", "llm_retries"),
                        ("llm_failures", "llm_failures")):
        assert llm[column].sum() == overall[key], column
    infer = llm[llm["step"] == "infer"]                         # the background process on its own row
    assert infer["kind"].tolist() == ["process"] and infer["llm_failures"].sum() == overall["llm_failures"]
    assert infer["llm_failures"].sum() == overall["processes"]["infer"]["failures"]


def test_a_sweep_names_its_unreliable_job_and_resume_does_not_rerun_it(cli, tmp_path):
    """Issue 27, item 7, in a sweep: the job above its limit is unreliable (not ok, not re-run),
    named at the top of the sweep's report; the job with a higher limit is an ordinary result."""
    sweep = tmp_path / "sweep"
    with FakeOpenAI(answer=_half_fail) as server:
        r = cli("run", "-m", "scenarios=[cold_then_fever]", "llm=openai", f"llm.base_url={server.url}",
                "llm.model=fake", "llm.on_failure=skip", "llm.max_retries=0", "llm.max_failure_rate=0.05,1",
                f"hydra.sweep.dir={sweep}")
    assert "Traceback" not in r.stderr
    assert [json.loads((sweep / j / "summary.json").read_text())["status"] for j in "01"] == ["unreliable", "complete"]
    r = cli("report", str(sweep), "--out", str(tmp_path / "report"))
    assert r.returncode == 0, r.stderr
    top = (tmp_path / "report" / "report.md").read_text().split("## Summary")[0]
    assert "**1 job(s) unreliable**" in top and "job 0: unreliable: " in top
    table = pd.read_csv(tmp_path / "report" / "summary.csv")
    assert table.set_index("job")["status"].to_dict() == {0: "unreliable", 1: "ok"}
    r = cli("run", "-m", "--resume", str(sweep))
    assert "resuming: 2 complete, 0 to run" in r.stderr, r.stderr


def test_a_higher_limit_lets_the_same_run_pass(cli, tmp_path):
    with FakeOpenAI(answer=_half_fail) as server:
        r = cli("run", "scenarios=[cold_then_fever]", "llm=openai", f"llm.base_url={server.url}", "llm.model=fake",
                "llm.on_failure=skip", "llm.max_retries=0", "llm.max_failure_rate=1", f"hydra.run.dir={tmp_path}/r")
    assert r.returncode == 0, r.stderr
    assert "llm.max_failure_rate" not in r.stderr


MALFORMED_200 = [b'{"choices": "nope"}', b'{"choices": [1, 2]}',
                 COMPLETION % b'{"prompt_tokens": "abc", "completion_tokens": 1}',
                 COMPLETION % b'{"prompt_tokens": 1e999, "completion_tokens": 1}']


@pytest.mark.parametrize("body", MALFORMED_200, ids=["choices_nope", "choices_1_2", "tokens_abc", "tokens_1e999"])
def test_a_malformed_200_is_retried_then_the_good_answer_is_used(body):
    """Issue 28, item 4: the shape of every answer is checked before it is read."""
    with FakeOpenAI() as server:
        server.push(Reply(200, raw=body))
        llm = backend(server)
        assert llm.infer(ITEM, []) == ()
        assert (llm.meter.calls, llm.meter.retries, llm.meter.failures) == (1, 1, 0)


def test_malformed_200_answers_are_counted_failures_in_a_run(cli, tmp_path):
    """Issue 28, item 4, through the CLI: with llm.on_failure=skip, answers of the wrong shape
    were AttributeError/ValueError/OverflowError and exit 1 with llm_failures 0; each is now a
    retried, counted failure (here every call fails: exit 3, too many failed calls)."""
    with FakeOpenAI() as server:
        server.push(*[Reply(200, raw=MALFORMED_200[i % 4]) for i in range(5000)])
        r = cli("run", "scenarios=[cold_then_fever]", "llm=openai", f"llm.base_url={server.url}", "llm.model=fake",
                "llm.on_failure=skip", "llm.max_retries=1", f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 3, r.stderr
    assert not any(e in r.stderr for e in ("Traceback", "AttributeError", "ValueError", "OverflowError"))
    overall = json.loads((tmp_path / "run" / "summary.json").read_text())["overall"]
    assert overall["llm_failures"] == overall["llm_calls"] > 0
    assert overall["llm_retries"] == overall["llm_calls"]           # each call re-sent once, then failed


def test_a_long_retry_after_is_cut_to_max_retry_wait_and_said(caplog):
    """Issue 28, item 6: ``Retry-After: 100`` slept 100 s per retry whatever llm.timeout; the
    wait is now at most llm.max_retry_wait, with a warning naming both."""
    with FakeOpenAI() as server:
        server.push(Reply(429, headers={"retry-after": "100"}), Reply(429, headers={"retry-after": "100"}))
        llm = backend(server, max_retry_wait=0.2)
        began = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="mtsbench.llm.openai_backend"):
            assert llm.infer(ITEM, []) == ()
        assert 0.4 <= time.monotonic() - began < 10
        assert (llm.meter.retries, llm.meter.failures, len(server.requests)) == (2, 0, 3)
    said = [r.getMessage() for r in caplog.records if "Retry-After" in r.getMessage()]
    assert len(said) == 2 and "wait 100 s" in said[0] and "llm.max_retry_wait=0.2 s" in said[0]


@pytest.mark.parametrize("asked", ["121", "100000", "1e999", "Wed, 21 Oct 2099 07:28:00 GMT"])
def test_a_retry_after_above_two_minutes_is_still_retried(asked):
    """Issue 28, item 6: the openai client does not retry at all when Retry-After is above
    120 s; every fault is retried here, after the capped wait, then counted."""
    with FakeOpenAI() as server:
        server.push(*[Reply(503, headers={"retry-after": asked})] * 3)
        llm = backend(server, max_retry_wait=0.05, on_failure="skip")
        began = time.monotonic()
        assert llm.infer(ITEM, []) is None
        assert time.monotonic() - began < 10
        assert len(server.requests) == 3 and (llm.meter.retries, llm.meter.failures) == (2, 1)


def test_a_negative_max_retry_wait_is_one_line(cli, tmp_path):
    r = cli("run", "scenarios=[milk_allergy]", "llm=openai", "llm.base_url=http://127.0.0.1:9/v1", "llm.model=m",
            "llm.max_retry_wait=-1", f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "llm.max_retry_wait" in r.stderr, r.stderr
