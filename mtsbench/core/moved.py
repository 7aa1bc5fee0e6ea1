"""Modules moved when the tree was sorted into packages (issue 37): their old import paths
keep working. A finder at the end of ``sys.meta_path`` (it is asked only after the normal
import failed) gives the module at the new path under the old name, with a
``DeprecationWarning`` naming the new one. ``mtsbench.config`` and ``mtsbench.outputs`` are
packages now: the first still answers the old module's names, the second names the new home.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

MOVED = {
    "mtsbench.params": "mtsbench.core.params",
    "mtsbench.units": "mtsbench.core.units",
    "mtsbench.costs": "mtsbench.core.costs",
    "mtsbench.facts": "mtsbench.core.facts",
    "mtsbench.seeding": "mtsbench.core.seeding",
    "mtsbench.resources": "mtsbench.core.resources",
    "mtsbench.config_rules": "mtsbench.config.rules",
    "mtsbench.config_check": "mtsbench.config.check",
    "mtsbench.run_options": "mtsbench.config.options",
    "mtsbench.stream": "mtsbench.outputs.stream",
    "mtsbench.results": "mtsbench.outputs.results",
    "mtsbench.timelines": "mtsbench.outputs.timelines",
    "mtsbench.folder_lock": "mtsbench.outputs.folder_lock",
    "mtsbench.atomic": "mtsbench.outputs.atomic",
    "mtsbench.evaluate": "mtsbench.evaluation.evaluate",
    "mtsbench.evidence": "mtsbench.evaluation.evidence",
    "mtsbench.credit": "mtsbench.evaluation.credit",
    "mtsbench.answer": "mtsbench.evaluation.answer",
    "mtsbench.attention_auc": "mtsbench.evaluation.attention_auc",
    "mtsbench.copies": "mtsbench.evaluation.copies",
    "mtsbench.checks": "mtsbench.evaluation.checks",
    "mtsbench.calibrate": "mtsbench.calibration.calibrate",
    "mtsbench.calibrate_cli": "mtsbench.calibration.cli",
    "mtsbench.profile_fit": "mtsbench.calibration.profile_fit",
    "mtsbench.runner": "mtsbench.harness.runner",
    "mtsbench.hydra_app": "mtsbench.harness.hydra_app",
    "mtsbench.sweep": "mtsbench.harness.sweep",
    "mtsbench.workload": "mtsbench.harness.workload",
    "mtsbench.haystack": "mtsbench.harness.haystack",
    "mtsbench.progress": "mtsbench.harness.progress",
    "mtsbench.pytest_plugin": "mtsbench.harness.pytest_plugin",
    "mtsbench.behaviour": "mtsbench.studies.behaviour",
    "mtsbench.preload": "mtsbench.systems.mts.preload",
    "mtsbench.synthetic": "mtsbench.systems.mts.synthetic",
    "mtsbench.agent": "mtsbench.systems.mts.agent",
    "mtsbench.tune.report": "mtsbench.report.study",
    "mtsbench.tune.figures": "mtsbench.report.studyplots",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        return importlib.import_module(self.new)

    def exec_module(self, module):
        pass


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old module path of mtsbench and loads the module at its new path.

    >>> import mtsbench, importlib, warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old = importlib.import_module("mtsbench.params")
    >>> old is importlib.import_module("mtsbench.core.params"), str(caught[0].message)
    (True, 'mtsbench.params moved to mtsbench.core.params; import it from there')
    """

    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new}; import it from there", DeprecationWarning, stacklevel=2)
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the finder at the end of ``sys.meta_path`` once."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
