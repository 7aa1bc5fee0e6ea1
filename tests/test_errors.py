"""``mtsbench.errors``: every user-facing error class in one module at the bottom of the import graph."""

import ast
import subprocess
import sys

import pytest

import mtsbench.errors as errors

OLD_HOMES = {"ConfigError": "mtsbench.config.composition", "ReportError": "mtsbench.report.jobs", "LLMError": "mtsbench.llm.base",
             "TransportError": "mtsbench.llm.chat", "AnswerError": "mtsbench.llm.tasks",
             "ScenarioError": "mtsbench.scenario.loader", "DataError": "mtsbench.scenario.importers.common",
             "GenerateError": "mtsbench.scenario.generate"}
ENTRY_MODULES = ("mtsbench.cli", "mtsbench.harness.hydra_app", "mtsbench.harness.sweep")


def test_errors_imports_nothing_from_mtsbench():
    tree = ast.parse(open(errors.__file__, encoding="utf-8").read())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert all(not m.startswith("mtsbench") and not m.startswith(".") for m in imported), imported
    assert all(n.level == 0 for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))


@pytest.mark.parametrize("name", sorted(OLD_HOMES))
def test_old_import_locations_name_the_same_class(name):
    module = __import__(OLD_HOMES[name], fromlist=[name])
    assert getattr(module, name) is getattr(errors, name)


@pytest.mark.parametrize("first", ENTRY_MODULES)
def test_cli_hydra_app_and_sweep_do_not_import_each_other_at_import_time(first):
    code = (f"import sys, {first}; print(sorted(m for m in {ENTRY_MODULES!r} if m in sys.modules and m != {first!r}))")
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_user_errors_are_one_line_through_wrappers():
    try:
        try:
            raise errors.ScenarioError("a.yaml: step 2\nbad")
        except errors.ScenarioError as inner:
            raise RuntimeError("Error in call to target") from inner
    except RuntimeError as outer:
        assert errors.user_error(outer) == errors.one_line(outer) == "a.yaml: step 2 bad"
    assert errors.user_error(errors.AnswerError("x")) is None      # internal to the LLM layer
