"""The Python API for notebooks: ``mtsbench.run`` and ``mtsbench.load``.

``run(overrides=[...], out=None)`` runs the configured scenarios in this process (the same
job as ``mtsbench run``; outputs in ``out``, a new temporary folder by default) and returns
its ``Run``. ``load(path)`` reads a finished run directory as a ``Run`` and a sweep
directory (``multirun/DATE/TIME``) as a ``Sweep``. Both give pandas DataFrames read from
the result files only (nothing re-runs):

- ``Run``: ``probes`` and ``expectations`` (the rows of ``metrics.csv``), ``results`` (the
  records of ``results.parquet``: rankings, scores, costs, state values read), ``trace``
  (``trace.jsonl``), ``timelines``, ``summary`` (``summary.json``) and ``overrides``;
- ``Sweep``: ``jobs`` (a ``Run`` per finished job), ``summary`` (one row per job, failed ones
  included: the table of ``mtsbench report``), and ``probes`` / ``expectations`` /
  ``results`` of every job in one frame, with ``job`` and one column per override key
  (``preset``, ``workload``, ...) so a sweep is one ``groupby`` away from a figure.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from .errors import ReportError


def _split(override: str) -> tuple[str, str]:
    key, _, value = override.partition("=")
    return key.lstrip("+~"), value


@dataclass
class Run:
    """A finished run directory, read lazily."""

    path: Path
    overrides: list[str] = field(default_factory=list)

    @cached_property
    def metrics(self) -> pd.DataFrame:
        return pd.read_csv(self.path / "metrics.csv")

    @property
    def probes(self) -> pd.DataFrame:
        return self.metrics[self.metrics["check"] == "probe"].reset_index(drop=True)

    @property
    def expectations(self) -> pd.DataFrame:
        return self.metrics[~self.metrics["check"].isin(["probe", "llm"])].reset_index(drop=True)   # llm: accounting rows

    @cached_property
    def results(self) -> pd.DataFrame:
        from .results import FILE, load

        return load(self.path / FILE)[0]

    @cached_property
    def trace(self) -> pd.DataFrame:
        return pd.read_json(self.path / "trace.jsonl", lines=True)

    @cached_property
    def timelines(self) -> pd.DataFrame:
        return pd.read_csv(self.path / "timelines.csv")

    @cached_property
    def summary(self) -> dict:
        return json.loads((self.path / "summary.json").read_text(encoding="utf-8"))

    @property
    def pass_rate(self) -> float | None:
        return self.summary["overall"]["pass_rate"]


@dataclass
class Sweep:
    """A sweep directory: its finished jobs and the report's summary table."""

    path: Path
    jobs: list[Run]
    summary: pd.DataFrame

    def _stack(self, name: str) -> pd.DataFrame:
        frames = []
        for number, job in enumerate(self.jobs):
            frame = getattr(job, name).copy()
            frame.insert(0, "job", int(job.path.name) if job.path.name.isdigit() else number)
            for key, value in (_split(o) for o in reversed(job.overrides)):
                if key not in frame.columns:
                    frame.insert(1, key, value)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    @property
    def probes(self) -> pd.DataFrame:
        return self._stack("probes")

    @property
    def expectations(self) -> pd.DataFrame:
        return self._stack("expectations")

    @property
    def results(self) -> pd.DataFrame:
        return self._stack("results")


def load(path) -> Run | Sweep:
    """A run directory as a ``Run``, a sweep directory as a ``Sweep`` (``ReportError`` in one
    line when it is neither)."""
    from .report.jobs import find_jobs, summary_table

    path = Path(path)
    jobs = find_jobs(path)
    if len(jobs) == 1 and jobs[0].dir == path:
        if not jobs[0].ok:
            raise ReportError(f"{path}: the run did not finish: {jobs[0].error}")
        return Run(path, jobs[0].overrides)
    return Sweep(path, [Run(j.dir, j.overrides) for j in jobs if j.ok], summary_table(jobs))


def run(overrides: list[str] | tuple[str, ...] = (), out=None) -> Run:
    """Run the configuration ``overrides`` give (as on the command line) and return its
    ``Run``; outputs go to ``out`` (default: a new temporary folder)."""
    from .config import compose
    from .runner import run as run_config

    cfg, choices = compose(list(overrides))
    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="mtsbench-run-"))
    run_config(cfg, out, choices)
    return Run(out, list(overrides))
