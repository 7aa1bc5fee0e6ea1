"""Sweeps: failed-job records, the sweep's job list, resuming, and the end-of-sweep line
(the local launcher is ``hydra_plugins.mtsbench_launcher``: Hydra loads launchers from there only).

- A job that raises writes ``failure.json`` (the error's type, its one-line message and the
  traceback, all through ``errors.redact``; written atomically, so never empty) into its
  directory; in a sweep it then returns normally, so the other jobs run and
  ``mtsbench report`` shows it as failed. A job whose worker process died is recorded the
  same way by the launcher (``record_failure`` with a ``WorkerDied``).
- The launcher writes ``jobs.json`` into the sweep directory before any job starts: every
  job's number and overrides, so ``mtsbench report`` lists the jobs that never started too.
- One ``mtsbench run`` command's sweep is a ``Sweep``: the folder it resumes, its own folder,
  and its jobs that failed, warned or were not run. The command makes it and runs Hydra
  inside ``running(state)``; Hydra builds the launcher, the sweeper and ``SweepSummary``
  itself, so they find it with ``current()`` (a context variable, reset as the command
  ends: nothing carries over to the next command in the same process).
- ``mtsbench run -m ... --resume DIR`` sets ``Sweep.resume`` to DIR: the launcher then runs only
  the jobs of DIR that are not complete (``job_complete``) and leaves the others as they are.
- ``launcher_ready`` checks, before anything runs, that the launcher a sweep names can run
  here: its plugin installed (else the pip extra to install) and, for SLURM, ``sbatch`` and
  ``srun`` on the PATH (``ConfigError``, one line, exit 2).
- ``SweepSummary`` (a Hydra callback) locks the sweep's folder as the sweep starts (one
  writer per folder: ``mtsbench.outputs.folder_lock``; another process writing there is one line,
  exit 2), and counts the jobs and their expectations passed when the
  sweep ends (naming each job that failed or did not meet an expectation: its number, overrides
  and ``failure.json`` or ``report.md``), and writes the sweep's report into its folder (``mtsbench report DIR``'s); ``mtsbench run -m`` exits 1 if any failed (or was interrupted, or was not run
  because another process held its folder's lock: ``Sweep.busy``), else 3 if any had more failed LLM calls
  than ``llm.max_failure_rate``.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import shutil
import sys
import traceback
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from hydra.experimental.callback import Callback

from ..outputs.atomic import write_atomic
from ..errors import ConfigError, one_line, redact
from ..report.status import FAILURE_FILE, MANIFEST, job_status



@dataclass
class Sweep:
    """One ``mtsbench run`` command's sweep (see the module docstring)."""

    resume: Path | None = None      # `mtsbench run -m --resume DIR`: DIR
    folder: Path | None = None      # the sweep's folder, once the launcher has made it (``begin``)
    failed: list[str] = field(default_factory=list)   # job folders that failed (``SweepSummary``)
    warned: list[str] = field(default_factory=list)   # ... and those above llm.max_failure_rate
    busy: list[str] = field(default_factory=list)     # ... and those not run: their folder's lock held elsewhere
    checked: frozenset = frozenset()  # ``job_key`` of each job composed and checked before Hydra started
    composed: dict = field(default_factory=dict)   # ... their configs by task overrides (``reusable``)
    workers: list = field(default_factory=list)   # lane workers started before Hydra, for the launcher to adopt

    def exit_code(self) -> int:
        """``mtsbench run -m``'s exit code: 1 if a job failed, else 3 if one warned, else 0."""
        return 1 if self.failed else 3 if self.warned else 0


@dataclass(frozen=True)
class Lane:
    """What every job of a sweep shares, kept by a worker of ``hydra/launcher=local`` (sent once)."""

    hydra_context: Any
    config: Any
    task_function: Any
    state: Any                      # Hydra's ``Singleton`` state
    composed: dict = field(default_factory=dict)   # job number -> its config, composed before the jobs started


_RUNNING: ContextVar[Sweep] = ContextVar("mtsbench_sweep")     # set only by ``running``
_LANE: ContextVar[Lane] = ContextVar("mtsbench_lane")          # set only by ``start_lane``, in a worker


@contextmanager
def running(state: Sweep) -> Iterator[Sweep]:
    """While inside (Hydra running ``mtsbench run``'s command line), ``current()`` is ``state``."""
    token = _RUNNING.set(state)
    try:
        yield state
    finally:
        _RUNNING.reset(token)


def job_key(overrides: Sequence[str], common: Sequence[str] = ()) -> tuple[str, ...]:
    """A job told by its overrides, whatever their order, leaving out ``common`` (the
    command line's own Hydra overrides, given to every job): how ``mtsbench run``'s check
    and the grid sweeper (``hydra/sweeper=grid``) name the jobs the check has composed.

    >>> job_key(["seed=1", "hydra.sweep.dir=x", "ablate=tiers"], common=["hydra.sweep.dir=x"])
    ('ablate=tiers', 'seed=1')
    """
    return tuple(sorted(o for o in overrides if o not in common))


def reusable(composed, master, overrides: Sequence[str]) -> bool:
    """Whether ``composed``, a job's config composed by ``mtsbench run``'s check (``Sweep.composed``),
    is the config Hydra composes for the job of ``overrides`` in the sweep of config ``master``
    (``ConfigLoader.load_sweep_config``): composed from the same inputs, as its ``hydra`` node
    records them (the same config and job name, search path and working folder, ``master``'s
    Hydra overrides, then the job's own), so that a launcher may run it without composing it again."""
    mine, theirs = composed.hydra, master.hydra
    return (list(mine.overrides.task) == list(overrides) and list(mine.overrides.hydra) == list(theirs.overrides.hydra)
            and (mine.job.name, mine.job.config_name, mine.runtime.cwd) ==
            (theirs.job.name, theirs.job.config_name, theirs.runtime.cwd)
            and mine.runtime.config_sources == theirs.runtime.config_sources)


def current() -> Sweep:
    """The sweep of the ``mtsbench run`` command running; outside one (Hydra started some
    other way), a new ``Sweep`` nobody reads, as an unresumed sweep."""
    state = _RUNNING.get(None)
    return state if state is not None else Sweep()


def start_lane(lane: Lane) -> None:
    """A worker of ``hydra/launcher=local`` keeps ``lane`` for its jobs (its initializer; the worker
    is its own process, which runs the lane's jobs one after another)."""
    _LANE.set(lane)


def lane() -> Lane:
    """What this worker's jobs share (``start_lane``)."""
    return _LANE.get()


class WorkerDied(Exception):
    """The worker process running a job died (killed, out of memory, a crash in C code)."""


def record_failure(out_dir: Path, e: BaseException) -> Path:
    """Write ``failure.json`` for a job that raised ``e`` (redacted, atomically; an
    ``OutputError`` if it cannot be written)."""
    path = Path(out_dir) / FAILURE_FILE
    body = {"type": type(e).__name__, "error": one_line(e),
            "traceback": redact("".join(traceback.format_exception(e)))}
    write_atomic(path, json.dumps(body, indent=2) + "\n")
    return path


def clear_failure(out_dir: Path) -> None:
    """A job starting (again) in ``out_dir`` drops an earlier run's ``failure.json``."""
    (Path(out_dir) / FAILURE_FILE).unlink(missing_ok=True)


def announce(jobs: list[tuple[int, list[str]]], skip: set[int], where: str, state: Sweep) -> None:
    """The sweep's opening lines on stderr: how many jobs run ``where`` (and, resuming
    ``state``, how many are complete), then one line per job with its overrides."""
    from hydra.core.utils import filter_overrides

    print(f"mtsbench: {len(jobs)} jobs{where}"
          + (f"; resuming: {len(skip)} complete, {len(jobs) - len(skip)} to run" if state.resume else ""),
          file=sys.stderr)
    for num, overrides in jobs:
        print(f"  #{num}: {' '.join(filter_overrides(overrides))}{' (complete)' if num in skip else ''}",
              file=sys.stderr)


def write_manifest(sweep_dir: Path, jobs: list[tuple[int, list[str]]]) -> None:
    """``jobs.json``: every job of the sweep (number and overrides), kept across resumes."""
    path = Path(sweep_dir) / MANIFEST
    known = {}
    if path.is_file():
        try:
            known = {int(j["num"]): j["overrides"] for j in json.loads(path.read_text(encoding="utf-8"))}
        except (ValueError, KeyError, TypeError):
            known = {}
    known.update({num: list(overrides) for num, overrides in jobs})
    write_atomic(path, json.dumps([{"num": n, "overrides": known[n]} for n in sorted(known)], indent=1) + "\n")


def job_complete(job_dir: Path) -> bool:
    """Did the job in ``job_dir`` finish (``summary.json`` with status complete or unreliable, no
    failure)? An unreliable job is not re-run by ``--resume``: the same calls would fail again."""
    return job_status(Path(job_dir)) in ("ok", "unreliable")


def begin(launcher, job_overrides, initial_job_idx: int, state: Sweep, absolute: bool = False):
    """What both of ``hydra_plugins.mtsbench_launcher``'s launchers do first: Hydra's globals and
    logging set up (as Hydra's launchers do), the sweep's folder made (``absolute``: as an
    absolute path) and recorded in ``state.folder``, ``jobs.json`` written. Returns the
    folder and the jobs (number, overrides)."""
    from hydra.core.utils import configure_log, setup_globals

    setup_globals()
    configure_log(launcher.config.hydra.hydra_logging, launcher.config.hydra.verbose)
    sweep_dir = Path(str(launcher.config.hydra.sweep.dir))
    sweep_dir = sweep_dir.absolute() if absolute else sweep_dir
    sweep_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
    state.folder = sweep_dir
    write_manifest(sweep_dir, jobs)
    return sweep_dir, jobs


def job_dir(cfg) -> Path:
    """A job's folder in its composed config (``hydra.sweep.dir`` / ``hydra.sweep.subdir``)."""
    return Path(str(_select(cfg, "hydra.sweep.dir"))) / str(_select(cfg, "hydra.sweep.subdir"))


def finished(job_dir: Path) -> bool:
    """Is the job in ``job_dir`` complete, with no live process writing there (a resumed sweep
    skips it)? A lock left by a killed worker after the job completed is removed."""
    from ..outputs import folder_lock

    if not job_complete(job_dir) or folder_lock.busy(job_dir):
        return False
    if (job_dir / folder_lock.LOCK_FILE).exists():
        try:                    # stale: taken and released, which removes it
            folder_lock.acquire(job_dir, "hydra.sweep.subdir")
            folder_lock.release(job_dir)
        except (OSError, folder_lock.FolderBusy):
            return False
    return True


def returned(overrides: list[str]):
    """The JobReturn of a job that ran elsewhere (or died): complete, returning None — a
    job's own failure is in its directory, as for a job that raised."""
    from hydra.core.utils import JobReturn, JobStatus

    return JobReturn(overrides=list(overrides), status=JobStatus.COMPLETED, _return_value=None)


def worker_died(num: int, overrides: list[str], job_dir: Path, reason: str):
    """Job ``num`` recorded as failed like a job that raised (``failure.json`` with a
    ``WorkerDied``), in one line on stderr; its JobReturn."""
    try:
        record_failure(job_dir, WorkerDied(reason))
    except Exception as e:  # noqa: BLE001 - say so; the sweep goes on
        print(f"mtsbench: job {num}: {one_line(e)}", file=sys.stderr)
    print(f"mtsbench: job {num} failed: {reason}", file=sys.stderr)
    return returned(overrides)


def _expectations(job_dir: Path) -> tuple[int, int]:
    """(passed, judged) expectations of a finished job, from its ``summary.json``."""
    try:
        overall = json.loads((job_dir / "summary.json").read_text(encoding="utf-8"))["overall"]
        return int(overall.get("passed") or 0), int(overall.get("checks") or 0)
    except (OSError, ValueError, KeyError, TypeError):
        return 0, 0


# hydra/launcher options that come from a plugin: (its module, the pip extra that installs it)
PLUGIN_LAUNCHERS = {
    "ray_cluster": ("hydra_plugins.hydra_ray_launcher", "ray", "hydra-ray-launcher"),
    "ray": ("hydra_plugins.hydra_ray_launcher", "ray", "hydra-ray-launcher"),
    "ray_aws": ("hydra_plugins.hydra_ray_launcher", "ray", "hydra-ray-launcher"),
    "slurm": ("hydra_plugins.hydra_submitit_launcher", "slurm", "hydra-submitit-launcher"),
    "submitit_slurm": ("hydra_plugins.hydra_submitit_launcher", "slurm", "hydra-submitit-launcher"),
    "submitit_local": ("hydra_plugins.hydra_submitit_launcher", "slurm", "hydra-submitit-launcher"),
}
BUILTIN_LAUNCHERS = ("basic", "joblib")
SLURM_TARGET = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"


def launcher_choice(argv: Sequence[str]) -> str | None:
    """The ``hydra/launcher=NAME`` of a command line (None: the default).

    >>> launcher_choice(["-m", "seed=0,1", "hydra/launcher=ray_cluster"])
    'ray_cluster'
    >>> launcher_choice(["override hydra/launcher=slurm"]), launcher_choice(["seed=1"])
    ('slurm', None)
    """
    choice = None
    for a in argv:
        key, eq, value = a.partition("=")
        words = key.split()             # "=x" (no key): none, refused in one line by mtsbench.config.overrides
        if eq and words and words[-1].lstrip("+~") == "hydra/launcher":
            choice = value
    return choice


def launcher_ready(argv: Sequence[str], cfg=None, config_dirs: Sequence[str | Path] = ()) -> None:
    """``ConfigError`` (one line) unless the launcher ``argv`` names can run on this machine:
    a known option (packaged, a plugin's or in a ``--config-dir``), its plugin installed,
    and for ``slurm`` (once ``cfg``, the composed config, is given) SLURM's ``sbatch`` and ``srun``."""
    from ..core.resources import CONFIG_DIR

    name = launcher_choice(argv)
    if name is None:
        return
    packaged = sorted(p.stem for p in (Path(CONFIG_DIR) / "hydra" / "launcher").glob("*.yaml"))
    own = [d for d in config_dirs if (Path(d) / "hydra" / "launcher" / f"{name}.yaml").is_file()]
    if name not in packaged and name not in PLUGIN_LAUNCHERS and name not in BUILTIN_LAUNCHERS and not own:
        known = sorted(set(packaged) | {"submitit_local"})
        hint = difflib.get_close_matches(name, known + list(PLUGIN_LAUNCHERS), n=1)
        raise ConfigError(f"hydra/launcher={name}: no such launcher; expected one of {', '.join(known)}"
                          + (f" (did you mean '{hint[0]}'?)" if hint else ""))
    if name in PLUGIN_LAUNCHERS and not own:
        module, extra, dist = PLUGIN_LAUNCHERS[name]
        if importlib.util.find_spec(module) is None:
            raise ConfigError(f"hydra/launcher={name} needs {dist}, which is not installed: "
                              f"pip install \"mtsbench[{extra}]\"")
    target = None if cfg is None else _select(cfg, "hydra.launcher._target_")
    multirun = "-m" in argv or "--multirun" in argv or "MULTIRUN" in str(_select(cfg, "hydra.mode"))
    missing = [c for c in ("sbatch", "srun") if shutil.which(c) is None]
    if target == SLURM_TARGET and multirun and missing:
        raise ConfigError(f"hydra/launcher={name}: no SLURM on this machine ({' and '.join(missing)} not on the PATH); "
                          f"run the sweep from a SLURM login node, or here with hydra/launcher=local "
                          f"(or submitit_local, or ray_cluster)")


def _select(cfg, key: str):
    from omegaconf import OmegaConf

    try:
        return OmegaConf.select(cfg, key, default=None)
    except Exception:  # noqa: BLE001 - an interpolation that cannot resolve here: not a SLURM check
        return None


class SweepSummary(Callback):
    """After a sweep: its report written (``mtsbench report``'s, into the sweep's folder) and
    one line with the jobs' statuses and the report's path."""

    def on_multirun_start(self, config, **kwargs) -> None:
        """The sweep's folder locked before Hydra writes ``multirun.yaml`` there (one writer
        per folder: ``mtsbench.outputs.folder_lock``); another process writing there: one line, exit 2."""
        from ..outputs.folder_lock import acquire

        state = current()
        state.failed.clear()
        state.warned.clear()
        state.busy.clear()
        try:
            note = acquire(Path(str(config.hydra.sweep.dir)), "hydra.sweep.dir")
        except (ConfigError, OSError) as e:
            message = str(e) if isinstance(e, ConfigError) else f"cannot write {config.hydra.sweep.dir}: {e}"
            print(f"mtsbench: {redact(message)}", file=sys.stderr)
            raise SystemExit(2) from None   # not an Exception: Hydra would print it as a traceback
        if note:
            print(f"mtsbench: {redact(note)}", file=sys.stderr)

    def on_multirun_end(self, config, **kwargs) -> None:
        from ..outputs.folder_lock import release

        root = Path(str(config.hydra.sweep.dir))
        release(root)
        state = current()
        busy = {str(Path(d).absolute()) for d in state.busy}
        jobs = sorted((d for d in root.iterdir() if d.is_dir() and d.name.isdigit()), key=lambda d: int(d.name))
        failed = state.failed
        failed[:] = [str(d) for d in jobs if not job_complete(d) or str(d.absolute()) in busy]
        state.warned[:] = [str(d) for d in jobs if str(d) not in failed and job_status(d) == "unreliable"]
        overrides = _manifest(root)
        tail = f"; {len(failed)} failed: " + _named(failed, overrides, lambda d: _why_failed(d, busy)) if failed else ""
        if state.warned:
            tail += (f"; {len(state.warned)} above llm.max_failure_rate: "
                     + ", ".join(Path(d).name for d in state.warned))
        complete = [d for d in jobs if str(d) not in failed]
        counts = {str(d): _expectations(d) for d in complete}
        if counts:
            tail += (f"; {sum(p for p, _ in counts.values())} of {sum(n for _, n in counts.values())} expectations "
                     f"passed" + (f" in the {len(counts)} jobs complete" if failed else ""))
        missed = [str(d) for d in complete if counts[str(d)][0] < counts[str(d)][1]]
        if missed:
            tail += f"; expectations not met in job{'s' if len(missed) > 1 else ''} " + _named(
                missed, overrides, lambda d: f"{counts[str(d)][0]} of {counts[str(d)][1]} passed; {d / 'report.md'}")
        print(f"mtsbench: {len(jobs)} jobs done{tail}; report: {_report(root)}", file=sys.stderr)


NAMED = 5      # jobs the end-of-sweep line names in each list; the report lists every one


def _named(dirs: list[str], overrides: dict[int, list[str]], detail) -> str:
    """``N (OVERRIDES; DETAIL), ...`` for the job folders ``dirs`` (their numbers, their
    overrides from ``jobs.json``, ``detail(folder)``), the first ``NAMED`` of them."""
    shown = [f"{Path(d).name} ({' '.join(overrides.get(int(Path(d).name), [])) or 'no overrides'}; "
             f"{detail(Path(d))})" for d in dirs[:NAMED]]
    return ", ".join(shown) + (f", and {len(dirs) - NAMED} more (see the report)" if len(dirs) > NAMED else "")


def _why_failed(job_dir: Path, busy: set[str]) -> str:
    """Where a failed job says why: its ``failure.json``, else its status (``busy``: the absolute
    folders of the jobs not run because another process held them)."""
    failure = job_dir / FAILURE_FILE
    if failure.is_file():
        return str(failure)
    if str(job_dir.absolute()) in busy:
        return "not run: another process held its folder"
    return job_status(job_dir)


def _manifest(root: Path) -> dict[int, list[str]]:
    """Each job's overrides, from the sweep's ``jobs.json`` ({} if it cannot be read)."""
    try:
        return {int(j["num"]): [str(o) for o in j["overrides"]]
                for j in json.loads((root / MANIFEST).read_text(encoding="utf-8"))}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _report(root: Path) -> str:
    """The sweep's report written into its folder (as ``mtsbench report ROOT`` would): its
    path; if it cannot be written, why, and the command to try again."""
    from ..errors import one_line
    from ..report.parallel import Helper

    try:
        with Helper() as helper:        # started first: its start overlaps the report's imports
            from ..report.aggregate import write

            return str(write(root, helper=helper))
    except Exception as e:  # noqa: BLE001 - the sweep's jobs are done: one line, not a traceback
        return f"not written ({one_line(e)}); mtsbench report {root}"
