"""Which data set a scenario belongs to, so that reports keep data sets apart.

- an imported benchmark (``mtsbench import NAME``): its importer's name, which every importer
  writes as the scenario's first tag (``locomo``, ``beam``, ``longmemeval``). Its probes are
  questions with evidence, scored by recall; its ``expect.recall`` lists that evidence, not
  an assertion, so reports count them as probes, never as failed checks (``imported``);
- ``generated``: written by ``mtsbench generate`` (first tag ``generated``); its probes ask for
  the needles it planted, evidence by construction, so they too are scored by recall only
  (``scored_by_recall``);
- ``bundled``: a scenario of the package's own ``scenarios/`` folder (the behaviour suite too);
- ``own``: any other hand-written scenario.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .model import Scenario

GENERATED, BUNDLED, OWN = "generated", "bundled", "own"


@lru_cache(maxsize=1)
def importer_names() -> frozenset[str]:
    """The names of the registered importers (``mtsbench import``'s formats)."""
    from .importers.registry import importers

    return frozenset(importers())


def dataset(scenario: Scenario) -> str:
    """The data set of ``scenario`` (the module docstring's four kinds).

    >>> from datetime import datetime
    >>> dataset(Scenario("x", "t", "en", datetime(2026, 1, 1), ("beam", "100k"), ()))
    'beam'
    >>> dataset(Scenario("x", "t", "en", datetime(2026, 1, 1), ("generated",), ())), \\
    ...     dataset(Scenario("x", "t", "en", datetime(2026, 1, 1), ("health",), (), Path("/tmp/x.yaml")))
    ('generated', 'own')
    """
    first = scenario.tags[0] if scenario.tags else ""
    if first in importer_names():
        return first
    if first == GENERATED:
        return GENERATED
    return BUNDLED if scenario.path is not None and _inside_bundled(Path(scenario.path)) else OWN


def imported(name: str) -> bool:
    """Whether data set ``name`` is an imported benchmark (its expectations are evidence).

    >>> imported("locomo"), imported("bundled")
    (True, False)
    """
    return name in importer_names()


def scored_by_recall(name: str) -> bool:
    """Whether the probes of data set ``name`` are measurements, scored by recall, not
    expectations to pass: imported benchmarks and generated dialogue.

    >>> scored_by_recall("beam"), scored_by_recall("generated"), scored_by_recall("own")
    (True, True, False)
    """
    return imported(name) or name == GENERATED


def _inside_bundled(path: Path) -> bool:
    from ..core.resources import SCENARIO_DIR

    try:
        path.resolve().relative_to(SCENARIO_DIR.resolve())
        return True
    except ValueError:
        return False
