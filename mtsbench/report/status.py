"""A job directory's status (``job_status``) and the names of the files it is read from:
what a sweep needs while it runs (``mtsbench.harness.sweep``), without the reports' pandas. The
statuses are described in ``mtsbench.report.jobs``."""

from __future__ import annotations

import json
from pathlib import Path

FAILURE_FILE = "failure.json"
MANIFEST = "jobs.json"


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def job_status(d: Path) -> str:
    """``ok``, ``unreliable``, ``failed``, ``interrupted`` or ``never started`` (see
    ``mtsbench.report.jobs``)."""
    if not d.is_dir():
        return "never started"
    if (d / FAILURE_FILE).is_file():
        return "failed"
    summary = _read_json(d / "summary.json") if (d / "summary.json").is_file() else None
    if not isinstance(summary, dict):
        return "failed" if (d / "summary.json").is_file() else "interrupted"
    status = summary.get("status", "complete")
    return {"complete": "ok", "failed": "failed", "unreliable": "unreliable"}.get(status, "interrupted")
