"""Shared helpers: run the installed ``mtsbench`` command as a user would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"


def mtsbench_exe() -> list[str]:
    exe = Path(sys.executable).parent / "mtsbench"
    return [str(exe)] if exe.exists() else [shutil.which("mtsbench") or "mtsbench"]


@pytest.fixture
def cli(tmp_path):
    """Run ``mtsbench ARGS`` in a temporary working directory; returns CompletedProcess."""

    def run(*args, cwd=None, env=None, timeout=300):
        return subprocess.run([*mtsbench_exe(), *map(str, args)], cwd=cwd or tmp_path, capture_output=True,
                              text=True, timeout=timeout, env={**os.environ, **(env or {})})

    return run


@pytest.fixture(autouse=True, scope="session")
def temporary_folders_under_pytest(tmp_path_factory):
    """``mtsbench check`` and ``mtsbench.run`` without an output folder keep their outputs in
    a new temporary folder for the user to look at; under the tests those go into pytest's
    own (rotated) base folder, in this process and in every command it starts, rather than
    piling up in the machine's temporary folder."""
    folder = str(tmp_path_factory.mktemp("tmp"))
    before = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    yield
    if before[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[0]
    tempfile.tempdir = before[1]
