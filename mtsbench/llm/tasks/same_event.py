"""same_event: whether a new development continues a stored event (the same storyline: the
same journey, course, project or house move, told further) or is another event. A category
of ``""`` means none: keyless events are matched by this judgement, not by a string.

The mock: ``heuristics.same_event`` (equal categories; without categories, a new text
similar to some sentence of the storyline). The fake server: false.
"""

from __future__ import annotations

from .. import heuristics
from ..base import EventTag
from ..prompts import NONE
from ..task import Task, obj


def same_event(event: EventTag, new: EventTag, language: str = "en") -> bool | None:
    """Whether ``new`` continues the stored ``event`` (the same storyline); a category of
    ``""`` means none (keyless events are matched by this judgement, not by a string)."""


TEMPLATES = {
    "en": (
        "An agent keeps one running summary per major event in the user's life. Does the new "
        "development below continue the stored event (the same storyline: the same journey, course, "
        "project or house move, told further), or is it another event?\n"
        "Stored event ({category}): {event}\n"
        "New development ({new_category}): {new}\n"
        'Answer with JSON: {{"same": true | false}}'
    ),
    "zh": (
        "智能体为用户生活中的每个大类事件保留一段持续更新的摘要。下面的新进展是否延续已存的事件"
        "（同一条故事线：同一次出行、同一门课、同一个项目或同一次搬家的后续），还是另一件事？\n"
        "已存事件（{category}）：{event}\n"
        "新进展（{new_category}）：{new}\n"
        '请用 JSON 回答：{{"same": true | false}}'
    ),
}


def fields(lg: str, event: EventTag, new: EventTag, language: str) -> dict:
    """Each event's text and category (NONE when it has none).

    >>> "已存事件（（无））：去了海边。" in TASK.prompt(EventTag("", "去了海边。"), EventTag("", "又去了。"), "zh")
    True
    >>> "Stored event (trip): Flew to Oslo." in TASK.prompt(EventTag("trip", "Flew to Oslo."), EventTag("", "Back."), "en")
    True
    """
    return {"category": (event.category or "").strip() or NONE[lg], "event": event.text,
            "new_category": (new.category or "").strip() or NONE[lg], "new": new.text}


def mock(llm, noise, event: EventTag, new: EventTag, language: str) -> tuple[bool, dict]:
    same = heuristics.same_event(event, new, llm.same_event_text)
    return same, {"same": same}


TASK = Task(same_event, obj({"same": {"type": "boolean"}}), lambda o: bool(o["same"]), TEMPLATES, fields,
            fake=lambda h: {"same": False}, mock=mock)
