"""Collects each benchmark's measured figures and prints them as one table at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROWS: list[dict] = []
RESULTS = Path(__file__).parent / "results"


@pytest.fixture
def record():
    def add(**row):
        ROWS.append(row)

    return add


def pytest_sessionfinish(session, exitstatus):
    if not ROWS:
        return
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "retrieval.json").write_text(json.dumps(ROWS, indent=2) + "\n")
    cols = list(ROWS[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in ROWS]
    table = "\n".join(lines)
    (RESULTS / "retrieval.md").write_text(table + "\n")
    print("\n\n" + table)
