"""The seed design's parts are named once (issue 37): Hydra builds each from the line
``GROUP: ${GROUP}`` of ``configs/system/mts.yaml``, ``MtsSystem`` hands it to the ``Memory`` or
``MemoryAgent`` parameter of its name (``PARTS``), and a bad value is named by its group."""

import copy

import pytest
from omegaconf import OmegaConf

from mtsbench.config.composition import compose
from mtsbench.core.params import build
from mtsbench.errors import ConfigError
from mtsbench.systems.mts import system as mts


def test_every_part_of_the_system_config_is_a_part_of_the_design():
    cfg, _ = compose([])
    raw = OmegaConf.to_container(cfg.system, resolve=False)
    parts = {k for k in raw if not k.startswith("_")} - {"index", "agent", "preload"}
    assert parts == set(mts.PARTS)
    assert all(raw[g] == "${" + g + "}" for g in parts)          # each named by its own group


def test_hydra_builds_the_parts_and_start_hands_them_on():
    cfg, _ = compose(["scenarios=[milk_allergy]"])
    system = build(cfg.system, "system")
    assert type(system.dual.short_decay).__name__ == type(build(cfg.short_decay, "short_decay")).__name__
    from mtsbench.systems.base import Context

    system.start(Context("x", "en"))
    assert system.memory_.attention is system.dual and system.agent_.perceive.labeller is system.attention
    assert system.events_.policy is system.events
    with pytest.raises(RuntimeError, match="starts once"):
        system.start(Context("x", "en"))


@pytest.mark.parametrize("key,value,line", [
    ("short_decay.half_life", -1, "short_decay.half_life: expected a number > 0, got -1"),
    ("dual.cap", -2, "dual.cap: expected a number > 0, got -2"),
    ("summarize.every", 0, "summarize.every: expected an integer >= 1, got 0"),
])
def test_a_bad_part_is_named_by_its_group_and_the_config_is_left_as_it_was(key, value, line):
    cfg, _ = compose(["scenarios=[milk_allergy]"])
    cfg = copy.deepcopy(cfg)
    OmegaConf.update(cfg, key, value)
    with pytest.raises(ConfigError) as e:
        build(cfg.system, "system")          # past the checks compose runs: the last line of defence
    assert str(e.value) == line
    assert OmegaConf.is_interpolation(cfg.dual, "short_decay")    # building resolved a copy, not cfg


def test_an_unknown_part_is_refused():
    with pytest.raises(TypeError):
        mts.MtsSystem(**{g: None for g in mts.required()}, dulal=None)
    from mtsbench.cli import main

    assert main(["check", "+system.dulal=1"]) == 2


def test_the_tiny_agent_builds_a_required_part_it_does_not_choose_from_the_defaults(monkeypatch):
    from mtsbench.evaluation.checks import run_tiny, tiny_agent

    required = mts.required
    monkeypatch.setattr(mts, "required", lambda: required() + ["motivation"])   # as a new group's would be
    agent = tiny_agent()
    run_tiny(agent)
    assert type(agent.motivation).__name__ == "Given"
