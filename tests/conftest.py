"""Shared helpers: run the installed ``mtsbench`` command as a user would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
