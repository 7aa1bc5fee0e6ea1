"""What every task's prompt shares: the languages, the system and repair messages, and how
facts, known names and lists are shown.

A task's own templates (en, zh; another language falls back to en) and the fields they are
filled with live with the task (``mtsbench.llm.tasks``); ``Task.prompt`` renders its one
user message, and the answer format it asks for is the task's JSON schema. The mock renders
them too, to count tokens, so a prompt's cost is the same whichever backend answers it.
``SYSTEM`` is the system message a chat backend sends first, ``repair_prompt`` the
follow-up after an invalid answer.
"""

from __future__ import annotations

import json
from typing import Sequence

from .base import Fact, Known

LANGUAGES = ("en", "zh")    # every task has a template in each

SYSTEM = {
    "en": "You are a component of an agent's memory system. Answer with one JSON object only.",
    "zh": "你是智能体记忆系统的一个组件。只用一个 JSON 对象回答。",
}
REPAIR = {
    "en": "Your answer was not usable: {reason}. Answer again with only the JSON object in the format asked for.",
    "zh": "你的回答无法使用：{reason}。请只用所要求格式的 JSON 对象重新回答。",
}
NONE = {"en": "(none)", "zh": "（无）"}
BELIEF = {"en": ", belief {:.2f}", "zh": "，置信度 {:.2f}"}
KNOWN_CHARS = 120     # a known name's text is cut to this many characters (an event's storyline grows)


def lang(language: str | None) -> str:
    """The template language for ``language`` (en unless it is one of the templates')."""
    return language if language in LANGUAGES else "en"


def bullet_lines(texts: Sequence[str], language: str) -> str:
    """One '- text' line per text; NONE when there is none."""
    return "\n".join(f"- {t}" for t in texts) or NONE[language]


def render_fact(fact: Fact) -> str:
    """'key = value: text (belief b)', the form facts are shown in ('value: text (belief b)'
    for a fact without a key).

    >>> render_fact(Fact("user.skill.chess", True, "The user plays chess", 0.7))
    'user.skill.chess = true: The user plays chess (belief 0.70)'
    >>> render_fact(Fact("", True, "Kim rides a red bicycle", 0.9))
    'true: Kim rides a red bicycle (belief 0.90)'
    """
    value = json.dumps(fact.value, ensure_ascii=False)
    head = f"{fact.key} = {value}" if (fact.key or "").strip() else value
    return f"{head}: {fact.text} (belief {fact.belief:.2f})"


def known_lines(known: Sequence[Known], language: str = "en") -> str:
    """One line per known name: '- name: text', or '- name, belief b: text' when it has a
    belief; the text cut to ``KNOWN_CHARS`` characters; NONE when there is none.

    >>> print(known_lines([Known("user.skill.chess", "The user plays chess"), Known("user.mood.calm", "calm", 0.456)]))
    - user.skill.chess: The user plays chess
    - user.mood.calm, belief 0.46: calm
    >>> known_lines([], "zh")
    '（无）'
    """
    lg = lang(language)
    out = []
    for k in known:
        text = " ".join(k.text.split())
        text = text if len(text) <= KNOWN_CHARS else text[:KNOWN_CHARS - 1] + "…"
        out.append(f"- {k.name}{'' if k.belief is None else BELIEF[lg].format(k.belief)}: {text}")
    return "\n".join(out) or NONE[lg]


def system_prompt(language: str = "en") -> str:
    return SYSTEM[lang(language)]


def repair_prompt(reason: str, language: str = "en") -> str:
    """The follow-up message after an invalid answer, saying what was wrong."""
    return REPAIR[lang(language)].format(reason=reason)
