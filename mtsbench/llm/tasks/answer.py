"""answer: a short answer (a few words or a number) to a probe's question from the texts
of the memories it retrieved, or "not mentioned" (evaluation: ``mtsbench.evaluation.answer``).

Not a memory task: the mock has none (probes are then not answered), the contract does not
check it. The fake server: "not mentioned".
"""

from __future__ import annotations

from typing import Sequence

from ..prompts import bullet_lines
from ..task import Task, obj


def answer(question: str, context: Sequence[str], language: str = "en") -> str | None:
    """A short answer to ``question`` from the retrieved memories' texts ``context``."""


TEMPLATES = {
    "en": (
        "Answer the question about the user from the agent's memories below only. Give a short "
        "answer: a few words or a number, not a sentence. If the memories do not tell, answer "
        "\"not mentioned\".\n"
        "Memories:\n{context}\n"
        "Question: {question}\n"
        'Answer with JSON: {{"answer": "<short answer>"}}'
    ),
    "zh": (
        "只根据下面智能体的记忆回答关于用户的问题。回答要简短：几个词或一个数字，不要写成句子。"
        "如果记忆中没有提到，回答“未提及”。\n"
        "记忆：\n{context}\n"
        "问题：{question}\n"
        '请用 JSON 回答：{{"answer": "<简短回答>"}}'
    ),
}


def fields(lg: str, question: str, context: Sequence[str], language: str) -> dict:
    """The memories' texts as a list, and the question.

    >>> p = TASK.prompt("What does Kim play?", ["Kim plays the cello."], "en")
    >>> "- Kim plays the cello." in p and "Question: What does Kim play?" in p
    True
    """
    return {"context": bullet_lines(context, lg), "question": question}


TASK = Task(answer, obj({"answer": {"type": "string"}}), lambda o: o["answer"].strip(), TEMPLATES, fields,
            fake=lambda h: {"answer": "not mentioned"}, memory=False)
