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
import sys
from pathlib import Path

from . import runs

PLAN = Path(__file__).with_name("locomo_plan.yaml")


def load_plan(path: Path = PLAN, only: list[str] | None = None) -> dict:
    """The plan (module docstring); ``only``: keep these runs and the runs they compare with."""
    return runs.load_plan(path, only)


def import_variants(data: Path, work: Path, variants: dict[str, list[str]]) -> dict[str, Path]:
    """``mtsbench import locomo`` once per variant (kept when already imported from the same file)."""
    return {name: runs.import_variant("locomo", data, work / "data" / name, flags) for name, flags in variants.items()}


def command(run: dict, folders: dict[str, Path], common: list[str], out: Path) -> list[str]:
    """The ``mtsbench run`` command of one planned run."""
    return [*runs.mtsbench_exe(), "run", f"scenarios=[{folders[run['data']]}]", *common, *run["overrides"],
            f"hydra.run.dir={out}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.locomo", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo's locomo10.json")
    parser.add_argument("--work", type=Path, default=Path("multirun/locomo"), help="imported data and raw runs")
    parser.add_argument("--out", type=Path, default=Path("experiments/locomo"), help="report, summary.csv, figures")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("--plan", type=Path, default=PLAN, help="the plan (default: the packaged locomo_plan.yaml)")
    parser.add_argument("--only", nargs="*", help="run only these planned runs (and their bases)")
    parser.add_argument("--corrections", type=Path, help="the locomo-audit project's errors.json: the headline "
                        "is also scored against its corrected evidence citations")
    parser.add_argument("--report-only", action="store_true", help="report from the runs already in --work")
    args = parser.parse_args(argv)
    if args.corrections is not None and not args.corrections.is_file():
        print(f"--corrections {args.corrections}: no such file (the locomo-audit project's errors.json)",
              file=sys.stderr)
        return 2
    if not args.data.is_file():
        print(f"--data {args.data}: no such file (LoCoMo's locomo10.json: see README, Public benchmarks)",
              file=sys.stderr)
        return 2
    from ..errors import ReportError
    from .locomo_report import CORRECTED
    from .locomo_tables import write_report

    plan = load_plan(args.plan, only=args.only)
    corrected = {CORRECTED: ["--corrections", str(args.corrections.resolve())]} if args.corrections else {}
    if args.report_only and corrected:      # re-scoring saved runs needs only the corrected import
        import_variants(args.data, args.work, corrected)
    if not args.report_only:
        folders = import_variants(args.data, args.work, {**plan["data"], **corrected})
        jobs = [(r["name"], command(r, folders, plan.get("common", []), args.work / "runs" / r["name"]),
                 args.work / "runs" / r["name"]) for r in plan["runs"]]
        failed = runs.execute_all(jobs, args.jobs)
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
