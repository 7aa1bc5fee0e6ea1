"""Scenario times and durations: hand values for every unit and both forms of ``at``."""

import re
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtsbench.scenario.times import format_at, format_duration, parse_at, parse_duration

START = datetime(2026, 3, 2, 9, 0)


@pytest.mark.parametrize("text,seconds", [
    ("90s", 90), ("30m", 1800), ("8h", 28800), ("3d", 259200), ("2w", 1209600),
    ("6mo", 15552000), ("1y", 31536000), ("1.5h", 5400), ("0.5d", 43200), (" 2 h ", 7200),
])
def test_every_duration_unit(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["8 hours", "h", "3x", "", "-1h", "1H", "1h30m", ".5h", 5, 1.5, None, True])
def test_bad_durations_say_what_was_expected(bad):
    with pytest.raises(ValueError, match=r"^expected a duration: a number and a unit s, m, h, d, w, mo or y"):
        parse_duration(bad)


@pytest.mark.parametrize("value,seconds", [
    ("d0 09:00", 0.0), ("d0 09:01", 60.0), ("d0 23:59", 14 * 3600 + 59 * 60), ("d1 08:00", 23 * 3600),
    ("d3 08:00", 3 * 86400 - 3600), ("d10 9:30", 10 * 86400 + 1800), ("d400 00:00", 400 * 86400 - 9 * 3600),
    ("2026-03-02T10:00:00", 3600.0), ("2026-03-05T08:00", 3 * 86400 - 3600), ("2026-03-02 09:00:30", 30.0),
    ("2026-03-03", 15 * 3600), (datetime(2026, 3, 5, 8, 0), 3 * 86400 - 3600), (date(2026, 3, 3), 15 * 3600),
    (datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc), 3600.0),
])
def test_both_time_forms(value, seconds):
    assert parse_at(value, START) == seconds


def test_before_the_start_is_an_error_unless_allowed():
    with pytest.raises(ValueError, match=r"^d0 08:00 is before the scenario start \(d0 09:00\)$"):
        parse_at("d0 08:00", START)
    with pytest.raises(ValueError, match="before the scenario start"):
        parse_at(datetime(2026, 3, 1, 9, 0), START)
    assert parse_at("d0 08:00", START, allow_before=True) == -3600.0


@pytest.mark.parametrize("bad,words", [
    ("day 3 at 9", "expected 'dN HH:MM' (e.g. d3 08:00) or an ISO datetime"),
    ("d3", "expected 'dN HH:MM'"), ("3 08:00", "expected 'dN HH:MM'"), ("d-1 08:00", "expected 'dN HH:MM'"),
    ("d1 24:00", "expected HH:MM with hours 00-23 and minutes 00-59, got"),
    ("d1 08:60", "expected HH:MM with hours 00-23 and minutes 00-59, got"),
    (42, "expected 'dN HH:MM'"), (None, "expected 'dN HH:MM'"),
])
def test_bad_times_say_what_was_expected(bad, words):
    with pytest.raises(ValueError, match="^" + re.escape(words)):
        parse_at(bad, START)


def test_format_at_names_day_and_clock():
    assert format_at(0, START) == "d0 09:00"
    assert format_at(23 * 3600, START) == "d1 08:00"
    assert format_at(3 * 86400 - 3600, START) == "d3 08:00"
    assert format_at(59.9, START) == "d0 09:00"   # seconds are dropped
    assert format_at(-3600, START) == "d0 08:00"


@pytest.mark.parametrize("seconds,text", [(90, "90s"), (1800, "30m"), (5400, "90m"), (28800, "8h"),
                                          (86400, "1d"), (1209600, "2w"), (15552000, "6mo"), (31536000, "1y")])
def test_format_duration_round_trips(seconds, text):
    assert format_duration(seconds) == text and parse_duration(text) == seconds


@given(start=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)),
       day=st.integers(0, 2000), hour=st.integers(0, 23), minute=st.integers(0, 59))
def test_format_at_round_trips_parse_at(start, day, hour, minute):
    text = f"d{day} {hour:02d}:{minute:02d}"
    assert format_at(parse_at(text, start, allow_before=True), start) == text


@given(start=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1)).map(
           lambda d: d.replace(second=0, microsecond=0)),
       minutes=st.integers(0, 3 * 365 * 1440))
def test_parse_at_round_trips_format_at(start, minutes):
    seconds = minutes * 60.0
    assert parse_at(format_at(seconds, start), start) == seconds
    assert parse_at((start + timedelta(seconds=seconds)).isoformat(), start) == seconds


def test_the_clock_and_durations_are_bounded_to_100_years():
    assert parse_duration("100y") == parse_duration("36500d") == 36500 * 86400
    for text in ("101y", "36501d", "1000000000y", "99999999999999999999999999999w"):
        with pytest.raises(ValueError, match=r"^expected a duration of at most 100 years \(36500d\), got"):
            parse_duration(text)
    assert parse_at("d36500 09:00", START) == 36500 * 86400
    for value in ("d36500 09:01", "d36501 00:00", "d1000000000 08:00", "2126-03-01T00:00:00"):
        with pytest.raises(ValueError, match=r"^expected a moment at most 100 years \(36500 days\) after the "
                                             r"scenario start, got"):
            parse_at(value, START)


@pytest.mark.parametrize("text", ["３h", "1.５h", "d３ 08:00", "d3 ０8:00", "d3 08:０0"])
def test_full_width_digits_are_refused(text):
    with pytest.raises(ValueError, match="^expected "):
        parse_duration(text) if not text.startswith("d") else parse_at(text, START)
