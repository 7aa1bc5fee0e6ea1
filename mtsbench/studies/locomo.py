"""The LoCoMo study: import the data set's variants, run the plan, report from saved results.

``python -m mtsbench.studies.locomo --data locomo10.json --work multirun/locomo --out
experiments/locomo`` (``make locomo LOCOMO=PATH``) imports the file once per data variant
of ``locomo_plan.yaml`` into ``WORK/data/VARIANT``, runs every planned configuration with
``mtsbench run`` into ``WORK/runs/NAME`` (``--jobs`` at a time; a run whose folder already
holds a complete summary for the same command by the same code is kept, so a stopped study
resumes), then
writes ``OUT/report.md``, ``OUT/summary.csv`` and the figures from the saved results only
(``mtsbench.studies.locomo_report``). Nothing of the data set is written to ``OUT``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

PLAN = Path(__file__).with_name("locomo_plan.yaml")


def load_plan(path: Path = PLAN, only: list[str] | None = None) -> dict:
    """The plan (module docstring); ``only``: keep these runs and the runs they compare with."""
    plan = yaml.safe_load(path.read_text(encoding="utf-8"))
    names = [r["name"] for r in plan["runs"]]
    if len(set(names)) != len(names):
        raise SystemExit(f"{path}: runs: names repeat")
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise SystemExit(f"--only: no run named {', '.join(unknown)} in {path}")
        keep = set(only) | {r.get("base") for r in plan["runs"] if r["name"] in only} - {None}
        plan["runs"] = [r for r in plan["runs"] if r["name"] in keep]
    return plan


def mtsbench_exe() -> list[str]:
    """The ``mtsbench`` command of this interpreter's environment."""
    exe = Path(sys.executable).with_name("mtsbench")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mtsbench"]


def import_variants(data: Path, work: Path, variants: dict[str, list[str]]) -> dict[str, Path]:
    """``mtsbench import locomo`` once per variant (kept when already imported from the same file)."""
    out = {}
    for name, flags in variants.items():
        folder = work / "data" / name
        stamp = folder / ".imported"
        key = json.dumps({"file": str(data.resolve()), "size": data.stat().st_size, "flags": flags})
        if not (stamp.exists() and stamp.read_text() == key):
            shutil.rmtree(folder, ignore_errors=True)
            done = subprocess.run([*mtsbench_exe(), "import", "locomo", str(data), "-o", str(folder), *flags],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"mtsbench import locomo {data} {' '.join(flags)}: {done.stderr.strip()}")
            stamp.write_text(key)
        out[name] = folder
    return out


def command(run: dict, folders: dict[str, Path], common: list[str], out: Path) -> list[str]:
    """The ``mtsbench run`` command of one planned run."""
    return [*mtsbench_exe(), "run", f"scenarios=[{folders[run['data']]}]", *common, *run["overrides"],
            f"hydra.run.dir={out}"]


def code_hash() -> str:
    """A digest of the installed package's Python files and configs (the studies' own code aside:
    a report change re-runs nothing): a kept run must come from this code."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".yaml")
                       and not {"__pycache__", "studies"} & set(p.relative_to(root).parts)):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def execute(run: dict, cmd: list[str], out: Path, code: str = "") -> tuple[str, float, str]:
    """Run one configuration unless ``out`` holds a complete run of the same command by the
    same code (``code_hash``); returns (name, wall seconds, status)."""
    stamp = out / ".study-command.json"
    summary = out / "summary.json"
    if stamp.exists() and summary.exists() and json.loads(stamp.read_text()) == [code, *cmd[1:]] \
            and json.loads(summary.read_text()).get("status") == "complete":
        return run["name"], json.loads((out / ".study-wall.json").read_text()), "kept"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0,):
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        return run["name"], wall, f"failed (exit {done.returncode}): {last[0]}"
    out.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps([code, *cmd[1:]]))
    (out / ".study-wall.json").write_text(json.dumps(round(wall, 1)))
    return run["name"], wall, "ran"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.locomo", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo's locomo10.json")
    parser.add_argument("--work", type=Path, default=Path("multirun/locomo"), help="imported data and raw runs")
    parser.add_argument("--out", type=Path, default=Path("experiments/locomo"), help="report, summary.csv, figures")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("--plan", type=Path, default=PLAN, help="the plan (default: the packaged locomo_plan.yaml)")
    parser.add_argument("--only", nargs="*", help="run only these planned runs (and their bases)")
    parser.add_argument("--report-only", action="store_true", help="report from the runs already in --work")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"--data {args.data}: no such file (LoCoMo's locomo10.json: see README, Public benchmarks)",
              file=sys.stderr)
        return 2
    from ..errors import ReportError
    from .locomo_tables import write_report

    plan = load_plan(args.plan, only=args.only)
    if not args.report_only:
        folders = import_variants(args.data, args.work, plan["data"])
        code = code_hash()
        jobs = [(r, command(r, folders, plan.get("common", []), args.work / "runs" / r["name"]),
                 args.work / "runs" / r["name"], code) for r in plan["runs"]]
        failed = []
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for name, wall, status in pool.map(lambda j: execute(*j), jobs):
                print(f"{name}: {status} ({wall:.0f} s)", flush=True)
                if status.startswith("failed"):
                    failed.append(name)
        if failed:
            print(f"{len(failed)} run(s) failed: {', '.join(failed)}; no report written", file=sys.stderr)
            return 1
    try:
        write_report(plan, args.work / "runs", args.out)
    except ReportError as e:
        print(f"mtsbench: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out / 'report.md'}, {args.out / 'summary.csv'} and figures in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
