"""judge_answer: whether a reply to a question states what the gold reply does (other
words, a paraphrase or more detail are fine); LLM-as-judge (evaluation: ``mtsbench.evaluation.answer``).

Not a memory task: the mock has none, the contract does not check it. The fake server:
``bool(h % 2)``.
"""

from __future__ import annotations

from ..task import Task, obj


def judge_answer(question: str, gold: str, reply: str, language: str = "en") -> bool | None:
    """Whether ``reply`` states what the ``gold`` answer does (LLM-as-judge)."""


TEMPLATES = {
    "en": (
        "Grade a reply to a question against the gold reply. It is correct if it states the "
        "same thing as the gold reply (other words, a paraphrase or more detail are fine); it "
        "is wrong if it states something else or says it does not know.\n"
        "Question: {question}\n"
        "Gold reply: {gold}\n"
        "Reply to grade: {reply}\n"
        'Answer with JSON: {{"correct": true | false}}'
    ),
    "zh": (
        "对照标准回复，评判对一个问题的回复。如果它与标准回复说的是同一件事（措辞不同、换种说法或更详细都可以），"
        "就是正确的；如果说的是别的事或表示不知道，就是错误的。\n"
        "问题：{question}\n"
        "标准回复：{gold}\n"
        "待评判的回复：{reply}\n"
        '请用 JSON 回答：{{"correct": true | false}}'
    ),
}


TASK = Task(judge_answer, obj({"correct": {"type": "boolean"}}), lambda o: bool(o["correct"]), TEMPLATES,
            lambda lg, question, gold, reply, language: {"question": question, "gold": gold, "reply": reply},
            fake=lambda h: {"correct": bool(h % 2)}, memory=False)
