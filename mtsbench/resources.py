"""Where the packaged configs and bundled scenarios are.

In the repository they are the top-level ``configs/`` and ``scenarios/`` folders; the
wheel carries them inside the package (``mtsbench/configs``, ``mtsbench/scenarios``:
``pyproject.toml`` force-includes them at build time). An editable install or a run from
the source tree finds the top-level folders instead.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _packaged(name: str) -> Path:
    inside = _PACKAGE / name
    return inside if inside.is_dir() else _PACKAGE.parent / name


CONFIG_DIR = _packaged("configs")
SCENARIO_DIR = _packaged("scenarios")
