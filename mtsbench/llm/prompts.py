"""Prompt templates per task and language (en, zh; another language falls back to en).

Each ``*_prompt`` function renders the one user message of its task; the answer format it
asks for is the task's JSON schema (``tasks.py``). The mock renders them too, to count
tokens, so a prompt's cost is the same whichever backend answers it. ``SYSTEM`` is the
system message a chat backend sends first, ``repair_prompt`` the follow-up after an
invalid answer.
"""

from __future__ import annotations

import json
from typing import Sequence

from .base import Association, EventTag, Fact, Item, Known

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

SUMMARIZE = {
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

MERGE_EVENT = {
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

JUDGE_RELATION = {
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

REASSESS_BELIEF = {
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

INFER = {
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

SAME_EVENT = {
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

ANSWER = {
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

JUDGE_ANSWER = {
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
SPEAKERS = {"en": {"say": "user", "reply": "agent", "perceive": "observation"},
            "zh": {"say": "用户", "reply": "智能体", "perceive": "观察"}}


def lang(language: str | None) -> str:
    """The template language for ``language`` (en unless it is one of the templates')."""
    return language if language in RATE_ATTENTION else "en"


def _lines(texts: Sequence[str], language: str) -> str:
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


def rate_attention_prompt(item: Item, associated: Sequence[Association]) -> str:
    """The rate_attention prompt for ``item`` in its language.

    >>> p = rate_attention_prompt(Item("a chess board on the table", "perceive", "s1"), [Association("plays chess", 6.0, 0.4)])
    >>> "- [6.0, 0.40] plays chess" in p and "a chess board on the table" in p
    True
    """
    lg = lang(item.language)
    lines = "\n".join(f"- [{a.attention:.1f}, {a.relevance:.2f}] {a.text}" for a in associated) or NONE[lg]
    return RATE_ATTENTION[lg].format(associated=lines, kind=item.kind, text=item.text)


def summarize_prompt(turns: Sequence[Item], known_facts: Sequence[Known] = (), known_events: Sequence[Known] = ()) -> str:
    """The summarize prompt for ``turns`` (in the first turn's language), one numbered line per
    turn, with the known fact keys and event categories (``known_lines``) to reuse.

    >>> "1. [用户] 我会下国际象棋。" in summarize_prompt([Item("我会下国际象棋。", "say", "s0", "zh")])
    True
    """
    lg = lang(turns[0].language if turns else "en")
    who = SPEAKERS[lg]
    lines = "\n".join(f"{n}. [{who.get(t.kind, t.kind)}] {t.text}" for n, t in enumerate(turns, 1)) or NONE[lg]
    return SUMMARIZE[lg].format(turns=lines, known_facts=known_lines(known_facts, lg),
                                known_events=known_lines(known_events, lg))


def merge_event_prompt(event_text: str, new_text: str, language: str = "en") -> str:
    return MERGE_EVENT[lang(language)].format(event=event_text, new=new_text)


def same_event_prompt(event: EventTag, new: EventTag, language: str = "en") -> str:
    """The same_event prompt: a stored event and a new development, each with its category
    (NONE when it has none).

    >>> "已存事件（（无））：去了海边。" in same_event_prompt(EventTag("", "去了海边。"), EventTag("", "又去了。"), "zh")
    True
    >>> "Stored event (trip): Flew to Oslo." in same_event_prompt(EventTag("trip", "Flew to Oslo."), EventTag("", "Back."))
    True
    """
    lg = lang(language)
    return SAME_EVENT[lg].format(category=(event.category or "").strip() or NONE[lg], event=event.text,
                                 new_category=(new.category or "").strip() or NONE[lg], new=new.text)


def judge_relation_prompt(new: Fact, old: Fact, language: str = "en") -> str:
    return JUDGE_RELATION[lang(language)].format(new=render_fact(new), old=render_fact(old))


def reassess_belief_prompt(fact: Fact, evidence: Sequence[Fact], language: str = "en") -> str:
    lg = lang(language)
    return REASSESS_BELIEF[lg].format(fact=render_fact(fact), evidence=_lines([render_fact(e) for e in evidence], lg))


def infer_prompt(info: Item, context: Sequence[str], known: Sequence[Known] = ()) -> str:
    """The infer prompt: the item (with its belief when it has one), the context memories and
    the open impressions near it (``known_lines``) to reuse.

    >>> p = infer_prompt(Item("Kim hums all day.", "say", "s1", belief=0.8), [], [Known("user.mood.cheerful", "cheerful", 0.5)])
    >>> "- user.mood.cheerful, belief 0.50: cheerful" in p and "New information (say, belief 0.80): Kim hums" in p
    True
    """
    lg = lang(info.language)
    belief = "" if info.belief is None else BELIEF[lg].format(info.belief)
    return INFER[lg].format(context=_lines(context, lg), known=known_lines(known, lg), kind=info.kind,
                            belief=belief, text=info.text)


def answer_prompt(question: str, context: Sequence[str], language: str = "en") -> str:
    """The answer prompt: the probe's question and the texts of the memories it retrieved.

    >>> p = answer_prompt("What does Kim play?", ["Kim plays the cello."])
    >>> "- Kim plays the cello." in p and "Question: What does Kim play?" in p
    True
    """
    lg = lang(language)
    return ANSWER[lg].format(context=_lines(context, lg), question=question)


def judge_answer_prompt(question: str, gold: str, reply: str, language: str = "en") -> str:
    """The judge_answer prompt: the question, the gold answer and the reply to grade."""
    return JUDGE_ANSWER[lang(language)].format(question=question, gold=gold, reply=reply)


def system_prompt(language: str = "en") -> str:
    return SYSTEM[lang(language)]


def repair_prompt(reason: str, language: str = "en") -> str:
    """The follow-up message after an invalid answer, saying what was wrong."""
    return REPAIR[lang(language)].format(reason=reason)
