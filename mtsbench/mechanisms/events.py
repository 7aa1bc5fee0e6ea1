"""Event identity over time (DESIGN §1.4): the ``events`` config group.

A new tag of category c at time t joins the latest event of category c unless that event
is stale. ``stale(age, valid)`` gets, for each candidate event, the seconds since it was
last updated (``age``) and the validity the LLM stated for the category (``valid``,
seconds; NaN where none was stated) and says which are stale (pure, vectorised).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..core.params import Duration, declared
from ..core.units import seconds


class EventPolicy(Protocol):
    def stale(self, age: np.ndarray, valid: np.ndarray) -> np.ndarray: ...


@declared
class PerCategory:
    """Stale when older than the category's own validity (``default_valid`` if none was stated).

    >>> PerCategory(default_valid="30d").stale(np.array([10.0, 40.0, 40.0]) * 86400,
    ...                                        np.array([np.nan, np.nan, 60 * 86400.0])).tolist()
    [False, True, False]
    """

    def __init__(self, default_valid: Duration = "30d"):
        self.default_valid = default_valid

    def stale(self, age, valid):
        valid = np.asarray(valid, dtype=float)
        return np.asarray(age, dtype=float) > np.where(np.isnan(valid), seconds(self.default_valid), valid)


@declared
class Window:
    """Stale after one fixed window, whatever the category.

    >>> Window(window="14d").stale(np.array([3.0, 20.0]) * 86400, np.array([np.nan, 365 * 86400.0])).tolist()
    [False, True]
    """

    def __init__(self, window: Duration = "30d"):
        self.window = window

    def stale(self, age, valid):
        return np.asarray(age, dtype=float) > seconds(self.window)


class NeverSplit:
    """Never stale: every tag of a category joins its one event (the ablation).

    >>> NeverSplit().stale(np.array([1e9]), np.array([1.0])).tolist()
    [False]
    """

    def stale(self, age, valid):
        return np.zeros(len(np.atleast_1d(age)), dtype=bool)


class AlwaysSplit:
    """Always stale: every tag starts a new event (no merging at all).

    >>> AlwaysSplit().stale(np.array([0.0]), np.array([np.nan])).tolist()
    [True]
    """

    def stale(self, age, valid):
        return np.ones(len(np.atleast_1d(age)), dtype=bool)
