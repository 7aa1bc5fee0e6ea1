"""Collects each benchmark's figures into named tables, writes them, and prints a summary.

``record(table, **row)`` adds a row to ``benchmarks/results/<table>.json`` and ``.md``;
``target(name, measured, limit, ratio, met)`` adds a line to the targets table. At the end
of the session ``benchmarks/results/summary.md`` holds the targets first, then every table,
and is printed; a partial run (``-k sweep``) refreshes only what it measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mtsbench.report.markdown import table

TABLES: dict[str, list[dict]] = {}
TARGETS: list[dict] = []
RESULTS = Path(__file__).parent / "results"


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """Benchmarks drive systems directly: limit BLAS as a run does (mtsbench.harness.runner.run)."""
    from mtsbench.harness.runner import one_blas_thread

    with one_blas_thread():
        yield


@pytest.fixture
def record():
    def add(table: str, **row):
        TABLES.setdefault(table, []).append(row)

    return add


@pytest.fixture
def target():
    def add(name: str, measured: str, limit: str, ratio: float | None, met: bool | None):
        """``met=None``: measured and reported, no limit (or not measured: ``measured`` says why)."""
        TARGETS.append({"target": name, "measured": measured, "limit": limit,
                        "ratio": None if ratio is None else round(ratio, 3),
                        "met": "-" if met is None else "yes" if met else "MISSED"})

    return add


def markdown(rows: list[dict]) -> str:
    """The report's markdown table (``mtsbench.report.markdown.table``) of these rows, the
    first row's keys as columns; object dtype keeps an integer column with gaps integral."""
    return table(pd.DataFrame(rows, dtype=object), list(rows[0]))


TABLE_ORDER = ["retrieval", "scale", "floor", "year", "sweep", "locomo"]


def pytest_sessionfinish(session, exitstatus):
    """Write the tables and targets this run measured; a partial run (``-k``) replaces only
    its own tables and targets (by name) and ``summary.md`` is rebuilt from every saved one."""
    if not TABLES and not TARGETS:
        return
    RESULTS.mkdir(exist_ok=True)
    for name, rows in TABLES.items():
        (RESULTS / f"{name}.json").write_text(json.dumps(rows, indent=2) + "\n")
        (RESULTS / f"{name}.md").write_text(markdown(rows) + "\n")
    saved = RESULTS / "targets.json"
    targets = {t["target"]: t for t in (json.loads(saved.read_text()) if saved.exists() else [])}
    targets |= {t["target"]: t for t in TARGETS}
    if targets:
        saved.write_text(json.dumps(list(targets.values()), indent=2) + "\n")
    parts = ["## Targets\n\n" + markdown(list(targets.values()))] if targets else []
    names = sorted((p.stem for p in RESULTS.glob("*.json") if p.stem not in ("targets", "benchmark", "profile")),
                   key=lambda n: (TABLE_ORDER.index(n) if n in TABLE_ORDER else len(TABLE_ORDER), n))
    parts += [f"## {n}\n\n" + markdown(json.loads((RESULTS / f"{n}.json").read_text())) for n in names]
    text = "\n\n".join(parts) + "\n"
    (RESULTS / "summary.md").write_text(text)
    print("\n\n" + text)
