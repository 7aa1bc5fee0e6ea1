"""rate_attention scored as the expectation over the score tokens' probabilities (issue 27,
item 6): hand-computed distributions, and the path through a server, a cassette and replay."""

from __future__ import annotations

import json
import math

import pytest

from mtsbench.llm import cassette
from mtsbench.llm.base import Association, Item
from mtsbench.llm.logprobs import expected_number
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.replay import ReplayLLM
from mtsbench.llm.testing import FakeOpenAI, Reply

ITEM = Item("A glass of milk is on the table.", "perceive", "s1")
SHOWN = [Association("The user is allergic to milk", 8.0, 0.5)]


def tok(token: str, p: float, **alternatives: float) -> dict:
    """One answer token generated with probability ``p``, and its alternatives' probabilities."""
    return {"token": token, "logprob": math.log(p),
            "top_logprobs": [{"token": token, "logprob": math.log(p)}]
            + [{"token": t, "logprob": math.log(q)} for t, q in alternatives.items()]}


HEAD = [tok('{"', 1.0), tok("score", 1.0), tok('":', 1.0), tok(" ", 1.0)]
DIGIT = {"d0": "0", "d1": "1", "d5": "5", "d7": "7", "d8": "8"}


def alt(**kw: float) -> dict:
    return {DIGIT.get(k, k): v for k, v in kw.items()}


def test_one_digit_the_expectation_over_the_digits():
    # 5 generated (0.6), 8 (0.3), 1 (0.1: it could go on to 10, unobserved: left out); '}' closes it
    tokens = HEAD + [{**tok("5", 0.6), "top_logprobs": [{"token": k, "logprob": math.log(v)}
                                                        for k, v in alt(d5=0.6, d8=0.3, d1=0.1).items()]},
                     tok("}", 0.9)]
    assert expected_number(tokens, "score", 0, 10) == pytest.approx((0.6 * 5 + 0.3 * 8) / 0.9)


def test_a_two_token_ten_weighs_its_second_token():
    # 1 (0.5) then 0 (0.6) or end (0.4); 8 (0.3); 5 (0.2): 0.5 x (0.6 x 10 + 0.4 x 1) + 0.3 x 8 + 0.2 x 5 = 6.6
    first = {"token": "1", "logprob": math.log(0.5),
             "top_logprobs": [{"token": k, "logprob": math.log(v)} for k, v in alt(d1=0.5, d8=0.3, d5=0.2).items()]}
    second = {"token": "0", "logprob": math.log(0.6),
              "top_logprobs": [{"token": "0", "logprob": math.log(0.6)}, {"token": "}", "logprob": math.log(0.4)}]}
    assert expected_number(HEAD + [first, second, tok("}", 1.0)], "score", 0, 10) == pytest.approx(6.6)


def test_a_zero_and_a_fraction_and_nothing_readable():
    zero = HEAD + [{**tok("0", 0.5), "top_logprobs": [{"token": "0", "logprob": math.log(0.5)},
                                                      {"token": "7", "logprob": math.log(0.5)}]}, tok("}", 1.0)]
    assert expected_number(zero, "score", 0, 10) == pytest.approx(3.5)
    # 7.5 generated: the 7 branch keeps its fraction; a 9 branch is read as 9
    frac = HEAD + [{**tok("7", 0.75), "top_logprobs": [{"token": "7", "logprob": math.log(0.75)},
                                                       {"token": "9", "logprob": math.log(0.25)}]},
                   tok(".", 1.0), tok("5", 1.0), tok("}", 1.0)]
    assert expected_number(frac, "score", 0, 10) == pytest.approx(0.75 * 7.5 + 0.25 * 9)
    assert expected_number([tok('{"score": 5}', 1.0)], "score", 0, 10) is None      # no token boundary
    assert expected_number([tok("no number", 1.0)], "score", 0, 10) is None


def body(content: str, tokens: list | None) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if tokens is not None:
        choice["logprobs"] = {"content": tokens}
    return json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 4}}).encode()


def test_a_server_s_logprobs_make_the_score_continuous_and_replay_keeps_it(tmp_path):
    tokens = HEAD + [{**tok("8", 0.5), "top_logprobs": [{"token": "8", "logprob": math.log(0.5)},
                                                        {"token": "5", "logprob": math.log(0.5)}]}, tok("}", 1.0)]
    path = tmp_path / "c.jsonl"
    with FakeOpenAI() as server:
        server.push(Reply(raw=body('{"score": 8}', tokens)), Reply(raw=body('{"score": 8}', None)))
        llm = OpenAILLM(base_url=server.url, model="m", logprobs=True, record=str(path), seed=0)
        assert llm.rate_attention(ITEM, SHOWN) == pytest.approx(6.5)
        sent = server.requests[0][1]
        assert sent["logprobs"] is True and sent["top_logprobs"] == 10
        assert llm.rate_attention(ITEM, SHOWN[:0]) == 8.0            # none sent back: the integer
        plain = OpenAILLM(base_url=server.url, model="m", seed=0)      # not asked: not sent
        plain.rate_attention(ITEM, SHOWN)
        assert "logprobs" not in server.requests[-1][1]
        llm.summarize([ITEM])                                           # a task without an expectation
        assert "logprobs" not in server.requests[-1][1]
    records = cassette.read(path)
    assert records[0]["response"]["logprobs"][4]["token"] == "8" and "logprobs" not in records[1]["response"]
    # the request key is the same with and without logprobs: a cassette recorded without them still replays
    assert records[0]["key"] == cassette.request_key("openai", "m", "rate_attention", records[0]["messages"],
                                                     {"temperature": 0.0, "seed": 0})
    replay = ReplayLLM(cassette=str(path))
    assert replay.rate_attention(ITEM, SHOWN) == pytest.approx(6.5)
    assert replay.rate_attention(ITEM, SHOWN[:0]) == 8.0
