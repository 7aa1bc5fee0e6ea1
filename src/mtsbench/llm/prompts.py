"""Prompt templates per task and language. The mock renders them too, to count tokens."""

from __future__ import annotations

from typing import Sequence

from .base import Association, Item

RATE_ATTENTION = {
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
NONE = {"en": "(none)", "zh": "（无）"}


def rate_attention_prompt(item: Item, associated: Sequence[Association]) -> str:
    """The rate_attention prompt for ``item`` in its language.

    >>> p = rate_attention_prompt(Item("milk on the table", "perceive", "s1"), [Association("allergic to milk", 6.0, 0.4)])
    >>> "- [6.0, 0.40] allergic to milk" in p and "milk on the table" in p
    True
    """
    lang = item.language if item.language in RATE_ATTENTION else "en"
    lines = "\n".join(f"- [{a.attention:.1f}, {a.relevance:.2f}] {a.text}" for a in associated) or NONE[lang]
    return RATE_ATTENTION[lang].format(associated=lines, kind=item.kind, text=item.text)
