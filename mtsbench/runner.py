"""Runs scenarios through an agent built from a config and writes the run's outputs.

``run(cfg, out_dir)`` loads every scenario first (a malformed one stops the run before
anything runs), then replays each against a fresh agent and writes ``metrics.csv``,
``summary.json``, ``trace.jsonl``, ``timelines.csv`` and ``report.md`` into ``out_dir``.
``probes.motivation`` (when set) replaces every probe's own motivation.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from . import evidence
from .agent import MemoryAgent
from .config import ConfigError
from .evaluate import RowMaker, check_rows, event_rows, observation_rows, probe_rows
from .outputs import write_outputs
from .preload import PreloadSpec, preload
from .scenario.catalog import resolve
from .scenario.generate import generated_paths
from .scenario.loader import load_scenario
from .scenario.model import EventCountCheck, Scenario
from .timelines import Timeline


@dataclass
class ScenarioRun:
    """One scenario's rows, trace, LLM totals and background process costs."""

    scenario: Scenario
    rows: list[dict] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)
    llm: dict = field(default_factory=dict)
    searches: dict = field(default_factory=dict)
    processes: dict = field(default_factory=dict)
    timeline: list[dict] = field(default_factory=list)


def build_agent(cfg: DictConfig, scenario: Scenario) -> MemoryAgent:
    """A fresh agent from the config's mechanism groups and process nodes."""
    attention = instantiate(cfg.dual, long_decay=instantiate(cfg.long_decay),
                            short_decay=instantiate(cfg.short_decay))
    start = scenario.start
    return MemoryAgent(embedder=instantiate(cfg.embedder), llm=instantiate(cfg.llm), attention=attention,
                       labeller=instantiate(cfg.attention), retriever=instantiate(cfg.retrieval),
                       tiers=instantiate(cfg.tiers), depth=instantiate(cfg.depth), arousal=instantiate(cfg.arousal),
                       index=OmegaConf.to_container(cfg.index, resolve=True),
                       rebalance_every=cfg.agent.rebalance_every, language=scenario.language,
                       summariser=instantiate(cfg.summarize), consolidator=instantiate(cfg.consolidation),
                       inferrer=instantiate(cfg.inference), events=instantiate(cfg.events),
                       belief=instantiate(cfg.belief), accumulate=instantiate(cfg.accumulate),
                       conflict=instantiate(cfg.conflict),
                       day_offset=start.hour * 3600 + start.minute * 60 + start.second,
                       rank_to=max(evidence.depths_of(cfg), default=0),
                       incremental_rebalance=cfg.agent.get("incremental_rebalance", True))


def at_motivation(scenario: Scenario, motivation: float | None) -> Scenario:
    """The scenario with every probe asked at ``motivation`` (None: unchanged)."""
    if motivation is None:
        return scenario
    if not 0.0 <= motivation <= 1.0:
        raise ConfigError(f"probes.motivation={motivation}: expected a number from 0 to 1, or null")
    steps = tuple(replace(s, motivation=float(motivation)) if s.kind == "probe" else s for s in scenario.steps)
    return replace(scenario, steps=steps)


def run_scenario(cfg: DictConfig, scenario: Scenario, progress=None) -> ScenarioRun:
    """Replay one scenario against a fresh agent; ``progress`` (a tqdm bar) counts steps. An
    ``event`` expectation is judged as soon as its step has been summarised, an
    ``event_count`` check as soon as every step before it has been (at the latest when the
    scenario ends and what still waits is summarised)."""
    scenario = at_motivation(scenario, OmegaConf.select(cfg, "probes.motivation"))
    agent = build_agent(cfg, scenario)
    preload(agent, PreloadSpec.from_config(cfg.get("preload")), scenario.language)
    rows = RowMaker(scenario.id)
    out = ScenarioRun(scenario)
    timeline = Timeline(scenario)
    waiting: dict[str, object] = {}
    depths = evidence.depths_of(cfg)
    scored = 0

    counting: list[tuple[object, set[str]]] = []   # event_count checks waiting for earlier steps' summary

    def judge_counts(summarised: list[str] | None) -> None:
        for result, need in list(counting):
            need.difference_update(need if summarised is None else summarised)
            if not need:
                counting.remove((result, need))
                out.rows.extend(check_rows(rows, agent, result, only=EventCountCheck))

    def judge_events(summarised: list[str]) -> None:
        for sid in summarised:
            if sid in waiting:
                out.rows.extend(event_rows(rows, agent, waiting.pop(sid)))
        judge_counts(summarised)

    if hasattr(agent.embedder, "warm"):   # a caching embedder encodes the texts in batches up front
        agent.embedder.warm([s.text for s in scenario.steps if s.text])
    for step in scenario.steps:
        result = agent.step(step)
        timeline.sample(agent, step)
        if progress is not None:
            progress.update(1)
        scored += result.cost.scored
        if step.kind in ("say", "reply", "perceive"):
            out.rows += observation_rows(rows, result)
            if step.expect.event is not None:
                waiting[step.id] = result
        elif step.kind == "probe":
            out.rows += probe_rows(rows, agent, result, depths)
        elif step.kind == "check":
            unsummarised = {i.step for i in agent.summariser.pending_}
            out.rows += check_rows(rows, agent, result, but=EventCountCheck if unsummarised else None)
            if unsummarised and any(isinstance(c, EventCountCheck) for c in step.checks):
                counting.append((result, unsummarised))
        judge_events(result.summarised)
    judge_events(agent.finish())
    judge_events(list(waiting))            # never summarised (summarisation off): judged as they are
    judge_counts(None)
    out.trace = [{"scenario": scenario.id, **e} for e in agent.trace]
    out.llm = agent.llm.meter.totals() | {"by_task": agent.llm.meter.by_task}
    out.searches = {"scored_total": scored, "memories": agent.store.size}
    out.processes = agent.processes.totals
    out.timeline = timeline.rows
    return out


def load_all(cfg: DictConfig, out_dir: Path | None = None) -> list[Scenario]:
    """Every scenario the config names (``scenarios``: names or paths; empty = bundled, unless
    ``generate.days`` > 0: then the generated scenario, written into ``out_dir/generated``)."""
    made = generated_paths(cfg.get("generate"), out_dir)
    named = list(cfg.scenarios or [])
    return [load_scenario(p) for p in (resolve(named) if named or not made else []) + made]


def run(cfg: DictConfig, out_dir: Path, choices: dict | None = None, progress: bool = False) -> pd.DataFrame:
    """Run the configured scenarios, write the outputs, return the metrics table.

    ``progress``: a tqdm bar over the steps of all scenarios (shown on a terminal only).
    """
    from tqdm import tqdm

    scenarios = load_all(cfg, out_dir)
    with tqdm(total=sum(len(s.steps) for s in scenarios), unit="step", leave=False,
              disable=None if progress else True) as bar:
        runs = []
        for s in scenarios:
            bar.set_description(s.id)
            runs.append(run_scenario(cfg, s, bar))
    return write_outputs(Path(out_dir), runs, OmegaConf.to_container(cfg, resolve=True), choices or {})
