"""Two implementations of some functions timed side by side, in one process, on the bench's dialogue.

    python scripts/ab_steps.py OLD=NEW [OLD=NEW ...] [--memories N] [--preset mts] [--workload probes]
                               [--block 10]

OLD and NEW are ``module:attribute`` (a dotted attribute for a method:
``mtsbench.memory.memory:Memory.arouse``); NEW may live in a file of its own on ``PYTHONPATH``
(an old copy of a module, say); a change of several functions gives one pair each.

The bench's case (``benchmarks/test_scale.py``: its dialogue and overrides, ``--memories``
pre-loaded, ``--preset``, ``--workload``; one graph build thread, so that two builds give the
same graph) is built, and its steps are driven in blocks of ``--block`` steps that alternate
between the OLDs (A) and the NEWs (B) as A B B A A B B A ...: before each block every reference
to each OLD, in mtsbench's loaded modules and their classes (``from x import f`` copies
included) and in the other NEWs' modules, is set to the variant's. Then a second case is built
alike and driven with A and B exchanged (B A A B ...), so every block is timed once each way
and a block holding a costly step (a consolidation, a rebalance) weighs on both sides alike.
Both sides thus run the same steps on the same states, at the same moments of the machine's
load: on a 2-core machine whose speed drifts by 20% from one process to the next, this tells
apart a change of a few percent that separate runs cannot (issue 38: a compiled top-k looked
10% faster in separate runs, and was not).

Prints each side's summed seconds, NEW / OLD, and the median and quartiles of the per-block
ratio. Valid only for a NEW that gives OLD's outputs (each block runs on the state the other
side left, and the two passes must replay the same states): check that first with
``scripts/same_outputs.py``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def resolve(spec: str):
    """(owner, name, object) of ``module:attr.attr``; the error names the spec."""
    module, _, path = spec.partition(":")
    if not path:
        raise SystemExit(f"ab_steps: {spec!r}: expected module:attribute")
    owner = importlib.import_module(module)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    if not hasattr(owner, name):
        raise SystemExit(f"ab_steps: {spec!r}: {owner!r} has no attribute {name!r}")
    return owner, name, getattr(owner, name)


def places(target, modules: tuple[str, ...] = ()) -> list[tuple[object, str]]:
    """Every (module or class, attribute name) of mtsbench and of ``modules`` that holds
    ``target``. ``modules``: other NEW sides' modules (an old copy of a module calls the
    functions of the other pairs, which must be swapped there too)."""
    found = []
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name.startswith("mtsbench") or mod_name in modules):
            continue
        for holder in [mod, *[v for v in vars(mod).values() if isinstance(v, type) and v.__module__ == mod_name]]:
            found += [(holder, k) for k, v in list(vars(holder).items()) if v is target]
    return found


def swap(where: list[list[tuple[object, str]]], to: list) -> None:
    """Set every place of each function (``places``) to its counterpart in ``to``."""
    for found, value in zip(where, to):
        for holder, name in found:
            setattr(holder, name, value)


def order(blocks: int) -> list[int]:
    """0 (OLD) or 1 (NEW) per block: A B B A A B B A ...

    >>> order(6)
    [0, 1, 1, 0, 0, 1]
    """
    return [(0, 1, 1, 0)[b % 4] for b in range(blocks)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("swaps", nargs="+", metavar="OLD=NEW", help="each side module:attribute")
    parser.add_argument("--memories", type=int, default=100_000, help="pre-loaded memories (default 100,000)")
    parser.add_argument("--preset", default="mts", help="mts, flat_rag or mts_walk (the bench's variants)")
    parser.add_argument("--workload", default="probes", choices=["probes", "reply"])
    parser.add_argument("--block", type=int, default=10, help="steps per block (default 10)")
    args = parser.parse_args(argv)
    pairs = [given.partition("=") for given in args.swaps]
    for given, (_, sep, _) in zip(args.swaps, pairs):
        if not sep:
            parser.error(f"{given!r}: expected OLD=NEW")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from test_scale import DIALOGUE, OVERRIDES, Case

    # one graph build thread: the two passes then build the same graph and replay the same states
    OVERRIDES[:] = ["index.threads=1" if o.startswith("index.threads=") else o for o in OVERRIDES]

    from mtsbench.harness.runner import one_blas_thread
    from mtsbench.scenario.generate import write
    from mtsbench.scenario.loader import load_scenario

    olds = [resolve(old)[2] for old, _, _ in pairs]
    news = [resolve(new)[2] for _, _, new in pairs]
    own = [new.partition(":")[0] for _, _, new in pairs]
    seconds = {}                        # (variant, block) -> seconds
    with tempfile.TemporaryDirectory() as folder, one_blas_thread():
        dialogue = load_scenario(write(DIALOGUE, Path(folder)))
        steps, where = dialogue.steps, None
        blocks = order(-(-len(steps) // args.block))
        for flip in (0, 1):
            case = Case(args.preset, args.memories, args.workload)
            case.build(dialogue)
            if where is None:       # after a build, every module the steps use is loaded
                # not in a NEW's own module (a wrapper may call its OLD), but in the other NEWs'
                where = [places(old, tuple(m for m in own if m != own[i])) for i, old in enumerate(olds)]
                for (spec, _, _), found in zip(pairs, where):
                    if not found:
                        raise SystemExit(f"ab_steps: nothing in mtsbench's modules holds {spec}")
            try:
                for b, variant in enumerate(blocks):
                    variant ^= flip
                    swap(where, (olds, news)[variant])
                    started = time.perf_counter()
                    case.run(steps[b * args.block:(b + 1) * args.block])
                    seconds[variant, b] = time.perf_counter() - started
            finally:
                swap(where, olds)       # the OLDs back, also when a step raised
            del case
            gc.collect()
    a, b = (np.array([seconds[v, i] for i in range(len(blocks))]) for v in (0, 1))
    ratios = b / a
    print(f"{args.preset} at {args.memories:,} memories, {args.workload}: {len(steps)} steps in {len(blocks)} "
          f"blocks of {args.block}, two passes (A B B A ..., then B A A B ...); swapped in "
          f"{sum(map(len, where))} place(s)")
    print(f"OLD {' '.join(old for old, _, _ in pairs)}: {a.sum():.3f} s")
    print(f"NEW {' '.join(new for _, _, new in pairs)}: {b.sum():.3f} s")
    q1, median, q3 = np.percentile(ratios, [25, 50, 75])
    print(f"NEW / OLD: {b.sum() / a.sum():.3f} (every block timed once each way); per block: median "
          f"{median:.3f} [quartiles {q1:.3f}-{q3:.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
