"""The plug-in example (examples/plugin): its class through the protocol, and the CLI run."""

import doctest
import importlib.util
import json
import sys
from pathlib import Path

import pandas as pd
from hydra.utils import instantiate
from omegaconf import OmegaConf

from mtsbench.systems.base import (UNSUPPORTED, Context, EventOf, Idle, MemorySystem, Observation, Query, Ranking,
                                   Tick)
from mtsbench.scenario.model import StepAttentionCheck, TierCheck

PLUGIN = Path(__file__).resolve().parent.parent / "examples" / "plugin"


def load_example():
    """Import ``recency_system`` from its file, as PYTHONPATH=examples/plugin would."""
    spec = importlib.util.spec_from_file_location("recency_system", PLUGIN / "recency_system.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_runs_through_the_protocol(monkeypatch):
    module = load_example()
    assert doctest.testmod(module).failed == 0
    monkeypatch.setitem(sys.modules, "recency_system", module)          # what _target_ imports
    s = instantiate(OmegaConf.load(PLUGIN / "configs" / "system" / "recency.yaml"))
    assert isinstance(s, module.RecencySystem) and isinstance(s, MemorySystem)
    s.start(Context("plugin", texts=("I am allergic to milk", "nice weather", "what am I allergic to?")))
    assert s.retrieve(Query("p0", 0.0, "anything")).ranking == Ranking()
    assert s.observe(Observation("a", 0.0, "say", "I am allergic to milk")).memory == 0
    assert s.observe(Observation("b", 1800.0, "perceive", "nice weather")).memory == 1
    assert s.idle(Idle("i", 1800.0, 5400.0)).ranking is None
    out = s.retrieve(Query("p", 7200.0, "what am I allergic to?", k=1, depth=5))
    assert out.ranking.ids == [1, 0] and out.ranking.scores == [-1.5, -2.0]
    assert out.ranking.provenance == [("b",), ("a",)] and out.ranking.tokens == [3, 6]
    assert out.cost.scored == 2 and out.cost.tiers_searched == 1
    assert s.retrieve(Query("p", 7200.0, "x", depth=1)).ranking.ids == [1]
    s.tick(Tick("c", 7200.0))
    for check in (StepAttentionCheck("a", min=6), TierCheck("a", max=0), EventOf("a")):
        assert s.read(check) is UNSUPPORTED
    assert s.finish().cost.scored == 0 and s.waiting() == frozenset() and s.sample(("a",)) == []
    totals = s.totals()
    assert totals.memories == 2 and totals.llm["calls"] == 0 and len(totals.trace) == 2


def test_limit_forgets_the_oldest():
    s = load_example().RecencySystem(limit=2)
    s.start(Context("plugin"))
    for i in range(4):
        s.observe(Observation(f"s{i}", 60.0 * i, "say", f"item {i}"))
    assert s.retrieve(Query("p", 600.0, "?", depth=5)).ranking.ids == [3, 2]
    assert s.totals().memories == 2


def test_the_readme_command_runs_end_to_end(cli, tmp_path):
    """The command of examples/plugin/README.md, run as a user would (needs the ``system``
    group in the runner and --config-dir options accepted by the override pre-check)."""
    out = tmp_path / "job"
    r = cli("run", "--config-dir", PLUGIN / "configs", "system=recency", "scenarios=[milk_allergy]",
            f"hydra.run.dir={out}", env={"PYTHONPATH": str(PLUGIN)})
    assert r.returncode == 0, r.stdout + r.stderr
    metrics = pd.read_csv(out / "metrics.csv")
    probes = metrics[metrics["check"] == "probe"]
    assert len(probes) >= 1 and (probes["scored"] >= 1).all() and (probes["llm_calls"] == 0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert "milk_allergy" in summary["scenarios"]
