"""The mock's personalised attention follows what an item evokes and does not saturate
(issue 14 item 7): dull turns of a generated dialogue stay dull."""

import numpy as np
import pandas as pd

from mtsbench.config import compose
from mtsbench.llm.mock import personalised_score
from mtsbench.runner import run
from mtsbench.scenario.loader import load_scenario


def test_lift_follows_the_evoked_attention_never_the_top():
    # the milk case: an allergy still at 3.5 (read as a fresh 10) lifts a dull perception to 10 only
    # when fully relevant, and to its relevance-weighted share otherwise
    assert personalised_score(1.0, np.array([3.5]), np.array([0.2])) == 10.0
    assert personalised_score(1.0, np.array([2.1]), np.array([0.2])) == 6.0        # read as 6: to 6, not 10
    # dull associations and near-restatements lift nothing; nothing is ever lowered
    assert personalised_score(2.0, np.array([0.7, 0.7]), np.array([0.2, 0.2])) == 2.0
    assert personalised_score(2.0, np.array([9.9, 9.9, 9.9]), np.array([0.7, 0.8, 0.65])) == 2.0
    assert personalised_score(8.0, np.array([1.0]), np.array([0.2])) == 8.0


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
