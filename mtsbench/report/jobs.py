"""The jobs of a run or sweep directory, read from their result files only.

A run directory (``outputs/DATE/TIME/``) is one job; a sweep directory
(``multirun/DATE/TIME/`` with ``multirun.yaml``) holds one numbered directory per job, and
``jobs.json`` (written by the launcher before any job starts) lists every job of the sweep.
A job's status (``job_status``, the ``status`` column of ``summary.csv``):

- ``ok``: ``summary.json`` says ``complete`` (or has no status: written before statuses);
- ``unreliable``: it finished, but more of its LLM calls failed than ``llm.max_failure_rate``
  allows (``summary.json`` says ``unreliable`` and why): reported as a failed job is (no
  numbers; its row says why), and named at the top of the sweep's report;
- ``failed``: it left ``failure.json`` (it raised, or its worker process died) or its
  ``summary.json`` says ``failed``;
- ``interrupted``: its ``summary.json`` says ``interrupted`` (SIGINT/SIGTERM; the scenarios
  done are kept) or ``running``, or it has no ``summary.json`` (stopped before any scenario
  finished, or killed outright);
- ``never started``: in ``jobs.json`` but without a directory.

Every job gets its row, so the others report. A job that says ``complete`` but whose
``results.parquet``, ``trace.parquet`` or ``timelines.parquet`` cannot be read (a truncated
copy, a disk that filled afterwards) is not reported at all: ``find_jobs`` raises
``ReportError`` naming the file (``mtsbench report`` and ``mtsbench calibrate``: one line,
exit 2), since numbers read around it would look complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ..errors import ReportError
from ..evaluation.evaluate import PROVENANCE
from .status import FAILURE_FILE, MANIFEST, _read_json, job_status
SUMMARY_COLUMNS = ["job", "config", "status", "error", "checks", "passed", "pass_rate", "recall", PROVENANCE, "hit_rate",
                   "probes", "scored", "scored_total", "cost_total", "cost_per_turn", "llm_calls", "tokens",
                   "latency_p50_ms", "latency_p95_ms",
                   "overrides"]


@dataclass
class Job:
    dir: Path
    num: int
    overrides: list[str] = field(default_factory=list)
    summary: dict | None = None
    error: str | None = None
    label: str = ""
    status: str = "ok"

    @property
    def ok(self) -> bool:
        return self.summary is not None and self.error is None

    def read_csv(self, name: str) -> pd.DataFrame | None:
        path = self.dir / name
        return pd.read_csv(path) if self.ok and path.is_file() else None


def is_run(d: Path) -> bool:
    return any((d / name).exists() for name in ("summary.json", FAILURE_FILE, ".hydra", "metrics.csv"))


def _how_far(summary: dict | None) -> str:
    if not isinstance(summary, dict) or "scenarios_planned" not in summary:
        return ""
    stopped = summary.get("stopped") or {}
    why = f" by {stopped['signal']}" if stopped.get("signal") else ""
    return f"{why} after {len(summary.get('scenarios_done', []))} of {len(summary['scenarios_planned'])} scenarios"


def read_job(d: Path, num: int, overrides: list[str] | None = None) -> Job:
    overrides_file = d / ".hydra" / "overrides.yaml"
    if overrides_file.is_file():
        overrides = [str(o) for o in (yaml.safe_load(overrides_file.read_text()) or [])]
    job = Job(d, num, list(overrides or []), status=job_status(d))
    summary = _read_json(d / "summary.json") if (d / "summary.json").is_file() else None
    if job.status == "never started":
        job.error = "never started"
    elif (d / FAILURE_FILE).is_file():
        failure = _read_json(d / FAILURE_FILE)
        job.error = (failure.get("error") if isinstance(failure, dict) else None) or "failed (unreadable failure.json)"
    elif summary is None:
        job.error = ("summary.json is not valid JSON" if (d / "summary.json").is_file()
                     else "no summary.json: the job was stopped or killed before a scenario finished")
    elif job.status == "unreliable":
        job.error = f"unreliable: {summary.get('unreliable')}"
    elif job.status != "ok":
        job.error = f"{summary.get('status')}{_how_far(summary)}"
    else:
        check_tables(d)
        job.summary = summary
    return job


TABLES = ("results.parquet", "trace.parquet", "timelines.parquet")


def check_tables(d: Path) -> None:
    """``ReportError`` (one line, naming the file) if one of the parquet files of complete
    job ``d`` is there but cannot be read: its footer (the schema and where every row group
    lies, at the file's end) is read, which a truncated file has lost."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for name in TABLES:
        path = d / name
        if not path.exists():
            continue
        try:
            pq.read_metadata(path)
        except (OSError, ValueError, pa.ArrowException) as e:
            reason = (str(e).splitlines() or [type(e).__name__])[0]
            raise ReportError(f"{path}: damaged, not a readable parquet file ({reason}), though summary.json "
                              f"says the run is complete; re-run it") from None


def manifest(d: Path) -> dict[int, list[str]]:
    """The jobs ``jobs.json`` of sweep directory ``d`` lists: number -> overrides ({} if none)."""
    listed = _read_json(d / MANIFEST) if (d / MANIFEST).is_file() else None
    try:
        return {int(j["num"]): [str(o) for o in j["overrides"]] for j in listed or []}
    except (KeyError, TypeError, ValueError):
        return {}


def find_jobs(d: Path) -> list[Job]:
    """The jobs of run or sweep directory ``d``, each with a ``label`` naming its config:
    the overrides that differ between the jobs (all of them for a single run)."""
    d = Path(d)
    if not d.is_dir():
        raise ReportError(f"{d}: no such directory")
    if is_run(d):
        jobs = [read_job(d, 0)]
    else:
        listed = manifest(d)
        nums = sorted({int(p.name) for p in d.iterdir() if p.is_dir() and p.name.isdigit()} | set(listed))
        if not nums:
            raise ReportError(f"{d}: not a run directory (summary.json) nor a sweep directory (numbered job folders)")
        jobs = [read_job(d / str(n), n, listed.get(n)) for n in nums]
    common = set.intersection(*(set(j.overrides) for j in jobs)) if len(jobs) > 1 else set()
    for j in jobs:
        own = [o for o in j.overrides if o not in common]
        j.label = " ".join(own) or ("defaults" if len(jobs) == 1 else f"job {j.num}")
    return jobs


def percentile(values: pd.Series, q: float) -> float | None:
    """The q-th percentile of the numbers in ``values``, None if there are none.

    >>> percentile(pd.Series([1.0, 2.0, 3.0, 4.0]), 50), percentile(pd.Series([], dtype=float), 95)
    (2.5, None)
    """
    v = pd.to_numeric(values, errors="coerce").dropna()
    return None if v.empty else round(float(np.percentile(v, q)), 3)


def summary_row(job: Job) -> dict:
    """One job's row of summary.csv."""
    row = {"job": job.num, "config": job.label, "status": job.status, "error": job.error,
           "overrides": " ".join(job.overrides)}
    if not job.ok:
        return row
    overall = job.summary["overall"]
    row |= {k: overall.get(k) for k in ("checks", "passed", "pass_rate", "recall", PROVENANCE, "hit_rate", "probes",
                                         "scored", "scored_total", "llm_calls", "tokens", "unsupported")}
    if stale(job):          # evaluated before recall meant earned credit: its figure was by provenance
        row |= {PROVENANCE: overall.get("recall"), "recall": None, "hit_rate": None}
    cost = (job.summary.get("cost") or {}).get("overall") or {}
    row["cost_total"], row["cost_per_turn"] = cost.get("total"), cost.get("per_turn")
    metrics = job.read_csv("metrics.csv")
    probes = metrics[metrics["check"] == "probe"] if metrics is not None else pd.DataFrame({"latency_ms": []})
    row["latency_p50_ms"] = percentile(probes["latency_ms"], 50)
    row["latency_p95_ms"] = percentile(probes["latency_ms"], 95)
    return row


def stale(job: Job) -> bool:
    """Whether finished ``job`` was evaluated before ``recall`` meant earned credit (its
    summary.json has no ``recall_provenance@k``): its recall was by provenance alone."""
    return job.ok and PROVENANCE not in (job.summary.get("overall") or {})


def credit_lines(jobs: list[Job]) -> list[str]:
    """One line per finished job that cannot give earned recall, and why: evaluated by an
    earlier mtsbench (``mtsbench evaluate DIR`` recomputes it), or a system that shows no
    memory texts; [] when every job gives it."""
    lines = []
    for j in jobs:
        overall = (j.summary or {}).get("overall") or {}
        if stale(j):
            lines.append(f"- job {j.num} (`{j.label}`): evaluated before recall meant earned credit, so its recall "
                         f"columns are empty and its old figure is `{PROVENANCE}`; `mtsbench evaluate {j.dir}` "
                         "recomputes them from its saved results.")
        elif j.ok and overall.get("recall") is None and overall.get("no_earned_credit"):
            lines.append(f"- job {j.num} (`{j.label}`): no earned recall: {overall['no_earned_credit']}.")
    return ["**Recall without earned credit:**", "", *lines, ""] if lines else []


def summary_table(jobs: list[Job]) -> pd.DataFrame:
    """summary.csv: a row per job (failed jobs included, their numbers empty)."""
    rows = [summary_row(j) for j in jobs]
    # a system without some state (system=bm25) has unsupported expectations: shown beside checks
    unsupported = any(r.get("unsupported") for r in rows)
    columns = SUMMARY_COLUMNS[:5] + ["unsupported"] + SUMMARY_COLUMNS[5:] if unsupported else SUMMARY_COLUMNS
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({c: "Int64" for c in ("checks", "passed", "probes", "scored_total", "cost_total", "llm_calls",
                                              "tokens")})


def pass_matrix(jobs: list[Job]) -> pd.DataFrame:
    """Configuration x scenario: 'passed/checks' per cell, 'failed' across a failed job's row."""
    scenarios = sorted({s for j in jobs if j.ok for s in j.summary["scenarios"]})
    rows = {}
    for j in jobs:
        if j.ok:
            per = j.summary["scenarios"]
            rows[j.label] = {s: f"{per[s]['passed']}/{per[s]['checks']}" if s in per and per[s]["checks"] else ""
                             for s in scenarios}     # '': no expectation (imported data: probes only)
        else:
            rows[j.label] = {s: "failed" for s in scenarios}
    return pd.DataFrame.from_dict(rows, orient="index", columns=scenarios)
