"""rate_attention: how much attention (0 ignore .. 10 critical) a perceived item deserves,
judged in the light of the agent's associated memories, not by common sense alone.

The mock: the personalised score (``heuristics.personalised_score``) of the item's
``salience`` hint (else ``heuristics.heuristic_salience`` of its text) and the memories it
is shown, with relevance read in standard deviations above the embedder's chance level
(``MockLLM.chance``), noised over the range 0..10 and rounded to 3 decimals. The fake
server: ``(h % 101) / 10``.

Where the server returns log-probabilities (llama.cpp's does: ``llm=local`` asks for them),
the score is the expectation over the score tokens' probabilities (``logprobs.expected_number``),
a continuous number; without them, the number the model wrote.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..base import Association, Item
from ..heuristics import heuristic_salience, personalised_score
from ..logprobs import expected_number
from ..prompts import NONE
from ..task import SAMPLE_ITEM, Task, obj


def rate_attention(item: Item, associated: Sequence[Association]) -> float | None:
    """Attention score 0-10 of ``item`` in the light of the ``associated`` memories."""


TEMPLATES = {
    "en": (
        "You label how much attention an agent should pay to a new item of its perception "
        "stream, on a scale of 0 (ignore) to 10 (critical). Judge it in the light of the "
        "agent's own associated memories below, not by common sense alone: an item that is "
        "dull in general matters if it bears on a memory with high attention.\n"
        "Associated memories (attention 0-10, relevance 0-1):\n{associated}\n"
        "New item ({kind}): {text}\n"
        'Answer with JSON: {{"score": <number 0-10>}}'
    ),
    "zh": (
        "请为智能体感知流中的新信息标注关注度，范围 0（忽略）到 10（极其重要）。"
        "不要只凭常识判断，要结合下面联想到的长期记忆及其关注度：一般情况下平淡的信息，"
        "如果与高关注度的记忆相关，也可能值得关注。\n"
        "联想到的记忆（关注度 0-10，相关度 0-1）：\n{associated}\n"
        "新信息（{kind}）：{text}\n"
        '请用 JSON 回答：{{"score": <0 到 10 的数字>}}'
    ),
}


def _shown(associated: Sequence[Association]) -> list[str]:
    return [f"- [{a.attention:.1f}, {a.relevance:.2f}] {a.text}" for a in associated]


def fields(lg: str, item: Item, associated: Sequence[Association]) -> dict:
    """The item, and one line per associated memory: '- [attention, relevance] text'.

    >>> TASK.prompt(Item("a chess board on the table", "perceive", "s1"), [Association("plays chess", 6.0, 0.4)])
    ... # doctest: +ELLIPSIS
    'You label how much attention ...- [6.0, 0.40] plays chess\\nNew item (perceive): a chess board on the table\\n...'
    """
    return {"associated": "\n".join(_shown(associated)) or NONE[lg], "kind": item.kind, "text": item.text}


def mock(llm, noise, item: Item, associated: Sequence[Association]) -> tuple[float, dict]:
    s = item.hints.salience if item.hints.salience is not None else heuristic_salience(item.text)
    score = personalised_score(
        s, np.array([a.attention for a in associated]), np.array([a.relevance for a in associated]),
        llm.relevance_floor, llm.relevance_full, llm.follow, llm.attention_ref,
        llm.restate_from, llm.restate_full, llm.chance(item.language))
    score = round(noise.bounded(score, 0.0, 10.0), 3)
    return score, {"score": score}


def expectation(score: float, tokens: list) -> float | None:
    """The expected score over the answer's token probabilities (None: unreadable)."""
    return expected_number(tokens, "score", 0.0, 10.0)


def check(score: float) -> None:
    assert 0.0 <= score <= 10.0, "rate_attention must answer within 0..10"


TASK = Task(
    rate_attention, obj({"score": {"type": "number", "minimum": 0, "maximum": 10}}), lambda o: float(o["score"]),
    TEMPLATES, fields, fake=lambda h: {"score": (h % 101) / 10}, language=lambda item, associated: item.language,
    mock=mock, noise_inputs=lambda item, associated: "\n".join([f"{item.kind}: {item.text}"] + _shown(associated)),
    example=lambda: (SAMPLE_ITEM, [Association("The user is allergic to milk", 8.0, 0.5)]), check=check,
    expectation=expectation)
