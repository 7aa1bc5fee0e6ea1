"""The Python API for notebooks: ``mtsbench.run`` and ``mtsbench.load``.

``run(overrides=[...], out=None)`` runs the configured scenarios in this process (the same
job as ``mtsbench run``; outputs in ``out``, kept there) and returns its ``Run``; without
``out`` the outputs go to a temporary folder, read into the ``Run`` and removed (give ``out``
to keep them). ``run_sweep(overrides=[...], out=None)`` (or ``run(..., multirun=True)``) runs a
sweep as ``mtsbench run -m`` does, in a child process, and returns its ``Sweep``. ``load(path)`` reads a finished run directory as a ``Run`` and a sweep
directory (``multirun/DATE/TIME``) as a ``Sweep``. Both give pandas DataFrames read from
the result files only (nothing re-runs):

- ``Run``: ``probes`` and ``expectations`` (the rows of ``metrics.csv``), ``results`` (the
  records of ``results.parquet``: rankings, scores, costs, state values read), ``trace``
  (``trace.parquet``, its JSON ``fields`` expanded into one column per field), ``timelines``
  (``timelines.parquet``), ``summary`` (``summary.json``) and ``overrides``;
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


FLAGS = ("passed", "hit", "abstain")      # metrics.csv's True / False / empty columns


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (metrics.csv's rows) with its whole-number columns as ``Int64`` and its flags
    as ``boolean``.

    >>> f = typed(pd.DataFrame({"index": [3.0, None], "passed": [True, None], "scored": [2.0, 1.0]}))
    >>> [str(t) for t in f.dtypes]
    ['Int64', 'boolean', 'Int64']
    """
    from .report.aggregate import COUNTS

    frame = frame.copy()
    for column in FLAGS:
        if column in frame and str(frame[column].dtype) != "boolean":
            frame[column] = frame[column].map({True: True, False: False, "True": True, "False": False},
                                              na_action="ignore").astype("boolean")
    for column in ("index", *COUNTS):
        if column in frame:
            values = pd.to_numeric(frame[column], errors="coerce")
            whole = values.dropna()
            if values.notna().sum() == frame[column].notna().sum() and (whole == whole.round()).all():
                frame[column] = values.astype("Int64")
    return frame


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
        """``metrics.csv`` with nullable dtypes: ``passed``, ``hit`` and ``abstain`` boolean,
        ``index`` and the counts ``Int64`` (an empty cell is ``<NA>``, not a float NaN)."""
        return typed(pd.read_csv(self.path / "metrics.csv", dtype={c: "boolean" for c in FLAGS}))

    @property
    def probes(self) -> pd.DataFrame:
        return self.metrics[self.metrics["check"] == "probe"].reset_index(drop=True)

    @property
    def expectations(self) -> pd.DataFrame:
        return self.metrics[~self.metrics["check"].isin(["probe", "llm"])].reset_index(drop=True)   # llm: accounting rows

    @cached_property
    def results(self) -> pd.DataFrame:
        from .outputs.results import FILE, load

        return load(self.path / FILE)[0]

    @cached_property
    def trace(self) -> pd.DataFrame:
        """Every memory event of ``trace.parquet``: ``scenario``, ``t``, ``event`` and one
        column per field of the events (``mtsbench.outputs.stream.expand_fields``); empty if none."""
        from .outputs.stream import read_trace

        frame = read_trace(self.path)
        return frame if frame is not None else pd.DataFrame(columns=["scenario", "t", "event"])

    @cached_property
    def timelines(self) -> pd.DataFrame:
        """``timelines.parquet``: scenario, index, step, memory, t, long, short, tier."""
        from .outputs.stream import read_timelines
        from .outputs.timelines import COLUMNS

        frame = read_timelines(self.path)
        return frame if frame is not None else pd.DataFrame(columns=COLUMNS)

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


def run(overrides: list[str] | tuple[str, ...] = (), out=None, config_dir=None,
        multirun: bool = False) -> Run | Sweep:
    """Run the configuration ``overrides`` give (as on the command line) and return its
    ``Run``; outputs go to ``out`` and stay there; without it they go to a temporary folder
    that is removed once the ``Run`` has read them (its ``path`` then no longer exists). ``config_dir``: a
    folder of your own configs, or a list of them, searched before the packaged ones (as
    ``mtsbench run --config-dir DIR``: new options, and files replacing packaged ones).
    ``multirun=True``: the sweep the overrides describe, returned as a ``Sweep`` (``run_sweep``)."""
    from .config.composition import compose
    from .harness.runner import run as run_config

    if multirun:
        return run_sweep(overrides, out, config_dir)
    dirs = _dirs(config_dir)
    cfg, choices = compose(list(overrides), dirs)
    if out is not None:
        run_config(cfg, Path(out), choices)
        return Run(Path(out), list(overrides))
    with tempfile.TemporaryDirectory(prefix="mtsbench-run-") as folder:
        run_config(cfg, Path(folder), choices)
        return _read_all(Run(Path(folder), list(overrides)))


def _dirs(config_dir) -> list:
    return [] if config_dir is None else [config_dir] if isinstance(config_dir, (str, Path)) else list(config_dir)


def run_sweep(overrides: list[str] | tuple[str, ...] = (), out=None, config_dir=None) -> Sweep:
    """Run the sweep ``overrides`` describe (as ``mtsbench run -m OVERRIDES``: ``preset=mts,flat_rag``
    sweeps two values, ``experiment=ablation`` an experiment's sweep) and return it as a
    ``Sweep``, its report written into its folder as at a sweep's end. The sweep runs as that
    command in a child process (Hydra's multirun owns its process: logging, launchers, working
    folder); ``out`` is its folder (``hydra.sweep.dir``), kept; without it a temporary folder,
    removed once the ``Sweep`` has read every job (a job's ``path`` then no longer exists).

    A configuration error raises ``ConfigError`` with the command's one line; failed jobs do
    not raise: they are the ``Sweep.summary`` rows whose ``status`` is not ``ok``. Interrupting
    this call (Ctrl-C, a notebook's stop) interrupts the sweep, which keeps what it did."""
    if out is not None:
        return load(_sweep_into(Path(out), list(overrides), _dirs(config_dir)))
    with tempfile.TemporaryDirectory(prefix="mtsbench-sweep-") as folder:
        done = load(_sweep_into(Path(folder) / "sweep", list(overrides), _dirs(config_dir)))
        for job in done.jobs:
            _read_all(job)
        return done


def _sweep_into(folder: Path, overrides: list[str], dirs: list) -> Path:
    """``mtsbench run -m OVERRIDES hydra.sweep.dir=FOLDER`` in a child process; ``folder``.
    Exit 2 raises ``ConfigError`` (its line), a signal ``KeyboardInterrupt``; 1 (a job failed)
    and 3 (too many LLM calls failed) return: the sweep's summary says which."""
    import signal
    import subprocess
    import sys

    from .errors import ConfigError

    folder = folder.absolute()
    args = [a for d in dirs for a in ("--config-dir", str(Path(d).absolute()))]
    args += [o for o in overrides if o not in ("-m", "--multirun") and not o.startswith("hydra.sweep.dir=")]
    command = [sys.executable, "-m", "mtsbench.cli", "run", "-m", *args, f"hydra.sweep.dir={folder}"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = child.communicate()
    except KeyboardInterrupt:            # stop the sweep as Ctrl-C would; it keeps what it did
        child.send_signal(signal.SIGINT)
        child.communicate()
        raise
    last = next((line for line in reversed(err.splitlines()) if line.strip()), "")
    if child.returncode == 2:
        raise ConfigError(last.removeprefix("mtsbench: ") or f"mtsbench run -m {' '.join(args)}: exit 2")
    if child.returncode in (130, 143):
        raise KeyboardInterrupt(last)
    if child.returncode not in (0, 1, 3):
        raise RuntimeError(f"mtsbench run -m exited {child.returncode}: {last}")
    return folder


def _read_all(run: Run) -> Run:
    """``run`` with every table read into memory (its folder is about to go)."""
    for name in ("metrics", "results", "trace", "timelines", "summary"):
        getattr(run, name)
    return run
