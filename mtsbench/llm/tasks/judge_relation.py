"""judge_relation: how a newly formed fact bears on a stored one: the same (possibly in
other words), contradicting it, or unrelated, with the strength of the relation (0..1).

The mock: ``heuristics.fact_relation`` (keys and values; text similarity for facts
without a key) with strength 1 (the hints are ground truth), noised over 0..1. The fake
server: unrelated, strength ``(h % 11) / 10``.
"""

from __future__ import annotations

from ..base import RELATION_LABELS, Fact, Relation
from ..heuristics import fact_relation
from ..prompts import render_fact
from ..task import SAMPLE_FACT, UNIT, Task, obj


def judge_relation(new: Fact, old: Fact, language: str = "en") -> Relation | None:
    """Whether ``new`` is the same fact as ``old``, contradicts it, or is unrelated."""


TEMPLATES = {
    "en": (
        "Compare a newly formed fact with a stored fact about the user.\n"
        "same: they state the same thing (possibly in other words); contradicts: they cannot "
        "both hold; unrelated: neither. strength: how strongly the relation holds (0-1).\n"
        "New fact: {new}\n"
        "Stored fact: {old}\n"
        'Answer with JSON: {{"label": "same" | "contradicts" | "unrelated", "strength": <0-1>}}'
    ),
    "zh": (
        "比较一条新形成的事实和一条已存储的关于用户的事实。\n"
        "same：两者说的是同一件事（措辞可以不同）；contradicts：两者不可能同时成立；"
        "unrelated：两者无关。strength：这种关系成立的强度（0-1）。\n"
        "新事实：{new}\n"
        "已存事实：{old}\n"
        '请用 JSON 回答：{{"label": "same" | "contradicts" | "unrelated", "strength": <0-1>}}'
    ),
}


def mock(llm, noise, new: Fact, old: Fact, language: str) -> tuple[Relation, dict]:
    label = fact_relation(new, old, llm.same_text)
    strength = round(noise.bounded(1.0, 0.0, 1.0), 4)
    return Relation(label, strength), {"label": label, "strength": strength}


def check(rel: Relation) -> None:
    assert isinstance(rel, Relation) and 0.0 <= rel.strength <= 1.0, "judge_relation gives a Relation"


TASK = Task(
    judge_relation, obj({"label": {"type": "string", "enum": list(RELATION_LABELS)}, "strength": UNIT}),
    lambda o: Relation(o["label"], float(o["strength"])), TEMPLATES,
    lambda lg, new, old, language: {"new": render_fact(new), "old": render_fact(old)},
    fake=lambda h: {"label": "unrelated", "strength": (h % 11) / 10}, mock=mock,
    noise_inputs=lambda new, old, language: "\n".join(render_fact(f) for f in (new, old)),
    example=lambda: (SAMPLE_FACT, SAMPLE_FACT), check=check)
