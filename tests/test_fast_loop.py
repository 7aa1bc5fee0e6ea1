"""``make test-fast``: the suite without the tests marked ``e2e`` (tests/conftest.py), while
``make test`` stays the whole."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def make_target(name: str) -> str:
    text = (REPO / "Makefile").read_text()
    m = re.search(rf"^{re.escape(name)}:.*\n((?:\t.*\n)+)", text, re.M)
    assert m, f"Makefile has no target {name}"
    return m.group(1)


def test_make_test_fast_deselects_e2e_and_make_test_runs_everything():
    fast, whole = make_target("test-fast"), make_target("test")
    assert '-m "not e2e"' in fast and "--doctest-modules" in fast
    assert '-m "' not in whole and "--pyargs tests mtsbench" in whole   # the whole suite: no marker filter
    # tests/test_llm_local.py loads the real model when "slow" appears in -m: the fast loop's must not
    assert "slow" not in re.search(r'-m "([^"]*)"', fast).group(1)
    assert "e2e:" in (REPO / "pyproject.toml").read_text()  # registered marker


def collected(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                           *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return {line.split("[")[0] for line in done.stdout.splitlines() if "::" in line}


def test_the_fast_selection_keeps_unit_tests_and_leaves_out_end_to_end_ones():
    files = ["tests/test_decay.py", "tests/test_cli.py", "tests/test_contract.py", "tests/test_sweeps.py"]
    every, fast = collected(*files), collected("-m", "not e2e", *files)
    assert fast < every
    assert any(t.startswith("tests/test_decay.py::") for t in fast)                  # unit tests stay
    assert "tests/test_contract.py::test_option_passes_check" in fast               # the contract checks stay
    assert "tests/test_contract.py::test_option_runs" not in fast                   # whole runs per option go
    assert "tests/test_cli.py::test_run_writes_every_output" in every - fast        # the installed command
    assert not any(t.startswith("tests/test_sweeps.py::") for t in fast)            # sweeps
