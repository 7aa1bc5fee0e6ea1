"""A run directory written scenario by scenario, so an interrupted run keeps what it did.

``RunWriter(out_dir, meta, planned)`` starts a run (``planned``: the scenario ids, in
order). While a scenario runs, ``stream(scenario, name, rows)`` takes its trace events or
timeline rows in chunks (the runner hands over ``runner.CHUNK_ROWS`` at a time, so a long
scenario is never held whole in memory): each chunk is written at once as a hidden part
(``.00000-00000.parquet``: readers skip names starting with a dot). ``add(run)`` is called
as each scenario finishes: its hidden parts are revealed (renamed without the dot) and
what it still holds is written as its last part, into the folders
``trace.parquet.partial/`` and ``timelines.parquet.partial/`` (``SSSSS-CCCCC.parquet``:
scenario, then chunk, in order), ``results.parquet`` is rewritten with every scenario done
so far (``status: running`` in its metadata) and ``summary.json`` says ``running`` with
the scenarios done. ``finish(status)`` ends the run: each stream's parts become one file,
``trace.parquet`` and ``timelines.parquet`` (one row group per part, ``ROW_GROUP_ROWS``
rows at most: a scenario of fewer than ``CHUNK_ROWS`` rows is one row group; a single part
is renamed, several are joined by a ``ParquetWriter`` into a temporary file then renamed)
and the ``.partial`` folders are removed, with them the hidden parts of a scenario that
did not finish; ``results.parquet`` gets its final
``status`` (``complete``, ``interrupted`` or ``failed``; ``stopped`` says why). The writer
only writes: the metrics, ``report.md`` and ``summary.json`` (last) are computed from what it
wrote by the caller (``mtsbench.harness.finish.finish_run``), which marks the run through
``mark`` if that fails.

Every file is written atomically (``mtsbench.outputs.atomic``). If a write fails (``OutputError``:
a full disk, an unwritable place) nothing is renamed into place after it: the directory
keeps the last consistent state, whose ``summary.json`` says ``running`` (or a run that
could mark itself says ``failed``), never a complete-looking summary beside a truncated
trace. A process killed outright (SIGKILL) leaves the last checkpoint: ``results.parquet``
and ``summary.json`` (``running``) of the scenarios done, and the ``.partial`` folders, each
part a complete parquet file: ``pandas.read_parquet("DIR/trace.parquet.partial")`` reads
the finished scenarios' trace (a kill while ``add`` reveals a scenario's parts, a rename
each, can leave some of them revealed before the checkpoint names the scenario).

The files (both read by ``pandas.read_parquet(path)`` in one call; ``read_trace`` and
``read_timelines`` also read a run directory written before parquet, ``trace.jsonl`` and
``timelines.csv``):

- ``trace.parquet`` (``TRACE_SCHEMA``): one row per memory event, in order: ``scenario``,
  ``t`` (simulated seconds), ``event`` (created, scored, moved, ...) and ``fields``, the
  event's other fields as a JSON object (``{"id": 3, "kind": "say", "tier": 0}``). Events
  differ in their fields and a field's type differs between events (``belief`` is a number
  in an impression, a pair in a merge), so they are kept as JSON text rather than one
  column per field; ``read_trace(dir)`` (and ``mtsbench.load(dir).trace``) expands them
  into one column per field, as the JSONL trace read with ``pandas.read_json`` gave;
- ``timelines.parquet`` (``TIMELINE_SCHEMA``): ``scenario, index, step, memory, t, long,
  short, tier`` (``mtsbench.outputs.timelines``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import results
from .atomic import write_atomic
from ..errors import OutputError
from .timelines import COLUMNS as TIMELINE_COLUMNS

STATUSES = ("complete", "interrupted", "failed")
TRACE, TIMELINES = "trace.parquet", "timelines.parquet"
STREAMS = (TRACE, TIMELINES)
OLD_FILES = {TRACE: "trace.jsonl", TIMELINES: "timelines.csv"}     # what runs wrote before parquet
TRACE_COLUMNS = ["scenario", "t", "event"]                         # the fixed columns; the rest: fields
TRACE_SCHEMA = pa.schema([("scenario", pa.string()), ("t", pa.float64()), ("event", pa.string()),
                          ("fields", pa.string())])
TIMELINE_SCHEMA = pa.schema([("scenario", pa.string()), ("index", pa.int64()), ("step", pa.string()),
                             ("memory", pa.string()), ("t", pa.float64()), ("long", pa.float64()),
                             ("short", pa.float64()), ("tier", pa.int64())])
SCHEMAS = {TRACE: TRACE_SCHEMA, TIMELINES: TIMELINE_SCHEMA}
ROW_GROUP_ROWS = 262_144        # a scenario with more rows is split into row groups of this many
COMPRESSION = "zstd"
assert TIMELINE_SCHEMA.names == TIMELINE_COLUMNS


def trace_table(events: list[dict], scenario: str | None = None) -> pa.Table:
    """The events as a ``TRACE_SCHEMA`` table: ``scenario``, ``t`` and ``event`` as columns
    (when they are a string, a number and a string), every other field in ``fields`` (JSON);
    an event without a ``scenario`` field is of ``scenario``.

    >>> trace_table([{"t": 1, "event": "created", "id": 3, "steps": ["a"]}], "s").to_pylist()
    [{'scenario': 's', 't': 1.0, 'event': 'created', 'fields': '{"id":3,"steps":["a"]}'}]
    """
    columns: dict[str, list] = {"scenario": [], "t": [], "event": [], "fields": []}
    for e in events:
        rest = dict(e)
        sid, t, event = rest.pop("scenario", scenario), rest.pop("t", None), rest.pop("event", None)
        if sid is not None and not isinstance(sid, str):
            rest["scenario"], sid = sid, None
        if event is not None and not isinstance(event, str):
            rest["event"], event = event, None
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
            rest["t"], t = t, None
        columns["scenario"].append(sid)
        columns["t"].append(None if t is None else float(t))
        columns["event"].append(event)
        columns["fields"].append(json.dumps(rest, ensure_ascii=False, separators=(",", ":"), default=results._json))
    return pa.table(columns, schema=TRACE_SCHEMA)


def timelines_table(rows: list[dict]) -> pa.Table:
    """Timeline rows (dicts with ``TIMELINE_COLUMNS``) as a ``TIMELINE_SCHEMA`` table."""
    return pa.table({c: [r.get(c) for r in rows] for c in TIMELINE_COLUMNS}, schema=TIMELINE_SCHEMA)


def _parquet_bytes(tables, schema: pa.Schema) -> bytes:
    """``tables`` (an iterable of tables of ``schema``) as one parquet file, a row group per
    table (split at ``ROW_GROUP_ROWS``); a file with no rows still has the schema."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, schema, compression=COMPRESSION) as writer:
        for table in tables:
            if table.num_rows:
                writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
    return sink.getvalue().to_pybytes()


def _parts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.parquet") if not p.name.startswith(".")) if folder.is_dir() else []


def join_parts(folder: Path, path: Path, schema: pa.Schema) -> None:
    """Put the parts in ``folder`` (``NNNNN.parquet``, in order) into place as the one file
    ``path`` and remove ``folder``: one part is renamed, several are joined row group by
    row group (one part in memory at a time), none gives a file with ``schema`` and no rows.
    ``OutputError`` (one line) if it cannot be written; ``path`` is then left as it was."""
    parts = _parts(folder)
    try:
        if len(parts) == 1:
            os.replace(parts[0], path)
        else:
            def tables():
                for part in parts:
                    f = pq.ParquetFile(part)
                    for i in range(f.num_row_groups):
                        yield f.read_row_group(i)
            write_atomic(path, _parquet_bytes(tables(), schema))
        shutil.rmtree(folder, ignore_errors=True)
    except OSError as e:
        raise OutputError(path, e) from None


class RunWriter:
    """Streams a run's scenarios into ``out_dir`` (see the module docstring)."""

    def __init__(self, out_dir: Path, meta: dict, planned: list[str]):
        self.out_dir = Path(out_dir)
        self.meta = {**meta, "scenarios": {}}
        self.scenario_meta = dict(meta.get("scenarios") or {})
        self.planned = list(planned)
        self.done: list = []          # the finished scenarios (their Scenario objects)
        self.chunks: dict[str, int] = dict.fromkeys(STREAMS, 0)   # hidden parts of the running scenario
        self.records: list[dict] = []
        self.broken = False           # a write failed: nothing more is put in place
        for name in STREAMS:          # a re-run in the same directory starts its streams afresh
            shutil.rmtree(self._partial(name), ignore_errors=True)
            (self.out_dir / f"{OLD_FILES[name]}.partial").unlink(missing_ok=True)

    def _partial(self, name: str) -> Path:
        return self.out_dir / f"{name}.partial"

    def _part(self, name: str, chunk: int, hidden: bool) -> Path:
        return self._partial(name) / f"{'.' if hidden else ''}{len(self.done):05d}-{chunk:05d}.parquet"

    def stream(self, scenario: str, name: str, rows: list[dict]) -> None:
        """A chunk of the running scenario's ``name`` stream (``TRACE``: events, ``TIMELINES``:
        rows), written now as a hidden part."""
        try:
            table = trace_table(rows, scenario) if name == TRACE else timelines_table(rows)
            write_atomic(self._part(name, self.chunks[name], hidden=True), _parquet_bytes([table], SCHEMAS[name]))
            self.chunks[name] += 1
        except BaseException:
            self.broken = True
            raise

    def add(self, run, info: dict | None = None) -> None:
        """A scenario finished: reveal its streamed parts, write the rest as its last part and
        checkpoint (``info``: its entry of the results' ``scenarios`` metadata; default: the
        one given at the start)."""
        try:
            sid = run.scenario.id
            for name, table in ((TRACE, trace_table(run.trace, sid)), (TIMELINES, timelines_table(run.timeline))):
                streamed = self.chunks[name]
                for chunk in range(streamed):
                    shown = self._part(name, chunk, hidden=False)
                    try:
                        os.replace(self._part(name, chunk, hidden=True), shown)
                    except OSError as e:
                        raise OutputError(shown, e) from None
                write_atomic(self._part(name, streamed, hidden=False), _parquet_bytes([table], SCHEMAS[name]))
            self.chunks = dict.fromkeys(STREAMS, 0)
            self.done.append(run.scenario)
            self.records += run.records
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

    def finish(self, status: str, stopped: dict | None = None) -> dict | None:
        """End the run with ``status``: the results get their final status and the streams
        become one file each. Returns the scenarios written (id -> scenario, for the
        evaluation), or None if a write had failed before: then only ``summary.json`` is
        marked, if it can be."""
        assert status in STATUSES, status
        if self.broken:
            self.mark(status, stopped)
            return None
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self._save(status, stopped)
            for name in STREAMS:
                join_parts(self._partial(name), self.out_dir / name, SCHEMAS[name])
            return {sc.id: sc for sc in self.done}
        except BaseException as e:
            self.fail(status, stopped, e)
            raise

    def fail(self, status: str, stopped: dict | None, error: BaseException) -> None:
        """Writing or evaluating the run failed with ``error``: mark it (``failed`` if it was
        to be ``complete``)."""
        self.broken = True
        self.mark("failed" if status == "complete" else status, stopped or {"error": type(error).__name__})

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


# -- reading ---------------------------------------------------------------------------------

def expand_fields(trace: pd.DataFrame) -> pd.DataFrame:
    """A ``trace.parquet`` frame with its ``fields`` (JSON) expanded into one column per field
    (missing: NaN; lists stay lists), after ``scenario``, ``t`` and ``event``.

    >>> raw = pd.DataFrame({"scenario": ["s", "s"], "t": [0.0, 1.0], "event": ["created", "moved"],
    ...                     "fields": ['{"id": 1, "tier": 0}', '{"ids": [1], "to": [2]}']})
    >>> expand_fields(raw).to_dict("list")
    {'scenario': ['s', 's'], 't': [0.0, 1.0], 'event': ['created', 'moved'], 'id': [1.0, nan], 'tier': [0.0, nan], 'ids': [nan, [1]], 'to': [nan, [2]]}
    """
    if "fields" not in trace.columns:
        return trace
    extra = pd.DataFrame.from_records([json.loads(f) if f else {} for f in trace["fields"]], index=trace.index)
    base = trace.drop(columns="fields")
    extra = extra[[c for c in extra.columns if c not in base.columns]]
    return pd.concat([base, extra], axis=1)


def read_trace(run_dir, expand: bool = True, events=None) -> pd.DataFrame | None:
    """A run directory's trace (``trace.parquet``, else a ``trace.jsonl`` written before),
    None without either; ``events``: only these event kinds; ``expand``: one column per
    field (``expand_fields``), else the file's ``fields`` column as it is."""
    run_dir = Path(run_dir)
    if (run_dir / TRACE).is_file():
        filters = [("event", "in", list(events))] if events else None
        frame = pd.read_parquet(run_dir / TRACE, filters=filters)
        return expand_fields(frame) if expand else frame
    old = run_dir / OLD_FILES[TRACE]
    if not old.is_file():
        return None
    with open(old, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if events:
        rows = [r for r in rows if r.get("event") in set(events)]
    frame = pd.DataFrame.from_records(rows)
    if expand:
        return frame
    table = trace_table(rows)
    return table.to_pandas()


def trace_events(run_dir) -> list[dict]:
    """A run directory's trace as event dicts, in order, each as the system emitted it
    (``scenario``, ``t``, ``event``, then its fields: what a line of ``trace.jsonl`` held);
    [] without a trace."""
    run_dir = Path(run_dir)
    if not (run_dir / TRACE).is_file():
        old = run_dir / OLD_FILES[TRACE]
        return [json.loads(line) for line in old.read_text(encoding="utf-8").splitlines()] if old.is_file() else []
    return [{**{k: row[k] for k in TRACE_COLUMNS if row[k] is not None}, **json.loads(row["fields"])}
            for row in pq.read_table(run_dir / TRACE).to_pylist()]


def read_timelines(run_dir) -> pd.DataFrame | None:
    """A run directory's timelines (``timelines.parquet``, else a ``timelines.csv`` written
    before), None without either."""
    run_dir = Path(run_dir)
    if (run_dir / TIMELINES).is_file():
        return pd.read_parquet(run_dir / TIMELINES)
    old = run_dir / OLD_FILES[TIMELINES]
    return pd.read_csv(old) if old.is_file() else None
