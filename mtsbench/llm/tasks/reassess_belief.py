"""reassess_belief: the belief (0 surely false .. 1 surely true) in a fact, given the newer
facts (each with the belief it was stated with) that restate or contradict it.

The mock: ``heuristics.reassessed_belief`` (restatements raise belief by noisy-or,
contradictions lower it in proportion to their belief; facts with other keys are not read),
noised over 0..1. The fake server: ``(h % 11) / 10``.
"""

from __future__ import annotations

from typing import Sequence

from ..base import Fact
from ..heuristics import reassessed_belief
from ..prompts import bullet_lines, render_fact
from ..task import SAMPLE_FACT, UNIT, Task, obj


def reassess_belief(fact: Fact, evidence: Sequence[Fact], language: str = "en") -> float | None:
    """Belief 0..1 in ``fact`` (its current belief given) in the light of newer ``evidence``
    facts that restate or contradict it, each with the belief it was stated with."""


TEMPLATES = {
    "en": (
        "How sure can an agent be that this fact about the user holds, now that the newer "
        "facts below were stated? Each newer fact restates it or contradicts it (same key, "
        "another value) and comes with the belief it was stated with. Answer with a belief from "
        "0 (surely false) to 1 (surely true).\n"
        "Fact (with its belief so far): {fact}\n"
        "Newer facts:\n{evidence}\n"
        'Answer with JSON: {{"belief": <0-1>}}'
    ),
    "zh": (
        "下面这些较新的事实陈述之后，智能体能在多大程度上相信这条关于用户的事实成立？"
        "每条较新的事实或重申它，或与它矛盾（key 相同而 value 不同），并附有陈述时的置信度。"
        "请给出 0（肯定不成立）到 1（肯定成立）之间的置信度。\n"
        "事实（及其目前的置信度）：{fact}\n"
        "较新的事实：\n{evidence}\n"
        '请用 JSON 回答：{{"belief": <0-1>}}'
    ),
}


def fields(lg: str, fact: Fact, evidence: Sequence[Fact], language: str) -> dict:
    return {"fact": render_fact(fact), "evidence": bullet_lines([render_fact(e) for e in evidence], lg)}


def mock(llm, noise, fact: Fact, evidence: Sequence[Fact], language: str) -> tuple[float, dict]:
    perfect = reassessed_belief(fact, evidence, llm.same_text)
    belief = round(noise.bounded(perfect, 0.0, 1.0), 4)
    return belief, {"belief": belief}


def check(belief: float) -> None:
    assert 0.0 <= belief <= 1.0, "belief lies in 0..1"


TASK = Task(
    reassess_belief, obj({"belief": UNIT}), lambda o: float(o["belief"]), TEMPLATES, fields,
    fake=lambda h: {"belief": (h % 11) / 10}, mock=mock,
    noise_inputs=lambda fact, evidence, language: "\n".join([render_fact(fact)] + [f"- {render_fact(e)}"
                                                                                  for e in evidence]),
    example=lambda: (SAMPLE_FACT, [SAMPLE_FACT]), check=check)
