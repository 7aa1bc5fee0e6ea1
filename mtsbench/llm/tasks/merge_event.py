"""merge_event: an event's running summary with a new development merged in, keeping its
storyline (what happened first stays first, nothing is dropped, the new follows in order).

The mock: the event's text, ended as a sentence, followed by the new text; the event's text
unchanged if it already contains the new text. The fake server: a fixed text.
"""

from __future__ import annotations

from ..heuristics import ended, join
from ..task import TEXT, Task, obj


def merge_event(event_text: str, new_text: str, language: str = "en") -> str | None:
    """The event's summary with ``new_text`` merged in, keeping its storyline."""


TEMPLATES = {
    "en": (
        "An agent keeps one running summary per major event in the user's life. Merge the new "
        "development into the event's summary. Keep the storyline: what happened first stays "
        "first, nothing already there is dropped, and the new development follows in order.\n"
        "Event so far: {event}\n"
        "New development: {new}\n"
        'Answer with JSON: {{"text": "<the merged summary>"}}'
    ),
    "zh": (
        "智能体为用户生活中的每个大类事件保留一段持续更新的摘要。请把新进展合并进该事件的摘要，"
        "保持事件的来龙去脉：先发生的仍在前，已有内容不丢失，新进展按顺序接在后面。\n"
        "事件至今：{event}\n"
        "新进展：{new}\n"
        '请用 JSON 回答：{{"text": "<合并后的摘要>"}}'
    ),
}


def mock(llm, noise, event_text: str, new_text: str, language: str) -> tuple[str, dict]:
    new = new_text.strip()
    merged = event_text.strip() if new in event_text else join([ended(event_text, language), new], language)
    return merged, {"text": merged}


def check(merged: str) -> None:
    assert isinstance(merged, str)


TASK = Task(
    merge_event, obj({"text": TEXT}), lambda o: o["text"].strip(), TEMPLATES,
    lambda lg, event_text, new_text, language: {"event": event_text, "new": new_text},
    fake=lambda h: {"text": "The event so far, then the new development."}, mock=mock,
    example=lambda: ("A trip to Paris.", "The user is back from Paris."), check=check)
