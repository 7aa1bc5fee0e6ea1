"""Every option of every mechanism group: passes its checker and runs a scenario end to end."""

import numpy as np
import pytest
from hydra.utils import instantiate

from mtsbench.checks import CHECKERS, check_component
from mtsbench.config import compose, groups
from mtsbench.runner import build_agent, load_all, run

OPTIONS = [(g, o) for g, opts in groups().items() for o in opts]


def test_every_group_has_a_checker():
    assert set(groups()) == set(CHECKERS)


@pytest.mark.parametrize("group,option", OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_option_honours_contract_and_runs(group, option, tmp_path):
    cfg, choices = compose([f"{group}={option}", "scenarios=[milk_allergy_zh]"])
    assert choices[group] == option
    check_component(group, instantiate(cfg[group]))
    frame = run(cfg, tmp_path, choices)
    assert (tmp_path / "metrics.csv").exists() and len(frame) > 0
    for col in ("scored", "tiers_searched", "llm_calls", "tokens"):
        assert (frame[col].dropna() >= 0).all()
    probes = frame[frame["check"] == "probe"]
    assert (probes["scored"] >= 1).all()
    # the store's attention stays finite and non-negative under every option
    scenario = load_all(cfg)[0]
    agent = build_agent(cfg, scenario)
    for step in scenario.steps:
        agent.step(step)
    ids = agent.store.live_ids()
    total = agent.attention.total(agent.store, ids, agent.now)
    assert np.all(np.isfinite(total)) and np.all(total >= 0)
