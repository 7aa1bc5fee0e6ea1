"""pytest plugin (entry point ``pytest11``): scenario files as tests, expectations as items.

``pytest scenarios/`` collects every scenario file directly inside a folder named on the
command line, and ``pytest path/to/x.yaml`` that file; folders listed in the ini option
``mtsbench_scenarios`` are collected recursively. Anything else is left alone, so a
test run over packages that merely contain YAML (configs, test data) is unchanged. In a
folder, only YAML whose top level is a mapping with ``steps`` counts (or YAML that does
not parse, which then fails); a file named explicitly is always collected.

Each file runs once, on its first item, with the reference configuration plus every
``--mtsbench-override KEY=VALUE``; each expectation is one item, failing with a line
such as ``milk_allergy.yaml step 3 (milk): attention expected >= 6, got 1.0``. A
malformed scenario is one failed item with the loader's one-line message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

SUFFIXES = (".yaml", ".yml")
CHECK_NAMES = {"BeliefCheck": "belief", "ConjectureCheck": "conjecture", "StepAttentionCheck": "attention",
               "TierCheck": "tier", "EventCountCheck": "event_count", "ArousalCheck": "arousal"}
_targets = pytest.StashKey[tuple]()


def pytest_addoption(parser):
    group = parser.getgroup("mtsbench", "mtsbench scenario files as tests")
    group.addoption("--mtsbench-override", action="append", default=[], metavar="KEY=VALUE",
                    help="a Hydra override for the scenarios' runs, e.g. attention=common_sense (repeatable)")
    parser.addini("mtsbench_scenarios", type="paths", default=[],
                  help="folders (searched recursively) or files of mtsbench scenarios to collect")


def _collect_targets(config) -> tuple[set[Path], set[Path], set[Path]]:
    """(files named, folders named: their direct children, ini folders: recursive)."""
    if _targets not in config.stash:
        base = Path(config.invocation_params.dir)
        files, folders = set(), set()
        for arg in config.args:
            p = (base / str(arg).split("::")[0]).resolve()
            (folders if p.is_dir() else files).add(p)
        ini = {Path(p).resolve() for p in config.getini("mtsbench_scenarios")}
        config.stash[_targets] = (files, folders, ini)
    return config.stash[_targets]


def is_scenario_file(path: Path) -> bool:
    """True for YAML whose top level is a mapping with ``steps``, or that does not parse."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return True
    return isinstance(data, dict) and "steps" in data


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix not in SUFFIXES:
        return None
    files, folders, ini = _collect_targets(parent.config)
    p = file_path.resolve()
    named = p in files or p in ini
    if named or ((p.parent in folders or ini & set(p.parents)) and is_scenario_file(p)):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def expectations(scenario) -> list[tuple[int, str]]:
    """(step index, check name) of every expectation (matched to the run's rows by step, name and
    its ordinal among that step's rows of the name, so the order across names does not matter)."""
    out = []
    for step in scenario.steps:
        e = step.expect
        out += [(step.index, name) for name, on in (("attention", e.attention), ("recall", e.recall),
                                                      ("absent", e.absent), ("order", e.order),
                                                      ("event", e.event)) if on]
        out += [(step.index, "cost")] * len(e.cost)
        out += [(step.index, CHECK_NAMES[type(c).__name__]) for c in step.checks]
    return out


class ScenarioFile(pytest.File):
    """One scenario file; it runs once, for all its items."""

    def collect(self):
        from ..scenario.loader import ScenarioError, load_scenario

        try:
            self.scenario = load_scenario(self.path)
        except ScenarioError as e:
            yield BrokenScenario.from_parent(self, name="load", message=str(e))
            return
        self._rows = None
        seen: dict[tuple[int, str], int] = {}
        for index, check in expectations(self.scenario):
            n = seen[(index, check)] = seen.get((index, check), -1) + 1
            step = self.scenario.steps[index]
            name = f"{step.id}:{check}" + (f"#{n + 1}" if n else "")
            yield ExpectationItem.from_parent(self, name=name, index=index, check=check, ordinal=n)

    def rows(self) -> dict | str:
        """The run's expectation rows by (index, check), or the one-line error it raised."""
        if self._rows is None:
            from ..config.composition import compose
            from ..errors import user_error
            from .runner import run_scenario

            overrides = self.config.getoption("mtsbench_override")
            try:
                cfg, _ = compose(list(overrides))
                rows = run_scenario(cfg, self.scenario).rows
            except Exception as e:   # one line for the items; Hydra's own errors are multi-line
                self._rows = user_error(e) or f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
                return self._rows
            self._rows = {}
            for row in rows:
                if row["check"] != "probe":
                    self._rows.setdefault((row["index"], row["check"]), []).append(row)
        return self._rows


class ExpectationFailed(Exception):
    """An expectation that did not hold; its str is the one-line report. Internal to the
    plugin (raised by ``runtest``, shown by ``repr_failure``), so not in ``mtsbench.errors``."""


class ExpectationItem(pytest.Item):
    def __init__(self, *, index: int, check: str, ordinal: int, **kw):
        super().__init__(**kw)
        self.index, self.check, self.ordinal = index, check, ordinal

    def runtest(self):
        rows = self.parent.rows()
        where = f"{self.path.name} {self.parent.scenario.steps[self.index].label}"
        if isinstance(rows, str):
            raise ExpectationFailed(f"{where}: the run failed: {rows}")
        row = rows[(self.index, self.check)][self.ordinal]
        if row["passed"] is None:     # the system has no such state: unsupported, not failed
            pytest.skip(f"{where}: {self.check} is unsupported by this memory system")
        if not bool(row["passed"]):
            overrides = " ".join(self.config.getoption("mtsbench_override"))
            raise ExpectationFailed(f"{where}: {self.check} expected {row['expected']}, got {row['value']}"
                                    + (f" [overrides: {overrides}]" if overrides else ""))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ExpectationFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.parent.scenario.id}::{self.name}"


class BrokenScenario(pytest.Item):
    """A scenario file the loader refuses: one failed item with its message."""

    def __init__(self, *, message: str, **kw):
        super().__init__(**kw)
        self.message = message

    def runtest(self):
        raise ExpectationFailed(self.message)

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::load"
