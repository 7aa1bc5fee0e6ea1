"""``mtsbench validate`` and ``mtsbench scenarios``."""

from __future__ import annotations

import argparse
import sys
import unicodedata

from .catalog import describe, resolve
from .loader import ScenarioError, load_scenario


def validate_main(argv: list[str]) -> int:
    """Validate files or folders: ``ok PATH (N steps)`` or the one-line error; exit 2 on any error."""
    parser = argparse.ArgumentParser(prog="mtsbench validate", description="Check scenario files.")
    parser.add_argument("files", nargs="+", help="scenario files or folders")
    ns = parser.parse_args(argv)
    bad = 0
    for item in ns.files:
        try:
            paths = resolve([item])
        except ScenarioError as e:
            print(e, file=sys.stderr)
            bad += 1
            continue
        for p in paths:
            try:
                s = load_scenario(p)
            except ScenarioError as e:
                print(e, file=sys.stderr)
                bad += 1
            else:
                print(f"ok  {p} ({len(s.steps)} steps)")
    return 2 if bad else 0


def scenarios_main(argv: list[str]) -> int:
    """List scenarios (bundled, or the given files/folders) as an aligned table."""
    parser = argparse.ArgumentParser(prog="mtsbench scenarios", description="List scenarios.")
    parser.add_argument("paths", nargs="*", help="files or folders (default: the bundled scenarios)")
    ns = parser.parse_args(argv)
    rows, bad = [], 0
    try:
        paths = resolve(ns.paths)
    except ScenarioError as e:
        print(e, file=sys.stderr)
        return 2
    for p in paths:
        try:
            rows.append(describe(load_scenario(p)))
        except ScenarioError as e:
            print(e, file=sys.stderr)
            bad += 1
    if rows:
        cols = list(rows[0])
        widths = {c: max(_width(c), *(_width(str(r[c])) for r in rows)) for c in cols}
        print("  ".join(_pad(c, widths[c]) for c in cols).rstrip())
        for r in rows:
            print("  ".join(_pad(str(r[c]), widths[c]) for c in cols).rstrip())
    return 2 if bad else 0


def _width(text: str) -> int:
    """Terminal columns of ``text``: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
