"""Every option of every mechanism group: passes its checker and runs a scenario end to end.

Backends that need a server run against the local fake OpenAI-compatible server; the
replay backend answers from a cassette recorded against it in the same test.
"""

import contextlib

import numpy as np
import pytest
from hydra.utils import instantiate

from mtsbench.checks import CHECKERS, check_component
from mtsbench.config import compose, groups, mechanism_groups
from mtsbench.llm.testing import FakeOpenAI
from mtsbench.runner import build_agent, load_all, run

OPTIONS = [(g, o) for g, opts in mechanism_groups().items() for o in opts]
SCENARIO = "scenarios=[milk_allergy_zh]"


def test_every_group_has_a_checker():
    assert set(mechanism_groups()) | {"retrieval"} == set(CHECKERS)   # retrieval: a node, checked per preset


@pytest.mark.parametrize("preset", groups()["preset"])
def test_preset_sets_only_known_options_and_runs(preset, tmp_path):
    cfg, choices = compose([f"preset={preset}", SCENARIO])
    known = mechanism_groups()
    assert all(choices[g] in known[g] for g in known)
    frame = run(cfg, tmp_path, choices)
    assert len(frame) > 0 and (frame[frame["check"] == "probe"]["scored"] >= 1).all()


def test_flat_rag_is_relevance_only_and_mts_is_the_default():
    _, default = compose([])
    _, mts = compose(["preset=mts"])
    assert {g: c for g, c in mts.items() if g != "preset"} == default
    cfg, rag = compose(["preset=flat_rag"])
    assert (rag["tiers"], rag["depth"], rag["arousal"], rag["attention"]) == ("flat", "full", "none", "common_sense")
    assert cfg.retrieval.attention_weight == 0.0
    _, mixed = compose(["preset=flat_rag", "arousal=radius"])   # the command line wins over a preset
    assert mixed["arousal"] == "radius"


def backend_overrides(group, option, tmp_path, stack) -> list[str]:
    """Extra overrides an LLM backend needs to run offline in a test."""
    if group != "llm" or option == "mock":
        return []
    server = stack.enter_context(FakeOpenAI())
    live = [f"llm.base_url={server.url}", "llm.model=any"]
    if option == "openai":
        return live
    cassette = tmp_path / "cassette.jsonl"
    cfg, choices = compose(["llm=openai", *live, f"llm.record={cassette}", SCENARIO])
    check_component("llm", instantiate(cfg.llm))
    run(cfg, tmp_path / "recorded", choices)
    return [f"llm.cassette={cassette}"]


def skip_unless_installed(component) -> None:
    """Skip an option whose optional extra is not installed (it lists the modules in ``requires``)."""
    for module in getattr(component, "requires", ()):
        pytest.importorskip(module, reason=f"optional: {module} is not installed")


@pytest.mark.parametrize("group,option", OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_option_honours_contract_and_runs(group, option, tmp_path):
    with contextlib.ExitStack() as stack:
        extra = backend_overrides(group, option, tmp_path, stack)
        cfg, choices = compose([f"{group}={option}", *extra, SCENARIO])
        assert choices[group] == option
        skip_unless_installed(instantiate(cfg[group]))
        check_component(group, instantiate(cfg[group]))
        frame = run(cfg, tmp_path / "run", choices)
        assert (tmp_path / "run" / "metrics.csv").exists() and len(frame) > 0
        for col in ("scored", "tiers_searched", "llm_calls", "tokens", "arousal_scored"):
            assert (frame[col].dropna() >= 0).all()
        probes = frame[frame["check"] == "probe"]
        assert (probes["scored"] >= 1).all()
        # the store's attention stays finite and non-negative under every option
        scenario = load_all(cfg)[0]
        agent = build_agent(cfg, scenario)
        for step in scenario.steps:
            agent.step(step)
        total = agent.attention.total(agent.store, agent.store.live_ids(), agent.now)
        assert np.all(np.isfinite(total)) and np.all(total >= 0)
