"""Simulated times and durations in scenario files.

All times are seconds (float) since the scenario's ``start``; the clock is naive
(no time zones, no daylight saving).

- A step's ``at`` is ``"dN HH:MM"`` -- day N (N >= 0) counted from the start's *date*,
  at clock time HH:MM -- or an ISO datetime (a string, or the ``datetime``/``date``
  PyYAML makes of an unquoted timestamp; a date means midnight, a UTC offset is dropped).
- A duration is a number (decimals allowed) and a unit: ``s`` seconds, ``m`` minutes,
  ``h`` hours, ``d`` days, ``w`` weeks (7 d), ``mo`` months (30 d), ``y`` years (365 d):
  ``90s``, ``30m``, ``1.5h``, ``3d``, ``2w``, ``6mo``, ``1y``.

Bounds (so that no value overflows a ``datetime``, a ``timedelta`` or an output column):

- the clock runs at most ``MAX_DAYS`` = 36500 days (100 years of 365 days) after the
  scenario's start: a ``dN`` with N above 36500, or any ``at`` more than 36500 days after
  the start, is refused (the loader also refuses an ``idle`` that ends later, and a start
  after 9899-12-31, which would leave no room for the 100 years);
- a duration is at most 36500 days (``100y``, ``1200mo``, ``36500d``, ...).

Digits are ASCII only: ``３h`` or ``d３ 08:00`` (full-width digits, which Python's ``int``
would read) are refused like any other malformed value, so a file means the same to every
reader.

Every parse error is a ``ValueError`` whose text says what was expected.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from ..core.units import (DAY, DURATION_FORMS, HOUR, MAX_DAYS, MAX_SECONDS, MINUTE, UNITS,  # noqa: F401  (re-exported)
                     parse_duration, seconds)
from ..core.units import cut_repr as _cut

AT_FORMS = "'dN HH:MM' (e.g. d3 08:00) or an ISO datetime (e.g. 2026-03-05T08:00:00)"
# re.ASCII: \d and \s are ASCII only (no full-width digits, see the module docstring)
_DAY_TIME = re.compile(r"d(\d+)\s+(\d{1,2}):(\d{2})", re.ASCII)


def parse_at(value, start: datetime, *, allow_before: bool = False) -> float:
    """Seconds since ``start`` of ``"dN HH:MM"`` or an ISO datetime (string, datetime or date).

    A moment before ``start`` is a ValueError unless ``allow_before`` (then it is negative).

    >>> s = datetime(2026, 3, 2, 9, 0)
    >>> parse_at("d0 09:01", s), parse_at("d1 08:00", s), parse_at("2026-03-02T10:00:00", s)
    (60.0, 82800.0, 3600.0)
    >>> parse_at(datetime(2026, 3, 3, 9, 0), s), parse_at("d0 08:00", s, allow_before=True)
    (86400.0, -3600.0)
    >>> parse_at("d0 08:00", s)
    Traceback (most recent call last):
    ValueError: d0 08:00 is before the scenario start (d0 09:00)
    >>> parse_at("d36501 08:00", s)
    Traceback (most recent call last):
    ValueError: expected a moment at most 100 years (36500 days) after the scenario start, got 'd36501 08:00'
    """
    moment = _moment(value, start)
    seconds = (moment - start.replace(tzinfo=None)).total_seconds()
    shown = value if isinstance(value, str) else value.isoformat()
    if seconds < 0 and not allow_before:
        raise ValueError(f"{shown} is before the scenario start ({format_at(0, start)})")
    if seconds > MAX_SECONDS:
        raise ValueError(f"expected a moment at most 100 years ({MAX_DAYS} days) after the scenario start, "
                         f"got {_cut(shown)}")
    return seconds


def _moment(value, start: datetime) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time())
    if not isinstance(value, str):
        raise ValueError(f"expected {AT_FORMS}, got {value!r}")
    text = value.strip()
    m = _DAY_TIME.fullmatch(text)
    if m:
        hour, minute = int(m.group(2)), int(m.group(3))
        if hour > 23 or minute > 59:
            raise ValueError(f"expected HH:MM with hours 00-23 and minutes 00-59, got {value!r}")
        if int(m.group(1)) > MAX_DAYS:   # before timedelta, which overflows past 999999999 days
            raise ValueError(f"expected a moment at most 100 years ({MAX_DAYS} days) after the scenario start, "
                             f"got {_cut(value)}")
        try:
            return datetime.combine(start.date(), datetime.min.time()) + timedelta(
                days=int(m.group(1)), hours=hour, minutes=minute)
        except OverflowError:            # a start too close to year 9999 (the loader refuses such a start)
            raise ValueError(f"{value} is past the last date a clock can show (9999-12-31)") from None
    try:
        return datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        raise ValueError(f"expected {AT_FORMS}, got {_cut(value)}") from None


def format_at(seconds: float, start: datetime) -> str:
    """``"dN HH:MM"`` for a time in seconds since ``start`` (seconds are dropped), for messages.

    >>> format_at(82800.0, datetime(2026, 3, 2, 9, 0)), format_at(-3600.0, datetime(2026, 3, 2, 9, 0))
    ('d1 08:00', 'd0 08:00')
    """
    start = start.replace(tzinfo=None)
    moment = start + timedelta(seconds=seconds)
    return f"d{(moment.date() - start.date()).days} {moment:%H:%M}"


def format_duration(seconds: float) -> str:
    """The shortest exact duration string for ``seconds`` (the largest unit that divides it).

    >>> format_duration(5400), format_duration(28800), format_duration(15552000), format_duration(0.5)
    ('90m', '8h', '6mo', '0.5s')
    """
    for unit, size in sorted(UNITS.items(), key=lambda u: -u[1]):
        if seconds and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
