"""The ``mtsbench`` command: run, check, validate, scenarios, report, import.

Every error the user can cause is printed as one line on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from pathlib import Path

from .errors import ConfigError, ReportError, user_error

USAGE = """usage: mtsbench COMMAND [ARGS]

commands:
  run [overrides]             one Hydra job (add -m for a sweep); outputs in the job directory
  check [FILES|DIRS] [overrides] [--out DIR]
                              run scenarios, exit 1 on any failed expectation
  validate FILES...           check scenario files, one line per problem
  scenarios [FILES|DIRS]      list scenarios
  generate [--days N ...] [--out FILE|DIR]
                              write a long-horizon scenario generated from a seed
  report DIR [--out OUT]      summary.csv, figures and report.md of a run or sweep directory
  evaluate DIR                recompute a finished run's (or sweep's) metrics from its results.parquet
  import FORMAT FILE -o DIR   turn a benchmark file into scenario files (formats: mtsbench import -h)"""


def _fail(message: str, code: int = 2) -> int:
    print(f"mtsbench: {message}", file=sys.stderr)
    return code


def run_main(argv: list[str]) -> int:
    from .config import check_run

    try:   # every job's config composed and checked before Hydra launches anything
        check_run(argv)
    except ConfigError as e:
        return _fail(str(e))
    from .hydra_app import app
    from .sweep import failed_jobs

    sys.argv = ["mtsbench", *argv]
    try:
        app()
    except SystemExit as e:
        return int(e.code or 0)
    return 1 if failed_jobs else 0


def split_check_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(paths, overrides): an argument with '=' that is not an existing path is an override.

    >>> split_check_args(["scenarios/", "attention=common_sense"])
    (['scenarios/'], ['attention=common_sense'])
    """
    paths, overrides = [], []
    for a in argv:
        (overrides if "=" in a and not Path(a).exists() else paths).append(a)
    return paths, overrides


def check_main(argv: list[str]) -> int:
    from .config import compose, overrides_set_scenarios
    from .report.markdown import failures, passed_line, table
    from .runner import run

    parser = argparse.ArgumentParser(prog="mtsbench check", description="Run scenarios with the reference "
                                     "configuration (plus overrides); exit 1 if any expectation fails.")
    parser.add_argument("args", nargs="*", help="scenario files or folders, and Hydra overrides")
    parser.add_argument("--out", help="keep the run's outputs in this folder (default: a temporary one)")
    parser.add_argument("--config-dir", "-cd", action="append", default=[], metavar="DIR",
                        help="a config folder of your own, searched beside the packaged configs (repeatable)")
    ns = parser.parse_args(argv)
    paths, overrides = split_check_args(ns.args)
    try:
        cfg, choices = compose(overrides, ns.config_dir)
        if paths or not overrides_set_scenarios(overrides):   # files named here win over scenarios=...
            cfg.scenarios = paths
        out = Path(ns.out) if ns.out else Path(tempfile.mkdtemp(prefix="mtsbench-check-"))
        frame = run(cfg, out, choices, progress=True)
    except Exception as e:  # Hydra's own errors are multi-line: keep their first line
        return _fail(user_error(e) or f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    failed = failures(frame)
    print(f"{passed_line(frame)} in {frame['scenario'].nunique()} scenarios; outputs in {out}")
    if len(failed):
        print(table(failed, ["scenario", "index", "step", "check", "value", "expected"]))
        return 1
    return 0


def report_main(argv: list[str]) -> int:
    from .report.aggregate import describe, write

    parser = argparse.ArgumentParser(prog="mtsbench report", description="summary.csv, figures and report.md of "
                                     "a run directory or a sweep directory (multirun/DATE/TIME).")
    parser.add_argument("dir")
    parser.add_argument("--out", help="write the report here (default: DIR itself)")
    ns = parser.parse_args(argv)
    try:
        path = write(Path(ns.dir), Path(ns.out) if ns.out else None)
    except ReportError as e:
        return _fail(str(e))
    print(describe(path))
    return 0


def evaluate_main(argv: list[str]) -> int:
    from .outputs import evaluate_runs

    parser = argparse.ArgumentParser(prog="mtsbench evaluate", description="Recompute metrics.csv, summary.json "
                                     "and report.md of a finished run (or of every job of a sweep) from its "
                                     "results.parquet and its scenarios, without re-running it.")
    parser.add_argument("dir")
    ns = parser.parse_args(argv)
    try:
        runs = evaluate_runs(Path(ns.dir))
    except Exception as e:
        return _fail(user_error(e) or f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
    print(f"evaluated {len(runs)} run{'s' if len(runs) != 1 else ''}: " + ", ".join(str(r) for r in runs[:5])
          + (" ..." if len(runs) > 5 else ""))
    return 0


def _validate(argv):
    from .scenario.commands import validate_main

    return validate_main(argv)


def _scenarios(argv):
    from .scenario.commands import scenarios_main

    return scenarios_main(argv)


def _import(argv):
    from .scenario.importers.command import import_main

    return import_main(argv)


def _generate(argv):
    from .scenario.generate import generate_main

    return generate_main(argv)


COMMANDS = {"run": run_main, "check": check_main, "validate": _validate, "scenarios": _scenarios,
            "report": report_main, "evaluate": evaluate_main, "import": _import, "generate": _generate}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        hint = difflib.get_close_matches(name, list(COMMANDS), n=1)
        return _fail(f"unknown command '{name}'" + (f"; did you mean '{hint[0]}'?" if hint else "") +
                     " (see mtsbench --help)")
    return COMMANDS[name](rest)


if __name__ == "__main__":
    sys.exit(main())
