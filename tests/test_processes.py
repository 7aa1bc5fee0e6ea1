"""Summarization, events, consolidation and inference on small scenarios: hand values."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.config.composition import compose
from mtsbench.harness.runner import build_system, drive, run
from mtsbench.scenario.loader import load_scenario

DAY = 86400.0
HEAD = "id: {id}\ntitle: t\nlanguage: en\nstart: 2026-01-05T09:00:00\nsteps:\n"


def scenario(tmp_path, steps: str, name="t"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(HEAD.format(id=name) + steps, encoding="utf-8")
    return load_scenario(path)


class Agent:
    """A started ``system=mts`` seen as the tests read it: its memory's store and trace, the
    event tracker, the summarizer; ``step`` drives one scenario step, ``finish`` ends."""

    def __init__(self, system):
        self.system, self.memory = system, system.memory_
        self.store, self.trace, self.embedder = self.memory.store, self.memory.trace, self.memory.embedder
        self.events, self.summarizer, self.llm = system.events_, system.agent_.summarizer, system.agent_.llm

    def step(self, step):
        return drive(self.system, step, 0)

    def finish(self) -> tuple[str, ...]:
        return self.system.finish().summarized

    def count(self, category: str) -> int:
        return self.events.count(self.memory, category)


def start(cfg, sc) -> Agent:
    return Agent(build_system(cfg, sc))


def replay(tmp_path, steps: str, *overrides):
    cfg, _ = compose(list(overrides))
    sc = scenario(tmp_path, steps)
    agent = start(cfg, sc)
    for step in sc.steps:
        agent.step(step)
    return agent


def live(agent, kind):
    s = agent.store
    return [i for i in range(s.size) if s.alive[i] and s.kind_of(i) == kind]


def events(agent, name):
    return [e for e in agent.trace if e["event"] == name]


FACT = "      facts: [{{key: user.drink, text: The user drinks {v}, value: {v}, belief: {b}}}]\n"


def said(at, text, sid, salience=3, value=None, belief=0.8):
    out = f"  - id: {sid}\n    at: {at}\n    say: \"{text}\"\n    hints:\n      salience: {salience}\n"
    return out + (FACT.format(v=value, b=belief) if value else "")


# -- summarization ---------------------------------------------------------------------
def test_summary_every_n_turns_with_provenance_and_facts_from_their_turn(tmp_path):
    steps = (said("d0 09:00", "I drink tea every morning.", "tea", 6, "tea") +
             "  - {at: d0 09:01, reply: \"Nice.\", hints: {salience: 1}}\n" +
             said("d0 09:02", "The bus was late.", "bus"))
    agent = replay(tmp_path, steps, "summarize.every=2")
    (summary,) = live(agent, "summary")
    assert agent.store.provenance[summary] == ("tea", "s1")      # the third turn still waits
    (fact,) = live(agent, "fact")
    s = agent.store
    assert (s.key[fact], s.value[fact], s.provenance[fact]) == ("user.drink", "tea", ("tea",))
    assert s.belief[fact] == pytest.approx(0.8)                  # ema: the LLM's belief as it came
    assert agent.summarizer.pending_[0].step == "bus"
    # the summary is labelled as its most salient part (salience hint 6), never from its own turns
    scored = {e["id"]: e for e in events(agent, "scored")}
    assert scored[summary]["score"] == 6.0 and not set(scored[summary]["associated"]) & {0, 1}


def test_a_session_gap_and_the_end_of_the_scenario_flush_what_waits(tmp_path):
    steps = (said("d0 09:00", "I drink tea every morning.", "a", value="tea") +
             said("d0 09:05", "Tea keeps me calm.", "b") +
             said("d0 18:00", "I took the train home.", "c"))
    cfg, _ = compose(["summarize.every=10", "summarize.session_gap=3h"])
    sc = scenario(tmp_path, steps)
    agent = start(cfg, sc)
    results = [agent.step(s) for s in sc.steps]
    assert results[2].summarized == ("a", "b")                  # the 9 h gap ended the session
    assert agent.finish() == ("c",)
    assert len(live(agent, "summary")) == 1                      # one turn alone is not summarized


# -- events ----------------------------------------------------------------------------
EVENT = "      event: {{category: trip.paris, text: {text}, valid: {valid}}}\n"


def trip(at, sid, text, valid="10d"):
    return (f"  - id: {sid}\n    at: {at}\n    say: \"{text}\"\n    hints:\n      salience: 5\n"
            + EVENT.format(text=text, valid=valid) + f"  - {{at: {at[:at.index(' ')]} 23:00, idle: 1h}}\n")


def test_a_tag_joins_until_its_category_goes_stale(tmp_path):
    steps = trip("d0 09:00", "go", "We fly to Paris.") + trip("d9 09:00", "there", "We saw the Louvre.") \
        + trip("d20 09:00", "again", "Paris again.")
    agent = replay(tmp_path, steps)
    first, second = sorted(agent.events.by_category_["trip.paris"])
    s = agent.store
    assert s.provenance[first] == ("go", "there") and s.provenance[second] == ("again",)
    assert s.text[first] == "We fly to Paris. We saw the Louvre."     # the storyline, in order
    assert agent.count("trip.paris") == 2
    assert np.allclose(s.vectors[first], agent.embedder.embed([s.text[first]])[0])   # re-embedded
    joined = [e for e in events(agent, "event") if e["joined"]]
    assert len(joined) == 1 and joined[0]["id"] == first


def test_window_policy_ignores_the_stated_validity(tmp_path):
    steps = trip("d0 09:00", "go", "We fly to Paris.", valid="1y") + trip("d9 09:00", "there", "Louvre.", valid="1y")
    agent = replay(tmp_path, steps, "events=window", "events.window=5d")
    assert agent.count("trip.paris") == 2


# -- consolidation ---------------------------------------------------------------------
def night(day):
    return f"  - {{at: d{day} 23:00, idle: 8h}}\n"


def test_restatement_merges_and_raises_belief_by_a_damped_step(tmp_path):
    steps = said("d0 09:00", "I drink tea.", "a", value="tea") + night(0) + \
        said("d1 09:00", "Tea again for me.", "b", value="tea") + night(1)
    agent = replay(tmp_path, steps)
    (fact,) = live(agent, "fact")
    s = agent.store
    # perfect re-estimate 1 - 0.2 * 0.2 = 0.96; ema: 0.8 + 0.3 * (0.96 - 0.8)
    assert s.belief[fact] == pytest.approx(0.848)
    assert s.provenance[fact] == ("a", "b") and s.recalls[fact] >= 1
    (merged,) = events(agent, "merged")
    assert merged["belief"] == [0.8, 0.848]


def test_a_weak_contradiction_loses_belief_and_attention_in_proportion(tmp_path):
    steps = said("d0 09:00", "I drink tea.", "a", value="tea") + night(0) + \
        said("d1 09:00", "I drink coffee now.", "b", value="coffee", belief=0.4) + night(1)
    agent = replay(tmp_path, steps)
    tea, coffee = live(agent, "fact")
    s = agent.store
    assert s.belief[tea] == pytest.approx(0.8)
    # loser re-estimated 0.4 * (1 - 0.8) = 0.08; ema: 0.4 + 0.3 * (0.08 - 0.4)
    assert s.belief[coffee] == pytest.approx(0.304)
    (c,) = events(agent, "contradicted")
    assert (c["loser"], c["winner"], c["keep"]) == (coffee, tea, 0.2)   # keeps 1 - 0.8 of its attention


def test_newest_wins_drops_the_old_fact(tmp_path):
    steps = said("d0 09:00", "I drink tea.", "a", value="tea") + night(0) + \
        said("d1 09:00", "I drink coffee now.", "b", value="coffee", belief=0.4) + night(1)
    agent = replay(tmp_path, steps, "conflict=newest_wins")
    (fact,) = live(agent, "fact")
    assert agent.store.value[fact] == "coffee" and agent.store.belief[fact] == pytest.approx(0.4)


def test_consolidation_cost_is_metered_apart_from_probe_cost(tmp_path):
    steps = said("d0 09:00", "I drink tea.", "a", value="tea") + night(0) + \
        said("d1 09:00", "Tea again.", "b", value="tea") + night(1) + \
        "  - id: q\n    at: d2 09:00\n    probe: \"What does the user drink?\"\n"
    path = tmp_path / "cost.yaml"
    path.write_text(HEAD.format(id="cost") + steps, encoding="utf-8")
    cfg, choices = compose([f"scenarios=[{path}]"])
    frame = run(cfg, tmp_path / "out", choices)
    probe = frame[frame["check"] == "probe"].iloc[0]
    assert probe["llm_calls"] == 0                        # the probe itself asks no LLM
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    cons = summary["scenarios"]["cost"]["processes"]["consolidate"]
    assert cons["runs"] == 2 and cons["calls"] == 2 and cons["scored"] > 0   # judge + reassess, one search
    assert summary["overall"]["llm_calls"] == summary["scenarios"]["cost"]["llm_calls"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["tea", "coffee", "water"]), st.floats(0.05, 0.95)), min_size=1,
                max_size=6))
def test_consolidation_keeps_beliefs_in_range_and_never_adds_facts(tmp_path_factory, facts):
    tmp = tmp_path_factory.mktemp("prop")
    steps = "".join(said(f"d{d} 09:00", f"I drink {v}.", f"f{d}", value=v, belief=round(b, 3)) + night(d)
                    for d, (v, b) in enumerate(facts))
    agent = replay(tmp, steps)
    alive = live(agent, "fact")
    beliefs = agent.store.belief[alive]
    assert len(alive) <= len({v for v, _ in facts}) and np.all((beliefs >= 0) & (beliefs <= 1))


# -- inference -------------------------------------------------------------------------
IMPRESSION = "      infer: [{{key: user.cold, text: The user may have a cold, belief: {b}, ttl: {ttl}}}]\n"


def symptom(at, sid, b=0.6, ttl="7d"):
    return f"  - id: {sid}\n    at: {at}\n    say: \"I feel unwell.\"\n    hints:\n" + IMPRESSION.format(b=b, ttl=ttl)


def test_impressions_accumulate_under_their_ttl_into_one_conjecture(tmp_path):
    steps = symptom("d0 09:00", "a") + symptom("d1 09:00", "b") + symptom("d2 09:00", "c")
    agent = replay(tmp_path, steps)
    accumulated = [e["accumulated"] for e in events(agent, "impression")]
    d = math.exp(-3 / 7)
    assert accumulated[:2] == [0.6, pytest.approx(1 - (1 - 0.6 * d) * 0.4, abs=1e-4)]
    (conj,) = live(agent, "conjecture")
    s = agent.store
    assert (s.key[conj], s.provenance[conj]) == ("user.cold", ("a", "b", "c"))   # c joined it
    assert s.meta[conj]["at"] == DAY and s.belief[conj] == pytest.approx(accumulated[1], abs=1e-4)


def test_ttl_decay_switch_and_the_max_rule(tmp_path):
    steps = symptom("d0 09:00", "a", ttl="1d") + symptom("d10 09:00", "b", ttl="1d")
    assert not live(replay(tmp_path, steps), "conjecture")
    assert live(replay(tmp_path, steps, "inference.ttl_decay=false"), "conjecture")
    assert not live(replay(tmp_path, symptom("d0 09:00", "a") + symptom("d1 09:00", "b"), "accumulate=max"),
                    "conjecture")


def test_replies_are_not_inferred_from(tmp_path):
    steps = "  - {at: d0 09:00, reply: \"You may have a cold.\", hints: {salience: 2}}\n"
    agent = replay(tmp_path, steps)
    assert "infer" not in agent.llm.meter.by_task


def test_nightly_consolidation_runs_once_per_night_without_idle_steps(tmp_path):
    steps = said("d0 09:00", "I drink tea.", "a", value="tea") + said("d0 20:00", "Tea, always.", "b", value="tea") \
        + said("d1 09:00", "Still tea.", "c", value="tea") + said("d2 09:00", "Tea again.", "d")
    agent = replay(tmp_path, steps, "consolidation.nightly_at=03:00")
    nights = [e["t"] for e in events(agent, "consolidation")]
    assert nights == [DAY, 2 * DAY]          # the steps after 03:00 on days 1 and 2 (scenario start 09:00)
    with pytest.raises(Exception, match="nightly_at: expected a time of day HH:MM"):
        replay(tmp_path, steps, "consolidation.nightly_at=25:00")
    (fact,) = live(agent, "fact")
    assert agent.store.provenance[fact] == ("a", "b", "c")
    assert not events(replay(tmp_path, steps), "consolidation")     # by default only idle steps consolidate


def test_event_count_waits_for_the_earlier_turns_to_be_summarized(tmp_path):
    steps = (trip("d0 09:00", "go", "We fly to Paris.").split("  - {at: d0 23:00")[0]
             + "  - at: d0 09:05\n    check:\n      event_count: {category: trip.paris, equals: 1}\n")
    path = tmp_path / "count.yaml"
    path.write_text(HEAD.format(id="count") + steps, encoding="utf-8")
    cfg, choices = compose([f"scenarios=[{path}]"])
    frame = run(cfg, tmp_path / "out", choices)
    (row,) = frame[frame["check"] == "event_count"].itertuples()
    assert row.passed and row.value == 1        # judged after the end-of-scenario summary, not at 09:05


def test_events_age_from_their_turns_not_from_when_they_were_summarized(tmp_path):
    # no idle steps: each session is summarized only when the next step comes, days later
    steps = "".join(trip(at, sid, text).split("  - {at:")[0] for at, sid, text in
                    [("d0 09:00", "go", "We fly to Paris."), ("d9 09:00", "there", "The Louvre."),
                     ("d185 09:00", "again", "Paris again.")])
    agent = replay(tmp_path, steps)
    agent.finish()
    first, second = sorted(agent.events.by_category_["trip.paris"])
    assert agent.store.provenance[first] == ("go", "there") and agent.store.provenance[second] == ("again",)


def test_newest_wins_means_the_fact_stated_last_even_when_it_merged_into_an_older_one(tmp_path):
    steps = said("d0 09:00", "I drink tea.", "a", value="tea") + night(0) + \
        said("d1 09:00", "I drink coffee now.", "b", value="coffee") + \
        said("d1 09:05", "No, tea after all.", "c", value="tea") + night(1)
    agent = replay(tmp_path, steps, "conflict=newest_wins")
    (fact,) = live(agent, "fact")
    assert agent.store.value[fact] == "tea" and agent.store.provenance[fact] == ("a", "c")
