"""Simulated times and durations in scenario files.

Times are seconds since the scenario's ``start``. A step's ``at`` is ``"dN HH:MM"``
(day N counted from the start's date, at clock time HH:MM) or an ISO datetime. Durations
are a number and a unit: ``s``, ``m`` (minutes), ``h``, ``d``, ``w``, ``mo`` (30 days),
``y`` (365 days), e.g. ``30m``, ``1.5h``, ``6mo``.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "mo": 30 * 86400, "y": 365 * 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(mo|s|m|h|d|w|y)\s*$")
_DAY_TIME = re.compile(r"^d(\d+) ([01]?\d|2[0-3]):([0-5]\d)$")


def parse_duration(text) -> float:
    """Seconds in a duration such as ``30m``, ``8h``, ``3d``, ``2w``, ``6mo``, ``1y``.

    >>> parse_duration("30m"), parse_duration("1.5h"), parse_duration("6mo")
    (1800.0, 5400.0, 15552000.0)
    """
    m = _DURATION.match(str(text)) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"expected a duration like 30m, 8h, 3d, 2w, 6mo or 1y, got {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def parse_at(value, start: datetime) -> float:
    """Seconds since ``start`` of ``"dN HH:MM"`` or an ISO datetime (string or datetime).

    >>> s = datetime(2026, 3, 2, 9, 0)
    >>> parse_at("d0 09:01", s), parse_at("d1 08:00", s), parse_at("2026-03-02T10:00:00", s)
    (60.0, 82800.0, 3600.0)
    """
    if isinstance(value, str):
        m = _DAY_TIME.match(value.strip())
        if m:
            day = datetime.combine(start.date(), datetime.min.time()) + timedelta(days=int(m.group(1)))
            moment = day.replace(hour=int(m.group(2)), minute=int(m.group(3)))
        else:
            try:
                moment = datetime.fromisoformat(value.strip())
            except ValueError:
                raise ValueError(f"expected 'dN HH:MM' or an ISO datetime, got {value!r}") from None
    elif isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, datetime.min.time())
    else:
        raise ValueError(f"expected 'dN HH:MM' or an ISO datetime, got {value!r}")
    if moment.tzinfo is not None:
        moment = moment.replace(tzinfo=None)
    return (moment - start).total_seconds()


def format_at(seconds: float, start: datetime) -> str:
    """``"dN HH:MM"`` for a time in seconds since ``start``.

    >>> format_at(82800.0, datetime(2026, 3, 2, 9, 0))
    'd1 08:00'
    """
    moment = start + timedelta(seconds=seconds)
    day = (moment.date() - start.date()).days
    return f"d{day} {moment:%H:%M}"
