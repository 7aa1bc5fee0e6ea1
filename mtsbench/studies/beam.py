"""The BEAM study: BEAM's chats asked after a lifetime of other real dialogue, per system.

``python -m mtsbench.studies.beam --beam DIR --locomo FILE --work multirun/beam --out
experiments/beam`` (``make beam BEAM=DIR LOCOMO=FILE``) imports BEAM (``mtsbench import
beam DIR``) and LoCoMo (``mtsbench import locomo FILE``) once into ``WORK/data``, copies the
target chats (``targets`` of ``beam_plan.yaml``) into ``WORK/data/targets``, runs the plan's
``warm`` runs alone and then every other run ``--jobs`` at a time with ``mtsbench run``
into ``WORK/runs/NAME`` (a run already complete for the same command and code is kept), and
writes ``OUT/report.md``, ``OUT/summary.csv`` and the figures from the saved results only
(``mtsbench.studies.beam_report``). Nothing of either data set is written to ``OUT``. It
prints where it wrote and how long it took.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from . import runs

PLAN = Path(__file__).with_name("beam_plan.yaml")


def flat(items) -> list[str]:
    """A plan's overrides with YAML anchors of lists spliced in.

    >>> flat(["a=1", ["b=2", "c=3"], "d=4"])
    ['a=1', 'b=2', 'c=3', 'd=4']
    """
    out: list[str] = []
    for item in items:
        out.extend(flat(item) if isinstance(item, list) else [str(item)])
    return out


def chats_folder(beam: Path, work: Path) -> Path:
    """``beam`` itself when it holds chats in the authors' layout; when it holds their tarballs
    (``*.tar.gz``), those extracted once into ``WORK/data/beam_chats``."""
    tarballs = sorted(beam.glob("*.tar.gz"))
    if not tarballs or any(beam.glob("*/*/chat.json")) or any(beam.glob("*/chat.json")):
        return beam
    import tarfile

    folder = work / "data" / "beam_chats"
    stamp = folder / ".extracted"
    key = json.dumps([[p.name, p.stat().st_size] for p in tarballs])
    if not (stamp.exists() and stamp.read_text() == key):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for p in tarballs:
            with tarfile.open(p) as tar:
                tar.extractall(folder, filter="data")
        stamp.write_text(key)
    return folder


def targets_folder(beam: Path, work: Path, prefix: str, name: str = "targets", only: list[str] | None = None) -> Path:
    """``WORK/data/NAME``: the imported chats whose id starts with ``prefix`` (and is one of
    ``only``, when given), copied."""
    folder = work / "data" / name
    chosen = sorted(p for p in beam.glob(f"{prefix}*.yaml") if only is None or p.stem in only)
    if not chosen:
        raise SystemExit(f"{beam}: no imported chat named {prefix}*"
                         f"{' among ' + ', '.join(only) if only is not None else ''}: "
                         "is the BEAM folder the authors' layout?")
    if sorted(p.name for p in folder.glob("*.yaml")) != [p.name for p in chosen] or any(
            (folder / p.name).read_bytes() != p.read_bytes() for p in chosen):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for p in chosen:
            shutil.copyfile(p, folder / p.name)
    return folder


def command(run: dict, plan: dict, folders: dict[str, Path], out: Path) -> list[str]:
    """The ``mtsbench run`` command of one planned run."""
    sizes = ",".join(str(s) for s in run.get("sizes", plan["sizes"]))
    return [*runs.mtsbench_exe(), "run", f"scenarios=[{folders['targets']}]",
            f"haystack.sources=[{folders['beam']},{folders['locomo']}]", f"haystack.messages=[{sizes}]",
            *flat(plan.get("common", [])), *flat(run["overrides"]), f"hydra.run.dir={out}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.beam", description=__doc__.split("\n")[0])
    parser.add_argument("--beam", type=Path, required=True, help="BEAM's chats: a folder in the authors' layout")
    parser.add_argument("--locomo", type=Path, required=True, help="LoCoMo's locomo10.json (part of the haystack)")
    parser.add_argument("--work", type=Path, default=Path("multirun/beam"), help="imported data and raw runs")
    parser.add_argument("--out", type=Path, default=Path("experiments/beam"), help="report, summary.csv, figures")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time after the warm-up (default 2)")
    parser.add_argument("--plan", type=Path, default=PLAN, help="the plan (default: the packaged beam_plan.yaml)")
    parser.add_argument("--only", nargs="*", help="run only these planned runs (and their bases)")
    parser.add_argument("--report-only", action="store_true", help="report from the runs already in --work")
    args = parser.parse_args(argv)
    if runs.inputs_missing([("--beam", args.beam, "folder"), ("--locomo", args.locomo, "file")]):
        return 2
    from .beam_tables import write_report

    started = time.perf_counter()
    plan = runs.load_plan(args.plan, only=args.only)
    if not args.report_only:
        data = args.work / "data"
        folders = {"beam": runs.import_variant("beam", chats_folder(args.beam, args.work), data / "beam", []),
                   "locomo": runs.import_variant("locomo", args.locomo, data / "locomo", [])}
        folders["targets"] = targets_folder(folders["beam"], args.work, plan["targets"])
        jobs = [(r["name"], command(r, plan, folders, args.work / "runs" / r["name"])
                 + (flat(plan.get("warm_overrides", [])) if r["name"] in plan.get("warm", []) else []),
                 args.work / "runs" / r["name"]) for r in plan["runs"]]
        warm = [j for j in jobs if j[0] in plan.get("warm", [])]
        failed = runs.execute_all(warm, 1) + runs.execute_all([j for j in jobs if j not in warm], args.jobs)
        if failed:
            print(f"{len(failed)} run(s) failed: {', '.join(failed)}; no report written", file=sys.stderr)
            return 1
    return runs.report(lambda: write_report(plan, args.work / "runs", args.out), args.out, started)


if __name__ == "__main__":
    sys.exit(main())
