"""A run directory written scenario by scenario, so an interrupted run keeps what it did.

``RunWriter(out_dir, meta, planned)`` starts a run (``planned``: the scenario ids, in
order). ``add(run)`` is called as each scenario finishes: its trace and timeline rows are
appended to ``trace.jsonl.partial`` and ``timelines.csv.partial``, ``results.parquet`` is
rewritten with every scenario done so far (``status: running`` in its metadata) and
``summary.json`` says ``running`` with the scenarios done. ``finish(status)`` ends the
run: the streams are renamed to ``trace.jsonl`` and ``timelines.csv``, ``results.parquet``
gets its final ``status`` (``complete``, ``interrupted`` or ``failed``; ``stopped`` says
why) and the metrics, ``report.md`` and ``summary.json`` (last) are computed from it.

Every file is written atomically (``mtsbench.atomic``). If a write fails (``OutputError``:
a full disk, an unwritable place) nothing is renamed into place after it: the directory
keeps the last consistent state, whose ``summary.json`` says ``running`` (or a run that
could mark itself says ``failed``), never a complete-looking summary beside a truncated
trace. A process killed outright (SIGKILL) leaves the last checkpoint: ``results.parquet``
and ``summary.json`` (``running``) of the scenarios done, and the ``.partial`` streams.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from . import results
from .atomic import append_lines, finish_stream, write_atomic
from .timelines import COLUMNS as TIMELINE_COLUMNS

STATUSES = ("complete", "interrupted", "failed")
STREAMS = ("trace.jsonl", "timelines.csv")


class RunWriter:
    """Streams a run's scenarios into ``out_dir`` (see the module docstring)."""

    def __init__(self, out_dir: Path, meta: dict, planned: list[str]):
        self.out_dir = Path(out_dir)
        self.meta = {**meta, "scenarios": {}}
        self.scenario_meta = dict(meta.get("scenarios") or {})
        self.planned = list(planned)
        self.runs: list = []
        self.records: list[dict] = []
        self.broken = False           # a write failed: nothing more is put in place
        for name in STREAMS:          # a re-run in the same directory starts its streams afresh
            (self.out_dir / f"{name}.partial").unlink(missing_ok=True)

    def _partial(self, name: str) -> Path:
        return self.out_dir / f"{name}.partial"

    def add(self, run, info: dict | None = None) -> None:
        """A scenario finished: stream it and checkpoint (``info``: its entry of the
        results' ``scenarios`` metadata; default: the one given at the start)."""
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            append_lines(self._partial("trace.jsonl"),
                         (json.dumps(e, ensure_ascii=False, default=results._json) + "\n" for e in run.trace))
            header = not self._partial("timelines.csv").exists()
            append_lines(self._partial("timelines.csv"),
                         [pd.DataFrame(run.timeline, columns=TIMELINE_COLUMNS).to_csv(index=False, header=header)])
            self.runs.append(run)
            self.records += run.records
            sid = run.scenario.id
            self.meta["scenarios"][sid] = info if info is not None else self.scenario_meta[sid]
            self._save("running")
        except BaseException:
            self.broken = True
            raise

    def _save(self, status: str, stopped: dict | None = None) -> None:
        done = list(self.meta["scenarios"])
        meta = {**self.meta, "status": status, "scenarios_done": done, "scenarios_planned": self.planned}
        if stopped:
            meta["stopped"] = stopped
        results.save(self.out_dir / results.FILE, self.records, meta)
        if status == "running":
            write_atomic(self.out_dir / "summary.json", json.dumps(
                {"status": "running", "scenarios_done": done, "scenarios_planned": self.planned}, indent=2) + "\n")

    def finish(self, status: str, stopped: dict | None = None) -> pd.DataFrame | None:
        """End the run with ``status``; returns the metrics table (None if a write had
        failed before: then only ``summary.json`` is marked, if it can be)."""
        from .outputs import evaluate_dir

        assert status in STATUSES, status
        if self.broken:
            self.mark(status, stopped)
            return None
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._save(status, stopped)
            for name in STREAMS:
                finish_stream(self._partial(name), self.out_dir / name)
            return evaluate_dir(self.out_dir, {r.scenario.id: r.scenario for r in self.runs})
        except BaseException as e:
            self.broken = True
            self.mark("failed" if status == "complete" else status, stopped or {"error": type(e).__name__})
            raise

    def mark(self, status: str, stopped: dict | None = None) -> None:
        """Best effort after a failed write: ``summary.json`` says ``status`` and what was
        done, without metrics (a second failure leaves the previous, ``running``, one)."""
        done = list(self.meta["scenarios"])
        body = {"status": status, "scenarios_done": done, "scenarios_planned": self.planned,
                "stopped": stopped or {}, "outputs": "incomplete: a write failed"}
        try:
            write_atomic(self.out_dir / "summary.json", json.dumps(body, indent=2) + "\n")
        except Exception:  # noqa: BLE001 - the directory cannot be written at all: nothing to mark
            pass
