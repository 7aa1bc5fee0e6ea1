"""Runs scenarios through the configured memory system and writes the run's outputs.

``run(cfg, out_dir)`` loads every scenario first (a malformed one stops the run before
anything runs), then replays each against a fresh system (``cfg.system``, instantiated per
scenario) and saves what it returned (``results.parquet``), its trace and timelines; the
metrics are computed from the saved results (``mtsbench.harness.finish.evaluate_dir``).

The runner hands the system only the inputs of each step (``systems.base``); it decides
*when* a state is read for an expectation — a ``check`` step's checks right after it, an
``event`` expectation once its step has been summarized, an ``event_count`` check once
every step before it has been (at the latest when the scenario ends) — and records the
value; judging is the evaluator's. ``probes.motivation`` (when set) replaces every probe's
own motivation.

Scenarios are streamed as they finish (``mtsbench.outputs.stream.RunWriter``): a run stopped by
SIGINT (``KeyboardInterrupt``) or SIGTERM (``errors.Interrupted``, raised by the caller's
handler) writes the scenarios done with ``status: interrupted``, one that raises writes
them with ``status: failed``; either way the exception then goes on to the caller.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from ..config.composition import configuration, scenario_list
from ..errors import Interrupted, one_line, redact, signal_name
from ..evaluation.evaluate import scenario_rows
from .haystack import Haystack, HaystackOptions, since
from .finish import finish_run
from ..evaluation.answer import Answering, answer_step
from ..evaluation.credit import EvidenceCredit
from ..core.params import build
from ..processes.meter import INDEX_KEYS
from ..outputs.results import Recorder
from ..config.options import Evaluation, ProbeOptions
from ..scenario.catalog import bundled_scenarios, resolve
from ..scenario.generate import generated_paths
from ..scenario.loader import load_scenario
from ..scenario.model import OBSERVED_KINDS, RUNNING, ArousalCheck, EventCountCheck, Scenario, StepAttentionCheck
from .progress import StepLog, step_bar
from ..outputs.atomic import write_atomic
from ..outputs.stream import TIMELINES, TRACE, RunWriter
from ..systems.base import UNSUPPORTED, Context, EventOf, Idle, MemorySystem, Observation, Query, Ranking, Tick, Totals
from ..outputs.timelines import Timeline
from .workload import Probes


@dataclass
class ScenarioRun:
    """One scenario's records, totals, trace events (without a ``scenario`` field) and
    timeline rows — with a ``sink``, only those it did not take — and the evaluation's
    depths and budgets (``evaluation.recall_at``, ``evaluation.recall_at_tokens``)."""

    scenario: Scenario
    records: list[dict] = field(default_factory=list)
    totals: Totals = field(default_factory=Totals)
    trace: list[dict] = field(default_factory=list)
    timeline: list[dict] = field(default_factory=list)
    depths: tuple[int, ...] = ()
    budgets: tuple[int, ...] = ()

    @property
    def rows(self) -> list[dict]:
        """The scenario's metric rows (evaluated from its records at the configured depths)."""
        return scenario_rows(pd.DataFrame(self.records), self.scenario, self.depths, self.budgets)


def build_system(cfg: DictConfig, scenario: Scenario) -> MemorySystem:
    """A fresh system from ``cfg.system``, started on ``scenario`` (its LLM told so: ``serve``)."""
    system = build(cfg.system, "system")
    system.start(Context(scenario.id, scenario.language, scenario.start,
                         tuple(s.text for s in scenario.steps if s.text)))
    serve(system, scenario)
    return system


def serve(system: MemorySystem, scenario: Scenario) -> None:
    """Tell the system's LLM backend (its ``answer_llm``, the one its agent asks too) the
    scenario it serves from now on, if it listens (``llm.replay.ReplayLLM.serve``: the
    scenario's own records first; a miss names it and the bundled scenarios the cassette
    holds, which the harness loads, ``scenario.catalog.bundled_scenarios``, since the LLM
    layer reads no scenario file)."""
    tell = getattr(getattr(system, "answer_llm", None), "serve", None)
    if tell is not None:
        tell(scenario, bundled_scenarios)


def at_motivation(scenario: Scenario, motivation: float | None) -> Scenario:
    """The scenario with every probe asked at ``motivation`` (None: unchanged; in [0, 1]: ``ProbeOptions``)."""
    if motivation is None:
        return scenario
    steps = tuple(replace(s, motivation=float(motivation)) if s.kind == "probe" else s for s in scenario.steps)
    return replace(scenario, steps=steps)


def drive(system: MemorySystem, step, depth: int):
    """Hand one step's inputs to the system; returns its outcome."""
    if step.kind in OBSERVED_KINDS:
        return system.observe(Observation(step.id, step.at, step.kind, step.text, step.hints))
    if step.kind == "probe":
        return system.retrieve(Query(step.id, step.at, step.text, step.expect.k, step.motivation,
                                     max(step.expect.k, depth), hints=step.hints))
    if step.kind == "idle":
        return system.idle(Idle(step.id, step.at, step.duration))
    return system.tick(Tick(step.id, step.at))


def since_reads(scenario: Scenario) -> dict[str, list[str]]:
    """Step id -> the steps whose memories' arousal must be read just before it: the ``since``
    step of every arousal check (the check and its ``above``)."""
    out: dict[str, list[str]] = {}
    for step in scenario.steps:
        for c in step.checks:
            if isinstance(c, ArousalCheck) and c.since is not None:
                out.setdefault(c.since, []).extend(s for s in (c.step, c.above) if s is not None)
    return out


def read_check(system: MemorySystem, c, before: dict[tuple[str, str], object]):
    """The value a check step records for check ``c``: what ``system.read`` answers; for an
    arousal check with ``since``, the arousal received since then (the reading minus the one
    taken just before that step, ``before[(since, step)]``; none taken: the memory did not exist
    yet, so everything counts); with ``above``, ``{"value": its own, "above": the other's}``."""
    if not isinstance(c, (StepAttentionCheck, ArousalCheck)):
        return system.read(c)

    def one(step: str):
        value = system.read(replace(c, step=step, above=None))
        if isinstance(c, ArousalCheck) and c.since is not None and isinstance(value, float):
            start = before.get((c.since, step))
            value -= start if isinstance(start, float) else 0.0
        return value

    own = one(c.step)
    if c.above is None or own is UNSUPPORTED:
        return own
    other = one(c.above)
    return UNSUPPORTED if other is UNSUPPORTED else {"value": own, "above": other}


CHUNK_ROWS = 65_536     # a long scenario's trace events and timeline rows leave memory this many at a time


def run_scenario(cfg: DictConfig, scenario: Scenario, progress: StepLog | None = None,
                 sink: Callable[[str, list[dict]], None] | None = None, system: MemorySystem | None = None,
                 baseline: Totals | None = None) -> ScenarioRun:
    """Replay one scenario against a fresh system; ``progress`` logs the phases and counts steps.

    ``sink(stream, rows)``, if given, takes the trace events (``stream.TRACE``; from a system
    with ``take_trace``) and timeline rows (``stream.TIMELINES``) as they pass ``CHUNK_ROWS``,
    so a long scenario's memory stays bounded; the ``ScenarioRun`` then holds the rest. Its
    trace events have no ``scenario`` field (the scenario is the run's).

    ``system``: an already started system to continue instead of a fresh one (a lifetime
    haystack's copy, ``mtsbench.harness.haystack``); ``baseline``: its totals when it was handed
    over, so the scenario's totals count its own steps only."""
    token = RUNNING.set(scenario)
    try:
        return _run_scenario(cfg, scenario, progress, sink, system, baseline)
    finally:
        RUNNING.reset(token)


def _run_scenario(cfg: DictConfig, scenario: Scenario, progress: StepLog | None,
                  sink: Callable[[str, list[dict]], None] | None, system: MemorySystem | None = None,
                  baseline: Totals | None = None) -> ScenarioRun:
    scenario = at_motivation(scenario, ProbeOptions(**(OmegaConf.select(cfg, "probes") or {})).motivation)
    started = time.perf_counter()
    if system is not None:
        serve(system, scenario)         # a copy continuing on this scenario
    else:
        if progress is not None:
            memories = OmegaConf.select(cfg, "preload.memories", default=0) or 0
            progress.phase(f"scenario {scenario.id}: building the system"
                           + (f", pre-loading {memories:,} memories" if memories else ""))
        system = build_system(cfg, scenario)
        if progress is not None:
            progress.phase(f"scenario {scenario.id}: built in {time.perf_counter() - started:.1f} s; "
                           f"{len(scenario.steps):,} steps")
    evaluation = Evaluation.of(cfg)
    depth = evaluation.rank_depth
    workload = build(cfg.workload, "workload") if cfg.get("workload") is not None else Probes()
    rec = Recorder(scenario.id)
    answering = Answering.from_config(OmegaConf.select(cfg, "answer"))
    timeline = Timeline(scenario)
    credit = EvidenceCredit({s.id: s.text for s in scenario.steps if s.kind in OBSERVED_KINDS},
                            evaluation.earned_share)
    texts_of = getattr(system, "context_texts", None)
    take_trace = getattr(system, "take_trace", None) if sink is not None else None
    waiting: dict[str, tuple] = {}                  # step id -> (step, outcome) of an event expectation
    counting: list[tuple[object, object, set[str]]] = []   # event_count checks waiting for earlier summaries

    def read_counts(summarized) -> None:
        for entry in list(counting):
            step, outcome, need = entry
            need.difference_update(need if summarized is None else summarized)
            if not need:
                counting.remove(entry)
                for n, c in enumerate(step.checks):
                    if isinstance(c, EventCountCheck):
                        rec.state(step, outcome, "check", system.read(c), n)

    def read_events(summarized) -> None:
        for sid in summarized:
            if sid in waiting:
                step, outcome = waiting.pop(sid)
                rec.state(step, outcome, "event", system.read(EventOf(sid)))
        read_counts(summarized)

    reads_before = since_reads(scenario)
    before: dict[tuple[str, str], object] = {}      # (since step, step) -> its memory's arousal just before
    for step in scenario.steps:
        for s in reads_before.get(step.id, ()):
            before[(step.id, s)] = system.read(ArousalCheck(s))
        outcome = drive(system, step, depth)
        if step.kind == "probe":
            read_texts(outcome.ranking, texts_of, credit)
            answer_step(system, step, outcome, answering, scenario.language)
        rec.step(step, outcome, labels=getattr(system, "labels", True))
        query = workload.reply(step, outcome)
        if query is not None:
            replied = system.retrieve(query)
            rec.step(step, replied, "reply")
            outcome.summarized = outcome.summarized + replied.summarized
        timeline.sample(system, step)
        if sink is not None:
            if take_trace is not None and (events := take_trace(CHUNK_ROWS)):
                sink(TRACE, events)
            if len(timeline.rows) >= CHUNK_ROWS:
                sink(TIMELINES, timeline.rows)
                timeline.rows = []
        if progress is not None:
            progress.update(1)
        if step.kind in OBSERVED_KINDS and step.expect.event is not None:
            waiting[step.id] = (step, outcome)
        elif step.kind == "check":
            unsummarized = set(system.waiting())
            for n, c in enumerate(step.checks):
                if not (unsummarized and isinstance(c, EventCountCheck)):
                    rec.state(step, outcome, "check", read_check(system, c, before), n)
            if unsummarized and any(isinstance(c, EventCountCheck) for c in step.checks):
                counting.append((step, outcome, unsummarized))
        read_events(outcome.summarized)
    read_events(system.finish().summarized)
    read_events(list(waiting))            # never summarized (summarization off): judged as they are
    read_counts(None)
    totals = system.totals()
    if baseline is not None:
        totals = replace(totals, llm=since(totals.llm, baseline.llm), processes=since(totals.processes, baseline.processes))
    return ScenarioRun(scenario, rec.rows, totals, totals.trace, timeline.rows,
                       evaluation.depths, evaluation.budgets)


def read_texts(ranking: Ranking | None, texts_of, credit: EvidenceCredit) -> None:
    """A probe's ranking gets the evidence each memory earns (``credit``, from the texts of
    ``texts_of``: the system's ``context_texts``; None when it has none) and those texts as saved:
    redacted (``errors.redact``), since a memory can quote what a model echoed, an API key too."""
    if texts_of is not None and ranking is not None:
        texts = texts_of(ranking.ids)
        ranking.earned = credit.ranking(texts, ranking.provenance)
        ranking.texts = [redact(t) for t in texts]


def load_all(cfg: DictConfig, out_dir: Path | None = None) -> list[Scenario]:
    """Every scenario the config names (``scenarios``: names or paths; empty = bundled, unless
    ``generate.days`` > 0: then the generated scenario, written into ``out_dir/generated``)."""
    made = generated_paths(cfg.get("generate"), out_dir)
    named = scenario_list(cfg.scenarios)
    return [load_scenario(p) for p in (resolve(named) if named or not made else []) + made]


@contextmanager
def one_blas_thread():
    """Limit BLAS to one thread while a run runs, unless the environment sets a number.

    mtsbench's matrix products are small (a few queries against one tier), where BLAS
    threads only contend with each other and with other processes: a 2000 x 256 scan went
    from 0.07 ms to 2 ms on average on a busy 2-core machine. Scoped to the run, so a
    notebook that imports mtsbench keeps its own BLAS settings.
    """
    if any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")):
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        yield


def run(cfg: DictConfig, out_dir: Path, choices: dict | None = None, progress: bool = False) -> pd.DataFrame:
    """Run the configured scenarios, write the outputs, return the metrics table.

    ``progress``: a tqdm bar over the steps of all scenarios (shown on a terminal only).
    """
    with one_blas_thread():
        return _run(cfg, out_dir, choices, progress)


def _run(cfg: DictConfig, out_dir: Path, choices: dict | None, progress: bool) -> pd.DataFrame:
    out_dir = Path(out_dir)
    scenarios = load_all(cfg, out_dir)
    meta = {"config": OmegaConf.to_container(cfg, resolve=True), "choices": choices or {},
            "configuration": configuration(cfg, choices or {})}
    options = HaystackOptions.from_config(OmegaConf.select(cfg, "haystack"))
    hay = Haystack.build([load_scenario(p) for p in resolve(scenario_list(options.sources))], scenarios, options) \
        if options.active else None
    planned = [f"{s.id}_h{n}" for n in hay.sizes for s in scenarios] if hay else [s.id for s in scenarios]
    writer = RunWriter(out_dir, meta, planned)
    current = None
    try:
        total = sum(len(s.steps) for s in scenarios) * (len(hay.sizes) if hay else 1) + \
            (hay.cut(hay.sizes[-1]) if hay else 0)
        with step_bar(total, progress, unit="step", leave=False) as bar:
            steps = StepLog(total, bar=bar)

            def finished(r: ScenarioRun, **info) -> None:
                writer.add(r, {"path": _saved_path(r.scenario.path, out_dir), "llm": r.totals.llm,
                               "processes": r.totals.processes, "memories": r.totals.memories, **info})
            if hay is None:
                for current in scenarios:
                    bar.set_description(current.id)
                    finished(run_scenario(cfg, current, steps, functools.partial(writer.stream, current.id)))
            else:
                for current, size, run_ in _after_haystack(cfg, hay, scenarios, steps, writer, out_dir):
                    bar.set_description(current.id)
                    finished(run_, haystack=size)
            current = None
    except (KeyboardInterrupt, Interrupted) as stop:
        _stopped(writer, "interrupted", {"signal": signal_name(stop), "scenario": current and current.id})
        raise
    except Exception as e:
        _stopped(writer, "failed", {"error": one_line(e), "scenario": current and current.id})
        raise
    return finish_run(writer, "complete")


def _after_haystack(cfg: DictConfig, hay: Haystack, targets: list[Scenario], progress: StepLog,
                    writer: RunWriter, out_dir: Path):
    """Drive the haystack through one system and, at each size, run every target on a copy
    of it (``mtsbench.harness.haystack``); yields (placed target, size, its ScenarioRun) as each finishes
    and writes ``haystack.json`` (what the haystack cost up to each size) as it goes."""
    import copy

    system = build(cfg.system, "system")
    language = targets[0].language if targets else "en"
    system.start(Context("haystack", language, hay.start,
                         hay.texts + tuple(s.text for t in targets for s in t.steps if s.text)))
    haystack = Scenario("haystack", "haystack", language, hay.start, (), hay.steps)
    serve(system, haystack)
    depth = Evaluation.of(cfg).rank_depth
    workload = build(cfg.workload, "workload") if cfg.get("workload") is not None else Probes()
    rec = Recorder("haystack")
    discard = getattr(system, "take_trace", None)
    report: dict = {"order": list(hay.order), "steps": len(hay.steps), "gap_s": hay.gap, "sizes": [],
                    "block": BLOCK, "block_wall_s": []}
    started, done, seen = time.perf_counter(), 0, 0
    token = RUNNING.set(haystack)
    try:
        for size in hay.sizes:
            stop = hay.cut(size)
            for step in hay.steps[done:stop]:
                outcome = drive(system, step, depth)
                rec.step(step, outcome)
                query = workload.reply(step, outcome)
                if query is not None:
                    rec.step(step, system.retrieve(query), "reply")
                rec.rows[-2 if query is not None else -1:] = [{k: r[k] for k in COST_KEPT} for r in
                                                              rec.rows[-2 if query is not None else -1:]]
                if discard is not None:
                    discard(CHUNK_ROWS)
                progress.update(1)
                seen += step.kind in OBSERVED_KINDS
                if step.kind in OBSERVED_KINDS and seen % BLOCK == 0:
                    report["block_wall_s"].append(round(time.perf_counter() - started, 3))
            done = stop
            totals = system.totals()
            report["sizes"].append(_haystack_size(size, stop, time.perf_counter() - started, rec, totals))
            write_atomic(out_dir / HAYSTACK, json.dumps(report, indent=1).encode())
            night = hay.night_before(stop)
            if discard is not None:
                discard(0)
            for target in targets:
                fork = copy.deepcopy(system)
                fork.idle(Idle(night.id, night.at, night.duration))
                if discard is not None:
                    fork.take_trace(0)
                placed = hay.place(target, night.end, size)
                yield placed, size, run_scenario(cfg, placed, progress, functools.partial(writer.stream, placed.id),
                                                 system=fork, baseline=fork.totals())
    finally:
        RUNNING.reset(token)


HAYSTACK = "haystack.json"
BLOCK = 1000        # haystack.json's block_wall_s: the wall time when each further BLOCK messages were taken in
COST_KEPT = ("record", "kind", "scored", "association_scored", "arousal_scored", "index_queries", *INDEX_KEYS)


def _haystack_size(size: int, steps: int, wall: float, rec: Recorder, totals: Totals) -> dict:
    """``haystack.json``'s entry for one size: what the haystack's first ``steps`` steps cost."""
    import resource

    from ..evaluation.summary import cost_block

    cost = cost_block(pd.DataFrame(rec.rows), totals.processes, totals.llm) if rec.rows else None
    return {"messages": size, "steps": steps, "wall_s": round(wall, 3), "memories": totals.memories,
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), "cost": cost}


def _stopped(writer: RunWriter, status: str, stopped: dict) -> None:
    """Flush the scenarios done with ``status``, deaf to a second SIGINT/SIGTERM meanwhile; a
    failure to write is left to the caller's error (the run already stops for another
    reason), the directory marked as far as it can be."""
    with signals_held():
        try:
            finish_run(writer, status, stopped)
        except Exception:  # noqa: BLE001 - the original error is the one to report
            pass


@contextmanager
def signals_held():
    """Ignore SIGINT and SIGTERM inside (main thread only), so a flush is not cut short."""
    import signal

    try:
        saved = [(s, signal.signal(s, signal.SIG_IGN)) for s in (signal.SIGINT, signal.SIGTERM)]
    except ValueError:          # not the main thread
        yield
        return
    try:
        yield
    finally:
        for s, handler in saved:
            signal.signal(s, handler)


def _saved_path(path: Path | None, out_dir: Path) -> str | None:
    """A scenario's path as the results keep it: relative to the run directory when inside it."""
    if path is None:
        return None
    path = Path(path).resolve()
    try:
        return str(path.relative_to(out_dir.resolve()))
    except ValueError:
        return str(path)
