"""Scenario files (DESIGN §3): typed model, times, the loader with one-line errors, the catalog.

>>> from mtsbench.scenario import load_scenario, resolve
>>> load_scenario(resolve(["milk_allergy"])[0]).steps[0].id
'allergy'
"""

from .catalog import bundled_dir, describe, resolve
from .loader import ScenarioError, load_scenario
from .model import (STEP_KINDS, BeliefCheck, ConjectureCheck, EventCountCheck, EventExpect, EventHint, EventTag,
                    Expect, Fact, FactHint, Hints, Impression, InferHint, Range, Scenario, Step, StepAttentionCheck,
                    TierCheck)
from .times import format_at, parse_at, parse_duration

__all__ = ["STEP_KINDS", "BeliefCheck", "ConjectureCheck", "EventCountCheck", "EventExpect", "EventHint", "EventTag",
           "Expect", "Fact", "FactHint", "Hints", "Impression", "InferHint", "Range", "Scenario", "ScenarioError", "Step", "StepAttentionCheck",
           "TierCheck", "bundled_dir", "describe", "format_at", "load_scenario", "parse_at", "parse_duration",
           "resolve"]
