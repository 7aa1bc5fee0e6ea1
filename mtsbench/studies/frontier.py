"""The frontier study: each system's recall-work frontier, searched and reported on held-out dialogue.

``python -m mtsbench.studies.frontier --data locomo=locomo10.json --work multirun/frontier --out
experiments/frontier`` (``make frontier LOCOMO=PATH``), following ``frontier_plan.yaml``:

1. imports each data set once into ``WORK/data/NAME`` (kept when already imported from the
   same file with the same flags);
2. runs each system's tuning study (``mtsbench run -m experiment=EXPERIMENT``, a
   ``hydra/sweeper=tune`` study of ``trials`` trials on the tuning half) into ``WORK/NAME``;
   a folder that already holds the study is resumed (``--resume``), so a stopped study goes
   on where it stopped and a finished one costs nothing;
3. runs each study's Pareto-optimal trials on the held-out half
   (``hydra.sweeper.front_of``) into ``WORK/NAME/held_out`` (resumed the same way);
4. writes each study's report (``mtsbench report``: both fronts, the trials, importances)
   into ``OUT/NAME`` and the study's own report into ``OUT`` (``frontier_report``): the fronts
   of every system together, the answer to the study's question, the targets, the budget and
   the wall time. Nothing of the data sets is written to ``OUT``.

A study whose trials failed still counts (its failed trials are reported with their reasons);
a study that did not finish its budget stops the study with the command to resume it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

from .runs import import_variant, mtsbench_exe

PLAN = Path(__file__).with_name("frontier_plan.yaml")


def read_plan(path: Path, keys: tuple[str, ...]) -> dict:
    """A frontier plan at ``path`` with every one of ``keys`` and systems of distinct names."""
    plan = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    missing = [k for k in keys if k not in plan]
    if missing:
        raise SystemExit(f"{path}: no {', '.join(missing)} (expected {', '.join(keys)})")
    names = [s["name"] for s in plan["systems"]]
    if len(set(names)) != len(names):
        raise SystemExit(f"{path}: systems: names repeat")
    return plan


def load_plan(path: Path = PLAN) -> dict:
    """The plan (module docstring), checked for what the study reads."""
    plan = read_plan(path, ("data", "tune", "trials", "systems"))
    if not any(s.get("role") == "design" for s in plan["systems"]) or not any(s.get("role") == "flat" for s in
                                                                               plan["systems"]):
        raise SystemExit(f"{path}: systems: expected one with role design and at least one with role flat")
    return plan


def data_paths(given: list[str]) -> dict[str, Path]:
    """``--data NAME=PATH`` (a bare PATH is LoCoMo's file) as NAME -> PATH.

    >>> data_paths(["locomo10.json", "beam=/tmp/beam"])
    {'locomo': PosixPath('locomo10.json'), 'beam': PosixPath('/tmp/beam')}
    """
    out = {}
    for item in given:
        name, sep, path = item.partition("=")
        out[name if sep else "locomo"] = Path(path if sep else name)
    return out


def import_data(name: str, spec: dict, path: Path, work: Path) -> Path:
    """``mtsbench import FORMAT PATH -o WORK/data/NAME FLAGS``, kept when already imported alike."""
    return import_variant(spec["format"], path, work / "data" / name, [str(f) for f in spec.get("flags") or []])


def halves(plan: dict, folders: dict[str, Path]) -> tuple[list[Path], list[Path]]:
    """The tuning and held-out scenario files of the data sets imported (``folders``)."""
    tune, held = [], []
    for name, folder in folders.items():
        ids = sorted(p.stem for p in folder.glob("*.yaml"))
        chosen = list(plan["tune"].get(name) or [])
        missing = sorted(set(chosen) - set(ids))
        if missing:
            raise SystemExit(f"plan: tune.{name}: no scenario {', '.join(missing)} in {folder}")
        other = (plan.get("held_out") or {}).get(name)
        rest = [i for i in ids if i not in chosen] if other is None else list(other)
        tune += [folder / f"{i}.yaml" for i in chosen]
        held += [folder / f"{i}.yaml" for i in rest]
    if not tune or not held:
        raise SystemExit("plan: the tuning and the held-out halves must each hold a scenario")
    return tune, held


def _scenarios(files: list[Path]) -> str:
    return "scenarios=[" + ",".join(str(f) for f in files) + "]"


def study_command(system: dict, tune: list[Path], trials: int, folder: Path, common: list[str]) -> list[str]:
    """The tuning study's command (a resume when ``folder`` holds it already)."""
    if (folder / "study.json").is_file():
        return [*mtsbench_exe(), "run", "-m", "--resume", str(folder), f"hydra.sweeper.n_trials={trials}"]
    return [*mtsbench_exe(), "run", "-m", f"experiment={system['experiment']}", _scenarios(tune), *common,
            f"hydra.sweeper.n_trials={trials}", f"hydra.sweep.dir={folder}"]


def held_out_command(system: dict, held: list[Path], folder: Path, common: list[str]) -> list[str]:
    """The held-out evaluation's command (a resume when it ran before)."""
    target = folder / "held_out"
    if (target / "study.json").is_file():
        return [*mtsbench_exe(), "run", "-m", "--resume", str(target)]
    return [*mtsbench_exe(), "run", "-m", f"experiment={system['experiment']}", _scenarios(held), *common,
            f"hydra.sweeper.front_of={folder}", f"hydra.sweep.dir={target}"]


def run_step(name: str, cmd: list[str], walls: dict, work: Path) -> None:
    """Run one command (its output into ``WORK/logs``); exit 0 or 1 (a trial failed) go on."""
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with open(logs / f"{name}.log", "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    walls[name] = round(walls.get(name, 0.0) + wall, 1)
    (work / "walls.json").write_text(json.dumps(walls, indent=1))
    print(f"{name}: exit {done.returncode} ({wall:.0f} s; log {logs / (name + '.log')})", flush=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{name} stopped (exit {done.returncode}); see {logs / (name + '.log')}; run the study "
                         f"again to resume it")


def run_system(system: dict, tune: list[Path], held: list[Path], trials: int, work: Path, walls: dict,
               tuning: list[str], held_out: list[str]) -> None:
    """One system's tuning study (overrides ``tuning``) into ``WORK/NAME``, then its front on the
    held-out half (overrides ``held_out``); exits with the command to resume when the study did not
    finish its ``trials``."""
    folder = work / system["name"]
    run_step(f"{system['name']}_tuning", study_command(system, tune, trials, folder, tuning), walls, work)
    if not finished(folder, trials):
        raise SystemExit(f"{system['name']}: the study did not finish its {trials} trials; run the study "
                         f"again to resume it")
    run_step(f"{system['name']}_held_out", held_out_command(system, held, folder, held_out), walls, work)


def finished(folder: Path, trials: int) -> bool:
    """Has the study in ``folder`` told all of its ``trials``?"""
    from ..report.study import load

    s = load(folder)
    return sum(t.state.name in ("COMPLETE", "FAIL") for t in s.tuning.get_trials(deepcopy=False)) >= trials


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.frontier", description=__doc__.split("\n")[0])
    parser.add_argument("--data", action="append", default=[], help="NAME=PATH of a data set of the plan "
                        "(a bare PATH: LoCoMo's locomo10.json); repeatable")
    parser.add_argument("--work", type=Path, default=Path("multirun/frontier"), help="imported data, studies, logs")
    parser.add_argument("--out", type=Path, default=Path("experiments/frontier"), help="reports and figures")
    parser.add_argument("--plan", type=Path, default=PLAN, help="the plan (default: the packaged frontier_plan.yaml)")
    parser.add_argument("--trials", type=int, help="each system's budget (default: the plan's)")
    parser.add_argument("--only", nargs="*", help="run only these systems' studies (the report shows every one run)")
    parser.add_argument("--report-only", action="store_true", help="report from the studies already in --work")
    args = parser.parse_args(argv)
    plan = load_plan(args.plan)
    trials = args.trials or int(plan["trials"])
    given = data_paths(args.data)
    unknown = sorted(set(given) - set(plan["data"]))
    if unknown or not given:
        print(f"--data: expected NAME=PATH for the plan's data sets ({', '.join(plan['data'])}); got "
              f"{', '.join(args.data) or 'none'}", file=sys.stderr)
        return 2
    for name, path in given.items():
        if not path.exists():
            print(f"--data {name}={path}: no such file or folder", file=sys.stderr)
            return 2
    from .frontier_report import write_report

    systems = [s for s in plan["systems"] if not args.only or s["name"] in args.only]
    walls = json.loads((args.work / "walls.json").read_text()) if (args.work / "walls.json").is_file() else {}
    if not args.report_only:
        folders = {name: import_data(name, plan["data"][name], path, args.work) for name, path in given.items()}
        tune, held = halves(plan, folders)
        common = [str(c) for c in plan.get("common") or []]
        for system in systems:
            run_system(system, tune, held, trials, args.work, walls, common, common)
    path = write_report(plan, args.work, args.out, trials, walls)
    print(f"wrote {path} and the figures and per-system reports in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
