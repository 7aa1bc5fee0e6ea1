"""Finding scenario files: bundled names, files and folders; one-row descriptions."""

from __future__ import annotations

import difflib
from pathlib import Path

from .loader import ScenarioError
from .model import Scenario

SUFFIXES = (".yaml", ".yml")


def bundled_dir() -> Path:
    """The package's own ``scenarios/`` folder (found after a plain pip install)."""
    from ..core.resources import SCENARIO_DIR

    return SCENARIO_DIR


def scenario_files(folder: Path) -> list[Path]:
    """The folder's ``*.yaml`` and ``*.yml`` files, sorted by name."""
    return sorted((p for p in folder.iterdir() if p.suffix in SUFFIXES and p.is_file()), key=lambda p: p.name)


def bundled_names() -> list[str]:
    """Names of the bundled scenarios (file stems), sorted."""
    return [p.stem for p in scenario_files(bundled_dir())]


def resolve(items: list[str] | str | Path) -> list[Path]:
    """Scenario files for ``items``, in order; an empty list means every bundled scenario.

    Each item is an existing file (a relative or absolute path); a folder (its
    ``*.yaml``/``*.yml``, sorted); the name of a bundled scenario; or a bundled folder's
    path inside ``scenarios/`` (``behaviour/arousal``: a mechanism's variants). A single string or
    path is one item (never iterated into characters). Anything else is a one-line
    ScenarioError with a did-you-mean.

    >>> [p.name for p in resolve(["milk_allergy"])], [p.name for p in resolve("milk_allergy")]
    (['milk_allergy.yaml'], ['milk_allergy.yaml'])
    >>> [p.name for p in resolve(["behaviour/depth"])][:2]
    ['airport_parking.yaml', 'passport_zh.yaml']
    >>> resolve(["milk_alergy"])
    Traceback (most recent call last):
    mtsbench.errors.ScenarioError: milk_alergy: no such file, folder or bundled scenario; did you mean 'milk_allergy'?
    """
    if isinstance(items, (str, Path)):
        items = [items]
    if not items:
        return scenario_files(bundled_dir())
    out: list[Path] = []
    for item in map(str, items):
        p = Path(item)
        if p.is_dir():
            found = scenario_files(p)
            if not found:
                raise ScenarioError(f"{item}: no scenario files (*.yaml, *.yml) in this folder")
            out += found
        elif p.is_file():
            out.append(p)
        elif p.suffix not in SUFFIXES and p.name == item and (bundled_dir() / f"{item}.yaml").is_file():
            out.append(bundled_dir() / f"{item}.yaml")
        elif p.suffix not in SUFFIXES and not p.is_absolute() and (bundled_dir() / item).is_dir():
            found = scenario_files(bundled_dir() / item)      # a bundled folder: behaviour/arousal
            if not found:
                raise ScenarioError(f"{item}: no scenario files (*.yaml, *.yml) in this bundled folder")
            out += found
        else:
            raise ScenarioError(_unknown(item, p))
    seen: dict[Path, Path] = {}
    for p in out:                 # a file named twice (or by a folder and by name) would run and count twice
        real = p.resolve()
        if real in seen:
            raise ScenarioError(f"{p}: the scenario file is named twice (also as {seen[real]}); expected each "
                                f"scenario once (a run counts every scenario it runs)")
        seen[real] = p
    return out


def bundled_scenarios() -> list[Scenario]:
    """Every bundled scenario that loads, in ``resolve([])``'s order (one that does not load is
    left out): what a replay's miss may name as recorded (``llm.replay.ReplayLLM.serve``)."""
    from .loader import load_scenario

    found = []
    for path in resolve([]):
        try:
            found.append(load_scenario(path))
        except Exception:  # noqa: BLE001 - a bundled scenario that does not load is not listed
            continue
    return found


def _unknown(item: str, p: Path) -> str:
    if p.name == item and p.suffix not in SUFFIXES:
        close = difflib.get_close_matches(item, bundled_names(), n=1)
        tip = f"; did you mean '{close[0]}'?" if close else f" (bundled: {', '.join(bundled_names())})"
        return f"{item}: no such file, folder or bundled scenario{tip}"
    siblings = [q.name for q in scenario_files(p.parent)] if p.parent.is_dir() else []
    close = difflib.get_close_matches(p.name, siblings, n=1)
    tip = f"; did you mean '{p.parent / close[0]}'?" if close else ""
    return f"{item}: no such file or folder{tip}"


def describe(s: Scenario) -> dict:
    """The row ``mtsbench scenarios`` shows: id, title, language, tags, steps (count), days."""
    return {"id": s.id, "title": s.title, "language": s.language, "tags": list(s.tags),
            "steps": len(s.steps), "days": s.days_spanned}
