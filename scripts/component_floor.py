"""The floor a compiled step core could reach: the physical floor plus the components' own calls.

    python scripts/component_floor.py [--memories N] [--workload probes] [--replays 5] [--out DIR]

The project's standards keep every mechanism a small numpy class behind a Protocol, chosen by
config, and issue 38 asks for outputs byte for byte. A step core compiled around them (numba)
still calls them as they are: their numpy calls on a few dozen elements cost what they cost
whatever calls them. This measures that part of a step on the bench's case
(``benchmarks/test_scale.py``: its dialogue and overrides, ``--memories`` pre-loaded, preset mts):

1. a case is built and its dialogue driven once, timed (the step time of this process);
2. a second case is built alike and driven with every component call recorded: each public
   function and method of ``mtsbench.mechanisms`` (decay curves, boost, arousal amounts, tier
   policies, depth, belief, ...), ``relevance`` of the retrieval group and ``embed`` of the
   embedders; only the outermost call of a nest (a mechanism calling another counts once), its
   arguments copied before the call. ``DualAttention`` and ``TieredSearch`` (the attention and
   retrieval groups) count as the step's own bookkeeping, only the curves and formulas they
   call as components: the floor is a lower bound (so is the replay's: the components are
   the run's instances, their caches warm, the hashing embedder's token cache among them);
3. the recorded calls are replayed ``--replays`` times in a loop (each time on fresh copies of
   the arguments, no clock per call), and the fastest replay is the components' time (a floor:
   the replay the machine's other load disturbed least; they differ by up to 1.7x); a second
   pass with a clock per call splits it by component (its fastest pass, whose sum differs a little);
4. the physical floor of the same work (the bench's ``physical_floor`` at the rates of its
   ``floor_rates`` and ``llm_call_seconds``: exact-scan rows, graph distances, mock LLM calls) is
   measured in the same process.

The sum of 3 and 4 per step is a lower bound on any step core that leaves the components as
they are; it prints it against the 1,500 steps/s target (0.667 ms a step). Writes
OUT/component_floor.json and .md (OUT: benchmarks/results).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import gc
import inspect
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 1000 / 1500
# component modules -> the methods of their classes that are component calls (None: every public
# one and ``__call__``, and the module's public functions too)
COMPONENT_MODULES = {"mtsbench.mechanisms.": None, "mtsbench.memory.relevance": {"relevance"},
                     "mtsbench.embed.hashing": {"embed"}, "mtsbench.embed.cache": {"embed"}}


def component_callables() -> list[tuple[object, str, object]]:
    """(holder, name, function) of every component call (``COMPONENT_MODULES``): module
    functions, and methods of the non-Protocol classes defined there (at the class that defines
    them, so subclasses share the wrapper)."""
    found = []
    for mod_name, mod in sorted(sys.modules.items()):
        prefix = next((p for p in COMPONENT_MODULES if mod_name.startswith(p)), None)
        if mod is None or prefix is None:
            continue
        methods = COMPONENT_MODULES[prefix]
        for name, value in vars(mod).items():
            if methods is None and inspect.isfunction(value) and value.__module__ == mod_name \
                    and not name.startswith(("_", "check_")):
                found.append((mod, name, value))
            if isinstance(value, type) and value.__module__ == mod_name and not getattr(value, "_is_protocol", False):
                for attr, fn in vars(value).items():
                    wanted = attr in methods if methods is not None else \
                        attr == "__call__" or not attr.startswith("_")
                    if wanted and inspect.isfunction(fn):
                        found.append((value, attr, fn))
    return found


class Recorder:
    """Wraps the components; records (label, function, instance arguments kept, copied args,
    copied kwargs) of each outermost call."""

    def __init__(self):
        self.calls: list[tuple[str, object, int, tuple, dict]] = []
        self.depth = 0
        self.undo: list[tuple[object, str, object]] = []

    def wrap(self, places_of) -> int:
        for holder, name, fn in component_callables():
            label = f"{getattr(holder, '__name__', holder)}.{name}".replace("mtsbench.", "")
            wrapper = self._wrapper(label, fn, int(isinstance(holder, type)))
            spots = [(holder, name)] if isinstance(holder, type) else [(holder, name), *places_of(fn)]
            for where, attr in dict.fromkeys(spots):
                self.undo.append((where, attr, getattr(where, attr)))
                setattr(where, attr, wrapper)
        return len(self.undo)

    def _wrapper(self, label: str, fn, keep: int):
        def recorded(*args, **kwargs):
            if self.depth == 0:
                self.calls.append((label, fn, keep, *copied(args, kwargs, keep)))
            self.depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self.depth -= 1
        return recorded

    def restore(self) -> None:
        for where, attr, value in reversed(self.undo):
            setattr(where, attr, value)
        self.undo.clear()


def copied(args: tuple, kwargs: dict, keep: int) -> tuple[tuple, dict]:
    """Deep copies of a call's arguments but the first ``keep`` (1 for a method: its instance,
    the component itself, whose parameters the call reads)."""
    return args[:keep] + copy.deepcopy(args[keep:]), copy.deepcopy(kwargs)


def replay(calls) -> tuple[float, dict[str, float]]:
    """Seconds of every recorded call in a loop, and seconds per label; each call on a fresh
    copy of its arguments (copied before the clock starts). The total is timed without a clock
    per call; the seconds per label come from a second pass with one (about 0.5 us a call more)."""
    clock = time.perf_counter
    gc.disable()
    try:
        fresh = [(fn, *copied(args, kwargs, keep)) for _, fn, keep, args, kwargs in calls]
        started = clock()
        for fn, args, kwargs in fresh:
            fn(*args, **kwargs)
        total = clock() - started
        per = defaultdict(float)
        for label, fn, args, kwargs in [(label, fn, *copied(args, kwargs, keep)) for label, fn, keep, args, kwargs in calls]:
            t = clock()
            fn(*args, **kwargs)
            per[label] += clock() - t
    finally:
        gc.enable()
    return total, per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--workload", default="probes", choices=["probes", "reply"])
    parser.add_argument("--replays", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "scripts")]
    from ab_steps import places
    from test_scale import DIALOGUE, Case, floor_rates, llm_call_seconds, physical_floor

    from mtsbench.harness.runner import one_blas_thread
    from mtsbench.scenario.generate import write
    from mtsbench.scenario.loader import load_scenario

    with tempfile.TemporaryDirectory() as folder, one_blas_thread():
        dialogue = load_scenario(write(DIALOGUE, Path(folder)))
        steps = dialogue.steps
        timed = Case("mts", args.memories, args.workload)
        timed.build(dialogue)
        timed.run(steps)
        step_ms = 1000 * timed.seconds[0] / len(steps)
        floor = physical_floor(timed, floor_rates(timed.agent), llm_call_seconds(timed.system.agent_.llm, dialogue))
        floor_ms = 1000 * floor["seconds"] / len(steps)
        del timed
        gc.collect()

        recorded = Case("mts", args.memories, args.workload)
        recorded.build(dialogue)
        recorder = Recorder()
        try:
            wrapped = recorder.wrap(places)
            recorded.run(steps)
        finally:
            recorder.restore()
        del recorded
        gc.collect()
    replays = [replay(recorder.calls) for _ in range(args.replays)]
    totals = [t for t, _ in replays]
    fastest = min(totals)             # a floor: the replay the machine disturbed least
    best = min((per for _, per in replays), key=lambda per: sum(per.values()))     # the fastest split too
    counts = defaultdict(int)
    for label, *_ in recorder.calls:
        counts[label] += 1
    n = len(steps)
    component_ms = 1000 * fastest / n
    rows = [{"component call": label, "calls_per_step": round(counts[label] / n, 2),
             "us_per_call": round(1e6 * best[label] / counts[label], 2), "us_per_step": round(1e6 * best[label] / n, 1)}
            for label in sorted(best, key=best.get, reverse=True)]
    summary = {"memories": args.memories, "workload": args.workload, "steps": n, "step_ms": round(step_ms, 3),
               "physical_floor_ms": round(floor_ms, 4), "component_calls_per_step": round(len(recorder.calls) / n, 1),
               "component_ms": round(component_ms, 4), "component_ms_replays": [round(1000 * t / n, 4) for t in totals],
               "floor_with_components_ms": round(floor_ms + component_ms, 4), "target_ms": round(TARGET_MS, 4),
               "split_ms": round(1000 * sum(best.values()) / n, 4), "places_wrapped": wrapped, "measured": datetime.date.today().isoformat()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "component_floor.json").write_text(json.dumps({"summary": summary, "calls": rows}, indent=1) + "\n")
    (args.out / "component_floor.md").write_text(markdown(summary, rows))
    print(markdown(summary, rows))
    return 0


def markdown(s: dict, rows: list[dict]) -> str:
    head = (f"# The floor under the components\n\nWritten by `python scripts/component_floor.py` (its docstring "
            f"says how). Bench dialogue, preset mts, {s['memories']:,} memories pre-loaded, workload={s['workload']}, "
            f"{s['steps']} steps, measured {s['measured']}.\n\n"
            "| per step | ms |\n|---|---|\n"
            f"| the step, as run in this process | {s['step_ms']:.3f} |\n"
            f"| physical floor (scan rows, graph distances, mock LLM calls) | {s['physical_floor_ms']:.4f} |\n"
            f"| components' own calls, replayed ({s['component_calls_per_step']} a step; replays "
            f"{', '.join(f'{v:.4f}' for v in s['component_ms_replays'])}) | {s['component_ms']:.4f} |\n"
            f"| floor with the components | {s['floor_with_components_ms']:.4f} |\n"
            f"| 1,500 steps/s | {s['target_ms']:.4f} |\n\n"
            f"By component (the fastest pass with a clock per call: {s['split_ms']:.4f} ms a step in all):\n\n"
            "| component call | calls/step | us/call | us/step |\n|---|---|---|---|\n")
    return head + "".join(f"| `{r['component call']}` | {r['calls_per_step']} | {r['us_per_call']} | "
                          f"{r['us_per_step']} |\n" for r in rows)


if __name__ == "__main__":
    sys.exit(main())
