"""Time units of the simulated clock (seconds) and durations, defined once.

Below every other module (it imports none of mtsbench), so the mechanisms, the processes
and the scenario loader all read durations the same way; ``mtsbench.scenario.times``
re-exports these and adds the scenario's clock times. A duration is a number of seconds
or a number and a unit: ``s``, ``m``, ``h``, ``d``, ``w`` (7 d), ``mo`` (30 d), ``y``
(365 d), at most ``MAX_DAYS`` days; digits are ASCII only.
"""

from __future__ import annotations

import re

HOUR = 3600.0
DAY = 86400.0
MINUTE = 60.0
UNITS = {"s": 1.0, "m": MINUTE, "h": HOUR, "d": DAY, "w": 7 * DAY, "mo": 30 * DAY, "y": 365 * DAY}
DURATION_FORMS = "a number and a unit s, m, h, d, w, mo or y (e.g. 90s, 30m, 1.5h, 3d, 2w, 6mo, 1y)"
MAX_DAYS = 36500                                   # 100 years of 365 days: the clock's range and the longest duration
MAX_SECONDS = MAX_DAYS * DAY
# re.ASCII: \d and \s are ASCII only (no full-width digits, see the module docstring)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(mo|s|m|h|d|w|y)", re.ASCII)


def seconds(value) -> float:
    """A duration given either as seconds (a number) or as a duration string (``parse_duration``).

    >>> seconds("3h"), seconds(90)
    (10800.0, 90.0)
    """
    return parse_duration(value) if isinstance(value, str) else float(value)


def parse_duration(text) -> float:
    """Seconds in a duration string such as ``30m``, ``8h``, ``3d``, ``2w``, ``6mo``, ``1y``.

    >>> parse_duration("90s"), parse_duration("30m"), parse_duration("1.5h"), parse_duration("6mo")
    (90.0, 1800.0, 5400.0, 15552000.0)
    >>> parse_duration("8 hours")
    Traceback (most recent call last):
    ValueError: expected a duration: a number and a unit s, m, h, d, w, mo or y (e.g. 90s, 30m, 1.5h, 3d, 2w, 6mo, 1y), got '8 hours'
    >>> parse_duration("101y")
    Traceback (most recent call last):
    ValueError: expected a duration of at most 100 years (36500d), got '101y'
    """
    m = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"expected a duration: {DURATION_FORMS}, got {cut_repr(text)}")
    value = float(m.group(1)) * UNITS[m.group(2)]
    if value > MAX_SECONDS:
        raise ValueError(f"expected a duration of at most 100 years ({MAX_DAYS}d), got {cut_repr(text)}")
    return value


def cut_repr(value) -> str:
    """``repr`` cut at 40 characters (an absurdly long value is quoted briefly)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
