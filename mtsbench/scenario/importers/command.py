"""``mtsbench import FORMAT FILE -o DIR``: data set -> scenario files.

The formats, their help and their own options come from ``registry.importers()``. Prints
what was imported and a count of everything dropped or repaired, then where the files
are. Every error is one line on stderr (exit 2), an unknown format with a did-you-mean;
nothing is written unless the whole file converted.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from ...errors import DataError
from .registry import duration, importers, positive, share
from .writer import write_all


def parser() -> argparse.ArgumentParser:
    formats = importers()
    top = argparse.ArgumentParser(prog="mtsbench import", description="Turn a public memory benchmark file into "
                                  "scenario files, one per " +
                                  " or ".join(f"{i.item} ({i.name})" for i in formats.values()) + ".")
    sub = top.add_subparsers(dest="format", required=True, metavar="{" + ",".join(formats) + "}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("file", type=Path, help="the data set file (JSON) or folder (BEAM)")
    common.add_argument("-o", "--out", type=Path, required=True, help="folder for the scenario files")
    common.add_argument("--turn-gap", type=duration, default=60.0, metavar="DURATION",
                        help="time between the turns of a session (default 60s)")
    common.add_argument("--k", type=positive, help="the probes' k (default: the scenario default, 5)")
    common.add_argument("--motivation", type=share, help="the probes' motivation 0..1 (default 0.5)")
    common.add_argument("--limit", type=positive, metavar="N", help="import only the first N items")
    for importer in formats.values():
        importer.arguments(sub.add_parser(importer.name, parents=[common], help=importer.help))
    return top


def unknown_format(argv: list[str]) -> str | None:
    """The one-line error for a first argument that names no format (None if it names one,
    or is an option such as ``-h``)."""
    if not argv or argv[0].startswith("-") or argv[0] in importers():
        return None
    formats = list(importers())
    hint = difflib.get_close_matches(argv[0], formats, n=1)
    return (f"import: unknown format '{argv[0]}'" + (f"; did you mean '{hint[0]}'?" if hint else "") +
            f" (formats: {', '.join(formats)})")


def import_main(argv: list[str]) -> int:
    message = unknown_format(argv)
    if message:
        print(f"mtsbench: {message}", file=sys.stderr)
        return 2
    try:
        ns = parser().parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    importer = importers()[ns.format]
    options = dict(turn_gap=ns.turn_gap, k=ns.k, motivation=ns.motivation, limit=ns.limit)
    try:
        drafts, tally = importer.convert(ns.file, **options, **{name: getattr(ns, name) for name in importer.own})
        paths = write_all(drafts, ns.out)
    except DataError as e:
        print(f"mtsbench: {e}", file=sys.stderr)
        return 2
    print(f"{ns.file}: {len(drafts)} {importer.item}s imported")
    for line in tally.lines():
        print(f"  {line}")
    print(f"wrote {len(paths)} scenario files to {ns.out} (each checked by the scenario loader)")
    return 0
