"""The mock's stand-ins for a model's judgement: attention, salience and text heuristics.

Plain functions of texts and numbers, each a documented rule the mock (``mock.MockLLM``,
through each task's ``mock`` answer in ``mtsbench.llm.tasks``) applies where a model would
judge; ``FUNCTION_WORDS`` and ``text_similarity`` serve evaluation and calibration too.

Personalised attention (``personalised_score``): the common-sense salience ``s`` (the
step's ``salience`` hint, else ``heuristic_salience``) combined with the associated
memories j shown, each with attention a_j (0-10) and relevance r_j (the embedder's cosine)::

    z_j    = (r_j - m) / sd                      (relevance in standard deviations above chance)
    g_j    = ramp(z_j; relevance_floor, relevance_full) * (1 - ramp(z_j; restate_from, restate_full))
    v_j    = min(10, a_j * 10 / attention_ref)
    target = sum_j g_j v_j / sum_j g_j            (what the item evokes, weighted by relevance)
    score  = s + follow * max_j g_j * max(0, target - s)

with ramp(x; lo, hi) = clip((x - lo) / (hi - lo), 0, 1); the mock's docstring says why and
how the chance level (m, sd) is measured. Without any association with g > 0 the score is ``s``.

Heuristic salience without a hint: ``min(10, 2 + 2 * c + q)`` with c the number of
distinct cue words (``CUE_WORDS``, ``CUE_WORDS_ZH``; at most 3) and q = 1 if the text has
"!" or "?".

Facts (``fact_relation``): same key and equal value → ``same``, same key and another value
→ ``contradicts``, otherwise ``unrelated``. Values are equal when both are booleans, both
numbers or both strings (compared case- and surrounding-space-insensitively) and match
(``same_value``). When either fact has no key (``task.keyless``: imported data, an LLM
that names none) "same key" becomes "similar text": ``text_similarity(new.text,
old.text) >= same_text``. ``reassessed_belief``: what a perfect judge concludes from the
fact's belief b and the newer facts j (belief b_j) that restate it (S) or contradict it
(C), as independent sources::

    belief = (1 - (1 - b) * prod_{j in S} (1 - b_j)) * prod_{j in C} (1 - b_j)

Events (``same_event``): a new development continues a stored event when both name a
category and the categories are equal (case-insensitively); when either has none, when
the new text is similar to some sentence of the event's storyline:
``max_sentence text_similarity(sentence, new.text) >= same_event_text``.

Text similarity (``text_similarity``): the cosine of the two texts' token counts, tokens
being the lower-case words of letters and digits not in ``FUNCTION_WORDS`` (articles,
pronouns, prepositions, conjunctions, auxiliaries) and, in CJK text, each pair of adjacent
CJK characters. A documented lexical stand-in for the judgement a model makes; its
thresholds (``same_text``, ``same_event_text``) are in ``configs/llm/mock.yaml``.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from .base import EventTag, Fact, FactValue
from .prompts import lang
from .task import keyless

CUE_WORDS = frozenset(
    "allergic allergy sick ill pain hurt hospital emergency doctor birthday important remember "
    "never always love hate afraid scared deadline danger urgent".split()
)
CUE_WORDS_ZH = ("过敏", "生病", "医院", "重要", "记住", "生日", "喜欢", "讨厌", "害怕", "疼", "危险", "紧急")
_WORD = re.compile(r"[a-z]+")
_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")
FUNCTION_WORDS = frozenset(
    "a an the this that these those my your his her its our their me him them us it he she they we you i "
    "to for of in on at with from by about into onto over under up down out off as and or but so than "
    "is are was were be been being am has have had do does did will would can could should may might".split())
_SENTENCE = re.compile(r".+?(?:[.!?](?=\s|$)|[。！？]|$)", re.S)


def heuristic_salience(text: str) -> float:
    """Common-sense salience without a hint: min(10, 2 + 2 * cues + q).

    >>> heuristic_salience("Nice weather."), heuristic_salience("I'm allergic to milk, remember!")
    (2.0, 7.0)
    """
    words = set(_WORD.findall(text.lower()))
    cues = len(words & CUE_WORDS) + sum(1 for w in CUE_WORDS_ZH if w in text)
    q = 1 if any(c in text for c in "!?！？") else 0
    return float(min(10, 2 + 2 * min(cues, 3) + q))


def relative_relevance(relevance: np.ndarray, chance: tuple[float, float]) -> np.ndarray:
    """z = (r - m) / sd: a cosine in standard deviations above the embedder's chance level
    (m, sd), the mean and standard deviation of its cosines of unrelated texts (module docstring).

    >>> relative_relevance(np.array([0.025, 0.125, 0.425]), (0.025, 0.05))
    array([0., 2., 8.])
    """
    mean, sd = chance
    return (np.asarray(relevance, dtype=float) - mean) / sd


def personalised_score(salience: float, attention: np.ndarray, relevance: np.ndarray,
                       relevance_floor: float = 1.0, relevance_full: float = 2.0, follow: float = 1.0,
                       attention_ref: float = 3.0, restate_from: float = 2.0, restate_full: float = 10.0,
                       chance: tuple[float, float] = (0.0, 1.0)) -> float:
    """s + follow * max_j g_j * max(0, sum_j g_j v_j / sum_j g_j - s) (see module docstring),
    the thresholds in standard deviations above ``chance`` (mean, sd of unrelated cosines).

    At chance (0.025, 0.05) a cosine 0.125 is z = 2: a fully relevant memory at 2.7 (read
    as 9) lifts a dull item to 9, not 10; a half-relevant one (0.1, z = 1.5) closes half the
    gap, and so does a half-restated one (0.325, z = 6); dull associations leave it as it
    was; a restatement (0.525, z = 10) bears on nothing; a salient item is never lowered:

    >>> chance = (0.025, 0.05)
    >>> personalised_score(1.0, np.array([2.7]), np.array([0.125]), chance=chance)
    9.0
    >>> personalised_score(1.0, np.array([2.7]), np.array([0.1]), chance=chance)
    5.0
    >>> personalised_score(1.0, np.array([2.7]), np.array([0.325]), chance=chance)
    5.0
    >>> personalised_score(2.0, np.array([0.9, 0.6]), np.array([0.125, 0.125]), chance=chance)
    2.5
    >>> personalised_score(2.0, np.array([9.0]), np.array([0.525]), chance=chance)
    2.0
    >>> personalised_score(7.0, np.array([0.8]), np.array([0.125]), chance=chance)
    7.0
    """
    z = relative_relevance(relevance, chance)
    g = (np.clip((z - relevance_floor) / (relevance_full - relevance_floor), 0.0, 1.0)
         * (1.0 - np.clip((z - restate_from) / (restate_full - restate_from), 0.0, 1.0)))
    if g.sum() <= 0.0:
        return float(salience)
    v = np.minimum(10.0, np.asarray(attention, dtype=float) * 10.0 / attention_ref)
    target = float(np.dot(g, v) / g.sum())
    return round(float(salience + follow * g.max() * max(0.0, target - salience)), 6)


def first_sentence(text: str) -> str:
    """The text up to and including its first sentence end (. ! ? followed by a space, or 。！？).

    >>> first_sentence("I'm allergic to milk. Even a little makes me ill."), first_sentence("我对牛奶过敏。一点也不行。")
    ("I'm allergic to milk.", '我对牛奶过敏。')
    """
    m = _SENTENCE.match(text.strip())
    return m.group(0).strip() if m else ""


def same_value(a: FactValue, b: FactValue) -> bool:
    """Fact values are equal: both booleans, both numbers or both strings (case-insensitive), and match.

    >>> same_value(True, 1), same_value(" Tea", "tea"), same_value(2, 2.0)
    (False, True, True)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a.strip().casefold() == b.strip().casefold()
    return a == b


def text_similarity(a: str, b: str) -> float:
    """Cosine of the content-token counts of two texts (see the module docstring).

    >>> text_similarity("Melanie has kids.", "Melanie has KIDS!"), text_similarity("我对牛奶过敏", "牛奶过敏")
    (1.0, 0.775)
    >>> text_similarity("Kim went to the lake.", "The printer is out of paper.")
    0.0
    """
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return 0.0
    va, vb = np.array([ta.get(w, 0) for w in ta.keys() | tb.keys()]), np.array([tb.get(w, 0) for w in ta.keys() | tb.keys()])
    return round(float(va @ vb / np.sqrt((va @ va) * (vb @ vb))), 3)


def _tokens(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in _TOKEN.findall(text.lower()):
        parts = ([run[i:i + 2] for i in range(len(run) - 1)] or [run]) if not run.isascii() else [run]
        for t in parts:
            if t not in FUNCTION_WORDS:
                counts[t] = counts.get(t, 0) + 1
    return counts


def fact_relation(new: Fact, old: Fact, same_text: float = 0.75) -> str:
    """The mock's judgement of two facts: ``same``, ``contradicts`` or ``unrelated`` (module docstring).

    >>> tea, coffee = Fact("user.drink", "tea", "drinks tea", 0.7), Fact("user.drink", "coffee", "drinks coffee", 0.7)
    >>> fact_relation(tea, coffee), fact_relation(tea, Fact("user.pet", "tea", "drinks tea", 0.7))
    ('contradicts', 'unrelated')
    >>> fact_relation(Fact("", True, "Kim rides a red bicycle to work.", 0.9), Fact("", True, "Kim rides her red bicycle to work!", 0.9))
    'same'
    >>> fact_relation(Fact("", True, "Kim lives in Oslo.", 0.9), Fact("", False, "Kim lives in Oslo.", 0.9))
    'contradicts'
    >>> fact_relation(Fact("", True, "Kim went to the lake.", 0.9), Fact("", True, "Kim bought a printer.", 0.9))
    'unrelated'
    """
    if keyless(new.key) or keyless(old.key):
        related = text_similarity(new.text, old.text) >= same_text
    else:
        related = new.key == old.key
    return "unrelated" if not related else "same" if same_value(new.value, old.value) else "contradicts"


def same_event(event: EventTag, new: EventTag, same_event_text: float = 0.3) -> bool:
    """The mock's same_event decision (module docstring): equal categories, or without
    categories a new text similar to some sentence of the event's storyline.

    >>> same_event(EventTag("trip", "Flew to Oslo."), EventTag("Trip", "Landed."))
    True
    >>> trip = EventTag("", "Kim flew to Oslo for a conference. The hotel was noisy.")
    >>> same_event(trip, EventTag("", "Kim moved to another Oslo hotel.")), same_event(trip, EventTag("", "Kim adopted a cat."))
    (True, False)
    >>> same_event(EventTag("", "Signs up for a pottery class."), EventTag("", "Makes a pottery bowl."))
    True
    """
    if not (keyless(event.category) or keyless(new.category)):
        return event.category.strip().casefold() == new.category.strip().casefold()
    sentences = _SENTENCE.findall(event.text or "") or [event.text or ""]
    return max(text_similarity(x, new.text or "") for x in sentences) >= same_event_text


def reassessed_belief(fact: Fact, evidence: Sequence[Fact], same_text: float = 0.75) -> float:
    """(1 - (1 - b) * prod_same (1 - b_j)) * prod_contradicting (1 - b_j) (see module docstring).

    >>> f = Fact("user.drink", "tea", "The user drinks tea", 0.7)
    >>> reassessed_belief(f, [Fact("user.drink", "Tea", "tea again", 0.5)])      # 1 - 0.3 * 0.5
    0.85
    >>> reassessed_belief(f, [Fact("user.drink", "coffee", "coffee", 0.4)])      # 0.7 * 0.6
    0.42
    """
    relation = [fact_relation(e, fact, same_text) for e in evidence]
    support = np.prod([1.0 - e.belief for e, r in zip(evidence, relation) if r == "same"])
    against = np.prod([1.0 - e.belief for e, r in zip(evidence, relation) if r == "contradicts"])
    return round(float((1.0 - (1.0 - fact.belief) * support) * against), 6)


def join(parts: Sequence[str], language: str) -> str:
    """The non-empty ``parts`` joined: with a space, without one in Chinese."""
    return ("" if lang(language) == "zh" else " ").join(p for p in parts if p)


def ended(text: str, language: str) -> str:
    """``text`` stripped and ended as a sentence (a full stop of its language unless it has one)."""
    text = text.strip()
    if not text or text[-1] in ".!?。！？":
        return text
    return text + ("。" if lang(language) == "zh" else ".")
