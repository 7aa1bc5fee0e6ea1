"""Load a scenario file into typed objects, refusing any malformed file with one line.

Every problem is reported as ``ScenarioError`` whose text is a single line naming the
file, the step (0-based index and id) where there is one, the field and what was
expected, e.g.::

    scenarios/x.yaml: step 4 (milk): at: goes back in time (d3 08:00 after d3 09:00)

Checks: YAML syntax; required fields; types and ranges; unknown keys (with a
did-you-mean); exactly one step kind per step; non-decreasing ``at`` and no step inside
a previous ``idle``; unique step ids; references (``recall``, ``absent``,
``event.same_as``, ``check`` steps) to earlier steps only; expectations only on the
step kinds they belong to.
"""

from __future__ import annotations

import difflib
import re
from datetime import date, datetime
from pathlib import Path

import yaml

from .model import (STEP_KINDS, TEXT_KINDS, BeliefCheck, ConjectureCheck, EventCountCheck, EventExpect,
                    EventHint, Expect, FactHint, Hints, InferHint, Range, Scenario, Step,
                    StepAttentionCheck, TierCheck)
from .times import format_at, parse_at, parse_duration

_ID = re.compile(r"^[a-z0-9_]+$")
_STEP_ID = re.compile(r"^[A-Za-z0-9_.:\-]+$")
TOP_KEYS = ("id", "title", "language", "start", "tags", "steps")
STEP_KEYS = ("id", "at", *STEP_KINDS, "motivation", "hints", "expect")
LANGUAGES = ("en", "zh")


class ScenarioError(Exception):
    """A malformed scenario; ``str(error)`` is one line: file, step, field, what was expected."""


class _Where:
    """Where in the file a value sits, for messages."""

    def __init__(self, path: str, step: str | None = None):
        self.path, self.step = path, step

    def fail(self, field: str, message: str) -> ScenarioError:
        place = f"{self.path}: step {self.step}: " if self.step else f"{self.path}: "
        return ScenarioError(f"{place}{field}: {message}" if field else f"{place}{message}")


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _mapping(w: _Where, field: str, value, allowed, required=()) -> dict:
    if not isinstance(value, dict):
        raise w.fail(field, f"expected a mapping, got {_brief(value)}")
    for key in value:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), list(allowed), n=1)
            tip = f"; did you mean '{hint[0]}'?" if hint else f" (known: {', '.join(allowed)})"
            raise w.fail(_join(field, str(key)), f"'{key}' is not a known key{tip}")
    for key in required:
        if key not in value or value[key] is None:
            raise w.fail(_join(field, key), "missing (required)")
    return value


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def _number(w, field, value, lo=None, hi=None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise w.fail(field, f"expected a number, got {_brief(value)}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise w.fail(field, f"expected a number in [{lo:g}, {hi:g}], got {value!r}")
    return float(value)


def _int(w, field, value, lo=None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise w.fail(field, f"expected an integer, got {_brief(value)}")
    if lo is not None and value < lo:
        raise w.fail(field, f"expected an integer >= {lo}, got {value}")
    return value


def _text(w, field, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise w.fail(field, f"expected non-empty text, got {_brief(value)}")
    return value


def _bool(w, field, value) -> bool:
    if not isinstance(value, bool):
        raise w.fail(field, f"expected true or false, got {_brief(value)}")
    return value


def _duration(w, field, value) -> float:
    try:
        return parse_duration(value)
    except ValueError as e:
        raise w.fail(field, str(e)) from None


def _list(w, field, value) -> list:
    if not isinstance(value, list):
        raise w.fail(field, f"expected a list, got {_brief(value)}")
    return value


def _one_or_many(w, field, value) -> list:
    return value if isinstance(value, list) else [value]


def _hints(w: _Where, raw) -> Hints:
    raw = _mapping(w, "hints", raw, ("salience", "facts", "event", "infer"))
    salience = None if raw.get("salience") is None else _number(w, "hints.salience", raw["salience"], 0, 10)
    facts = []
    for i, f in enumerate(_list(w, "hints.facts", raw.get("facts", []))):
        name = f"hints.facts[{i}]"
        f = _mapping(w, name, f, ("key", "text", "value", "belief"), ("key", "text", "value"))
        if not isinstance(f["value"], (str, int, float, bool)):
            raise w.fail(name + ".value", f"expected text, a number or true/false, got {_brief(f['value'])}")
        facts.append(FactHint(_text(w, name + ".key", f["key"]), _text(w, name + ".text", f["text"]), f["value"],
                              _number(w, name + ".belief", f.get("belief", 0.7), 0, 1)))
    event = None
    if raw.get("event") is not None:
        e = _mapping(w, "hints.event", raw["event"], ("category", "text", "valid"), ("category",))
        event = EventHint(_text(w, "hints.event.category", e["category"]),
                          None if e.get("text") is None else _text(w, "hints.event.text", e["text"]),
                          None if e.get("valid") is None else _duration(w, "hints.event.valid", e["valid"]))
    infer = []
    for i, f in enumerate(_list(w, "hints.infer", raw.get("infer", []))):
        name = f"hints.infer[{i}]"
        f = _mapping(w, name, f, ("key", "text", "belief", "ttl"), ("key", "text", "belief", "ttl"))
        infer.append(InferHint(_text(w, name + ".key", f["key"]), _text(w, name + ".text", f["text"]),
                               _number(w, name + ".belief", f["belief"], 0, 1), _duration(w, name + ".ttl", f["ttl"])))
    return Hints(salience, tuple(facts), event, tuple(infer))


def _range(w, field, raw) -> Range:
    raw = _mapping(w, field, raw, ("min", "max"))
    lo = None if raw.get("min") is None else _number(w, field + ".min", raw["min"])
    hi = None if raw.get("max") is None else _number(w, field + ".max", raw["max"])
    if lo is not None and hi is not None and lo > hi:
        raise w.fail(field, f"min {lo:g} is above max {hi:g}")
    return Range(lo, hi)


def _refs(w, field, value, earlier: set[str], later: set[str]) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    out = []
    for ref in items:
        ref = str(ref) if isinstance(ref, (str, int)) and not isinstance(ref, bool) else _text(w, field, ref)
        if ref not in earlier:
            if ref in later:
                raise w.fail(field, f"refers to step '{ref}' that comes later; expected an earlier step id")
            hint = difflib.get_close_matches(ref, sorted(earlier), n=1)
            tip = f"; did you mean '{hint[0]}'?" if hint else ""
            raise w.fail(field, f"refers to unknown step '{ref}'{tip}")
        out.append(ref)
    return tuple(out)


def _expect(w, raw, kind: str, earlier: set[str], later: set[str]) -> Expect:
    raw = _mapping(w, "expect", raw, ("attention", "event", "recall", "absent", "k"))
    probe_only = [k for k in ("recall", "absent", "k") if k in raw]
    if probe_only and kind != "probe":
        raise w.fail(f"expect.{probe_only[0]}", f"only allowed on probe steps, not on a '{kind}' step")
    observe_only = [k for k in ("attention", "event") if k in raw]
    if observe_only and kind not in ("say", "reply", "perceive"):
        raise w.fail(f"expect.{observe_only[0]}", f"only allowed on say, reply and perceive steps, not on '{kind}'")
    attention = None if raw.get("attention") is None else _range(w, "expect.attention", raw["attention"])
    event = None
    if raw.get("event") is not None:
        e = _mapping(w, "expect.event", raw["event"], ("same_as", "new"))
        if ("same_as" in e) == ("new" in e):
            raise w.fail("expect.event", "expected exactly one of 'same_as' or 'new'")
        event = (EventExpect(same_as=_refs(w, "expect.event.same_as", e["same_as"], earlier, later)[0])
                 if "same_as" in e else EventExpect(new=_bool(w, "expect.event.new", e["new"])))
    return Expect(attention, event,
                  _refs(w, "expect.recall", raw.get("recall", []), earlier, later) if "recall" in raw else (),
                  _refs(w, "expect.absent", raw.get("absent", []), earlier, later) if "absent" in raw else (),
                  _int(w, "expect.k", raw.get("k", 5), lo=1))


CHECK_FIELDS = {
    "belief": (("key", "value", "min", "max"), ("key",)),
    "conjecture": (("key", "present"), ("key",)),
    "attention": (("step", "min", "max"), ("step",)),
    "tier": (("step", "max"), ("step", "max")),
    "event_count": (("category", "equals"), ("category", "equals")),
}


def _checks(w, raw, earlier: set[str], later: set[str]) -> tuple:
    raw = _mapping(w, "check", raw, tuple(CHECK_FIELDS))
    if not raw:
        raise w.fail("check", f"expected at least one of {', '.join(CHECK_FIELDS)}")
    out = []
    for name, specs in raw.items():
        for i, spec in enumerate(_one_or_many(w, f"check.{name}", specs)):
            field = f"check.{name}" if not isinstance(specs, list) else f"check.{name}[{i}]"
            allowed, required = CHECK_FIELDS[name]
            spec = _mapping(w, field, spec, allowed, required)
            if name == "belief":
                r = _range(w, field, {k: spec[k] for k in ("min", "max") if k in spec})
                out.append(BeliefCheck(_text(w, field + ".key", spec["key"]), spec.get("value"), r.min, r.max))
            elif name == "conjecture":
                out.append(ConjectureCheck(_text(w, field + ".key", spec["key"]),
                                           _bool(w, field + ".present", spec.get("present", True))))
            elif name == "attention":
                r = _range(w, field, {k: spec[k] for k in ("min", "max") if k in spec})
                out.append(StepAttentionCheck(_refs(w, field + ".step", spec["step"], earlier, later)[0], r.min, r.max))
            elif name == "tier":
                out.append(TierCheck(_refs(w, field + ".step", spec["step"], earlier, later)[0],
                                     _int(w, field + ".max", spec["max"], lo=0)))
            else:
                out.append(EventCountCheck(_text(w, field + ".category", spec["category"]),
                                           _int(w, field + ".equals", spec["equals"], lo=0)))
    return tuple(out)


def _read_yaml(path: Path, shown: str):
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{shown}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{shown}: cannot read the file ({type(e).__name__})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ScenarioError(f"{shown}: invalid YAML{where}: {problem}") from None


def _start(w: _Where, value) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime.combine(value, datetime.min.time())
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).replace(tzinfo=None)
        except ValueError:
            pass
    raise w.fail("start", f"expected an ISO datetime such as 2026-03-02T09:00:00, got {_brief(value)}")


def load_scenario(path: str | Path) -> Scenario:
    """Parse and validate one scenario file (see the module docstring)."""
    path = Path(path)
    shown = str(path)
    raw = _read_yaml(path, shown)
    top = _Where(shown)
    raw = _mapping(top, "", raw, TOP_KEYS, ("id", "title", "language", "start", "steps"))
    sid = _text(top, "id", raw["id"]) if isinstance(raw["id"], str) else _text(top, "id", raw["id"])
    if not _ID.match(sid):
        raise top.fail("id", f"expected lowercase letters, digits and '_' only, got {sid!r}")
    if sid != path.stem:
        raise top.fail("id", f"'{sid}' must equal the file's name '{path.stem}'")
    language = raw["language"]
    if language not in LANGUAGES:
        raise top.fail("language", f"expected one of {', '.join(LANGUAGES)}, got {_brief(language)}")
    start = _start(top, raw["start"])
    tags = tuple(_text(top, f"tags[{i}]", t) for i, t in enumerate(_list(top, "tags", raw.get("tags", []))))
    raw_steps = _list(top, "steps", raw["steps"])
    if not raw_steps:
        raise top.fail("steps", "expected at least one step")
    ids = [(s.get("id") if isinstance(s, dict) and s.get("id") is not None else f"s{i}")
           for i, s in enumerate(raw_steps)]
    steps: list[Step] = []
    seen: set[str] = set()
    last_at, busy_until, busy_step = 0.0, 0.0, None
    for i, rs in enumerate(raw_steps):
        step_id = ids[i]
        w = _Where(shown, f"{i} ({step_id})")
        rs = _mapping(w, "", rs, STEP_KEYS, ("at",))
        step_id = str(step_id) if isinstance(step_id, (str, int)) and not isinstance(step_id, bool) else step_id
        if not isinstance(step_id, str) or not _STEP_ID.match(step_id):
            raise w.fail("id", f"expected letters, digits, '_', '.', ':' or '-', got {_brief(step_id)}")
        if step_id in seen:
            raise w.fail("id", f"duplicate step id '{step_id}'")
        kinds = [k for k in STEP_KINDS if k in rs]
        if len(kinds) != 1:
            have = f"has both '{kinds[0]}' and '{kinds[1]}'" if kinds else "has no step kind"
            raise w.fail("", f"{have}; a step has exactly one of {', '.join(STEP_KINDS)}")
        kind = kinds[0]
        try:
            at = parse_at(rs["at"], start)
        except ValueError as e:
            raise w.fail("at", str(e)) from None
        if at < 0:
            raise w.fail("at", f"before the scenario start ({format_at(at, start) if at > -86400 else rs['at']})")
        if at < last_at:
            raise w.fail("at", f"goes back in time ({format_at(at, start)} after {format_at(last_at, start)})")
        if at < busy_until:
            raise w.fail("at", f"falls inside the idle of step {busy_step} (idle until {format_at(busy_until, start)})")
        if "motivation" in rs and kind != "probe":
            raise w.fail("motivation", f"only allowed on probe steps, not on a '{kind}' step")
        later = set(ids[i + 1:])
        text = _text(w, kind, rs[kind]) if kind in TEXT_KINDS else None
        duration = _duration(w, "idle", rs["idle"]) if kind == "idle" else 0.0
        checks = _checks(w, rs["check"], seen, later) if kind == "check" else ()
        hints = _hints(w, rs["hints"]) if rs.get("hints") is not None else Hints()
        expect = _expect(w, rs["expect"], kind, seen, later) if rs.get("expect") is not None else Expect()
        motivation = _number(w, "motivation", rs.get("motivation", 0.5), 0, 1)
        steps.append(Step(i, step_id, at, kind, text, motivation, duration, hints, expect, checks))
        seen.add(step_id)
        last_at = at
        if kind == "idle":
            busy_until, busy_step = at + duration, f"{i} ({step_id})"
    return Scenario(sid, _text(top, "title", raw["title"]), language, start, tags, tuple(steps), path)
