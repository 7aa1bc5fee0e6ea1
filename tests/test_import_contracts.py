"""Issue 37: the architecture as import-linter contracts (``[tool.importlinter]`` in
pyproject.toml; docs/architecture.md). ``lint-imports`` checks them against the installed
package; a copy of the package with one import against the grain must fail them, so the
contracts cannot pass by accident."""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import mtsbench

ROOT = Path(mtsbench.__file__).parent
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
LINT = Path(sys.executable).parent / "lint-imports"

needs_lint = pytest.mark.skipif(not PYPROJECT.is_file() or not LINT.exists(),
                                reason="needs the repository's pyproject.toml and import-linter (the test extra)")


def lint(path: Path | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` with the repository's contracts; ``path`` puts a copy of the package
    first on the import path."""
    env = {**os.environ, "PYTHONPATH": str(path)} if path is not None else None
    return subprocess.run([str(LINT), "--no-cache", str(PYPROJECT)], capture_output=True, text=True, env=env,
                          cwd=path or PYPROJECT.parent)


def broken(stdout: str) -> str:
    """The contract lines of the summary, as one string (names wrap over lines)."""
    summary = stdout.split("Contracts:")[0].split("---\n")[-1]
    return " ".join(summary.split())


@needs_lint
def test_the_contracts_hold():
    done = lint()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and "KEPT" in done.stdout


@needs_lint
@pytest.mark.parametrize("module,line,contract", [
    ("memory/store.py", "from ..processes import labelling", "Each package imports only the packages below it BROKEN"),
    ("outputs/stream.py", "from ..evaluation import evidence", "The run folder's writer only writes"),
    ("embed/hashing.py", "from ..config import composition", "never from the config path BROKEN"),
])
def test_an_import_against_the_grain_breaks_a_contract(tmp_path, module, line, contract):
    copy = tmp_path / "mtsbench"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "configs", "scenarios", "cassettes"))
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa: E402, F401\n", encoding="utf-8")
    done = lint(tmp_path)
    assert done.returncode == 1, done.stdout[-2000:]
    assert contract in broken(done.stdout), done.stdout[-3000:]


def test_the_top_level_holds_at_most_eight_modules():
    modules = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(modules) <= 8, modules


def test_every_package_says_what_it_holds():
    for init in ROOT.rglob("__init__.py"):
        if {"configs", "scenarios", "cassettes"} & set(init.relative_to(ROOT).parts):
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, init.relative_to(ROOT)


def test_the_agent_reads_no_private_state_of_its_parts():
    """Issue 26, item 5: state a part keeps for itself (``name_``) is read only by that
    part; the agent reads its own (``self.x_``) and its parts' public methods and values."""
    tree = ast.parse((ROOT / "systems" / "mts" / "agent.py").read_text(encoding="utf-8"))
    private = [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
               if isinstance(n, ast.Attribute) and n.attr.endswith("_") and not n.attr.startswith("__")
               and not (isinstance(n.value, ast.Name) and n.value.id == "self")]
    assert not private, private


def test_old_import_paths_still_work_and_name_the_new_one():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("mtsbench.checks")
    assert old is importlib.import_module("mtsbench.evaluation.checks")
    assert "mtsbench.checks moved to mtsbench.evaluation.checks" in str(caught[0].message)
    from mtsbench.config import compose  # the former module mtsbench.config's names

    assert callable(compose)
    import mtsbench.outputs

    with pytest.raises(AttributeError, match="mtsbench.harness.finish"):
        mtsbench.outputs.finish_run  # noqa: B018
