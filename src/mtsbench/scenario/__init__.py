"""Scenario files: schema (model), times, the loader with one-line errors, the catalog."""

from .loader import ScenarioError, load_scenario
from .model import Scenario, Step

__all__ = ["Scenario", "ScenarioError", "Step", "load_scenario"]
