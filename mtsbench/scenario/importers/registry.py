"""The importers by format name: each importer module registers itself, nothing else lists them.

An importer module calls ``register(Importer(...))`` at import time with its format name,
a one-line help, what one scenario is made from (``item``: "conversation", "question"),
its ``convert(path, turn_gap=, k=, motivation=, limit=, **own) -> (drafts, tally)`` and
``arguments(parser)``, which adds its own options (their ``dest`` names are ``own``:
passed to ``convert`` as keywords). ``importers()`` imports every module of this package
once, so adding a file with a ``register`` call adds the format to ``mtsbench import``.

>>> sorted(importers())
['beam', 'locomo', 'longmemeval']
>>> importers()["locomo"].item
'conversation'
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable

from ..times import parse_duration

_REGISTRY: dict[str, "Importer"] = {}


@dataclass(frozen=True)
class Importer:
    name: str
    help: str
    item: str                                            # one scenario per <item>
    convert: Callable
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    own: tuple[str, ...] = ()                            # dest names of the options ``arguments`` adds


def register(importer: Importer) -> Importer:
    """Add ``importer`` under its name (a second one with the same name is a bug)."""
    if importer.name in _REGISTRY:
        raise ValueError(f"importer {importer.name!r} registered twice")
    _REGISTRY[importer.name] = importer
    return importer


def importers() -> dict[str, Importer]:
    """Every registered importer by name, sorted, after importing each module of this package."""
    package = importlib.import_module(__package__)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{__package__}.{module.name}")
    return dict(sorted(_REGISTRY.items()))


def duration(text: str) -> float:
    """An argparse type: a duration such as ``90s`` or ``1d``, in seconds."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def share(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value
