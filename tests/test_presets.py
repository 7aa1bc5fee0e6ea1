"""The peer presets and the mechanisms they added, against hand-computed values."""

from datetime import datetime

import numpy as np
import pytest

from mtsbench.evaluation.checks import check_component
from mtsbench.config.composition import compose
from mtsbench.config.search import groups
from mtsbench.mechanisms.tiers import Fifo, Heat
from mtsbench.memory.attention import HOUR
from mtsbench.memory.scoring import Forgetting, WeightedMinMax, min_max
from mtsbench.memory.store import MemoryStore
from mtsbench.harness.runner import build_system, drive
from mtsbench.scenario.model import Expect, Hints, Scenario, Step
from hydra.utils import instantiate

SCENARIO = Scenario("t", "t", "en", datetime(2026, 1, 1), (), ())


def system_for(preset, *extra):
    cfg, _ = compose([f"preset={preset}", *extra])
    return build_system(cfg, SCENARIO)


def say(system, i, hours, text, salience=3.0):
    return drive(system, Step(i, f"s{i}", hours * HOUR, "say", text, hints=Hints(salience=salience)), 0)


def probe(system, i, hours, text, k=3, motivation=1.0):
    """The ids the probe used (retrieved into its context), best first."""
    out = drive(system, Step(i, f"p{i}", hours * HOUR, "probe", text, motivation=motivation, expect=Expect(k=k)), 0)
    return out.ranking.ids[:out.ranking.used]


@pytest.mark.parametrize("preset", groups()["preset"])
def test_every_preset_retrieval_honours_the_contract(preset):
    cfg, _ = compose([f"preset={preset}"])
    check_component("retrieval", instantiate(cfg.retrieval))


def test_min_max_by_hand():
    assert min_max(np.array([1.0, 3.0, 2.0])).tolist() == [0.0, 1.0, 0.5]
    assert min_max(np.array([4.0, 4.0])).tolist() == [0.5, 0.5]


def test_generative_agents_weighted_min_max_by_hand():
    s = MemoryStore(dim=2)
    for t in (0.0, 2 * HOUR, 4 * HOUR):
        s.add("m", "turn", created=t, provenance=("x",), vector=np.zeros(2))
    ga = WeightedMinMax(recency_weight=0.5, relevance_weight=3.0, attention_weight=2.0, recency_decay=0.5)
    # recency at 4 h: 0.5^4, 0.5^2, 1 -> (1/16, 1/4, 1) -> mm (0, 0.2, 1)
    scores = ga.score(s, np.arange(3), np.array([0.9, 0.5, 0.1]), np.array([2.0, 8.0, 5.0]), now=4 * HOUR)
    expected = 0.5 * np.array([0.0, 0.2, 1.0]) + 3.0 * np.array([1.0, 0.5, 0.0]) + 2.0 * np.array([0.0, 1.0, 0.5])
    assert scores == pytest.approx(expected)


def test_generative_agents_preset_constants_and_access_restarts_recency():
    cfg, choices = compose(["preset=generative_agents"])
    r = cfg.retrieval
    assert (r.recency_weight, r.attention_weight, r.relevance_weight, r.recency_decay, r.context) == (1, 1, 1, 0.995, 30)
    assert (choices["attention"], choices["tiers"], choices["depth"]) == ("common_sense", "flat", "full")
    system = system_for("generative_agents")
    say(system, 0, 0, "I keep my passport in the blue drawer", salience=6)
    say(system, 1, 1, "The weather is fine", salience=2)
    probe(system, 2, 10, "where is my passport")
    m = system.memory_
    # both memories were retrieved (context 30): both were accessed at 10 h, importance unchanged
    assert m.store.long_t[:2].tolist() == [10 * HOUR, 10 * HOUR]
    assert m.attention.total(m.store, np.arange(2), 50 * HOUR).tolist() == [6.0, 2.0]


def test_forgetting_thresholds_depend_only_on_the_memory():
    f, g = Forgetting(seed=3), Forgetting(seed=3)
    many = f.thresholds(np.arange(200))
    assert g.thresholds(np.array([150, 2])).tolist() == [many[150], many[2]]
    assert not np.array_equal(Forgetting(seed=4).thresholds(np.arange(5)), many[:5])


def test_memorybank_retention_grows_with_recall():
    system = system_for("memorybank")
    m = system.memory_
    a = m.attention
    say(system, 0, 0, "My sister Anna's birthday is on the fourteenth of May")
    at = lambda h: float(a.total(m.store, np.array([0]), h * HOUR)[0])   # noqa: E731
    assert at(24) == pytest.approx(5.0 * np.exp(-1))          # R = e^(-t/S), S = 1, t in days
    m.recall(np.array([0]), why="test")                       # at t = 0 h: S = 2, t reset
    assert m.store.long_s[0] == 2.0 and at(48) == pytest.approx(5.0 * np.exp(-1))


def test_memorybank_forgets_once_retention_falls_below_the_threshold():
    system = system_for("memorybank", "seed=1")
    say(system, 0, 0, "My locker code at the gym is 4512")
    u = system.memory_.retriever.thresholds(np.array([0]))[0]
    t_forget = -np.log(u) * 24.0                              # hours until R = u
    assert len(probe(system, 1, 0.5 * t_forget, "gym locker code", k=1)) == 1
    system2 = system_for("memorybank", "seed=1")
    say(system2, 0, 0, "My locker code at the gym is 4512")
    assert len(probe(system2, 1, 1.5 * t_forget, "gym locker code", k=1)) == 0


def test_recency_only_returns_the_newest_whatever_the_query():
    system = system_for("recency_only")
    for i, text in enumerate(["milk allergy", "train late", "whales", "budget meeting"]):
        say(system, i, 24 * i, text)
    found = probe(system, 4, 200, "milk allergy", k=2)
    assert found == [3, 2] and system.agent_.llm.meter.calls == 0


def test_fifo_holds_the_newest_and_heat_places_the_rest():
    f = Fifo(size=2, below=Heat(threshold=5.0, mu_hours=24.0))
    # tier-0 members stay; others: heat = visits + length + e^(-idle/24) -> hot (1) or cold (2)
    t = f.assign(None, np.array([0, 2, 2]), np.array([0, 3, 2]), np.ones(3), np.array([0.0, 0.0, 24.0]))
    assert t.tolist() == [0, 1, 2]   # 3 + 1 + 1 = 5 >= 5; 2 + 1 + e^-1 < 5


def test_memoryos_fifo_of_seven_and_promotion_by_heat():
    system = system_for("memoryos")
    for i in range(9):
        say(system, i, i, f"note {i} about topic {i}")
    m = system.memory_
    s = m.store
    assert sorted(m.index.tiers[0].members().tolist()) == list(range(2, 9))
    assert s.tier[:2].tolist() == [2, 2]
    for r in range(4):                  # four recalls of memory 0: heat = 4 + 1 + e^(-0) >= 5
        m.now = (10 + r) * HOUR
        m.recall(np.array([0]), why="test")
    assert s.tier[0] == 1 and s.tier[1] == 2


def test_mem0_like_lets_the_newest_fact_replace_the_old(tmp_path):
    from mtsbench.harness.runner import run

    cfg, choices = compose(["preset=mem0_like", "scenarios=[contradiction]"])
    frame = run(cfg, tmp_path, choices)
    beliefs = frame[frame["check"] == "belief"]
    # the weak claim replaced the twice-stated fact that same night: the fact is gone
    fact = beliefs[(beliefs["step"] == "s8") & beliefs["expected"].str.startswith("from veg1 ")]
    assert len(fact) == 1 and (fact["value"] == "no live fact from veg1").all()
    assert not beliefs["passed"].all()
