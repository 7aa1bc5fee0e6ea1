"""What the figures read from a job's saved results, each file read once.

- ``metrics``: ``metrics.csv`` (one evaluated before earned credit headlined recall, without a
  ``recall_provenance@k`` column, read as it would be now: its provenance figure moved to that
  column, its ``recall`` and ``hit`` empty: ``current``); ``timelines``: ``timelines.parquet`` (or the
  ``timelines.csv`` of a run written before parquet);
- ``tier_sizes``: members per tier over time, replayed from the memory events of
  ``trace.parquet`` (or an older ``trace.jsonl``): created with its tier, moved, dropped;
- ``meta``: the metadata of ``results.parquet`` (config, choices, each scenario's file);
- ``steps``: a scenario file's steps (time and text), to title a memory by its text and
  place probes and checks in time. Scenario files above ``MAX_SCENARIO_BYTES`` (a generated
  year) are not parsed: their memories are titled by step id.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..evaluation.evaluate import PROVENANCE
from .jobs import Job

MAX_SCENARIO_BYTES = 2_000_000


@lru_cache(maxsize=256)
def _csv(path: str) -> pd.DataFrame:
    return current(pd.read_csv(path, low_memory=False))


def current(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (a metrics.csv) with ``recall`` meaning earned credit: a table evaluated before
    that (no ``recall_provenance@k`` column; its ``recall`` and ``hit`` were by provenance) gets
    them moved under that name and its ``recall`` and ``hit`` emptied (``mtsbench evaluate DIR``
    recomputes them).

    >>> old = current(pd.DataFrame({"check": ["probe"], "recall": [0.5], "hit": [False]}))
    >>> old["recall_provenance@k"].tolist(), bool(old["recall"].isna().all()), bool(old["hit"].isna().all())
    ([0.5], True, True)
    """
    if "recall" not in frame or PROVENANCE in frame:
        return frame
    return frame.assign(**{PROVENANCE: frame["recall"], "recall": float("nan"), "hit": pd.NA})


def metrics(job: Job) -> pd.DataFrame | None:
    """The job's metrics.csv (None for a failed job or a missing file)."""
    path = job.dir / "metrics.csv"
    return _csv(str(path)) if job.ok and path.is_file() else None


@lru_cache(maxsize=256)
def _timelines(d: str) -> pd.DataFrame | None:
    from ..outputs.stream import read_timelines

    return read_timelines(d)


def timelines(job: Job) -> pd.DataFrame | None:
    """The job's timelines (``timelines.parquet``, or a ``timelines.csv`` written before),
    None if it has none."""
    frame = _timelines(str(job.dir)) if job.ok else None
    return frame if frame is not None and len(frame) else None


TIER_EVENTS = ("created", "moved", "dropped")


def tier_events(path: Path) -> list[dict]:
    """The trace's created, moved and dropped events, in order (``trace.parquet``, or a
    ``trace.jsonl`` written before; only these events' fields are decoded)."""
    from ..outputs.stream import read_trace

    trace = read_trace(path, expand=False, events=TIER_EVENTS)
    if trace is None or trace.empty:
        return []
    return [{"scenario": s, "t": t, "event": e, **json.loads(f)}
            for s, t, e, f in zip(trace["scenario"], trace["t"], trace["event"], trace["fields"])]


def occupancy(events: list[dict]) -> pd.DataFrame:
    """scenario, t, sizes (members per tier) after the last event at each time, replayed
    from created (with its tier), moved (ids, to) and dropped events.

    >>> occupancy([{"scenario": "s", "t": 0, "event": "created", "id": 1, "tier": 0},
    ...            {"scenario": "s", "t": 0, "event": "created", "id": 2, "tier": 0},
    ...            {"scenario": "s", "t": 5, "event": "moved", "ids": [1], "to": [2]},
    ...            {"scenario": "s", "t": 9, "event": "dropped", "id": 2}])["sizes"].tolist()
    [[2], [1, 0, 1], [0, 0, 1]]
    """
    tiers: dict[str, dict] = {}
    counts: dict[str, dict[int, int]] = {}
    rows: dict[tuple[str, float], list[int]] = {}
    for e in events:
        s = e["scenario"]
        cur, n = tiers.setdefault(s, {}), counts.setdefault(s, {})
        changes = {"created": lambda: [(e["id"], int(e.get("tier", 0)))], "dropped": lambda: [(e["id"], None)],
                   "moved": lambda: [(i, int(t)) for i, t in zip(e["ids"], e["to"])]}[e["event"]]()
        for memory, tier in changes:
            if memory in cur:
                n[cur[memory]] -= 1
            if tier is None:
                cur.pop(memory, None)
            else:
                cur[memory] = tier
                n[tier] = n.get(tier, 0) + 1
        rows[(s, float(e["t"]))] = [n.get(i, 0) for i in range(max(n, default=-1) + 1)]
    return pd.DataFrame([{"scenario": s, "t": t, "sizes": v} for (s, t), v in rows.items()],
                        columns=["scenario", "t", "sizes"])


@lru_cache(maxsize=256)
def _tier_sizes(d: str) -> pd.DataFrame:
    return occupancy(tier_events(Path(d)))


def tier_sizes(job: Job) -> pd.DataFrame:
    """scenario, t, sizes (members per tier, top first) over the job's simulated time."""
    return _tier_sizes(str(job.dir)) if job.ok else pd.DataFrame(columns=["scenario", "t", "sizes"])


@lru_cache(maxsize=256)
def _meta(path: str) -> dict:
    """results.parquet's ``mtsbench`` metadata, read from the schema alone."""
    import pyarrow.parquet as pq

    try:
        raw = (pq.read_schema(path).metadata or {}).get(b"mtsbench")
        return json.loads(raw) if raw else {}
    except (OSError, ValueError):
        return {}


def meta(job: Job) -> dict:
    """The metadata of the job's results.parquet ({} without one)."""
    path = job.dir / "results.parquet"
    return _meta(str(path)) if job.ok and path.is_file() else {}


def scenario_path(job: Job, scenario: str) -> str | None:
    """The file of ``scenario`` the job ran (from results.parquet's metadata), None if unknown."""
    return ((meta(job).get("scenarios") or {}).get(scenario) or {}).get("path")


@lru_cache(maxsize=64)
def _steps(path: str) -> dict[str, dict]:
    """Steps of a scenario file by id ({} if it is too large or cannot be read)."""
    from ..scenario.loader import load_scenario

    try:
        if Path(path).stat().st_size > MAX_SCENARIO_BYTES:
            return {}
        scenario = load_scenario(path)
    except Exception:       # a moved or edited scenario file: titles fall back to step ids
        return {}
    return {s.id: {"at": s.at, "text": s.text, "kind": s.kind, "index": s.index} for s in scenario.steps}


def steps(job: Job, scenario: str) -> dict[str, dict]:
    """Step id -> at (seconds from the start), text, kind, index, from the scenario file
    the job ran ({} when it cannot be read)."""
    path = scenario_path(job, scenario)
    return _steps(path) if path else {}


def cutoffs(job: Job) -> list[float]:
    """The attention cut-offs between tiers of the job's tier policy ([] for a policy
    without fixed cut-offs)."""
    config = meta(job).get("config") or {}
    tiers = (config.get("system") or {}).get("tiers") or config.get("tiers") or {}
    values = tiers.get("cutoffs") if isinstance(tiers, dict) else None
    return [float(v) for v in values] if isinstance(values, list) else []
