"""``mtsbench import locomo|longmemeval FILE -o DIR``: data set -> scenario files.

Prints what was imported and a count of everything dropped or repaired, then where the
files are. Every error is one line on stderr (exit 2); nothing is written unless the
whole file converted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..times import parse_duration
from . import locomo, longmemeval
from .common import DataError
from .writer import write_all


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def _motivation(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="mtsbench import", description="Turn a public memory benchmark file into "
                                  "scenario files, one per conversation (LoCoMo) or question (LongMemEval).")
    sub = top.add_subparsers(dest="format", required=True, metavar="{locomo,longmemeval}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("file", type=Path, help="the data set file (JSON)")
    common.add_argument("-o", "--out", type=Path, required=True, help="folder for the scenario files")
    common.add_argument("--turn-gap", type=_duration, default=60.0, metavar="DURATION",
                        help="time between the turns of a session (default 60s)")
    common.add_argument("--k", type=_positive, help="the probes' k (default: the scenario default, 5)")
    common.add_argument("--motivation", type=_motivation, help="the probes' motivation 0..1 (default 0.5)")
    common.add_argument("--limit", type=_positive, metavar="N", help="import only the first N items")
    lo = sub.add_parser("locomo", parents=[common], help="LoCoMo (locomo10.json)")
    lo.add_argument("--questions-after", type=_duration, default=86400.0, metavar="DURATION",
                    help="time from the last turn to the first question (default 1d); questions are 1m apart")
    lme = sub.add_parser("longmemeval", parents=[common], help="LongMemEval (oracle, S or M file)")
    lme.add_argument("--turns", choices=longmemeval.TURNS, default="all",
                     help="all: user turns as say and assistant turns as reply steps (default); user: user turns "
                          "only, as the official retrieval scoring indexes them")
    return top


def import_main(argv: list[str]) -> int:
    try:
        ns = parser().parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    common = dict(turn_gap=ns.turn_gap, k=ns.k, motivation=ns.motivation, limit=ns.limit)
    try:
        if ns.format == "locomo":
            drafts, tally = locomo.convert(ns.file, questions_after=ns.questions_after, **common)
        else:
            drafts, tally = longmemeval.convert(ns.file, turns=ns.turns, **common)
        paths = write_all(drafts, ns.out)
    except DataError as e:
        print(f"mtsbench: {e}", file=sys.stderr)
        return 2
    what = "conversations" if ns.format == "locomo" else "questions"
    print(f"{ns.file}: {len(drafts)} {what} imported")
    for line in tally.lines():
        print(f"  {line}")
    print(f"wrote {len(paths)} scenario files to {ns.out} (each checked by the scenario loader)")
    return 0
