"""The base of every mapping in a scenario file, and pydantic's errors as the loader's lines.

``Strict``: ``extra="forbid"`` (the JSON Schema's ``additionalProperties: false``), an
unknown key refused with a did-you-mean, a key of another step kind refused with where it
is allowed, and ``null`` read as "not given". ``first_problem`` turns a ``ValidationError``
of a whole file into (step index, field path, message) for the loader's one-line error.
"""

from __future__ import annotations

import difflib
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from .schema_types import brief, fail, join_words, on_kind


def _nullable(annotation) -> bool:
    return any(arg is type(None) or _nullable(arg) for arg in get_args(annotation))


class Strict(BaseModel):
    """A mapping of a scenario file. Refused, in this order: not a mapping (``expected WHAT``);
    a key that is not a field (did-you-mean among ``_family``, or, for a key of the family
    that belongs elsewhere, ``only allowed on KINDS steps``); then the fields in order.

    ``null`` for a field means "not given": a required field is then missing, an optional
    one takes its default -- except for the fields in ``_keep_none`` and optional fields
    whose type does not admit null (``motivation: null`` is refused as a bad number).

    A field whose name is a Python keyword is declared with a trailing ``_`` and the file's
    spelling as its alias (``from_ = Field(None, alias="from")``); keys are the aliases.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)
    _what: ClassVar[str] = ""              # "a mapping {key, value?}" (derived from the fields if empty)
    _family: ClassVar[tuple] = ()          # keys known in this family of mappings (default: the fields)
    _places: ClassVar[dict] = {}           # key of the family -> the step kinds allowing it
    _kind: ClassVar[str] = ""              # the step kind this mapping belongs to, for messages
    _keep_none: ClassVar[tuple] = ()       # fields where null is a value to check, not "not given"
    _none_absent: ClassVar[frozenset] = frozenset()
    _names: ClassVar[frozenset] = frozenset()  # the fields' names

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = {f.alias or name: f for name, f in cls.model_fields.items()}   # as the file spells them
        cls._names = frozenset(fields)
        cls._none_absent = frozenset(name for name, f in fields.items() if name not in cls._keep_none
                                     and (f.is_required() or _nullable(f.annotation)))
        if not cls.__dict__.get("_what"):
            cls._what = "a mapping {" + ", ".join(n if f.is_required() else n + "?" for n, f in fields.items()) + "}"

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data):
        if not isinstance(data, dict):
            raise fail(f"expected {cls._what}, got {brief(data)}")
        if not cls._names.issuperset(data):
            raise cls._unknown(next(key for key in data if key not in cls._names))
        cls._more(data)
        if None in data.values():   # rare: only then look for the keys to drop
            return {k: v for k, v in data.items() if v is not None or k not in cls._none_absent}
        return data

    @classmethod
    def _more(cls, data: dict) -> None:
        """Further checks of the raw mapping, before its fields (none by default)."""

    @classmethod
    def _unknown(cls, key) -> PydanticCustomError:
        known = cls._family or tuple(f.alias or name for name, f in cls.model_fields.items())
        if key in cls._places and cls._kind:
            return fail(f"only allowed on {join_words(cls._places[key])} steps, {on_kind(cls._kind)}", str(key))
        close = difflib.get_close_matches(str(key), list(known), n=1)
        tip = f"; did you mean '{close[0]}'?" if close else f" (expected one of {', '.join(known)})"
        return fail(f"'{key}' is not a known key{tip}", str(key))


def field_path(loc) -> str:
    """A pydantic location as a field path; parts starting with ``~`` (union tags) are left out.

    >>> field_path(("check", "belief", "~many", 1, "max")), field_path(())
    ('check.belief[1].max', '')
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part.startswith("~"):
            out += f".{part}" if out else part
    return out


def first_problem(error: ValidationError) -> tuple[int | None, str, str]:
    """(step index or None, field path, message) of the first error of a validated scenario file
    (a missing top-level field first, as the loader always has)."""
    return all_problems(error)[0]


def all_problems(error: ValidationError) -> list[tuple[int | None, str, str]]:
    """(step index or None, field path, message) of every error of a validated scenario file:
    missing top-level fields first, then the others in pydantic's order (the file's order)."""
    errors = error.errors(include_url=False)
    top = [e for e in errors if e["type"] == "missing" and len(e["loc"]) == 1]
    return [_problem(e) for e in top + [e for e in errors if e not in top]]


def _problem(err: dict) -> tuple[int | None, str, str]:
    loc, step = err["loc"], None
    if len(loc) > 1 and loc[0] == "steps" and isinstance(loc[1], int):
        step, loc = loc[1], loc[2:]
    field = field_path(loc)
    if err["type"] == "scenario":
        sub = err["ctx"]["sub"]   # a key below the value, or an index in it
        if isinstance(sub, int):
            field += f"[{sub}]"
        elif sub:
            field = f"{field}.{sub}" if field else sub
        return step, field, err["ctx"]["message"]
    if err["type"] == "missing":
        return step, field, "missing (required)"
    msg = err["msg"]   # not expected: every type above words its own refusals
    return step, field, f"{msg[:1].lower()}{msg[1:]}, got {brief(err.get('input'))}"
