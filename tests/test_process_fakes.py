"""The background processes driven directly against a small in-memory fake of their ports
(``mtsbench.processes.ports``) and the mock LLM: what each one RETURNS, by hand.

``FakeMemory`` holds memories as plain records (text, kind, provenance, key, value, belief,
alive, meta, score), appends every event to ``trace``, records recalls and weakenings, and
searches by a trivial rule: word overlap with the query text, best first. ``FakePerceive``
stores what it is handed with a fixed score and remembers the items.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field

import numpy as np
import pytest

from mtsbench.embed.hashing import Hashing
from mtsbench.llm.tasks import REGISTRY
from mtsbench.llm.base import EventTag, Fact, Impression, Item, Known
from mtsbench.llm.mock import MockLLM
from mtsbench.mechanisms.accumulate import Max, NoisyOr
from mtsbench.mechanisms.belief import Ema
from mtsbench.mechanisms.conflict import NewestWins, WeakerLoses
from mtsbench.mechanisms.events import PerCategory
from mtsbench.memory.retrieval import Retrieval, SearchCost
from mtsbench.processes import ports
from mtsbench.processes.consolidation import Consolidated, Consolidator
from mtsbench.processes.events import EventDecision, EventTracker
from mtsbench.processes.inference import Inferrer
from mtsbench.processes.summarize import Summarizer
from mtsbench.scenario.model import Hints

DAY = 86400.0


@dataclass
class Record:
    text: str
    kind: str
    provenance: tuple[str, ...]
    score: float | None = None
    key: str | None = None
    value: object = None
    belief: float = 0.0
    alive: bool = True
    meta: dict = field(default_factory=dict)
    created: float = 0.0


class FakeMemory:
    """Every process port over a dict of records (see the module docstring)."""

    def __init__(self):
        self.memories: dict[int, Record] = {}
        self.trace: list[dict] = []
        self.now = 0.0
        self.recalled: list[tuple[list[int], str]] = []
        self.weakened: dict[int, float] = {}

    def events(self, name: str) -> list[dict]:
        return [e for e in self.trace if e["event"] == name]

    # -- Trace ------------------------------------------------------------------------------
    def emit(self, event: str, **fields) -> None:
        self.trace.append({"t": self.now, "event": event, **fields})

    # -- reading ----------------------------------------------------------------------------
    def alive(self, i):
        return self.memories[i].alive

    def text(self, i):
        return self.memories[i].text

    def provenance(self, i):
        return self.memories[i].provenance

    def kind(self, i):
        return self.memories[i].kind

    def key(self, i):
        return self.memories[i].key

    def meta(self, i):
        return self.memories[i].meta

    def created(self, i):
        return self.memories[i].created

    def belief(self, i):
        return self.memories[i].belief

    def fact(self, i):
        r = self.memories[i]
        return Fact(r.key, r.value, r.text, round(r.belief, 4))

    def vector(self, i):
        return self.memories[i].text       # the fake "embeds" a memory as its own text

    def embed(self, text):
        return text                        # ... and any text as itself

    def centroid(self, steps, texts):
        return " ".join(texts)             # ... and a stretch of dialogue as its texts joined

    def warm(self, texts):
        self.warmed = getattr(self, "warmed", []) + [list(texts)]

    def with_key(self, key):
        return [i for i, r in self.memories.items() if r.alive and key is not None and r.key == key]

    def attention_of_steps(self, steps):
        return max((r.score or 0.0 for r in self.memories.values() if r.alive and set(steps) & set(r.provenance)),
                   default=0.0)

    def chance(self):
        return (0.0, 0.08)                 # a shared-word share of 0.08 is 1 sd "above chance"

    def search(self, vector, k, motivation, rank_to=0):
        """Live memories sharing words with the query (a text), most shared first."""
        words = set(str(vector).lower().split())
        hits = sorted(((len(words & set(r.text.lower().split())), i) for i, r in self.memories.items()
                       if r.alive), key=lambda h: (-h[0], h[1]))
        hits = [(n, i) for n, i in hits if n > 0][:k]
        ids = np.array([i for _, i in hits], dtype=np.int64)
        rel = np.array([n / max(len(words), 1) for n, _ in hits], dtype=float)
        att = np.array([self.memories[i].score or 0.0 for i in ids], dtype=float)
        return Retrieval(ids, rel, rel, att, SearchCost(scored=len(self.memories), tiers_searched=1, index_queries=1))

    # -- writing ----------------------------------------------------------------------------
    def remember(self, text, kind, provenance, *, score, vector=None, meta=None, w_plus=None, w_minus=None, **fact):
        i = len(self.memories)
        self.memories[i] = Record(text, kind, tuple(provenance), score, fact.get("key"), fact.get("value"),
                                  float(fact.get("belief", 0.0)), meta=dict(meta or {}), created=self.now)
        self.emit("created", id=i, kind=kind, steps=list(provenance))
        return i

    def rewrite(self, i, text, provenance, reembed=True):
        self.memories[i].text, self.memories[i].provenance = text, tuple(provenance)

    def recall(self, ids, why):
        self.recalled.append(([int(i) for i in ids], why))

    def drop(self, i):
        self.memories[i].alive = False
        self.emit("dropped", id=i)

    def move_belief(self, i, rule, estimate):
        r = self.memories[i]
        b, _, _ = rule.update(np.array([r.belief]), np.zeros(1), np.zeros(1), np.array([estimate]))
        r.belief = float(b[0])

    def weaken(self, i, keep):
        self.weakened[i] = keep


class FakePerceive:
    """Stores each item handed to it with score ``score``; ``items`` keeps them in order."""

    def __init__(self, memory: FakeMemory, score: float = 5.0):
        self.memory, self.score, self.items = memory, score, []

    def __call__(self, item, kind, provenance, meta=None, **fact):
        self.items.append(item)
        return self.memory.remember(item.text, kind, provenance, score=self.score, meta=meta, **fact)


def _members(proto) -> set[str]:
    get = getattr(typing, "_get_protocol_attrs", None)
    return set(proto.__protocol_attrs__) if hasattr(proto, "__protocol_attrs__") else set(get(proto))


@pytest.mark.parametrize("proto", [ports.Associations, ports.SummaryMemory, ports.EventMemory, ports.FactMemory,
                                   ports.ImpressionMemory])
def test_the_fake_implements_every_port(proto):
    assert {m for m in _members(proto) if not hasattr(FakeMemory(), m)} == set()
    assert {m for m in _members(ports.Perceive) if not hasattr(FakePerceive(FakeMemory()), m)} == set()


# -- summarization ---------------------------------------------------------------------
def turn(step, text, salience=None, facts=(), event=None, kind="say"):
    return Item(text, kind, step, "en", Hints(salience=salience, facts=tuple(facts), event=event))


def test_a_summary_returns_its_steps_new_facts_and_event_tags():
    m, llm = FakeMemory(), MockLLM()
    perceive = FakePerceive(m)
    m.remember("I drink tea every morning.", "turn", ("tea",), score=6.0)
    m.remember("Nice.", "turn", ("s1",), score=1.0)
    s = Summarizer(every=2)
    tea = Fact("user.drink", "tea", "The user drinks tea", 0.8)
    trip = EventTag("trip.paris", "We fly to Paris.", 10 * DAY)
    assert not s.add(turn("tea", "I drink tea every morning.", 6, [tea], trip), 0.0)
    assert s.add(turn("s1", "Nice.", 1, kind="reply"), 60.0)           # two dialogue turns wait
    m.now = 120.0
    done = s.flush(m, llm, perceive, Ema())
    assert done.steps == ["tea", "s1"] and done.language == "en" and s.pending_ == []
    assert m.warmed == [[perceive.items[0].text, "The user drinks tea"]]      # the new texts, in one call
    (summary,) = [i for i, r in m.memories.items() if r.kind == "summary"]
    assert m.provenance(summary) == ("tea", "s1") and perceive.items[0].sources == ("tea", "s1")
    assert perceive.items[0].hints.salience == 6                  # as salient as its most salient turn
    (fact,) = done.facts
    r = m.memories[fact]
    assert (r.kind, r.key, r.value, r.provenance, r.belief) == ("fact", "user.drink", "tea", ("tea",), 0.8)
    assert r.score == 6.0 and r.meta == {"stated": 0.0}           # the attention and time of its own turn
    (tag,) = done.tags
    assert (tag.tag.category, tag.provenance, tag.at, tag.hints.salience) == ("trip.paris", ("tea",), 0.0, 6)
    assert s.flush(m, llm, perceive, Ema()).steps == []           # nothing waits any more


def test_one_item_alone_yields_facts_but_no_summary():
    m = FakeMemory()
    s = Summarizer(every=8, min_items=2)
    s.add(turn("a", "I drink coffee.", facts=[Fact("user.drink", "coffee", "The user drinks coffee", 0.6)]), 0.0)
    done = s.flush(m, MockLLM(), FakePerceive(m), Ema())
    assert [m.kind(i) for i in m.memories] == ["fact"] and done.facts == [0] and done.tags == []


# -- events ----------------------------------------------------------------------------
def test_a_tag_joins_its_event_until_the_category_goes_stale():
    m, llm = FakeMemory(), MockLLM()
    perceive, events = FakePerceive(m), EventTracker(PerCategory(default_valid="30d"))
    go = EventTag("trip.paris", "We fly to Paris.", 10 * DAY)
    first = events.tag(m, llm, perceive, go, ("go",), "en", Hints(salience=5), at=0.0)
    assert first == EventDecision(0, False) and m.kind(0) == "event" and m.meta(0) == {"category": "trip.paris"}
    there = EventTag("trip.paris", "We saw the Louvre.")
    second = events.tag(m, llm, perceive, there, ("there",), "en", at=9 * DAY)     # 9 d < its 10 d validity
    assert second == EventDecision(0, True)
    assert m.text(0) == "We fly to Paris. We saw the Louvre." and m.provenance(0) == ("go", "there")
    assert m.recalled == [([0], "event")]                         # joining uses the event
    again = events.tag(m, llm, perceive, EventTag("trip.paris", "Paris again."), ("again",), "en", at=20 * DAY)
    assert again == EventDecision(1, False)                       # 11 d after its last update: stale
    assert m.provenance(1) == ("again",) and events.count(m, "trip.paris") == 2
    assert events.containing(m, "there") == [0] and events.containing(m, "again") == [1]
    assert [e["joined"] for e in m.events("event")] == [False, True, False]


def test_a_stale_category_starts_a_new_event_even_when_the_old_one_died():
    m, llm = FakeMemory(), MockLLM()
    perceive, events = FakePerceive(m), EventTracker(PerCategory(default_valid="5d"))
    events.tag(m, llm, perceive, EventTag("work.launch", "The launch is on."), ("a",), "en", at=0.0)
    m.drop(0)
    assert events.tag(m, llm, perceive, EventTag("work.launch", "Launch moved."), ("b",), "en", at=DAY) \
        == EventDecision(1, False)                                 # no live event to join
    assert events.count(m, "work.launch") == 1


# -- consolidation ---------------------------------------------------------------------
def facts(m: FakeMemory, *rows) -> list[int]:
    ids = []
    for day, value, belief, step in rows:
        m.now = day * DAY
        ids.append(m.remember(f"The user drinks {value}", "fact", (step,), score=5.0, key="user.drink",
                              value=value, belief=belief, meta={"stated": day * DAY}))
    return ids


def test_a_restatement_merges_into_the_older_fact_with_a_damped_belief_step():
    m = FakeMemory()
    old, new = facts(m, (0, "tea", 0.8, "a"), (1, "tea", 0.8, "b"))
    done = Consolidator().run(m, MockLLM(), [new], Ema(), WeakerLoses())
    assert done == Consolidated(merged=[(old, new)], contradicted=[])
    # perfect re-estimate 1 - 0.2 * 0.2 = 0.96; ema: 0.8 + 0.3 * (0.96 - 0.8)
    assert m.belief(old) == pytest.approx(0.848) and not m.alive(new)
    assert m.provenance(old) == ("a", "b") and m.meta(old)["stated"] == DAY
    assert m.recalled == [([old], "merge")]


def test_a_contradiction_costs_the_weaker_belief_and_attention():
    m = FakeMemory()
    tea, coffee = facts(m, (0, "tea", 0.8, "a"), (1, "coffee", 0.4, "b"))
    done = Consolidator().run(m, MockLLM(), [coffee], Ema(), WeakerLoses())
    assert done == Consolidated(merged=[], contradicted=[(coffee, tea)])
    assert m.belief(tea) == pytest.approx(0.8)
    # loser re-estimated 0.4 * (1 - 0.8) = 0.08; ema: 0.4 + 0.3 * (0.08 - 0.4)
    assert m.belief(coffee) == pytest.approx(0.304) and m.weakened == {coffee: pytest.approx(0.2)}
    assert m.alive(tea) and m.alive(coffee)


def test_newest_wins_drops_the_older_fact():
    m = FakeMemory()
    tea, coffee = facts(m, (0, "tea", 0.8, "a"), (1, "coffee", 0.4, "b"))
    done = Consolidator().run(m, MockLLM(), [coffee], Ema(), NewestWins())
    assert done.contradicted == [(tea, coffee)] and not m.alive(tea) and m.belief(coffee) == 0.4


def test_a_restated_claim_meets_its_rival_once_with_its_merged_belief():
    m = FakeMemory()
    tea, coffee, tea2 = facts(m, (0, "tea", 0.8, "a"), (1, "coffee", 0.4, "b"), (1, "tea", 0.8, "c"))
    done = Consolidator().run(m, MockLLM(), [coffee, tea2], Ema(), WeakerLoses())
    assert done.merged == [(tea, tea2)] and done.contradicted == [(coffee, tea)]
    assert Consolidator(enabled=False).run(m, MockLLM(), [coffee], Ema(), WeakerLoses()) == Consolidated()


# -- inference -------------------------------------------------------------------------
def unwell(step, belief=0.6, ttl=7 * DAY, kind="say"):
    return Item("I feel unwell.", kind, step, "en", Hints(infer=(Impression("user.cold", "The user may have a cold",
                                                                             belief, ttl),)))


def test_impressions_accumulating_past_the_threshold_form_one_conjecture():
    m, llm = FakeMemory(), MockLLM()
    perceive, inf = FakePerceive(m), Inferrer(threshold=0.7, known_keys=0)   # the fake embeds as text
    assert inf.observe(m, llm, perceive, NoisyOr(), unwell("a"), []) == []          # 0.6 < 0.7
    m.now = DAY
    formed = inf.observe(m, llm, perceive, NoisyOr(), unwell("b"), ["I feel unwell."])
    d = math.exp(-3 / 7)
    belief = 1 - (1 - 0.6 * d) * 0.4
    assert formed == [0] and belief >= 0.7
    r = m.memories[0]
    assert (r.kind, r.key, r.value, r.provenance) == ("conjecture", "user.cold", True, ("a", "b"))
    assert r.belief == pytest.approx(belief) and r.meta == {"at": DAY}
    assert [e["accumulated"] for e in m.events("impression")] == [0.6, pytest.approx(belief, abs=1e-4)]
    m.now = 2 * DAY
    assert inf.observe(m, llm, perceive, NoisyOr(), unwell("c"), []) == []           # joins the live one
    assert m.provenance(0) == ("a", "b", "c") and len(m.memories) == 1


def test_faded_impressions_and_the_max_rule_form_no_conjecture():
    m, llm = FakeMemory(), MockLLM()
    inf = Inferrer(known_keys=0)
    inf.observe(m, llm, FakePerceive(m), NoisyOr(), unwell("a", ttl=DAY), [])
    m.now = 10 * DAY                                                   # the first has faded away
    assert inf.observe(m, llm, FakePerceive(m), NoisyOr(), unwell("b", ttl=DAY), []) == []
    m2, inf2 = FakeMemory(), Inferrer(known_keys=0)
    inf2.observe(m2, llm, FakePerceive(m2), Max(), unwell("a"), [])
    m2.now = DAY
    assert inf2.observe(m2, llm, FakePerceive(m2), Max(), unwell("b"), []) == [] and not m2.memories
    assert not Inferrer().wants(unwell("r", kind="reply"))


# -- what memory already holds, shown to the LLM (issue 15) -----------------------------
class Recording(MockLLM):
    """The mock, recording the known names each summarize and infer call is shown."""

    def __init__(self):
        super().__init__()
        self.shown: list[tuple] = []

    def summarize(self, turns, known_facts=(), known_events=()):
        self.shown.append((tuple(known_facts), tuple(known_events)))
        return super().summarize(turns, known_facts, known_events)

    def infer(self, info, context, known=()):
        self.shown.append(tuple(known))
        return super().infer(info, context, known)


def test_summarize_is_shown_the_keys_and_categories_of_similar_memories():
    m, llm = FakeMemory(), Recording()
    m.remember("The user plays chess on Sundays.", "fact", ("a",), score=5.0, key="user.skill.chess", value=True)
    m.remember("The user plays chess well.", "fact", ("b",), score=5.0, key="user.skill.chess", value=True)
    m.remember("Chess is hard.", "fact", ("c",), score=5.0)                            # keyless: not shown
    m.remember("The user bakes bread.", "fact", ("d",), score=5.0, key="user.hobby.baking", value=True)
    m.remember("Signed up for a chess course.", "event", ("e",), score=5.0, meta={"category": "course.chess"})
    s = Summarizer(every=1)
    s.add(turn("s1", "I lost at chess again on Sunday."), 0.0)
    s.flush(m, llm, FakePerceive(m), Ema())
    facts, events = llm.shown[-1]
    assert facts == (Known("user.skill.chess", "The user plays chess on Sundays."),)   # distinct, best first
    assert events == (Known("course.chess", "Signed up for a chess course."),)
    assert "- user.skill.chess: The user plays chess on Sundays." in REGISTRY["summarize"].prompt([], facts, events)
    s2 = Summarizer(every=1, known_keys=0)
    s2.add(turn("s2", "Chess again."), 0.0)
    s2.flush(m, llm, FakePerceive(m), Ema())
    assert llm.shown[-1] == ((), ())                                   # known_keys: 0 shows nothing


class VectorMemory(FakeMemory):
    """The fake, embedding texts as vectors (the inferrer ranks its open keys by cosine)."""

    def embed(self, text):
        return Hashing(dim=256).embed([text])[0]


def test_infer_is_shown_the_open_keys_nearest_the_item_with_their_beliefs():
    m, llm = VectorMemory(), Recording()
    inf = Inferrer(known_keys=1)
    inf.observe(m, llm, FakePerceive(m), NoisyOr(), unwell("a"), [])
    assert llm.shown[-1] == ()                                         # nothing open yet
    hum = Item("I hum all day.", "say", "h", "en", Hints(infer=(Impression("user.mood.cheerful", "The user is cheerful",
                                                                             0.3, 30 * DAY),)))
    inf.observe(m, llm, FakePerceive(m), NoisyOr(), hum, [])
    m.now = DAY
    inf.observe(m, llm, FakePerceive(m), NoisyOr(), Item("I may have a cold, I feel unwell.", "say", "b"), [])
    (cold,) = llm.shown[-1]                                            # the nearer of the two open keys
    assert cold == Known("user.cold", "The user may have a cold", round(0.6 * math.exp(-3 / 7), 4))
    m.now = 10 * DAY                                                   # the cold's TTL has passed
    inf.observe(m, llm, FakePerceive(m), NoisyOr(), Item("I may have a cold, I feel unwell.", "say", "c"), [])
    assert [k.name for k in llm.shown[-1]] == ["user.mood.cheerful"]
