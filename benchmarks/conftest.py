"""Collects each benchmark's figures into named tables, writes them, and prints a summary.

``record(table, **row)`` adds a row to ``benchmarks/results/<table>.json`` and ``.md``
(``table`` one of ``TABLES``); ``target(name, measured, limit, ratio, met)`` adds a line to
the targets table. At the end of the session ``benchmarks/results/summary.md`` holds the
targets first, then each of ``TABLES`` saved, and is printed (``summary``); a partial run
(``-k sweep``) refreshes only what it measured. Other files in ``results/`` (pytest-benchmark's
``benchmark.json``, what ``make profile``'s scripts write) are not read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mtsbench.report.markdown import table

# The bench's own tables (each results/NAME.json a list of rows, written by ``record``), in the summary's order
TABLES = ("retrieval", "scale", "floor", "year", "sweep", "locomo")
RECORDED: dict[str, list[dict]] = {}
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
        if table not in TABLES:
            raise ValueError(f"record: no bench table {table!r}; name it in TABLES (benchmarks/conftest.py)")
        RECORDED.setdefault(table, []).append(row)

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


def summary(results: Path) -> str:
    """``summary.md``'s text from the files saved in ``results``: the targets
    (``targets.json``), then each of ``TABLES`` there, in that order."""
    saved = results / "targets.json"
    targets = json.loads(saved.read_text()) if saved.exists() else []
    parts = ["## Targets\n\n" + markdown(targets)] if targets else []
    parts += [f"## {n}\n\n" + markdown(json.loads((results / f"{n}.json").read_text()))
              for n in TABLES if (results / f"{n}.json").exists()]
    return "\n\n".join(parts) + "\n"


def pytest_sessionfinish(session, exitstatus):
    """Write the tables and targets this run measured; a partial run (``-k``) replaces only
    its own tables and targets (by name) and ``summary.md`` is rebuilt from every saved one.
    A whole run (all of ``benchmarks/``, no ``-k``) replaces the targets: a target renamed or
    removed does not linger."""
    if not RECORDED and not TARGETS:
        return
    RESULTS.mkdir(exist_ok=True)
    for name, rows in RECORDED.items():
        (RESULTS / f"{name}.json").write_text(json.dumps(rows, indent=2) + "\n")
        (RESULTS / f"{name}.md").write_text(markdown(rows) + "\n")
    saved = RESULTS / "targets.json"
    whole = not session.config.option.keyword and all(Path(a).resolve() == RESULTS.parent.resolve()
                                                      for a in session.config.args)
    targets = {t["target"]: t for t in (json.loads(saved.read_text()) if saved.exists() and not whole else [])}
    targets |= {t["target"]: t for t in TARGETS}
    if targets:
        saved.write_text(json.dumps(list(targets.values()), indent=2) + "\n")
    text = summary(RESULTS)
    (RESULTS / "summary.md").write_text(text)
    print("\n\n" + text)
