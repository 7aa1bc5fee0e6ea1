"""Scenario files (DESIGN §3): typed model, times, the loader with one-line errors, the catalog.

The names below are each imported from their module when first used, so importing one
module (``mtsbench.scenario.times`` for a config check) does not load the loader's models.

>>> from mtsbench.scenario import load_scenario, resolve
>>> load_scenario(resolve(["milk_allergy"])[0]).steps[0].id
'allergy'
"""

import importlib

_FROM = {"catalog": ("bundled_dir", "describe", "resolve"), "loader": ("ScenarioError", "load_scenario"),
         "model": ("STEP_KINDS", "ArousalCheck", "BeliefCheck", "ConjectureCheck", "EventCountCheck", "EventExpect", "EventHint",
                   "EventTag", "Expect", "Fact", "FactHint", "Hints", "Impression", "InferHint", "Range", "Scenario",
                   "Step", "StepAttentionCheck", "TierCheck"),
         "times": ("format_at", "parse_at", "parse_duration")}
_MODULE = {name: module for module, names in _FROM.items() for name in names}

__all__ = sorted(_MODULE)


def __getattr__(name: str):
    if name not in _MODULE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_MODULE[name]}", __name__), name)
    globals()[name] = value
    return value
