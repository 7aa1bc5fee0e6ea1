"""Finding scenario files: bundled names, paths and folders."""

from __future__ import annotations

import difflib
from pathlib import Path

from .loader import ScenarioError
from .model import Scenario


def bundled_dir() -> Path:
    """The package's own ``scenarios/`` folder."""
    return Path(__file__).resolve().parent.parent / "scenarios"


def bundled_names() -> list[str]:
    return sorted(p.stem for p in bundled_dir().glob("*.yaml"))


def _folder(d: Path) -> list[Path]:
    return sorted([*d.glob("*.yaml"), *d.glob("*.yml")])


def resolve(items: list[str]) -> list[Path]:
    """Scenario files for names or paths: a file; a folder's *.yaml; a bundled name.

    An empty list means every bundled scenario. An unknown name is a ScenarioError.

    >>> [p.name for p in resolve(["milk_allergy"])]
    ['milk_allergy.yaml']
    """
    if not items:
        return _folder(bundled_dir())
    out: list[Path] = []
    for item in items:
        p = Path(str(item))
        if p.is_dir():
            found = _folder(p)
            if not found:
                raise ScenarioError(f"{p}: no scenario files (*.yaml) in this folder")
            out += found
        elif p.is_file():
            out.append(p)
        elif (bundled_dir() / f"{item}.yaml").is_file():
            out.append(bundled_dir() / f"{item}.yaml")
        else:
            hint = difflib.get_close_matches(str(item), bundled_names(), n=1)
            tip = f"; did you mean '{hint[0]}'?" if hint else ""
            raise ScenarioError(f"{item}: no such file, folder or bundled scenario{tip}")
    return out


def describe(s: Scenario) -> dict:
    """The row ``mtsbench scenarios`` prints for a scenario."""
    return {"id": s.id, "title": s.title, "language": s.language, "tags": ",".join(s.tags),
            "steps": len(s.steps), "days": s.days_spanned}
