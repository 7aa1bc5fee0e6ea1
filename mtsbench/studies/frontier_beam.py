"""The frontier study at scale: each system's recall-work frontier tuned after a lifetime haystack, its
front run on held-out chats at every haystack size.

``python -m mtsbench.studies.frontier_beam --beam DIR --locomo FILE --work multirun/frontier_beam --out
experiments/frontier_beam`` (``make frontier-beam BEAM=DIR LOCOMO=FILE``), following
``frontier_beam_plan.yaml``:

1. imports BEAM (``mtsbench import beam``) and LoCoMo once into ``WORK/data`` (as the BEAM study) and
   splits BEAM's chats into ``WORK/data/tune`` (the plan's ``tune`` targets), ``WORK/data/held_out``
   (the other targets) and ``WORK/data/haystack`` (every chat that is not a target; LoCoMo joins it);
2. runs each system's tuning study (``mtsbench run -m experiment=EXPERIMENT``, ``trials`` trials of
   ``hydra/sweeper=tune``) on the tuning chats after ``tune_size`` haystack messages, into
   ``WORK/NAME`` (a study already there is resumed: a stopped study goes on where it stopped);
3. runs each study's Pareto-optimal trials on the held-out chats after every size of ``sizes``
   (``hydra.sweeper.front_of``: one run per point, the haystack taken in once and copied at each
   size) into ``WORK/NAME/held_out`` (resumed the same way);
4. writes ``OUT/report.md``, ``OUT/summary.csv`` and the figures from the saved studies and runs
   only (``frontier_beam_report``), and each study's own report into ``OUT/NAME``. Nothing of either
   data set is written to ``OUT``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import runs
from .beam import chats_folder, flat, targets_folder
from .frontier import read_plan, run_system

PLAN = Path(__file__).with_name("frontier_beam_plan.yaml")
KEYS = ("targets", "tune", "tune_size", "sizes", "trials", "systems")


def load_plan(path: Path = PLAN) -> dict:
    """The plan (module docstring), checked for what the study reads."""
    plan = read_plan(path, KEYS)
    roles = [s.get("role") for s in plan["systems"]]
    if roles.count("design") != 1 or roles.count("rival") != 1:
        raise SystemExit(f"{path}: systems: expected one with role design and one with role rival (got {roles})")
    if not isinstance(plan["tune_size"], int) or plan["tune_size"] not in plan["sizes"]:
        raise SystemExit(f"{path}: tune_size: expected a number of messages among sizes {plan['sizes']} (the "
                         f"tuning-to-held-out drop compares the two there), got {plan['tune_size']!r}")
    return plan


def split(plan: dict, beam: Path, work: Path) -> dict[str, Path]:
    """The imported chats in ``beam`` split into the tuning targets, the held-out targets and
    the haystack (every chat that is not a target), each a folder under ``WORK/data``."""
    ids = sorted(p.stem for p in beam.glob("*.yaml"))
    targets = [i for i in ids if i.startswith(plan["targets"])]
    missing = sorted(set(plan["tune"]) - set(targets))
    if missing:
        raise SystemExit(f"plan: tune: no target chat {', '.join(missing)} among the {len(targets)} imported "
                         f"{plan['targets']}* chats of {beam}")
    held = [i for i in targets if i not in plan["tune"]]
    if not held:
        raise SystemExit(f"plan: tune: every {plan['targets']}* chat is a tuning chat: none is left to hold out")
    rest = [i for i in ids if i not in targets]
    return {"tune": targets_folder(beam, work, plan["targets"], "tune", plan["tune"]),
            "held_out": targets_folder(beam, work, plan["targets"], "held_out", held),
            **({"haystack": targets_folder(beam, work, "", "haystack", rest)} if rest else {})}


def haystack(folders: dict[str, Path], sizes: list) -> list[str]:
    """The haystack overrides of a phase: BEAM's other chats (when there are any) and LoCoMo,
    taken in up to ``sizes``.

    >>> haystack({"haystack": Path("h"), "locomo": Path("l")}, [10000, "all"])
    ['haystack.sources=[h,l]', 'haystack.messages=[10000,all]']
    """
    sources = ",".join(str(folders[k]) for k in ("haystack", "locomo") if k in folders)
    return [f"haystack.sources=[{sources}]", "haystack.messages=[" + ",".join(str(s) for s in sizes) + "]"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.frontier_beam", description=__doc__.split("\n")[0])
    parser.add_argument("--beam", type=Path, required=True, help="BEAM's chats: a folder in the authors' layout")
    parser.add_argument("--locomo", type=Path, required=True, help="LoCoMo's locomo10.json (part of the haystack)")
    parser.add_argument("--work", type=Path, default=Path("multirun/frontier_beam"), help="imported data, studies, logs")
    parser.add_argument("--out", type=Path, default=Path("experiments/frontier_beam"), help="report and figures")
    parser.add_argument("--plan", type=Path, default=PLAN, help="the plan (default: the packaged frontier_beam_plan.yaml)")
    parser.add_argument("--trials", type=int, help="each system's budget (default: the plan's)")
    parser.add_argument("--only", nargs="*", help="run only these systems' studies (the report shows every one run)")
    parser.add_argument("--report-only", action="store_true", help="report from the studies already in --work")
    args = parser.parse_args(argv)
    if runs.inputs_missing([("--beam", args.beam, "folder"), ("--locomo", args.locomo, "file")]):
        return 2
    from .frontier_beam_report import write_report

    started = time.perf_counter()
    plan = load_plan(args.plan)
    trials = args.trials or int(plan["trials"])
    walls_file = args.work / "walls.json"
    walls = json.loads(walls_file.read_text()) if walls_file.is_file() else {}
    if not args.report_only:
        data = args.work / "data"
        beam = runs.import_variant("beam", chats_folder(args.beam, args.work), data / "beam", [])
        folders = {**split(plan, beam, args.work), "locomo": runs.import_variant("locomo", args.locomo, data / "locomo", [])}
        common = flat(plan.get("common") or [])
        for system in plan["systems"]:
            if args.only and system["name"] not in args.only:
                continue
            own = [*common, *flat(system.get("overrides") or [])]
            run_system(system, [folders["tune"]], [folders["held_out"]], trials, args.work, walls,
                       [*own, *haystack(folders, [plan["tune_size"]])], [*own, *haystack(folders, plan["sizes"])])
    return runs.report(lambda: write_report(plan, args.work, args.out, trials, walls), args.out, started)


if __name__ == "__main__":
    sys.exit(main())
