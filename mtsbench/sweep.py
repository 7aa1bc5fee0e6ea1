"""Sweeps: failed-job records and the end-of-sweep line (the local launcher with its
progress bar is ``hydra_plugins.mtsbench_launcher``: Hydra loads launchers from there only).

A job that raises writes ``failure.json`` (the error's type, its one-line message and the
traceback) into its directory; in a sweep it then returns normally, so the other jobs
run and ``mtsbench report`` shows it as failed. ``SweepSummary`` (a Hydra callback) counts
the failed jobs when the sweep ends and ``mtsbench run -m`` exits 1 if there are any.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from hydra.experimental.callback import Callback

from .errors import one_line
from .report.jobs import FAILURE_FILE

failed_jobs: list[str] = []     # job directories that failed in this process's last sweep


def record_failure(out_dir: Path, e: BaseException) -> Path:
    """Write ``failure.json`` for a job that raised ``e``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FAILURE_FILE
    path.write_text(json.dumps({"type": type(e).__name__, "error": one_line(e),
                                "traceback": "".join(traceback.format_exception(e))}, indent=2) + "\n",
                    encoding="utf-8")
    return path


class SweepSummary(Callback):
    """After a sweep: one line with the failed jobs and the report command."""

    def on_multirun_start(self, config, **kwargs) -> None:
        failed_jobs.clear()

    def on_multirun_end(self, config, **kwargs) -> None:
        root = Path(str(config.hydra.sweep.dir))
        jobs = sorted((d for d in root.iterdir() if d.is_dir() and d.name.isdigit()), key=lambda d: int(d.name))
        failed_jobs[:] = [str(d) for d in jobs if (d / FAILURE_FILE).exists() or not (d / "summary.json").exists()]
        tail = f"; {len(failed_jobs)} failed: " + ", ".join(Path(d).name for d in failed_jobs) if failed_jobs else ""
        print(f"mtsbench: {len(jobs)} jobs done{tail}; report: mtsbench report {root}", file=sys.stderr)
