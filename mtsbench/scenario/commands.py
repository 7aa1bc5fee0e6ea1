"""``mtsbench validate`` and ``mtsbench scenarios``.

Both take files or folders, print one line per problem to stderr (never a traceback) and
return 0 when every file is valid, 2 otherwise (argparse's own usage errors also give 2).
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from pathlib import Path

from .catalog import describe, resolve
from .loader import ScenarioError, load_scenario
from .model import Scenario

COLUMNS = ("id", "title", "language", "tags", "steps", "days")


def validate_main(argv: list[str]) -> int:
    """Check each file (folders: their *.yaml/*.yml): ``ok  PATH (N steps)`` or its one-line error."""
    parser = argparse.ArgumentParser(prog="mtsbench validate", description="Check scenario files.")
    parser.add_argument("files", nargs="+", metavar="FILE", help="scenario files or folders")
    ns = _parse(parser, argv)
    if isinstance(ns, int):
        return ns
    bad = 0
    for item in ns.files:
        for loaded in load_each(item):
            if isinstance(loaded, str):
                print(loaded, file=sys.stderr)
                bad += 1
            else:
                print(f"ok  {loaded.path} ({len(loaded.steps)} steps)")
    return 2 if bad else 0


def scenarios_main(argv: list[str]) -> int:
    """List scenarios (the bundled ones, or the given files/folders) as an aligned table."""
    parser = argparse.ArgumentParser(prog="mtsbench scenarios", description="List scenarios.")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the bundled scenarios)")
    ns = _parse(parser, argv)
    if isinstance(ns, int):
        return ns
    rows, bad = [], 0
    for item in ns.paths or [None]:
        for loaded in load_each(item):
            if isinstance(loaded, str):
                print(loaded, file=sys.stderr)
                bad += 1
            else:
                rows.append(describe(loaded))
    if rows:
        print(table(rows))
    return 2 if bad else 0


def problems(items: list[str]) -> list[str]:
    """Every problem line of every scenario file ``items`` name (files or folders): [] when all
    load. ``mtsbench check`` lists them all, as ``validate`` does, instead of the first alone."""
    return [line for item in items for line in load_each(item) if isinstance(line, str)]


def table(rows: list[dict]) -> str:
    """Rows of ``describe`` as text columns aligned for a terminal (CJK counts double)."""
    cells = [list(COLUMNS)] + [[",".join(v) if isinstance(v, list) else str(v) for v in
                                (r[c] for c in COLUMNS)] for r in rows]
    widths = [max(_width(line[i]) for line in cells) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(_pad(t, w) for t, w in zip(line, widths)).rstrip() for line in cells)


def _parse(parser: argparse.ArgumentParser, argv: list[str]):
    try:
        return parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2


def load_each(item: str | None) -> list[Scenario | str]:
    """The scenarios ``item`` names (None: every bundled one), each loaded or its error lines
    (one per problem, every file's: what ``mtsbench validate`` and a failed ``check`` list)."""
    try:
        paths = resolve([] if item is None else [item])
    except ScenarioError as e:
        return [str(e)]
    out: list[Scenario | str] = []
    for p in paths:
        try:
            out.append(load_scenario(p))
        except ScenarioError as e:
            out.extend(e.problems)      # one line per problem
        except Exception as e:  # noqa: BLE001 - a loader bug still gets one line, not a traceback
            out.append(f"{Path(p)}: cannot be validated ({type(e).__name__}: {' '.join(str(e).split())})")
    return out


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
