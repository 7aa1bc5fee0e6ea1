"""A deterministic mock LLM: answers every task from the step's hints, never from ``expect``.

rate_attention — the personalised score combines the common-sense salience ``s`` (the
step's ``salience`` hint, else the cue-word heuristic below) with the associated memories
j it is shown, each with attention a_j (0-10) and relevance r_j (the embedder's cosine)::

    z_j    = (r_j - m) / sd                      (relevance in standard deviations above chance)
    g_j    = ramp(z_j; relevance_floor, relevance_full) * (1 - ramp(z_j; restate_from, restate_full))
    v_j    = min(10, a_j * 10 / attention_ref)
    target = sum_j g_j v_j / sum_j g_j            (what the item evokes, weighted by relevance)
    score  = s + follow * max_j g_j * max(0, target - s)

with ramp(x; lo, hi) = clip((x - lo) / (hi - lo), 0, 1). The item's attention follows the
attention of what it evokes, never the top of the scale: a dull item that bears on a memory
reads that memory's attention (on the scale of a fresh label: attention decays, so a
memory still at ``attention_ref`` is read as 10) and is lifted toward it, in proportion to
how strongly it bears on it; associations never lower the common-sense score. A memory
bears on the item when related (relevance from ``relevance_floor``, fully at
``relevance_full``) but not restated: the closer to a restatement (relevance from
``restate_from`` up to ``restate_full``), the less it adds — its memory takes the
attention through the association's recall, not the new copy — which keeps chatter from
feeding chatter (rich get richer). Without any association with g > 0 the score is ``s``.

The thresholds are relative (issue 25): the chance level (m, sd) is the mean and standard
deviation of the embedder's cosines over all 496 pairs of 32 unrelated sentences
(``mtsbench.llm.chance.CHANCE_TEXTS`` of the item's template language), measured once per
language on the embedder whose cosines the relevances are (``MemoryAgent`` tells the mock
through ``calibrate_relevance``; without one, on the default ``Hashing()``). A cosine is
read as how far above what unrelated texts get, in units of their spread, so an embedder
whose cosines are all shifted or stretched gives the same z and the same score (z is
invariant under r -> a + b·r, b > 0; English chance levels: hashing 0.026 ± 0.047,
all-MiniLM-L6-v2 0.077 ± 0.090). ``chance_mean`` /
``chance_std`` fix m / sd instead (0 and 1: absolute cosines, the rule before issue 25).
The default thresholds (1, 2, 2, 10 sd: g rises from 1 to 2 sd above chance, then falls
linearly to 0 at 10 sd) were chosen on LoCoMo conversations conv-26, 30, 41, 42 and 43 so
that neither embedder labels more than a quarter of LoCoMo turns 8 or more; ``attention_ref`` (3.0, was 3.5) then so that every bundled expectation passes
(README "The mechanisms implemented so far").

Heuristic salience without a hint: ``min(10, 2 + 2 * c + q)`` with c the number of
distinct cue words (``CUE_WORDS``; at most 3) and q = 1 if the text has "!" or "?".

The other tasks, and their fallbacks when hints are absent:

- summarize — the summary is the first sentence of each turn, joined; the facts are the
  turns' ``facts`` hints, the events their ``event`` hints (an event without ``text``
  takes its turn's first sentence), each naming the turn it came from. No hints: no
  facts, no events.
- merge_event — the event's text, ended as a sentence, followed by the new text (the
  storyline in order); the event's text unchanged if it already contains the new text.
- judge_relation — same key and equal value → ``same``, same key and another value →
  ``contradicts``, otherwise ``unrelated``; strength 1 (the hints are ground truth).
  Values are equal when both are booleans, both numbers or both strings (compared
  case- and surrounding-space-insensitively) and match. When either fact has no key
  (``tasks.keyless``: imported data, an LLM that names none) "same key" becomes "similar
  text": ``text_similarity(new.text, old.text) >= same_text`` (the cosine of the two texts'
  content-word counts, below), so a restatement in other words is ``same``, a similar
  statement with another value ``contradicts`` and anything else ``unrelated``.
- reassess_belief — what a perfect judge would conclude from the fact's belief b and the
  newer facts j (belief b_j) that restate it (S: same key, equal value) or contradict it
  (C: same key, another value), as independent sources::

      belief = (1 - (1 - b) * prod_{j in S} (1 - b_j)) * prod_{j in C} (1 - b_j)

  so a restatement raises belief (noisy-or) and a contradiction lowers it in proportion
  to the contradicting fact's belief. Facts with other keys are not read (without keys:
  facts whose text is not similar, by the judge_relation rule).
- same_event — a new development continues a stored event when both name a category and
  the categories are equal (case-insensitively); when either has none, when the new text
  is similar to some sentence of the event's storyline:
  ``max_sentence text_similarity(sentence, new.text) >= same_event_text``.
- infer — the item's ``infer`` hints as impressions; none without hints.

The known names ``summarize`` and ``infer`` are shown (``known_facts``, ``known_events``,
``known``) are rendered into the prompt, so they count in its tokens as they would for a
model, but never change an answer: the hints already name the keys a perfect model would
reuse.

Text similarity (``text_similarity``): the cosine of the two texts' token counts, tokens
being the lower-case words of letters and digits not in ``FUNCTION_WORDS`` (articles,
pronouns, prepositions, conjunctions, auxiliaries) and, in CJK text, each pair of adjacent
CJK characters. A documented lexical stand-in for the judgement a model makes; its
thresholds (``same_text``, ``same_event_text``) are in ``configs/llm/mock.yaml``.

Noise: with ``noise`` = σ > 0 every number the mock outputs gets Gaussian noise of
standard deviation σ times its range (10 for a score, 1 for a belief or strength) and is
clipped back into range; a duration (validity, TTL) d becomes d·exp(σ·z), z standard
normal. The noise generator is seeded from (seed, task, inputs) with crc32 and drawn in
answer order, so a call's answer does not depend on the order of calls. ``inputs``
(``call_inputs``) is what the call is about as the prompt shows it — the texts, kinds and
numbers at the prompt's precision — not the rendered prompt: rewording a template or
showing the model memory's candidates (known keys, categories) never re-draws the noise.

Tokens are estimated from the rendered prompt and the JSON answer (``estimate_tokens``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from typing import Sequence

import numpy as np

from ..params import Cosine, Number, Positive, Seed, Share, declared
from ..seeding import generator
from ..units import DAY
from .base import (Association, EventTag, Fact, FactValue, Impression, Item, Known, Meter, Relation, Summary,
                   estimate_tokens)
from .chance import CHANCE_TEXTS, chance_level
from .prompts import (infer_prompt, judge_relation_prompt, lang, merge_event_prompt, rate_attention_prompt,
                      reassess_belief_prompt, render_fact, same_event_prompt, summarize_prompt)
from .tasks import keyless

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


def _join(parts: Sequence[str], language: str) -> str:
    return ("" if lang(language) == "zh" else " ").join(p for p in parts if p)


def _ended(text: str, language: str) -> str:
    text = text.strip()
    if not text or text[-1] in ".!?。！？":
        return text
    return text + ("。" if lang(language) == "zh" else ".")


def call_inputs(task: str, *args) -> str:
    """The text a call's noise is seeded from: its inputs as the prompt shows them (module docstring).

    >>> call_inputs("rate_attention", Item("Kim sings.", "say", "s0"), [Association("Kim is a tenor.", 6.04, 0.333)])
    'say: Kim sings.\\n- [6.0, 0.33] Kim is a tenor.'
    >>> call_inputs("judge_relation", Fact("", True, "Kim sings.", 0.5), Fact("", True, "Kim sang.", 0.9))
    'true: Kim sings. (belief 0.50)\\ntrue: Kim sang. (belief 0.90)'
    """
    if task == "rate_attention":
        item, associated = args
        return "\n".join([f"{item.kind}: {item.text}"] +
                         [f"- [{a.attention:.1f}, {a.relevance:.2f}] {a.text}" for a in associated])
    if task == "summarize":
        return "\n".join(f"{t.kind}: {t.text}" for t in args[0])
    if task == "infer":
        info, context = args
        return "\n".join([f"{info.kind}: {info.text}"] + [f"- {c}" for c in context])
    if task == "reassess_belief":
        fact, evidence = args
        return "\n".join([render_fact(fact)] + [f"- {render_fact(e)}" for e in evidence])
    if task == "judge_relation":
        return "\n".join(render_fact(f) for f in args)
    raise ValueError(f"call_inputs: the mock draws no noise for task {task!r}")


class _Noise:
    """Per-call noise: one generator seeded from (seed, task, inputs), drawn in answer order."""

    def __init__(self, sigma: float, seed: int, task: str, *args):
        self.sigma = sigma
        self.rng = generator(seed, task, call_inputs(task, *args)) if sigma > 0 else None

    def bounded(self, value: float, lo: float, hi: float) -> float:
        if self.rng is None:
            return value
        return float(np.clip(value + self.rng.normal(0.0, self.sigma * (hi - lo)), lo, hi))

    def duration(self, seconds: float | None) -> float | None:
        if self.rng is None or seconds is None:
            return seconds
        return round(float(seconds * math.exp(self.sigma * self.rng.normal())), 3)


def _days(seconds: float | None) -> float | None:
    return None if seconds is None else seconds / DAY


@declared
class MockLLM:
    """Deterministic backend for offline runs and CI (see the module docstring)."""

    def __init__(self, seed: Seed | None = 0, noise: Share = 0.0, relevance_floor: Number = 1.0,
                 relevance_full: Number = 2.0, follow: Share = 1.0, attention_ref: Positive = 3.0,
                 restate_from: Number = 2.0, restate_full: Number = 10.0, same_text: Share = 0.75,
                 same_event_text: Share = 0.3, chance_mean: Cosine | None = None, chance_std: Positive | None = None):
        self.seed = seed
        self.noise = noise
        self.relevance_floor = relevance_floor
        self.relevance_full = relevance_full
        self.follow = follow
        self.attention_ref = attention_ref
        self.restate_from, self.restate_full = restate_from, restate_full
        self.same_text = same_text
        self.same_event_text = same_event_text
        self.chance_mean, self.chance_std = chance_mean, chance_std
        self.embedder = None            # whose cosines the relevances are (calibrate_relevance); None: Hashing()
        self._chance: dict[str, tuple[float, float]] = {}
        self.meter = Meter()

    def calibrate_relevance(self, embedder) -> None:
        """Told the embedder whose cosines the associations' relevances are: the chance level
        is measured on it (``chance``), once per language, when first needed."""
        self.embedder, self._chance = embedder, {}

    def chance(self, language: str = "en") -> tuple[float, float]:
        """(mean, sd) of the embedder's cosines of unrelated texts (``CHANCE_TEXTS`` of the
        item's template language); ``chance_mean`` / ``chance_std`` replace what they set."""
        key = lang(language)
        if key not in self._chance:
            if self.chance_mean is not None and self.chance_std is not None:
                measured = (0.0, 1.0)
            else:
                if self.embedder is None:
                    from ..embed.hashing import Hashing

                    self.embedder = Hashing()
                measured = chance_level(self.embedder.embed(list(CHANCE_TEXTS[key])))
            self._chance[key] = (measured[0] if self.chance_mean is None else float(self.chance_mean),
                                 measured[1] if self.chance_std is None else float(self.chance_std))
        return self._chance[key]

    def _answer(self, task: str, prompt: str, answer: dict) -> None:
        self.meter.record(task, estimate_tokens(prompt), estimate_tokens(json.dumps(answer, ensure_ascii=False)))

    def rate_attention(self, item: Item, associated: Sequence[Association]) -> float:
        prompt = rate_attention_prompt(item, associated)
        s = item.hints.salience if item.hints.salience is not None else heuristic_salience(item.text)
        score = personalised_score(
            s, np.array([a.attention for a in associated]), np.array([a.relevance for a in associated]),
            self.relevance_floor, self.relevance_full, self.follow, self.attention_ref,
            self.restate_from, self.restate_full, self.chance(item.language))
        score = round(_Noise(self.noise, self.seed, "rate_attention", item, associated).bounded(score, 0.0, 10.0), 3)
        self._answer("rate_attention", prompt, {"score": score})
        return score

    def summarize(self, turns: Sequence[Item], known_facts: Sequence[Known] = (),
                  known_events: Sequence[Known] = ()) -> Summary:
        prompt = summarize_prompt(turns, known_facts, known_events)
        noise = _Noise(self.noise, self.seed, "summarize", turns)
        language = turns[0].language if turns else "en"
        facts = tuple(replace(h, belief=round(noise.bounded(h.belief, 0.0, 1.0), 4), turns=(n,))
                      for n, t in enumerate(turns, 1) for h in t.hints.facts)
        events = tuple(replace(t.hints.event, text=t.hints.event.text or first_sentence(t.text),
                               valid=noise.duration(t.hints.event.valid), turns=(n,))
                       for n, t in enumerate(turns, 1) if t.hints.event is not None)
        summary = Summary(_join([first_sentence(t.text) for t in turns], language), facts, events)
        self._answer("summarize", prompt, {
            "summary": summary.text,
            "facts": [{"key": f.key, "value": f.value, "text": f.text, "belief": f.belief, "turns": list(f.turns)}
                      for f in facts],
            "events": [{"category": e.category, "text": e.text, "valid_days": _days(e.valid), "turns": list(e.turns)}
                       for e in events]})
        return summary

    def merge_event(self, event_text: str, new_text: str, language: str = "en") -> str:
        prompt = merge_event_prompt(event_text, new_text, language)
        new = new_text.strip()
        merged = event_text.strip() if new in event_text else _join([_ended(event_text, language), new], language)
        self._answer("merge_event", prompt, {"text": merged})
        return merged

    def judge_relation(self, new: Fact, old: Fact, language: str = "en") -> Relation:
        prompt = judge_relation_prompt(new, old, language)
        label = fact_relation(new, old, self.same_text)
        strength = round(_Noise(self.noise, self.seed, "judge_relation", new, old).bounded(1.0, 0.0, 1.0), 4)
        self._answer("judge_relation", prompt, {"label": label, "strength": strength})
        return Relation(label, strength)

    def same_event(self, event: EventTag, new: EventTag, language: str = "en") -> bool:
        prompt = same_event_prompt(event, new, language)
        same = same_event(event, new, self.same_event_text)
        self._answer("same_event", prompt, {"same": same})
        return same

    def reassess_belief(self, fact: Fact, evidence: Sequence[Fact], language: str = "en") -> float:
        prompt = reassess_belief_prompt(fact, evidence, language)
        perfect = reassessed_belief(fact, evidence, self.same_text)
        belief = round(_Noise(self.noise, self.seed, "reassess_belief", fact, evidence).bounded(perfect, 0.0, 1.0), 4)
        self._answer("reassess_belief", prompt, {"belief": belief})
        return belief

    def infer(self, info: Item, context: Sequence[str], known: Sequence[Known] = ()) -> tuple[Impression, ...]:
        prompt = infer_prompt(info, context, known)
        noise = _Noise(self.noise, self.seed, "infer", info, context)
        out = []
        for h in info.hints.infer:
            belief = round(noise.bounded(h.belief, 0.0, 1.0), 4)
            out.append(replace(h, belief=belief, ttl=noise.duration(h.ttl)))
        self._answer("infer", prompt, {"impressions": [
            {"key": i.key, "text": i.text, "belief": i.belief, "ttl_days": _days(i.ttl)} for i in out]})
        return tuple(out)
