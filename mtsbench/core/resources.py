"""Where the packaged configs, bundled scenarios and recorded cassettes are.

In the repository they are the top-level ``configs/``, ``scenarios/`` and ``cassettes/``
folders; the wheel carries them inside the package (``mtsbench/configs``, ...:
``pyproject.toml`` force-includes them at build time). An editable install or a run from
the source tree finds the top-level folders instead.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent   # mtsbench/ (this file is mtsbench/core/resources.py)


def _packaged(name: str) -> Path:
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name


CONFIG_DIR = _packaged("configs")
SCENARIO_DIR = _packaged("scenarios")
CASSETTE_DIR = _packaged("cassettes")


def user_cache_dir() -> Path:
    """The user's mtsbench cache folder: ``$MTSBENCH_CACHE``, else ``$XDG_CACHE_HOME/mtsbench``,
    else ``~/.cache/mtsbench`` (assembled models in ``models/``, embeddings in ``embeddings/``)."""
    if os.environ.get("MTSBENCH_CACHE"):
        return Path(os.environ["MTSBENCH_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mtsbench"


def packaged_cassettes() -> list[str]:
    """Names of the cassettes that ship with mtsbench (``cassettes/NAME.jsonl``).

    >>> "qwen2.5-coder-1.5b-instruct-q4_k_m" in packaged_cassettes()
    True
    """
    return sorted(p.stem for p in CASSETTE_DIR.glob("*.jsonl")) if CASSETTE_DIR.is_dir() else []
