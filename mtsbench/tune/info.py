"""Where a tuning study's database is: ``study.json`` in its sweep folder (no Optuna needed).

``{"role": "tuning", "study": NAME, "storage": "study.db" | URL, "objectives": [...], ...}`` in a
study's folder; ``{"role": "held_out", "tuning": PATH, ...}`` in the folder of its held-out
evaluation (``PATH``: the tuning folder, relative to it). ``storage`` is ``study.db`` (beside
``study.json``) unless ``hydra.sweeper.storage`` named another database.
"""

from __future__ import annotations

import json
from pathlib import Path

DB_FILE = "study.db"
INFO_FILE = "study.json"
DEFAULT_NAME = "tuning"
HELD_OUT = ":held_out"


def write_info(sweep_dir: Path, info: dict) -> None:
    """``study.json`` of a study's sweep folder (module docstring)."""
    from ..outputs.atomic import write_atomic

    write_atomic(Path(sweep_dir) / INFO_FILE, json.dumps(info, indent=1) + "\n")


def read_info(folder: Path) -> dict | None:
    """A folder's ``study.json`` (None when it is not a study's folder)."""
    try:
        return json.loads((Path(folder) / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def storage_url(folder: Path, info: dict) -> str:
    """The storage URL ``study.json`` names: ``study.db`` beside it when it names that file."""
    url = info.get("storage") or DB_FILE
    return url if "://" in url else f"sqlite:///{(Path(folder) / url).absolute()}"
