"""summarize: a summary of dialogue turns, the lasting facts about the user they state and
the major events they tag, each naming the turns it comes from.

Identity is kept by showing the model what memory already holds (issue 15): the keys of
stored facts similar to the turns (``known_facts``) and the categories of live events of
similar text (``known_events``), which it reuses when a fact or event is about the same
subject. A summary's facts and events name the turns they come from (``turns``, 1-based
numbers as the prompt numbers them); the key is in the strict schema, but an answer that
leaves it out is read as ``[]`` (no turn named: the agent then credits every summarized
turn) rather than refused.

The mock: the summary is the first sentence of each turn, joined; the facts are the turns'
``facts`` hints (beliefs noised), the events their ``event`` hints (an event without
``text`` takes its turn's first sentence; validity noised), each naming the turn it came
from. No hints: no facts, no events. The known names count in the prompt's tokens but never
change the answer (the hints already name the keys a perfect model would reuse). The fake
server: a fixed summary, no facts, no events.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..base import EventTag, Fact, Item, Known, Summary
from ..heuristics import first_sentence, join
from ..prompts import NONE, known_lines
from ..task import DAYS, SAMPLE_ITEM, TEXT, TURNS, UNIT, Task, days, obj, seconds


def summarize(turns: Sequence[Item], known_facts: Sequence[Known] = (),
              known_events: Sequence[Known] = ()) -> Summary | None:
    """Summary, facts and event tags of ``turns`` (in the first turn's language); the keys
    of similar stored facts and the categories of similar events are shown for reuse."""


TEMPLATES = {
    "en": (
        "Summarise the dialogue turns below for an agent's long-term memory.\n"
        "1. summary: what was said, in a few sentences.\n"
        "2. facts: lasting facts about the user that the turns state. key is a dotted "
        "lowercase identifier of what the fact is about (e.g. user.skill.chess), value what "
        "holds (true/false, a number or a short string), text the fact as a sentence, belief "
        "how sure you are that it holds (0-1). Two facts with the same key and different "
        "values contradict each other. turns: the numbers of the turns that state it.\n"
        "3. events: the major events in the user's life the turns mention: anything that unfolds "
        "over days or weeks and may be told about again (a journey or holiday, a course, a house "
        "move, a wedding). List every one the turns mention, planned, happening or past. category "
        "is a short lowercase name of the kind of event (e.g. course.sailing, "
        "renovation.bathroom), text one sentence about it, valid_days how many days an event of this "
        "category stays current (null if you cannot tell), turns the numbers of the turns that tell of it.\n"
        "Use empty lists when there is nothing to extract.\n"
        "Keys of stored facts similar to these turns:\n{known_facts}\n"
        "Categories of stored events of similar text:\n{known_events}\n"
        "Reuse a listed key when a fact is about the same subject (even with another value) and "
        "a listed category when an event continues that storyline; otherwise name a new one.\n"
        "Turns:\n{turns}\n"
        'Answer with JSON: {{"summary": "...", "facts": [{{"key": "...", "value": ..., "text": "...", '
        '"belief": <0-1>, "turns": [<n>]}}], "events": [{{"category": "...", "text": "...", '
        '"valid_days": <number or null>, "turns": [<n>]}}]}}'
    ),
    "zh": (
        "请为智能体的长期记忆总结下面的对话。\n"
        "1. summary：用几句话概括对话内容。\n"
        "2. facts：对话中陈述的关于用户的持久事实。key 是事实所指内容的点分小写标识（如 "
        "user.skill.chess），value 是成立的值（true/false、数字或简短字符串），text 用一句话"
        "陈述该事实，belief 是你认为它成立的把握（0-1）。key 相同而 value 不同的两个事实互相矛盾。turns 是陈述该事实的对话编号。\n"
        "3. events：对话提到的用户生活中的大类事件：持续几天或几周、之后可能再被提起的事情（出行或度假、"
        "学一门课、搬家、婚礼等）。对话提到的每一件都要列出，无论是计划中、正在发生还是已经过去。category 是事件类别的"
        "简短小写名称（如 course.sailing、renovation.bathroom），text 用一句话描述该事件，valid_days "
        "是该类事件保持有效的天数（无法判断时为 null），turns 是提到该事件的对话编号。\n"
        "没有可提取的内容时使用空列表。\n"
        "与这些对话相近的已存事实的 key：\n{known_facts}\n"
        "文本相近的已存事件的类别：\n{known_events}\n"
        "如果某条事实与列出的 key 说的是同一主题（即使 value 不同），请沿用这个 key；如果某个事件延续了列出的"
        "事件的故事线，请沿用它的类别；否则取一个新名称。\n"
        "对话：\n{turns}\n"
        '请用 JSON 回答：{{"summary": "...", "facts": [{{"key": "...", "value": ..., "text": "...", '
        '"belief": <0-1>, "turns": [<编号>]}}], "events": [{{"category": "...", "text": "...", '
        '"valid_days": <数字或 null>, "turns": [<编号>]}}]}}'
    ),
}

SPEAKERS = {"en": {"say": "user", "reply": "agent", "perceive": "observation"},
            "zh": {"say": "用户", "reply": "智能体", "perceive": "观察"}}

VALUE = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
FACT = obj({"key": TEXT, "value": VALUE, "text": TEXT, "belief": UNIT, "turns": TURNS})
EVENT = obj({"category": TEXT, "text": TEXT, "valid_days": {"anyOf": [DAYS, {"type": "null"}]}, "turns": TURNS})
SCHEMA = obj({"summary": TEXT, "facts": {"type": "array", "items": FACT}, "events": {"type": "array", "items": EVENT}})


def fill_turns(o: dict) -> dict:
    """Read a fact or event without ``turns`` as naming no turn (``[]``)."""
    for name in ("facts", "events"):
        items = o.get(name)
        if isinstance(items, list):
            o[name] = [x | {"turns": []} if isinstance(x, dict) and "turns" not in x else x for x in items]
    return o


def convert(o: dict) -> Summary:
    facts = tuple(Fact(f["key"].strip(), f["value"], f["text"].strip(), float(f["belief"]), tuple(f["turns"]))
                  for f in o["facts"])
    events = tuple(EventTag(e["category"].strip(), e["text"].strip(), seconds(e["valid_days"]), tuple(e["turns"]))
                   for e in o["events"])
    return Summary(o["summary"].strip(), facts, events)


def language(turns: Sequence[Item], known_facts=(), known_events=()) -> str:
    return turns[0].language if turns else "en"


def fields(lg: str, turns: Sequence[Item], known_facts: Sequence[Known], known_events: Sequence[Known]) -> dict:
    """One numbered line per turn, '[speaker] text', and the known keys and categories (``known_lines``).

    >>> "1. [用户] 我会下国际象棋。" in TASK.prompt([Item("我会下国际象棋。", "say", "s0", "zh")])
    True
    """
    who = SPEAKERS[lg]
    lines = "\n".join(f"{n}. [{who.get(t.kind, t.kind)}] {t.text}" for n, t in enumerate(turns, 1)) or NONE[lg]
    return {"turns": lines, "known_facts": known_lines(known_facts, lg), "known_events": known_lines(known_events, lg)}


def mock(llm, noise, turns: Sequence[Item], known_facts: Sequence[Known],
         known_events: Sequence[Known]) -> tuple[Summary, dict]:
    facts = tuple(replace(h, belief=round(noise.bounded(h.belief, 0.0, 1.0), 4), turns=(n,))
                  for n, t in enumerate(turns, 1) for h in t.hints.facts)
    events = tuple(replace(t.hints.event, text=t.hints.event.text or first_sentence(t.text),
                           valid=noise.duration(t.hints.event.valid), turns=(n,))
                   for n, t in enumerate(turns, 1) if t.hints.event is not None)
    summary = Summary(join([first_sentence(t.text) for t in turns], language(turns)), facts, events)
    return summary, {
        "summary": summary.text,
        "facts": [{"key": f.key, "value": f.value, "text": f.text, "belief": f.belief, "turns": list(f.turns)}
                  for f in facts],
        "events": [{"category": e.category, "text": e.text, "valid_days": days(e.valid), "turns": list(e.turns)}
                   for e in events]}


def check(summary: Summary) -> None:
    assert isinstance(summary, Summary) and all(isinstance(f, Fact) for f in summary.facts)


TASK = Task(
    summarize, SCHEMA, convert, TEMPLATES, fields, prepare=fill_turns, language=language,
    fake=lambda h: {"summary": "The user talked about their day.", "facts": [], "events": []},
    mock=mock, noise_inputs=lambda turns, known_facts, known_events: "\n".join(f"{t.kind}: {t.text}" for t in turns),
    example=lambda: ([SAMPLE_ITEM], (Known("user.allergy.milk", "The user is allergic to milk"),),
                     (Known("trip.paris", "A trip to Paris."),)),
    check=check,
    examples=("user.skill.chess", "course.sailing", "renovation.bathroom"))   # shown until issue 27
