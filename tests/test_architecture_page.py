"""docs/architecture.md's import graph is the code's (issue 37): the block between its diagram
markers is what ``scripts/architecture_diagram.py`` draws from ``mtsbench/`` today, so an import
added, removed or turned against the layers without ``make docs`` fails here. Skipped outside a
checkout (the script, the page or pyproject.toml absent) or without grimp (the test extra)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "architecture_diagram.py"
PAGE = REPO / "docs" / "architecture.md"

pytestmark = pytest.mark.skipif(
    not (SCRIPT.is_file() and PAGE.is_file() and (REPO / "pyproject.toml").is_file() and (REPO / "mtsbench").is_dir())
    or importlib.util.find_spec("grimp") is None,
    reason="needs the repository (scripts/, docs/, mtsbench/, pyproject.toml) and grimp (the test extra)")


def test_the_committed_diagram_is_the_code_s(import_file):
    done = subprocess.run([sys.executable, str(SCRIPT), "-"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "flowchart TD" in done.stdout
    assert import_file("architecture_diagram", SCRIPT).committed(PAGE) == done.stdout, \
        "docs/architecture.md's diagram is stale: run  make docs  (or python scripts/architecture_diagram.py)"


def test_an_arrow_implied_by_a_longer_path_is_left_out_and_one_against_the_layers_is_kept(import_file):
    script = import_file("architecture_diagram", SCRIPT)
    ranks = {"top": 0, "mid": 1, "low": 2}
    drawn, against = script.reduce({("top", "mid"), ("mid", "low"), ("top", "low"), ("low", "mid")}, ranks)
    assert drawn == [("mid", "low"), ("top", "mid")]
    assert against == [("low", "mid")]
