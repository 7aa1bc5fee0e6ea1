"""The mock's personalised attention follows what an item evokes and does not saturate
(issue 14 item 7): dull turns of a generated dialogue stay dull. Its relevance thresholds are
relative to the embedder's chance level (issue 25 item 4), so they mean the same for every embedder."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mtsbench.evaluation.checks import tiny_agent
from mtsbench.config.composition import compose
from mtsbench.embed.hashing import Hashing
from mtsbench.llm.base import Association, Item
from mtsbench.embed.chance import CHANCE_TEXTS
from mtsbench.llm.heuristics import personalised_score, relative_relevance
from mtsbench.llm.mock import MockLLM
from mtsbench.scenario.model import Hints
from mtsbench.harness.runner import run
from mtsbench.scenario.loader import load_scenario


CHANCE = (0.025, 0.05)     # a chance level whose z values are easy to read: z = (r - 0.025) / 0.05


def test_lift_follows_the_evoked_attention_never_the_top():
    # the milk case: an allergy still at 3.0 (read as a fresh 10) lifts a dull perception to 10 only
    # when fully relevant (z = 2: cosine 0.125 at this chance level), and to its relevance-weighted share
    # otherwise. Relevance is read in standard deviations above chance since issue 25 (it was the raw
    # cosine: these cases used 0.2 for "fully relevant", 0.7 for "restated").
    assert personalised_score(1.0, np.array([3.0]), np.array([0.125]), chance=CHANCE) == 10.0
    assert personalised_score(1.0, np.array([1.8]), np.array([0.125]), chance=CHANCE) == 6.0   # read as 6: to 6, not 10
    # dull associations and restatements (z >= 10) lift nothing; nothing is ever lowered
    assert personalised_score(2.0, np.array([0.6, 0.6]), np.array([0.125, 0.125]), chance=CHANCE) == 2.0
    assert personalised_score(2.0, np.array([9.9, 9.9, 9.9]), np.array([0.525, 0.6, 0.7]), chance=CHANCE) == 2.0
    assert personalised_score(8.0, np.array([1.0]), np.array([0.125]), chance=CHANCE) == 8.0


def test_relevance_is_read_in_standard_deviations_above_the_embedders_chance_level():
    # hand-computed: g = ramp(z; 1, 2) * (1 - ramp(z; 2, 10)); an allergy read as 10, a dull item at 1
    for cosine, z, g in [(0.05, 0.5, 0.0), (0.1, 1.5, 0.5), (0.125, 2.0, 1.0), (0.225, 4.0, 0.75),
                         (0.425, 8.0, 0.25), (0.525, 10.0, 0.0)]:
        assert relative_relevance(np.array([cosine]), CHANCE)[0] == pytest.approx(z)
        assert personalised_score(1.0, np.array([3.0]), np.array([cosine]), chance=CHANCE) == pytest.approx(1 + 9 * g)
    # the chance level: mean and sd of the cosines of every pair of CHANCE_TEXTS, per language
    e = Hashing()
    for language in ("en", "zh"):
        v = e.embed(list(CHANCE_TEXTS[language]))
        cos = (v.astype(float) @ v.T.astype(float))[np.triu_indices(len(v), 1)]
        assert len(cos) == 496
        assert MockLLM().chance(language) == pytest.approx((cos.mean(), cos.std()), abs=1e-6)
    assert MockLLM(chance_mean=0.0, chance_std=1.0).chance("en") == (0.0, 1.0)
    assert MockLLM(chance_std=0.5).chance("en") == (MockLLM().chance("en")[0], 0.5)


def test_a_fixed_chance_of_0_and_1_is_the_absolute_rule_before_issue_25():
    old = MockLLM(chance_mean=0.0, chance_std=1.0, relevance_floor=0.05, relevance_full=0.2, restate_from=0.4,
                  restate_full=0.6, attention_ref=3.5)
    milk = Item("Milk is on the table.", "perceive", "m", "en", Hints(salience=1))
    assert old.rate_attention(milk, [Association("The user is allergic to milk", 3.15, 0.3)]) == 9.0
    assert old.rate_attention(milk, [Association("The user is allergic to milk", 3.15, 0.125)]) == 5.0
    assert old.rate_attention(milk, [Association("Milk is on the table!", 9.0, 0.7)]) == 1.0


@pytest.fixture
def squeezing(monkeypatch):
    """Hashing with every cosine mapped to alpha * cos + (1 - alpha) (tests/data/plugins): a dense
    model's unrelated texts still have cosines near 1 - alpha (all-MiniLM's English chance level is
    0.08 +- 0.09, hashing's 0.03 +- 0.05)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent / "data" / "plugins"))
    from squeezed_embedder import Squeezed

    return Squeezed


DIALOGUE = """I'm allergic to peanuts, even a trace makes me sick.
The bus was late again this morning.
We had pasta with peanut sauce at the new place, I skipped it.
My sister is visiting next weekend.
I finished the novel about the lighthouse keeper.
The lighthouse on the cape is open to visitors in summer.
My sister wants to see the lighthouse when she visits.
The office printer jammed twice today.
Work was busy, the printer jammed again and the meeting ran late.
There is a bowl of peanuts on the counter.
The bus driver waved at me this morning.
We might take the bus to the cape with my sister.
I bought new running shoes.
My new shoes gave me a blister on the run.
The meeting tomorrow starts early.
The weather should be sunny for the weekend.
A novel by the same author came out this week.
The peanut butter jar is open on the table.""".splitlines()


def labelled(embedder, llm):
    """The mock's score of each line of DIALOGUE in the light of its 3 most similar earlier lines (each at
    attention 3.0, read as a fresh 10), relevance the embedder's cosine; salience from the cue words."""
    llm.calibrate_relevance(embedder)
    v = embedder.embed(DIALOGUE).astype(float)
    scores = []
    for i, text in enumerate(DIALOGUE):
        cos = v[:i] @ v[i]
        top = np.argsort(-cos, kind="stable")[:3]
        scores.append(llm.rate_attention(Item(text, "say", f"s{i}"),
                                         [Association(DIALOGUE[j], 3.0, float(cos[j])) for j in top]))
    return np.array(scores)


def test_relative_thresholds_make_the_lift_independent_of_the_embedders_scale(squeezing):
    """Issue 25 item 4: the same texts, two embedders whose cosines differ by a shift and a stretch
    (Squeezed: 0.4 * cos + 0.6): the mock labels them alike. With the absolute thresholds (the rule
    before issue 25) the squeezed cosines all read as restatements and nothing is lifted."""
    plain, squeezed = labelled(Hashing(), MockLLM()), labelled(squeezing(0.4), MockLLM())
    assert squeezed == pytest.approx(plain, abs=1e-3)
    high = (plain >= 8).mean()
    assert 0 < high < 1 and (squeezed >= 8).mean() == high
    absolute = dict(chance_mean=0.0, chance_std=1.0, relevance_floor=0.05, relevance_full=0.2, restate_from=0.4,
                    restate_full=0.6, attention_ref=3.5)
    old_plain, old_squeezed = labelled(Hashing(), MockLLM(**absolute)), labelled(squeezing(0.4), MockLLM(**absolute))
    assert (old_plain >= 8).mean() > 0 and (old_squeezed >= 8).mean() == 0


def test_the_agent_tells_the_mock_its_memorys_embedder():
    agent = tiny_agent()
    assert agent.llm.embedder is agent.memory.embedder
    assert agent.llm.chance("en") != MockLLM().chance("en")     # Hashing(dim=64), not the default 1024


def test_dull_turns_of_a_generated_dialogue_stay_dull(tmp_path):
    """After the first days: while every memory is fresh, the mock cannot tell a fresh dull 3
    from a faded important one and reads both as high (``attention_ref``), so the first two or
    three days of a new agent's dialogue still lift chatter (measured: day 0 mean 8.3, day 2
    4.5, from day 3 on about 2.4)."""
    cfg, choices = compose(["generate.days=10", "generate.turns_per_day=20", "generate.needles=4",
                            "generate.seed=1"])
    run(cfg, tmp_path / "run", choices)
    frame = pd.read_parquet(tmp_path / "run" / "results.parquet")
    scenario = load_scenario(next((tmp_path / "run" / "generated").glob("*.yaml")))
    salience = {s.id: s.hints.salience for s in scenario.steps}
    day = {s.id: s.at // 86400 for s in scenario.steps}
    scored = frame[frame["score"].notna()]
    dull = scored.loc[(scored["step"].map(salience) <= 3) & (scored["step"].map(day) >= 3), "score"].to_numpy()
    assert len(dull) > 50
    # before the fix every one of them was lifted to 10; now they keep (about) their common sense
    assert dull.mean() < 3.5 and (dull >= 6).mean() < 0.1, np.histogram(dull, bins=range(11))[0]
