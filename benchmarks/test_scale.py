"""Scale and total cost: a generated dialogue on stores of 10k, 100k and 1M pre-loaded memories.

For each preset (``mts``, the seed design with summaries, consolidation and inference on;
``flat_rag``, one tier scanned exactly; ``mts_walk``, mts with ``index.arousal=walk``, at
100k under reply and at 1M) and size, the system is built from the packaged
configs, its memory pre-loaded (``mtsbench.systems.mts.preload``) and then runs every step of one
generated dialogue (``DIALOGUE``: 4 days, 150 turns a day, 30 needles probed casually and
then as a second thought, half of them awakened), under ``workload=probes`` at every size
and also under ``workload=reply`` (every user turn retrieves k=5) at 100k.

The cases of one workload run interleaved (issue 38): all are built and pre-loaded first,
then the dialogue is cut into ``ROUNDS`` rounds of consecutive steps and each round drives
its steps on every case in turn (forward, then backward: A B C, C B A, ...). A ratio of two
cases' step times (1M against 10k, mts against flat_rag) is taken per round, on the same
steps at nearly the same moment, and reported as the median round with its range, so a
change of the machine's load between two cases cannot make it pass. Measured:

- steps per second over the whole dialogue (every step kind, rebalances included);
- total cost per step: memories scored by every kind of search (probe, reply,
  association, arousal, background processes), distance computations (measured: exact
  scans and faiss's graph count) and graph inserts with their *estimated* distances;
- recall@10 of the casual probes of awakened needles;
- bytes per memory beyond one copy of its vector (resident-set growth over the pre-load);
- the physical floor of the same work on this machine, in this run: exact-scan rows at
  the measured scan rate, graph distances (queries and estimated inserts) at the measured
  time per graph distance, LLM calls at the measured time of one mock call.

``test_year`` runs a generated year through ``mtsbench run`` and ``test_sweep`` a 16-job
ablation sweep; ``test_locomo.py`` times mts against flat_rag on LoCoMo. Every target
(issues 13 and 38) is written, met or MISSED, with its measured value and ratio.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from mtsbench.config.composition import compose
from mtsbench.config.options import Evaluation
from mtsbench.evaluation.evidence import first_ranks
from mtsbench.llm.base import Item
from mtsbench.systems.mts.preload import PreloadSpec, preload
from mtsbench.harness.runner import build_system, drive
from mtsbench.scenario.generate import GenerateSpec, write
from mtsbench.scenario.loader import load_scenario
from mtsbench.harness.workload import Reply

SIZES = [10_000, 100_000, 1_000_000]
PRESETS = ["mts", "flat_rag"]
DIM = 64
OVERRIDES = [f"embedder.dim={DIM}", "index.threads=2"]      # 2 build threads: the graph varies run to run
DIALOGUE = GenerateSpec(days=4, turns_per_day=150, needles=30, awaken=0.5, reminders=2, distractors=3,
                        probe_min_days=2, probe_max_days=3, seed=0)
RUNS: dict[tuple[str, int, str], dict] = {}
ROUNDS = 8      # rounds of consecutive steps; each round runs on every case of a set in turn
# mts_walk: the full design with arousal walking one graph over every memory (index.arousal=walk)
VARIANTS = {"mts": ["preset=mts"], "flat_rag": ["preset=flat_rag"], "mts_walk": ["preset=mts", "index.arousal=walk"]}
# The sets run interleaved: every case of a set is alive at once and runs each round in turn.
SETS = {"probes": [(p, n) for n in SIZES for p in PRESETS] + [("mts_walk", SIZES[-1])],
        "reply": [(p, 100_000) for p in PRESETS] + [("mts_walk", 100_000)]}
CASES = [(p, n, w) for w, cases in SETS.items() for p, n in cases]


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(scope="module")
def dialogue(tmp_path_factory):
    return load_scenario(write(DIALOGUE, tmp_path_factory.mktemp("dialogue")))


@functools.cache
def scan_rows() -> np.ndarray:
    """The rows the floor's scan rate is timed on (made once: floor_rates runs every round)."""
    return np.random.default_rng(0).standard_normal((200_000, DIM)).astype(np.float32)


def floor_rates(agent) -> dict:
    """Seconds per exact-scan row and per graph distance, measured now (the mock LLM call:
    ``llm_call_seconds``)."""
    rows = scan_rows()
    q = rows[0].copy()
    started = time.perf_counter()
    for _ in range(20):
        rows @ q
    per_row = (time.perf_counter() - started) / (20 * len(rows))
    per_graph, graph = None, getattr(agent.index, "graph_", None)
    if graph is not None:
        import faiss

        qs = np.ascontiguousarray(agent.store.vectors[:200])
        stats = faiss.cvar.hnsw_stats
        stats.reset()
        started = time.perf_counter()
        for row in qs:
            graph.search(row[None, :], 50)
        per_graph = (time.perf_counter() - started) / max(stats.ndis, 1)
    return {"row": per_row, "graph": per_graph}


def llm_call_seconds(llm, dialogue) -> float:
    """Mean seconds of one attention-rating call of the run's LLM on the dialogue's first turn."""
    step = next(s for s in dialogue.steps if s.kind == "say")
    item = Item(step.text, step.kind, step.id, dialogue.language, step.hints)
    started = time.perf_counter()
    for _ in range(200):
        llm.rate_attention(item, [])
    return (time.perf_counter() - started) / 200


@dataclass
class Case:
    """One system of an interleaved set: built, pre-loaded, then driven round by round."""

    preset: str
    n: int
    workload: str
    seconds: list[float] = field(default_factory=list)       # per round
    rates: list[dict] = field(default_factory=list)          # floor rates, measured after each round
    results: list = field(default_factory=list)

    @property
    def key(self) -> tuple[str, int, str]:
        return self.preset, self.n, self.workload

    def build(self, dialogue) -> None:
        cfg, _ = compose([*VARIANTS[self.preset], *OVERRIDES])
        self.system = build_system(cfg, dialogue)
        self.agent = self.system.memory_
        self.depth = max(Evaluation.of(cfg).depths, default=0)     # probes rank this deep, as in a run
        self.reply = Reply(k=5) if self.workload == "reply" else None
        gc.collect()
        before, started = rss(), time.perf_counter()
        preload(self.agent, PreloadSpec(memories=self.n, seed=0), dialogue.language)
        self.preload_s = time.perf_counter() - started
        gc.collect()
        self.beyond = (rss() - before) / self.n - DIM * 4
        self.work0 = self.agent.index.work_.copy()

    def run(self, steps) -> None:
        """Drive these steps and add their wall time as one round."""
        started = time.perf_counter()
        for step in steps:
            out = drive(self.system, step, self.depth)
            self.results.append((step, out))
            if self.reply is not None and (query := self.reply.reply(step, out)) is not None:
                self.results.append((step, self.system.retrieve(query)))
        self.seconds.append(time.perf_counter() - started)


def interleave(benchmark, cases: list[Case], dialogue) -> list[np.ndarray]:
    """Run the dialogue on every case in ``ROUNDS`` rounds of consecutive steps: each round
    drives its steps on every case in turn, forward in even rounds and backward in odd ones
    (A B C, C B A, ...), so that a change of the machine's load falls on all cases alike."""
    chunks = np.array_split(np.arange(len(dialogue.steps)), ROUNDS)
    rounds = iter(range(ROUNDS))

    def one_round():
        r = next(rounds)
        steps = [dialogue.steps[i] for i in chunks[r]]
        for case in (cases if r % 2 == 0 else cases[::-1]):
            case.run(steps)
            case.rates.append(floor_rates(case.agent))

    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    return chunks


def per_round_ms(case: Case, chunks) -> np.ndarray:
    return np.array([1000 * s / len(c) for s, c in zip(case.seconds, chunks)])


def spread(values) -> str:
    """median [min-max] of per-round values"""
    v = np.asarray(values)
    return f"{np.median(v):.3g} [{v.min():.3g}-{v.max():.3g}]"


def physical_floor(case: Case, rates: dict, llm_s: float) -> dict:
    """The floor of the work a case has done since its pre-load: ``seconds`` = exact-scan rows x
    ``rates["row"]`` + graph distances (queries and estimated inserts) x ``rates["graph"]`` + LLM
    calls (its steps' and its background processes') x ``llm_s``; with the three counts."""
    work = case.agent.index.work_.minus(case.work0)
    processes = case.system.agent_.processes.totals.values()
    llm_calls = sum(o.cost.llm_calls for _, o in case.results) + sum(p["calls"] for p in processes)
    scan_rows = work.distances - work.graph_distances
    graph = work.graph_distances + work.insert_distances_est
    seconds = scan_rows * rates["row"] + graph * (rates["graph"] or 0.0) + llm_calls * llm_s
    return {"seconds": seconds, "scan_rows": scan_rows, "graph": graph, "llm_calls": llm_calls}


def finish(case: Case, chunks, record, dialogue) -> None:
    """Every figure of one case from its saved step outputs and work counters; frees its store."""
    agent, nsteps = case.agent, len(dialogue.steps)
    step_ms = 1000 * sum(case.seconds) / nsteps
    work = agent.index.work_.minus(case.work0)
    processes = case.system.agent_.processes.totals.values()
    costs = [o.cost for _, o in case.results]
    scored = (sum(c.scored + c.arousal_scored for c in costs)
              + sum(p["scored"] + p["arousal_scored"] for p in processes))
    probes = [(s, o) for s, o in case.results if s.kind == "probe"]
    awakened = {s.id.split(".")[0] for s in dialogue.steps if ".r" in s.id}
    casual = [(s, o) for s, o in probes if s.id.endswith(".ask") and s.id.split(".")[0] in awakened]
    recall = float(np.mean([first_ranks(o.ranking.provenance[:o.ranking.used], s.expect.recall)[s.expect.recall[0]]
                            is not None for s, o in casual]))
    rates = {k: (None if any(r[k] is None for r in case.rates) else float(np.median([r[k] for r in case.rates])))
             for k in ("row", "graph")}
    llm_s = llm_call_seconds(case.system.agent_.llm, dialogue)
    floor = physical_floor(case, rates, llm_s)
    scan_rows, graph, llm_calls = floor["scan_rows"], floor["graph"], floor["llm_calls"]
    floor_ms = 1000 * floor["seconds"] / nsteps
    round_ms = per_round_ms(case, chunks)
    RUNS[case.key] = {"step_ms": step_ms, "round_ms": round_ms, "floor_ms": floor_ms,
                      "scored": scored, "recall": recall, "beyond": case.beyond,
                      "distances": work.distances + work.insert_distances_est}
    record("scale", preset=case.preset, memories=case.n, workload=case.workload, steps=nsteps,
           steps_per_s=round(1000 / step_ms, 1), ms_per_step=round(step_ms, 3),
           ms_per_step_rounds=spread(round_ms), floor_ms_per_step=round(floor_ms, 4),
           scored_per_step=round(scored / nsteps, 1), distances_per_step=round(work.distances / nsteps, 1),
           graph_inserts=work.inserts, insert_distances_est=work.insert_distances_est, tier_moves=work.moves,
           llm_calls=llm_calls, recall_at_10=round(recall, 3),
           bytes_beyond_vector=int(case.beyond) if case.n >= 100_000 else None, preload_s=round(case.preload_s, 1),
           tiers=" / ".join(str(s) for s in agent.index.sizes()))
    record("floor", preset=case.preset, memories=case.n, workload=case.workload,
           ns_per_scan_row=round(rates["row"] * 1e9, 2),
           ns_per_graph_distance=None if rates["graph"] is None else round(rates["graph"] * 1e9, 1),
           us_per_mock_call=round(llm_s * 1e6, 1), scan_rows_per_step=round(scan_rows / nsteps, 1),
           graph_distances_per_step=round(graph / nsteps, 1), llm_calls_per_step=round(llm_calls / nsteps, 3))
    case.system = case.agent = case.results = None      # free the store
    gc.collect()


@pytest.mark.parametrize("workload", list(SETS))
def test_dialogue(benchmark, record, target, dialogue, workload):
    """Every case of one workload, built and pre-loaded (largest first, so that bytes per
    memory are measured on a fresh heap), then run interleaved (``interleave``)."""
    cases = [Case(p, n, workload) for p, n in SETS[workload]]
    for case in sorted(cases, key=lambda c: -c.n):
        case.build(dialogue)
    chunks = interleave(benchmark, cases, dialogue)
    for case in cases:
        finish(case, chunks, record, dialogue)
    if all(k in RUNS for k in CASES):
        dialogue_targets(target)


def ratio_by_round(a: tuple, b: tuple) -> tuple[float, str]:
    """Median of the per-round step-time ratios b/a, and median [min-max] as text."""
    r = RUNS[b]["round_ms"] / RUNS[a]["round_ms"]
    return float(np.median(r)), spread(r)


def dialogue_targets(target):
    """Targets 1, 2, 3 and 6 of issue 13, from every dialogue run."""
    mts = RUNS[("mts", 100_000, "probes")]
    sps = 1000 / mts["step_ms"]
    target("mts full design at 100k, d64: >= 1,500 steps/s",
           f"{sps:.0f} steps/s (ms per step by round {spread(mts['round_ms'])})", ">= 1500", sps / 1500, sps >= 1500)
    ratio = mts["step_ms"] / mts["floor_ms"]
    target("mts at 100k against the measured physical floor alone (reported; the limit is test_component_floor's)",
           f"{mts['step_ms']:.3f} ms vs floor {mts['floor_ms']:.4f} ms per step", "reported", ratio, None)
    small, large = ("mts", SIZES[0], "probes"), ("mts", SIZES[-1], "probes")
    ratio, rounds = ratio_by_round(small, large)
    target(f"mts step cost at {SIZES[-1]:,} <= 1.3x at {SIZES[0]:,} (interleaved, {ROUNDS} rounds)",
           f"{RUNS[large]['step_ms']:.2f} ms vs {RUNS[small]['step_ms']:.2f} ms; per round {rounds}",
           "<= 1.3x (median round)", ratio, ratio <= 1.3)
    m, f = RUNS[("mts", 100_000, "reply")], RUNS[("flat_rag", 100_000, "reply")]
    share, work = m["scored"] / f["scored"], m["distances"] / f["distances"]
    rel = m["recall"] / f["recall"] if f["recall"] else None
    ratio, rounds = ratio_by_round(("flat_rag", 100_000, "reply"), ("mts", 100_000, "reply"))
    target("workload=reply at 100k: mts step time vs flat_rag's (interleaved; no limit, reported)",
           f"{m['step_ms']:.2f} ms vs {f['step_ms']:.2f} ms; per round {rounds}", "reported", ratio, None)
    # A graph query scores its k candidates but computes hundreds of distances: the target is
    # met only if the distance computations (queries, plus inserts estimated) are within it too.
    target("workload=reply at 100k: mts scores <= 25% of flat_rag's at >= 0.95x its recall@10 (awakened needles)",
           f"{m['scored']:,} vs {f['scored']:,} scored ({share:.1%}); distances incl. estimated inserts "
           f"{m['distances']:,} vs {f['distances']:,} ({work:.1%}); recall@10 {m['recall']:.2f} vs {f['recall']:.2f}",
           "<= 25% (scored and distances), >= 0.95x", max(share, work),
           max(share, work) <= 0.25 and rel is not None and rel >= 0.95)
    w, big = RUNS[("mts_walk", 100_000, "reply")], {p: RUNS[(p, SIZES[-1], "probes")]["recall"]
                                                     for p in ("mts", "mts_walk", "flat_rag")}
    share, work = w["scored"] / f["scored"], w["distances"] / f["distances"]
    rel = w["recall"] / f["recall"] if f["recall"] else None
    target("the same with index.arousal=walk (arousal one graph walk over every memory)",
           f"{w['scored']:,} vs {f['scored']:,} scored ({share:.1%}); distances {w['distances']:,} ({work:.1%}); "
           f"recall@10 {w['recall']:.2f} vs {f['recall']:.2f}; at {SIZES[-1]:,} under probes recall@10 "
           f"{big['mts_walk']:.2f} (mts {big['mts']:.2f}, flat_rag {big['flat_rag']:.2f})",
           "<= 25% (scored and distances), >= 0.95x", max(share, work),
           max(share, work) <= 0.25 and rel is not None and rel >= 0.95)
    b = RUNS[("mts", SIZES[-1], "probes")]["beyond"]
    target(f"mts: bytes per memory beyond one copy of its vector at {SIZES[-1]:,}", f"{b:.0f} B", "<= 1024 B",
           b / 1024, b <= 1024)


YEAR_BUDGET_S = 1800      # a year still running after this is reported as a miss ("> 1800 s")


def peak_rss_mb(pid: int, stop: threading.Event, out: dict) -> None:
    """Poll the process's own high-water RSS (``VmHWM`` in /proc/PID/status) every 0.25 s
    until ``stop``; the largest seen goes to ``out["peak_mb"]``. ``ru_maxrss`` from wait4 is
    no measure of it: a process spawned from pytest inherits at exec the high-water mark of
    the memory it was spawned from (vfork: pytest's own peak, 3.7 GB after the 1M cases)."""
    while not stop.wait(0.25):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                out["peak_mb"] = max(out.get("peak_mb", 0.0), int(line.split()[1]) / 1024)


def mtsbench(benchmark, *args, cwd: Path, timeout: float = 3600):
    """Run the CLI once under pytest-benchmark: (wall seconds, the finished command's
    returncode and stderr or None on timeout, its own peak RSS in MB: ``peak_rss_mb``,
    read to 0.25 s before it ends; None where /proc is missing)."""
    exe = Path(sys.executable).with_name("mtsbench")
    out = {}

    def once():
        started = time.perf_counter()
        with tempfile.TemporaryFile("w+") as err:
            child = subprocess.Popen([str(exe), *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
            timer = threading.Timer(timeout, child.kill)
            timer.start()
            stop = threading.Event()
            poll = threading.Thread(target=peak_rss_mb, args=(child.pid, stop, out))
            poll.start()
            _, status, _ = os.wait4(child.pid, 0)           # reaped here: Popen is told its exit code
            out["wall"] = time.perf_counter() - started
            stop.set()
            poll.join()
            expired = not timer.is_alive()
            timer.cancel()
            child.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            out["done"] = None if expired else SimpleNamespace(returncode=child.returncode, stderr=err.read())

    benchmark.pedantic(once, rounds=1, iterations=1)
    return out["wall"], out["done"], out.get("peak_mb")


def test_component_floor(benchmark, target, tmp_path):
    """Issue 50: the step at 100k <= 2x (physical floor + the components' own calls), both
    measured in one process by ``scripts/component_floor.py`` (its docstring says how)."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "component_floor.py"
    done = benchmark.pedantic(subprocess.run, ([sys.executable, str(script), "--out", str(tmp_path)],),
                              {"capture_output": True, "text": True}, rounds=1, iterations=1)
    assert done.returncode == 0, done.stderr[-2000:]
    s = json.loads((tmp_path / "component_floor.json").read_text())["summary"]
    for name in ("component_floor.json", "component_floor.md"):
        (RESULTS / name).write_text((tmp_path / name).read_text())
    ratio = s["step_ms"] / s["floor_with_components_ms"]
    target("mts at 100k <= 2x (physical floor + components' own calls), one process",
           f"{s['step_ms']:.3f} ms vs {s['physical_floor_ms']:.4f} + {s['component_ms']:.4f} ms per step",
           "<= 2x", ratio, ratio <= 2)


RESULTS = Path(__file__).resolve().parent / "results"
# Issue 38 measured the year's physical floor (its scan rows, graph distances and mock calls) at ~100 s
YEAR_FLOOR_S = 100
YEAR_TARGET = f"a generated year (~100k turns, full design, d256) through mtsbench run <= 2x its floor (~{YEAR_FLOOR_S} s)"


def test_year(benchmark, record, target, tmp_path):
    """A generated year (365 days x 280 turns, full design, d256) through ``mtsbench run``."""
    wall, done, peak_mb = mtsbench(benchmark, "run", "generate.days=365", "generate.turns_per_day=280", "embedder.dim=256",
                          f"hydra.run.dir={tmp_path}/year", cwd=tmp_path, timeout=YEAR_BUDGET_S)
    if done is None:
        target(YEAR_TARGET, f"> {YEAR_BUDGET_S} s (stopped)", f"<= {2 * YEAR_FLOOR_S} s",
               YEAR_BUDGET_S / (2 * YEAR_FLOOR_S), False)
        return
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "year" / "summary.json").read_text())
    turns = summary["cost"]["overall"]["turns"]
    record("year", turns=turns, wall_s=round(wall, 1), steps_per_s=round(turns / wall, 1), peak_rss_mb=None if peak_mb is None else round(peak_mb),
           memories_scored_per_turn=summary["cost"]["overall"]["per_turn"],
           distances_per_turn=summary["cost"]["overall"].get("distances_per_turn"))
    target(YEAR_TARGET, f"{wall:.0f} s for {turns:,} turns, peak RSS "
           + ("not measured (no /proc)" if peak_mb is None else f"{peak_mb:.0f} MB"),
           f"<= {2 * YEAR_FLOOR_S} s", wall / (2 * YEAR_FLOOR_S), wall <= 2 * YEAR_FLOOR_S)


def test_sweep(benchmark, record, target, tmp_path):
    """Per-job overhead of a 16-job ablation sweep on one scenario: (wall x workers - the
    jobs' own step time) / jobs. Target about 1 s (issue 26: Hydra through its public API
    only; the earlier 0.2 s target was withdrawn with the internals it needed). And its
    report's time (issue 50: at most 5 s): from the last write of the last job to finish to
    the report's last file (``report.html``), the sweep's serial tail once its jobs are done."""
    wall, done, _ = mtsbench(benchmark, "run", "-m", "experiment=ablation", "scenarios=[milk_allergy]",
                          f"hydra.sweep.dir={tmp_path}/sweep", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    jobs = sorted((tmp_path / "sweep").glob("*/results.parquet"))
    step_s = sum(float(pd.read_parquet(j, columns=["latency_ms"])["latency_ms"].sum()) / 1000 for j in jobs)
    workers = min(len(jobs), os.cpu_count() or 1)
    overhead = (wall * workers - step_s) / len(jobs)
    last_job = max(f.stat().st_mtime for j in jobs for f in j.parent.rglob("*") if f.is_file())
    report_s = (tmp_path / "sweep" / "report.html").stat().st_mtime - last_job
    record("sweep", jobs=len(jobs), workers=workers, wall_s=round(wall, 2), steps_s=round(step_s, 2),
           overhead_s_per_job=round(overhead, 3), report_s=round(report_s, 2))
    target("sweep overhead per job (16-job ablation sweep)", f"{overhead:.2f} s per job ({len(jobs)} jobs, "
           f"{wall:.1f} s wall on {workers} workers)", "<= 1 s", overhead / 1.0, overhead <= 1.0)
    target("the 16-job ablation sweep's report (last job's end to report.html)", f"{report_s:.2f} s",
           "<= 5 s", report_s / 5.0, report_s <= 5.0)
