"""Sweeps: failed-job records, the sweep's job list, resuming, and the end-of-sweep line
(the local launcher is ``hydra_plugins.mtsbench_launcher``: Hydra loads launchers from there only).

- A job that raises writes ``failure.json`` (the error's type, its one-line message and the
  traceback, all through ``errors.redact``; written atomically, so never empty) into its
  directory; in a sweep it then returns normally, so the other jobs run and
  ``mtsbench report`` shows it as failed. A job whose worker process died is recorded the
  same way by the launcher (``record_failure`` with a ``WorkerDied``).
- The launcher writes ``jobs.json`` into the sweep directory before any job starts: every
  job's number and overrides, so ``mtsbench report`` lists the jobs that never started too.
- ``mtsbench run -m ... --resume DIR`` sets ``resume`` to DIR: the launcher then runs only
  the jobs of DIR that are not complete (``job_complete``) and leaves the others as they are.
- ``SweepSummary`` (a Hydra callback) counts the jobs when the sweep ends; ``mtsbench run
  -m`` exits 1 if any failed (or was interrupted), else 3 if any had more failed LLM calls
  than ``llm.max_failure_rate``.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from hydra.experimental.callback import Callback

from .atomic import write_atomic
from .errors import one_line, redact
from .report.jobs import FAILURE_FILE, MANIFEST, job_status

failed_jobs: list[str] = []     # job directories that failed in this process's last sweep
warned_jobs: list[str] = []     # ... and those above llm.max_failure_rate
resume: Path | None = None      # set by `mtsbench run -m --resume DIR`
last_sweep_dir: Path | None = None   # the directory of this process's last sweep (set by the launcher)


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
    """Did the job in ``job_dir`` finish (``summary.json`` with status complete, no failure)?"""
    return job_status(Path(job_dir)) == "ok"


def _too_many_failures(job_dir: Path) -> bool:
    try:
        summary = json.loads((job_dir / "summary.json").read_text(encoding="utf-8"))
        return bool(summary["overall"].get("llm_failure_rate_exceeded"))
    except (OSError, ValueError, KeyError, TypeError):
        return False


class SweepSummary(Callback):
    """After a sweep: one line with the jobs' statuses and the report command."""

    def on_multirun_start(self, config, **kwargs) -> None:
        failed_jobs.clear()
        warned_jobs.clear()

    def on_multirun_end(self, config, **kwargs) -> None:
        root = Path(str(config.hydra.sweep.dir))
        jobs = sorted((d for d in root.iterdir() if d.is_dir() and d.name.isdigit()), key=lambda d: int(d.name))
        failed_jobs[:] = [str(d) for d in jobs if job_status(d) != "ok"]
        warned_jobs[:] = [str(d) for d in jobs if str(d) not in failed_jobs and _too_many_failures(d)]
        tail = f"; {len(failed_jobs)} failed: " + ", ".join(Path(d).name for d in failed_jobs) if failed_jobs else ""
        if warned_jobs:
            tail += (f"; {len(warned_jobs)} above llm.max_failure_rate: "
                     + ", ".join(Path(d).name for d in warned_jobs))
        print(f"mtsbench: {len(jobs)} jobs done{tail}; report: mtsbench report {root}", file=sys.stderr)
