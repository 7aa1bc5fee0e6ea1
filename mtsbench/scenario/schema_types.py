"""The value types of a scenario file and their one-line refusals, for the models of
``schema_parts`` and ``schema_models``.

Each type below is a pydantic type (so the JSON Schema knows it: ``minimum``, ``pattern``,
``enum``) with a ``BeforeValidator`` that is the authority on what it accepts and words the
refusal as the loader always has ("expected a number from 0 to 1, got 2"). A refusal is a
``PydanticCustomError`` of type ``scenario`` (``fail``) whose context holds the ``message``
and a ``sub`` to append to the error's location: a key below the value, or an index in it.
Patterns given to the JSON Schema only (``at``, ``start``, durations) guide editors; the
validators decide.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Literal, Union

from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from .times import AT_FORMS, MAX_DAYS, parse_duration

SCENARIO_ID = re.compile(r"[a-z0-9_]+")
STEP_ID = re.compile(r"[A-Za-z0-9_.:\-]+")
LANGUAGES = ("en", "zh")
MAX_K = 10_000                                      # the largest expect.k (loader docstring)
LAST_START = datetime(9899, 12, 31, 23, 59, 59)     # start + 100 years must still be a datetime
# patterns for the JSON Schema only (they guide editors; the validators below decide)
_CLOCK = r"(?:[01][0-9]|2[0-3])(?::[0-5][0-9](?::[0-5][0-9](?:[.,][0-9]+)?)?)?"   # [0-9]: ASCII in every engine
ISO = (r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
       rf"(?:[T ]{_CLOCK}(?:[Zz]|[+-][0-9]{{2}}(?::?[0-9]{{2}})?)?)?")
AT_PATTERN = rf"^\s*(?:d[0-9]+\s+(?:[01]?[0-9]|2[0-3]):[0-5][0-9]|{ISO})\s*$"
DURATION_PATTERN = r"^\s*[0-9]+(?:\.[0-9]+)?\s*(?:mo|s|m|h|d|w|y)\s*$"


def brief(value) -> str:
    """``repr`` cut at 40 characters, as error messages quote offending values.

    >>> brief("x" * 50)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def join_words(words, conj: str = "and") -> str:
    """Words joined as a sentence lists them.

    >>> join_words(["say", "reply", "probe"]), join_words(["probe"], "or")
    ('say, reply and probe', 'probe')
    """
    words = list(words)
    return f"{', '.join(words[:-1])} {conj} {words[-1]}" if len(words) > 1 else words[0]


def on_kind(kind: str) -> str:
    """Where a key was found that its step kind does not take.

    >>> on_kind("idle"), on_kind("say")
    ("not on an 'idle' step", "not on a 'say' step")
    """
    return f"not on {'an' if kind[0] in 'aeiou' else 'a'} '{kind}' step"


def fail(message: str, sub: str | int = "") -> PydanticCustomError:
    """A refusal worded ``message``, at the value's place plus ``sub``: a key below it, or an index in it."""
    return PydanticCustomError("scenario", "{message}", {"message": message, "sub": sub})


# --- scalars ---------------------------------------------------------------------------------------------

def _text(value):
    if not isinstance(value, str) or not value.strip():
        raise fail(f"expected non-empty text, got {brief(value)}")
    return value


def _number(lo=None, hi=None):
    want = (f"a number from {lo:g} to {hi:g}" if lo is not None and hi is not None
            else "a number" if lo is None else f"a number >= {lo:g}")

    def check(value):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise fail(f"expected {want}, got {brief(value)}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise fail(f"expected {want}, got {value!r}")
        try:
            return float(value)
        except OverflowError:                # an integer of hundreds of digits
            raise fail(f"expected {want}, got {brief(value)} (too large for a number)") from None
    return check


def _int(lo: int, hi: int | None = None):
    want = f"an integer >= {lo}" if hi is None else f"an integer from {lo} to {hi:,}"

    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
            raise fail(f"expected {want}, got {brief(value)}")
        return value
    return check


def _bool(value):
    if not isinstance(value, bool):
        raise fail(f"expected true or false, got {brief(value)}")
    return value


def _true(value):
    if value is not True:
        raise fail(f"expected true (or 'same_as: STEP' instead), got {brief(value)}")
    return value


def _scalar(value):
    if not isinstance(value, (str, int, float, bool)):
        raise fail(f"expected text, a number or true/false, got {brief(value)}")
    return value


def _duration(value) -> float:
    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise fail(str(e)) from None
    if seconds <= 0:
        raise fail(f"expected a positive duration, got {brief(value)}")
    return seconds


def _ref(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return _text(value)


def _step_id(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not STEP_ID.fullmatch(value):
        raise fail(f"expected letters, digits, '_', '.', ':' or '-', got {brief(value)}")
    return value


def _scenario_id(value):
    if not isinstance(value, str) or not SCENARIO_ID.fullmatch(value):
        raise fail(f"expected lowercase letters, digits and '_' only, got {brief(value)}")
    return value


def _language(value):
    if value not in LANGUAGES:
        raise fail(f"expected one of {', '.join(LANGUAGES)}, got {brief(value)}")
    return value


def _start(value) -> datetime:
    start = None
    if isinstance(value, datetime):
        start = value.replace(tzinfo=None)
    elif isinstance(value, date):
        start = datetime.combine(value, datetime.min.time())
    elif isinstance(value, str):
        try:
            start = datetime.fromisoformat(value.strip()).replace(tzinfo=None)
        except ValueError:
            pass
    if start is None:
        raise fail(f"expected an ISO datetime such as 2026-03-02T09:00:00, got {brief(value)}")
    if start > LAST_START:
        raise fail(f"expected an ISO datetime no later than 9899-12-31 (the clock runs 100 years from the start), "
                   f"got {brief(value if isinstance(value, str) else start.isoformat())}")
    return start


def _at(value) -> str:
    """The text of an ``at`` (a YAML datetime or date as its ISO text); the loader parses it."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if not isinstance(value, str):
        raise fail(f"expected {AT_FORMS}, got {value!r}")
    return value


Text = Annotated[str, Field(pattern=r"\S"), BeforeValidator(_text)]
Unit = Annotated[float, Field(ge=0, le=1), BeforeValidator(_number(0, 1))]
Salience = Annotated[float, Field(ge=0, le=10), BeforeValidator(_number(0, 10))]
NonNegative = Annotated[float, Field(ge=0), BeforeValidator(_number(0))]
Count = Annotated[int, Field(ge=0), BeforeValidator(_int(0))]
K = Annotated[int, Field(ge=1, le=MAX_K), BeforeValidator(_int(1, MAX_K))]
Bool = Annotated[bool, BeforeValidator(_bool)]
TrueOnly = Annotated[Literal[True], BeforeValidator(_true)]
Scalar = Annotated[Union[str, int, float, bool], BeforeValidator(_scalar)]
Duration = Annotated[float, BeforeValidator(_duration), WithJsonSchema(
    {"type": "string", "pattern": DURATION_PATTERN,
     "description": f"a number and a unit s, m, h, d, w, mo or y (30m, 1.5h, 3d, 6mo, 1y); at most {MAX_DAYS}d"})]
Ref = Annotated[Union[Annotated[str, Field(pattern=r"\S")], int], BeforeValidator(_ref)]
StepId = Annotated[Union[Annotated[str, Field(pattern=rf"^{STEP_ID.pattern}$")], int], BeforeValidator(_step_id)]
ScenarioId = Annotated[str, Field(pattern=rf"^{SCENARIO_ID.pattern}$"), BeforeValidator(_scenario_id)]
Language = Annotated[Literal["en", "zh"], BeforeValidator(_language)]
Start = Annotated[datetime, BeforeValidator(_start), WithJsonSchema({"type": "string", "pattern": f"^\\s*{ISO}\\s*$"})]
At = Annotated[str, BeforeValidator(_at), WithJsonSchema({"type": "string", "pattern": AT_PATTERN})]


def list_of(what: str, nonempty: str | None = None):
    """A list check: ``expected WHAT, got X``; ``nonempty``: the message for ``[]``."""
    def check(value):
        if not isinstance(value, list):
            raise fail(f"expected {what}, got {brief(value)}")
        if nonempty and not value:
            raise fail(nonempty)
        return value
    return check


def _refs(what: str, nonempty: bool = False):
    """A list of step ids; an item's place is ``[i]``, or none when the list has one item."""
    def check(value):
        list_of(what, f"expected {what}, got []" if nonempty else None)(value)
        for i, ref in enumerate(value):
            try:
                _ref(ref)
            except PydanticCustomError as e:
                raise fail(e.context["message"], i if len(value) > 1 else "") from None
        return value
    return check


RefList = Annotated[list[Ref], BeforeValidator(_refs("a list of step ids such as [allergy]"))]


def _two_or_more(value):
    _refs("a list of two or more step ids, best first, such as [milk, weather]")(value)
    if len(value) < 2:
        raise fail(f"expected a list of two or more step ids, best first, such as [milk, weather], got {brief(value)}")
    return value


OrderList = Annotated[list[Ref], Field(min_length=2), BeforeValidator(_two_or_more)]


def _ref_or_refs(what: str):
    """A step id, or a non-empty list of them (``what``: how the refusal names the two)."""
    many = _refs(what, nonempty=True)

    def check(value):
        if isinstance(value, list):
            return many(value)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, str)
                                                                             and not value.strip()):
            raise fail(f"expected {what}, got {brief(value)}")
        return value
    return check


RefOrRefs = Annotated[Union[Ref, Annotated[list[Ref], Field(min_length=1)]],
                      BeforeValidator(_ref_or_refs("a step id or a non-empty list of step ids such as [cough, fever]"))]
SessionRefs = Annotated[list[Ref], Field(min_length=1), BeforeValidator(_refs("a non-empty list of step ids", True))]


def _sessions(value):
    if not isinstance(value, dict) or not value:
        raise fail(f"expected a mapping {{SESSION: [STEP...]}}, got {brief(value)}")
    return {str(name): ids for name, ids in value.items()}


Sessions = Annotated[dict[str, SessionRefs], Field(min_length=1), BeforeValidator(_sessions)]
