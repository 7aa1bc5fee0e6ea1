"""Runs scenarios through an agent built from a config and writes the run's outputs.

``run(cfg, out_dir)`` loads every scenario first (a malformed one stops the run before
anything runs), then replays each against a fresh agent and writes ``metrics.csv``,
``summary.json``, ``trace.jsonl`` and ``report.md`` into ``out_dir``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from .agent import MemoryAgent
from .evaluate import RowMaker, check_rows, event_rows, observation_rows, probe_rows
from .outputs import write_outputs
from .preload import PreloadSpec, preload
from .scenario.catalog import resolve
from .scenario.generate import generated_paths
from .scenario.loader import load_scenario
from .scenario.model import Scenario


@dataclass
class ScenarioRun:
    """One scenario's rows, trace and LLM totals."""

    scenario: Scenario
    rows: list[dict] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)
    llm: dict = field(default_factory=dict)
    searches: dict = field(default_factory=dict)


def build_agent(cfg: DictConfig, scenario: Scenario) -> MemoryAgent:
    """A fresh agent from the config's mechanism groups."""
    attention = instantiate(cfg.dual, long_decay=instantiate(cfg.long_decay),
                            short_decay=instantiate(cfg.short_decay))
    return MemoryAgent(embedder=instantiate(cfg.embedder), llm=instantiate(cfg.llm), attention=attention,
                       labeller=instantiate(cfg.attention), retriever=instantiate(cfg.retrieval),
                       tiers=instantiate(cfg.tiers), depth=instantiate(cfg.depth), arousal=instantiate(cfg.arousal),
                       index=OmegaConf.to_container(cfg.index, resolve=True),
                       rebalance_every=cfg.agent.rebalance_every, language=scenario.language,
                       incremental_rebalance=cfg.agent.get("incremental_rebalance", True))


def run_scenario(cfg: DictConfig, scenario: Scenario) -> ScenarioRun:
    agent = build_agent(cfg, scenario)
    preload(agent, PreloadSpec.from_config(cfg.get("preload")), scenario.language)
    rows = RowMaker(scenario.id)
    out = ScenarioRun(scenario)
    deferred = []
    scored = 0
    for step in scenario.steps:
        result = agent.step(step)
        scored += result.cost.scored
        if step.kind in ("say", "reply", "perceive"):
            out.rows += observation_rows(rows, result)
            deferred.append(result)
        elif step.kind == "probe":
            out.rows += probe_rows(rows, agent, result)
        elif step.kind == "check":
            out.rows += check_rows(rows, agent, result)
    for result in deferred:
        out.rows += event_rows(rows, agent, result)
    out.trace = [{"scenario": scenario.id, **e} for e in agent.trace]
    out.llm = agent.llm.meter.totals() | {"by_task": agent.llm.meter.by_task}
    out.searches = {"scored_total": scored, "memories": agent.store.size}
    return out


def load_all(cfg: DictConfig, out_dir: Path | None = None) -> list[Scenario]:
    """Every scenario the config names (``scenarios``: names or paths; empty = bundled, unless
    ``generate.days`` > 0: then the generated scenario, written into ``out_dir/generated``)."""
    made = generated_paths(cfg.get("generate"), out_dir)
    named = list(cfg.scenarios or [])
    return [load_scenario(p) for p in (resolve(named) if named or not made else []) + made]


def run(cfg: DictConfig, out_dir: Path, choices: dict | None = None) -> pd.DataFrame:
    """Run the configured scenarios, write the outputs, return the metrics table."""
    scenarios = load_all(cfg, out_dir)
    runs = [run_scenario(cfg, s) for s in scenarios]
    return write_outputs(Path(out_dir), runs, OmegaConf.to_container(cfg, resolve=True), choices or {})
