"""infer: the impressions new information supports by everyday causal knowledge:
statements probably true but not said, each with a belief (0..1) and a lifetime.

The open impressions nearest the item (``known``, with the belief each has accumulated)
are shown for reuse of their keys; an item's own ``belief`` is shown when known (what
follows from it can be no surer than it). Lifetimes are asked in days and returned in
seconds.

The mock: the item's ``infer`` hints as impressions (belief and lifetime noised); none
without hints. The fake server: no impressions.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..base import Impression, Item, Known
from ..prompts import BELIEF, bullet_lines, known_lines
from ..task import DAYS, SAMPLE_ITEM, TEXT, UNIT, Task, days, obj, seconds


def infer(info: Item, context: Sequence[str], known: Sequence[Known] = ()) -> tuple[Impression, ...] | None:
    """Impressions drawn from ``info`` (in the light of ``context``), possibly none; the
    keys of open impressions near it (``known``) are shown for reuse."""


TEMPLATES = {
    "en": (
        "Apply everyday causal knowledge to new information about the user and list the "
        "impressions it supports: statements that are probably true but were not said (muddy "
        "boots by the door suggest a walk in the rain; many small remarks suggest a lasting disposition). key is "
        "a dotted lowercase identifier of the statement, text the statement, belief how strongly "
        "this information alone supports it (0-1), ttl_days for how many days the impression "
        "stays valid (a passing mood fades in days, a disposition lasts years). Give an empty list if nothing "
        "follows.\n"
        "Context from memory:\n{context}\n"
        "Open impressions near this information (key, belief so far: statement):\n{known}\n"
        "Reuse a listed key when an impression states the same thing; otherwise name a new one.\n"
        "New information ({kind}{belief}): {text}\n"
        'Answer with JSON: {{"impressions": [{{"key": "...", "text": "...", "belief": <0-1>, '
        '"ttl_days": <number>}}]}}'
    ),
    "zh": (
        "运用日常因果常识，从关于用户的新信息推出它所支持的印象：可能成立但并未明说的陈述"
        "（门口沾泥的靴子说明也许冒雨散过步；许多小的言谈反映一种稳定的脾性）。key 是该陈述的点分小写标识，"
        "text 是陈述本身，belief 是仅凭这条信息对它的支持程度（0-1），ttl_days 是印象保持有效的"
        "天数（一时的心情几天就过去，脾性可以持续多年）。如果推不出什么，给出空列表。\n"
        "记忆中的上下文：\n{context}\n"
        "与这条信息相近、仍然有效的印象（key，目前的置信度：陈述）：\n{known}\n"
        "如果某条印象与列出的陈述相同，请沿用它的 key；否则取一个新 key。\n"
        "新信息（{kind}{belief}）：{text}\n"
        '请用 JSON 回答：{{"impressions": [{{"key": "...", "text": "...", "belief": <0-1>, '
        '"ttl_days": <数字>}}]}}'
    ),
}

IMPRESSION = obj({"key": TEXT, "text": TEXT, "belief": UNIT, "ttl_days": DAYS})


def convert(o: dict) -> tuple[Impression, ...]:
    return tuple(Impression(i["key"].strip(), i["text"].strip(), float(i["belief"]), seconds(i["ttl_days"]))
                 for i in o["impressions"])


def fields(lg: str, info: Item, context: Sequence[str], known: Sequence[Known]) -> dict:
    """The item (with its belief when it has one), the context memories and the open
    impressions near it (``known_lines``).

    >>> p = TASK.prompt(Item("Kim hums all day.", "say", "s1", belief=0.8), [], [Known("user.mood.cheerful", "cheerful", 0.5)])
    >>> "- user.mood.cheerful, belief 0.50: cheerful" in p and "New information (say, belief 0.80): Kim hums" in p
    True
    """
    belief = "" if info.belief is None else BELIEF[lg].format(info.belief)
    return {"context": bullet_lines(context, lg), "known": known_lines(known, lg), "kind": info.kind,
            "belief": belief, "text": info.text}


def mock(llm, noise, info: Item, context: Sequence[str], known: Sequence[Known]) -> tuple[tuple[Impression, ...], dict]:
    out = []
    for h in info.hints.infer:
        belief = round(noise.bounded(h.belief, 0.0, 1.0), 4)
        out.append(replace(h, belief=belief, ttl=noise.duration(h.ttl)))
    return tuple(out), {"impressions": [{"key": i.key, "text": i.text, "belief": i.belief, "ttl_days": days(i.ttl)}
                                        for i in out]}


def check(impressions: tuple[Impression, ...]) -> None:
    assert all(isinstance(i, Impression) and 0 <= i.belief <= 1 and i.ttl > 0 for i in impressions)


TASK = Task(
    infer, obj({"impressions": {"type": "array", "items": IMPRESSION}}), convert, TEMPLATES, fields,
    fake=lambda h: {"impressions": []}, language=lambda info, context, known: info.language, mock=mock,
    noise_inputs=lambda info, context, known: "\n".join([f"{info.kind}: {info.text}"] + [f"- {c}" for c in context]),
    example=lambda: (SAMPLE_ITEM, ["The user is allergic to milk"], (Known("user.diet", "The user avoids dairy", 0.4),)),
    check=check,
    # the examples the prompts showed until issue 27 (copied into 6 of 20 answers), and show now
    examples=("muddy boots by the door", "a walk in the rain", "门口沾泥的靴子", "冒雨散过步",
              "many small remarks suggest a lasting disposition"))
