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


@pytest.fixture(scope="session")
def schema_valid():
    """``schema_valid(doc)``: does the scenario format's JSON Schema accept ``doc`` (a scenario
    file as YAML loads it)? Skips without jsonschema."""
    jsonschema = pytest.importorskip("jsonschema")
    from mtsbench.scenario.schema_models import json_schema

    validator = jsonschema.Draft202012Validator(json_schema())
    return lambda doc: not any(True for _ in validator.iter_errors(doc))


@pytest.fixture(scope="session")
def import_file():
    """Import a module from its file, as running it from its folder would (a script under
    ``scripts/``, an example plug-in): ``import_file(name, path)`` returns the module."""
    import importlib.util

    def load(name: str, path: Path):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture
def drawn(monkeypatch):
    """The figures the report's plot functions save, kept instead of closed (their axes, limits
    and texts are what the figure tests read)."""
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figures.append(fig))
    yield figures
    monkeypatch.undo()
    plt.close("all")


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


# ``make test-fast`` (``pytest -m "not e2e"``): the edit-test loop leaves out what runs
# whole scenarios or the installed command end to end (the ``cli`` fixture: a Python start,
# Hydra and a run per call; pytest's pytester; every option run through a scenario), the
# files that run sweeps, launchers, soak and reliability scenarios, report rendering, and
# the few single tests measured at seconds each. Unit, property and contract-check tests and
# the doctests stay. ``make test`` runs everything, as before.
E2E_FILES = ("test_reliability_", "test_launchers", "test_sweeps", "test_sweep_overhead", "test_locomo_real",
             "test_pytest_plugin", "test_ablations", "test_api", "test_llm_cli", "test_docs_scenarios",
             "test_report_figures", "test_behaviour_matrix", "test_show", "test_headline_recall", "test_default_run")
E2E_TESTS = {"test_contract.py": ("test_option_runs", "test_preset_sets_only_known_options_and_runs",
                                  "test_flat_rag_is_relevance_only_and_mts_is_the_default"),
             "test_config_rules.py": ("test_every_numeric_leaf_of_every_option_is_a_declared_parameter",  # every option
                                      "test_every_job_of_a_sweep_is_checked_before_launching"),
             "test_fast_loop.py": ("test_the_fast_selection_keeps_unit_tests_and_leaves_out_end_to_end_ones",),
             "test_install_weight.py": ("test_a_mock_run_needs_none_of_them", "test_per_tier_index_without_hnswlib_is_one_line",
                                        "test_openai_and_local_without_the_client_are_one_line"),
             "test_results.py": ("test_a_run_streamed_in_small_chunks_writes_the_same_outputs",),
             "test_plugin_example.py": ("test_an_installed_plugin_is_found_through_its_entry_point",),
             "test_frontier_beam_study.py": ("test_the_study_runs_end_to_end_on_small_chats",)}


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.path.name if hasattr(item, "path") else ""
        if ("cli" in getattr(item, "fixturenames", ()) or name.startswith(E2E_FILES)
                or getattr(item, "originalname", None) in E2E_TESTS.get(name, ())):
            item.add_marker(pytest.mark.e2e)
