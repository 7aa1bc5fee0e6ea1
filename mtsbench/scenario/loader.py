"""Load a scenario file (DESIGN §3) into typed objects, refusing a malformed one in one line.

``load_scenario(path)`` returns a ``Scenario`` or raises ``ScenarioError``, whose text is
a single line with one of these shapes::

    PATH: FIELD: WHAT WAS EXPECTED                          (top-level problems)
    PATH: step INDEX (ID): FIELD: WHAT WAS EXPECTED         (problems in a step)
    PATH: invalid YAML at line L, column C: PROBLEM

INDEX is 0-based, ID the step's id or its default ``s<INDEX>``, FIELD a dotted path inside
the step or file (``at``, ``hints.facts[0].value``, ``expect.recall``, ``check.belief[1].min``;
for an unknown key, the key itself). Examples::

    x.yaml: step 4 (milk): at: goes back in time (d3 08:00 after d3 09:00)
    x.yaml: step 0 (s0): hint: 'hint' is not a known key; did you mean 'hints'?
    x.yaml: language: expected one of en, zh, got 'fr'

The one message about a whole step has no FIELD:
``x.yaml: step 0 (s0): has both 'say' and 'probe'; a step has exactly one of say, ...``.
A problem with the whole file (empty, not a mapping, unreadable) has none either.
Offending values are quoted briefly (``repr``, cut at 40 characters).

Refused: invalid YAML (including duplicate keys); a top level that is not a mapping;
missing required fields; wrong types and out-of-range numbers; unknown keys (with a
did-you-mean); zero or several step kinds in a step; ``at`` before the start, going back
in time, or inside an earlier step's idle; bad durations; duplicate step ids; references
(``recall``, ``absent``, ``event.same_as``, ``check`` ``attention.step``/``tier.step``) that
do not name an *earlier* say/reply/perceive/probe step; a scenario id that is not
``[a-z0-9_]+`` or differs from the file's stem; a language other than en or zh;
expectations, hints, ``motivation``, ``category`` or ``abstain`` on the wrong step kind;
``event`` expecting both or neither of ``same_as`` and ``new``; an abstaining probe
(``abstain: true``) that also expects ``recall`` or ``recall_sessions``.

Bounds, so that no value overflows the clock, a ``datetime`` or an output column (each a
one-line error like any other; see ``mtsbench.scenario.times``):

- the clock runs 100 years (``MAX_DAYS`` = 36500 days) from ``start``: a step's ``at``
  (``dN`` with N <= 36500, or an ISO datetime) and the end of an ``idle`` step lie at most
  36500 days after the start, and ``start`` is no later than 9899-12-31 (so that the 100
  years fit in a datetime);
- every duration (``idle``, ``hints.event.valid``, ``hints.infer[].ttl``) is at most 100
  years (``100y`` = ``36500d``);
- a probe's ``expect.k`` is an integer from 1 to ``MAX_K`` = 10,000 (memories a probe uses;
  a larger k is no benchmark, and an int beyond int64 breaks ``results.parquet``).

Digits are ASCII only: ``idle: ３h`` or ``at: d３ 08:00`` (full-width digits) are refused
as malformed, with the usual "expected ..." message, though Python's ``int`` would read them.

Probe fields for imported benchmarks (optional): ``category`` (text: the group its evidence
recall is reported under, e.g. ``multi-hop``), ``abstain: true`` (the memory does not hold
the answer: an adversarial or abstention question, reported but kept out of recall) and
``expect.recall_sessions`` (``{SESSION: [STEP...]}``: a session counts as found when any
of its steps is among the top k; session recall@k is the share found).
"""

from __future__ import annotations

import difflib
import re
from datetime import date, datetime, timedelta
from pathlib import Path

import yaml

from ..errors import ScenarioError
from .model import (CHECK_NAMES, OBSERVED_KINDS, STEP_KINDS, TEXT_KINDS, BeliefCheck, ConjectureCheck,
                    EventCountCheck, EventExpect, EventTag, Expect, Fact, Hints, Impression, Range,
                    Scenario, Step, StepAttentionCheck, TierCheck)
from .times import MAX_DAYS, MAX_SECONDS, format_at, parse_at, parse_duration

SCENARIO_ID = re.compile(r"[a-z0-9_]+")
STEP_ID = re.compile(r"[A-Za-z0-9_.:\-]+")
LANGUAGES = ("en", "zh")
MAX_K = 10_000                      # the largest expect.k (module docstring)
LAST_START = datetime(9899, 12, 31, 23, 59, 59)   # start + 100 years must still be a datetime
TOP_KEYS = ("id", "title", "language", "start", "tags", "steps")
TOP_REQUIRED = ("id", "title", "language", "start", "steps")
STEP_KEYS = ("id", "at", *STEP_KINDS, "motivation", "category", "abstain", "hints", "expect")
HINT_KEYS = ("salience", "facts", "event", "infer")
EXPECT_KEYS = ("attention", "event", "recall", "absent", "k", "recall_sessions")
CHECK_FIELDS = {  # allowed keys, required keys
    "belief": (("key", "value", "min", "max"), ("key",)),
    "conjecture": (("key", "present"), ("key",)),
    "attention": (("step", "min", "max"), ("step",)),
    "tier": (("step", "max"), ("step", "max")),
    "event_count": (("category", "equals"), ("category", "equals")),
}


def brief(value) -> str:
    """``repr`` cut at 40 characters, as error messages quote offending values.

    >>> brief("x" * 50)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_text(path: Path, shown: str, error: type[Exception], expected: str, folder_expected: str | None = None) -> str:
    """The UTF-8 text of ``path``, or ``error`` with one line naming ``shown`` and what was
    ``expected`` (``folder_expected`` when the path is a folder)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise error(f"{shown}: is a folder; expected {folder_expected or expected}") from None
    except UnicodeDecodeError as e:
        raise error(f"{shown}: not UTF-8 text (bad byte at offset {e.start}); expected {expected}") from None
    except OSError as e:
        raise error(f"{shown}: cannot read the file ({e.strerror or type(e).__name__})") from None


def _kinds(kinds, conj: str = "and") -> str:
    kinds = list(kinds)
    return f"{', '.join(kinds[:-1])} {conj} {kinds[-1]}" if len(kinds) > 1 else kinds[0]


def _on(kind: str) -> str:
    return f"not on {'an' if kind[0] in 'aeiou' else 'a'} '{kind}' step"


class _Where:
    """A place in the file (the file, or one step of it) that makes errors."""

    def __init__(self, path: str, step: str | None = None):
        self.path, self.step = path, step

    def fail(self, field: str, message: str) -> ScenarioError:
        place = f"{self.path}: {self.step}: " if self.step else f"{self.path}: "
        return ScenarioError(place + (f"{field}: {message}" if field else message))


def _sub(field: str, key) -> str:
    return f"{field}.{key}" if field else str(key)


def _mapping(w: _Where, field: str, value, allowed, required=(), what: str = "a mapping") -> dict:
    if not isinstance(value, dict):
        raise w.fail(field, f"expected {what}, got {brief(value)}")
    for key in value:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), list(allowed), n=1)
            tip = f"; did you mean '{close[0]}'?" if close else f" (expected one of {', '.join(allowed)})"
            raise w.fail(_sub(field, key), f"'{key}' is not a known key{tip}")
    for key in required:
        if value.get(key) is None:
            raise w.fail(_sub(field, key), "missing (required)")
    return value


def _number(w, field, value, lo=None, hi=None) -> float:
    if lo is not None and hi is not None:
        want = f"a number from {lo:g} to {hi:g}"
    else:
        want = "a number" if lo is None else f"a number >= {lo:g}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise w.fail(field, f"expected {want}, got {brief(value)}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise w.fail(field, f"expected {want}, got {value!r}")
    return float(value)


def _int(w, field, value, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        want = f"an integer >= {lo}" if hi is None else f"an integer from {lo} to {hi:,}"
        raise w.fail(field, f"expected {want}, got {brief(value)}")
    return value


def _text(w, field, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise w.fail(field, f"expected non-empty text, got {brief(value)}")
    return value


def _optional_text(w, field, value) -> str:
    """A key or category that may be left out: "" (keyless: identity by memory search)."""
    return "" if value is None else _text(w, field, value)


def _bool(w, field, value) -> bool:
    if not isinstance(value, bool):
        raise w.fail(field, f"expected true or false, got {brief(value)}")
    return value


def _scalar(w, field, value):
    if isinstance(value, (str, int, float, bool)):
        return value
    raise w.fail(field, f"expected text, a number or true/false, got {brief(value)}")


def _duration(w, field, value) -> float:
    try:
        seconds = parse_duration(value)
    except ValueError as e:
        raise w.fail(field, str(e)) from None
    if seconds <= 0:
        raise w.fail(field, f"expected a positive duration, got {brief(value)}")
    return seconds


def _list(w, field, value, what: str = "a list") -> list:
    if not isinstance(value, list):
        raise w.fail(field, f"expected {what}, got {brief(value)}")
    return value


def _range(w, field, raw: dict, lo=None, hi=None) -> Range:
    low = None if raw.get("min") is None else _number(w, _sub(field, "min"), raw["min"], lo, hi)
    high = None if raw.get("max") is None else _number(w, _sub(field, "max"), raw["max"], lo, hi)
    if low is not None and high is not None and low > high:
        raise w.fail(field, f"expected min <= max, got min {low:g} above max {high:g}")
    return Range(low, high)


class _Refs:
    """Step ids seen from the step being read: its own, earlier ones (with their kind), later ones.

    ``later`` is a list of every step's id and the index of the current one; the later ids
    are looked at only to word an error (a set of them per step would be quadratic).
    """

    def __init__(self, current: str, earlier: dict[str, str], later: tuple[list, int]):
        self.current, self.earlier, self.later = current, earlier, later

    def one(self, w, field, ref) -> str:
        if isinstance(ref, int) and not isinstance(ref, bool):
            ref = str(ref)
        ref = _text(w, field, ref)
        if ref not in self.earlier:
            if ref == self.current:
                raise w.fail(field, f"refers to this step '{ref}' itself; expected an earlier step")
            ids, index = self.later
            if ref in ids[index + 1:]:
                raise w.fail(field, f"refers to step '{ref}' that comes later; expected an earlier step")
            close = difflib.get_close_matches(ref, list(self.earlier), n=1)
            tip = f"; did you mean '{close[0]}'?" if close else ""
            raise w.fail(field, f"refers to unknown step '{ref}'{tip}")
        if self.earlier[ref] not in TEXT_KINDS:
            kind = self.earlier[ref]
            raise w.fail(field, f"refers to step '{ref}', {'an' if kind == 'idle' else 'a'} {kind} step that "
                                f"leaves no memory; expected a {_kinds(TEXT_KINDS, 'or')} step")
        return ref

    def many(self, w, field, value) -> tuple[str, ...]:
        items = _list(w, field, value, "a list of step ids such as [allergy]")
        return tuple(self.one(w, f"{field}[{i}]" if len(items) > 1 else field, r) for i, r in enumerate(items))


def _hints(w: _Where, raw) -> Hints:
    raw = _mapping(w, "hints", raw, HINT_KEYS)
    salience = None if raw.get("salience") is None else _number(w, "hints.salience", raw["salience"], 0, 10)
    facts = []
    for i, f in enumerate(_list(w, "hints.facts", raw.get("facts") or [], "a list of {key, text, value}")):
        name = f"hints.facts[{i}]"
        f = _mapping(w, name, f, ("key", "text", "value", "belief"), ("text", "value"),
                     "a mapping {key?, text, value, belief?}")
        belief = 0.7 if f.get("belief") is None else _number(w, name + ".belief", f["belief"], 0, 1)
        facts.append(Fact(key=_optional_text(w, name + ".key", f.get("key")), text=_text(w, name + ".text", f["text"]),
                          value=_scalar(w, name + ".value", f["value"]), belief=belief))
    event = None
    if raw.get("event") is not None:
        e = _mapping(w, "hints.event", raw["event"], ("category", "text", "valid"), (),
                     "a mapping {category?, text?, valid?}")
        event = EventTag(_optional_text(w, "hints.event.category", e.get("category")),
                         None if e.get("text") is None else _text(w, "hints.event.text", e["text"]),
                         None if e.get("valid") is None else _duration(w, "hints.event.valid", e["valid"]))
    infer = []
    for i, f in enumerate(_list(w, "hints.infer", raw.get("infer") or [], "a list of {key, text, belief, ttl}")):
        name = f"hints.infer[{i}]"
        f = _mapping(w, name, f, ("key", "text", "belief", "ttl"), ("text", "belief", "ttl"),
                     "a mapping {key?, text, belief, ttl}")
        infer.append(Impression(_optional_text(w, name + ".key", f.get("key")), _text(w, name + ".text", f["text"]),
                                _number(w, name + ".belief", f["belief"], 0, 1), _duration(w, name + ".ttl", f["ttl"])))
    return Hints(salience, tuple(facts), event, tuple(infer))


def _expect(w: _Where, raw, kind: str, refs: _Refs) -> Expect:
    raw = _mapping(w, "expect", raw, EXPECT_KEYS)
    for key in raw:
        if key in ("recall", "absent", "k", "recall_sessions") and kind != "probe":
            raise w.fail(f"expect.{key}", f"only allowed on probe steps, {_on(kind)}")
        if key in ("attention", "event") and kind not in OBSERVED_KINDS:
            raise w.fail(f"expect.{key}", f"only allowed on {_kinds(OBSERVED_KINDS)} steps, {_on(kind)}")
    attention = None
    if raw.get("attention") is not None:
        a = _mapping(w, "expect.attention", raw["attention"], ("min", "max"), (), "a mapping {min?, max?}")
        attention = _range(w, "expect.attention", a, 0, 10)
    event = None
    if raw.get("event") is not None:
        e = _mapping(w, "expect.event", raw["event"], ("same_as", "new"), (), "{same_as: STEP} or {new: true}")
        if "same_as" in e and "new" in e:
            raise w.fail("expect.event", "give either 'same_as: STEP' or 'new: true', not both")
        if "same_as" in e:
            event = EventExpect(same_as=refs.one(w, "expect.event.same_as", e["same_as"]))
        elif e.get("new") is True:
            event = EventExpect(new=True)
        elif "new" in e:
            raise w.fail("expect.event.new", f"expected true (or 'same_as: STEP' instead), got {brief(e['new'])}")
        else:
            raise w.fail("expect.event", "expected 'same_as: STEP' or 'new: true', got {}")
    recall = refs.many(w, "expect.recall", raw["recall"]) if "recall" in raw else ()
    absent = refs.many(w, "expect.absent", raw["absent"]) if "absent" in raw else ()
    k = _int(w, "expect.k", raw["k"], 1, MAX_K) if "k" in raw else 5
    sessions = ()
    if "recall_sessions" in raw:
        groups = raw["recall_sessions"]
        if not isinstance(groups, dict) or not groups:
            raise w.fail("expect.recall_sessions", f"expected a mapping {{SESSION: [STEP...]}}, got {brief(groups)}")
        for name, ids in groups.items():
            field = f"expect.recall_sessions.{name}"
            if not _list(w, field, ids, "a non-empty list of step ids"):
                raise w.fail(field, "expected a non-empty list of step ids, got []")
            sessions += ((str(name), refs.many(w, field, ids)),)
    return Expect(attention, event, recall, absent, k, sessions)


def _checks(w: _Where, raw, refs: _Refs) -> tuple:
    raw = _mapping(w, "check", raw, CHECK_NAMES, (), f"a mapping with one or more of {', '.join(CHECK_NAMES)}")
    if not raw:
        raise w.fail("check", f"expected one or more of {', '.join(CHECK_NAMES)}")
    out = []
    for name, specs in raw.items():
        many = isinstance(specs, list)
        if many and not specs:
            raise w.fail(f"check.{name}", "expected a mapping or a non-empty list of mappings, got []")
        allowed, required = CHECK_FIELDS[name]
        for i, spec in enumerate(specs if many else [specs]):
            field = f"check.{name}[{i}]" if many else f"check.{name}"
            spec = _mapping(w, field, spec, allowed, required, "a mapping {" + ", ".join(
                k if k in required else k + "?" for k in allowed) + "}")
            if name == "belief":
                r = _range(w, field, spec, 0, 1)
                value = None if spec.get("value") is None else _scalar(w, field + ".value", spec["value"])
                out.append(BeliefCheck(_text(w, field + ".key", spec["key"]), value, r.min, r.max))
            elif name == "conjecture":
                present = True if spec.get("present") is None else _bool(w, field + ".present", spec["present"])
                out.append(ConjectureCheck(_text(w, field + ".key", spec["key"]), present))
            elif name == "attention":
                r = _range(w, field, spec, 0)
                out.append(StepAttentionCheck(refs.one(w, field + ".step", spec["step"]), r.min, r.max))
            elif name == "tier":
                out.append(TierCheck(refs.one(w, field + ".step", spec["step"]),
                                     _int(w, field + ".max", spec["max"], 0)))
            else:
                out.append(EventCountCheck(_text(w, field + ".category", spec["category"]),
                                           _int(w, field + ".equals", spec["equals"], 0)))
    return tuple(out)


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys and impossible dates with a mark."""


def _map_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> dict:
    seen: dict = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node)
        try:
            first = seen.get(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "found a key that is a list or mapping",
                                                    key_node.start_mark) from None
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {brief(key)} (first given at line {first + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node)


def _timestamp(loader: _StrictLoader, node: yaml.ScalarNode):
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except ValueError as e:
        raise yaml.constructor.ConstructorError(
            None, None, f"impossible date or time {node.value!r} ({e})", node.start_mark) from None


_StrictLoader.add_constructor("tag:yaml.org,2002:map", _map_without_duplicates)
_StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)

# libyaml's parser with the same constructors: a generated year (100k steps) parses in
# seconds instead of minutes. A file it refuses is parsed again by the pure-Python loader,
# so every error message comes from one parser.
_FastStrictLoader = None
if getattr(yaml, "__with_libyaml__", False):
    class _FastStrictLoader(yaml.CSafeLoader):  # type: ignore[no-redef]
        """_StrictLoader's constructors on libyaml's parser."""

    _FastStrictLoader.add_constructor("tag:yaml.org,2002:map", _map_without_duplicates)
    _FastStrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def _read_yaml(path: Path, shown: str):
    text = read_text(path, shown, ScenarioError, "a YAML file", "a scenario file (.yaml)")
    if _FastStrictLoader is not None:
        try:
            return yaml.load(text, Loader=_FastStrictLoader)
        except Exception:  # noqa: BLE001 - the pure-Python parser below words the error
            pass
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = e.problem or e.context or "unreadable"
        if e.context and e.problem and e.context_mark:
            m = e.context_mark
            problem += f" ({e.context} that starts at line {m.line + 1}, column {m.column + 1})"
        raise ScenarioError(f"{shown}: invalid YAML{where}: {problem}") from None
    except Exception as e:  # noqa: BLE001 - the loader must never show a traceback
        raise ScenarioError(f"{shown}: invalid YAML: {type(e).__name__}: {e}") from None


def _start(w: _Where, value) -> datetime:
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
        raise w.fail("start", f"expected an ISO datetime such as 2026-03-02T09:00:00, got {brief(value)}")
    if start > LAST_START:
        raise w.fail("start", f"expected an ISO datetime no later than 9899-12-31 (the clock runs 100 years "
                              f"from the start), got {brief(value if isinstance(value, str) else start.isoformat())}")
    return start


def _when(seconds: float, start: datetime) -> str:
    """``dN HH:MM`` (``dN HH:MM:SS`` when the seconds matter)."""
    second = (start + timedelta(seconds=seconds)).second
    return format_at(seconds, start) + (f":{second:02d}" if second else "")


def _step_ids(raw_steps: list) -> list[str | None]:
    """Each step's id (given or ``s<index>``), None where the given id is not usable text."""
    out: list[str | None] = []
    for i, rs in enumerate(raw_steps):
        given = rs.get("id") if isinstance(rs, dict) else None
        if given is None:
            out.append(f"s{i}")
        elif isinstance(given, (str, int)) and not isinstance(given, bool):
            out.append(str(given))
        else:
            out.append(None)
    return out


def load_scenario(path: str | Path) -> Scenario:
    """Parse and validate one scenario file; ScenarioError (one line) if it is malformed."""
    path = Path(path)
    shown = str(path)
    top = _Where(shown)
    raw = _read_yaml(path, shown)
    if raw is None:
        raise top.fail("", f"the file is empty; expected a mapping with {_kinds(TOP_REQUIRED)}")
    raw = _mapping(top, "", raw, TOP_KEYS, (), f"a mapping with {_kinds(TOP_REQUIRED)} at the top level")
    for key in TOP_REQUIRED:
        if raw.get(key) is None:
            raise top.fail(key, "missing (required)")
    sid = raw["id"]
    if not isinstance(sid, str) or not SCENARIO_ID.fullmatch(sid):
        raise top.fail("id", f"expected lowercase letters, digits and '_' only, got {brief(sid)}")
    if sid != path.stem:
        raise top.fail("id", f"expected the file's name '{path.stem}', got '{sid}'")
    title = _text(top, "title", raw["title"])
    if raw["language"] not in LANGUAGES:
        raise top.fail("language", f"expected one of {', '.join(LANGUAGES)}, got {brief(raw['language'])}")
    start = _start(top, raw["start"])
    tags = tuple(_text(top, f"tags[{i}]", t) for i, t in
                 enumerate(_list(top, "tags", raw.get("tags") or [], "a list such as [attention, events]")))
    raw_steps = _list(top, "steps", raw["steps"], "a list of steps")
    if not raw_steps:
        raise top.fail("steps", "expected at least one step, got []")
    steps = _steps(shown, raw_steps, start)
    return Scenario(sid, title, raw["language"], start, tags, steps, path)


def _steps(shown: str, raw_steps: list, start: datetime) -> tuple[Step, ...]:
    ids = _step_ids(raw_steps)
    earlier: dict[str, str] = {}
    index_of: dict[str, int] = {}
    steps: list[Step] = []
    last_at, idle_until, idle_step = 0.0, 0.0, None
    for i, rs in enumerate(raw_steps):
        sid = ids[i]
        w = _Where(shown, f"step {i} ({sid if sid is not None else brief(rs.get('id'))})")
        rs = _mapping(w, "", rs, STEP_KEYS, (), f"a mapping with 'at' and one of {', '.join(STEP_KINDS)}")
        if sid is None or not STEP_ID.fullmatch(sid):
            raise w.fail("id", f"expected letters, digits, '_', '.', ':' or '-', got {brief(rs['id'])}")
        if sid in earlier:
            tip = "" if rs.get("id") is not None else f" (the default id of step {i}; give it an id)"
            raise w.fail("id", f"duplicate step id '{sid}', already used by step {index_of[sid]}{tip}")
        if rs.get("at") is None:
            raise w.fail("at", f"missing (required); expected {'dN HH:MM'!r} or an ISO datetime")
        kinds = [k for k in STEP_KINDS if k in rs]
        if len(kinds) != 1:
            quoted = [f"'{k}'" for k in kinds]
            have = ("has no step kind" if not kinds else
                    f"has both {_kinds(quoted)}" if len(kinds) == 2 else f"has {_kinds(quoted)}")
            raise w.fail("", f"{have}; a step has exactly one of {', '.join(STEP_KINDS)}")
        kind = kinds[0]
        try:
            at = parse_at(rs["at"], start, allow_before=True)
        except ValueError as e:
            raise w.fail("at", str(e)) from None
        if at < 0:
            given = rs["at"] if isinstance(rs["at"], str) else rs["at"].isoformat()
            raise w.fail("at", f"{given} is before the scenario start ({_when(0, start)})")
        if at < last_at:
            raise w.fail("at", f"goes back in time ({_when(at, start)} after {_when(last_at, start)})")
        if at < idle_until:
            raise w.fail("at", f"{_when(at, start)} falls inside the idle of {idle_step}, "
                             f"which lasts until {_when(idle_until, start)}")
        for key in ("motivation", "category", "abstain"):
            if key in rs and kind != "probe":
                raise w.fail(key, f"only allowed on probe steps, {_on(kind)}")
        if "hints" in rs and kind not in TEXT_KINDS:
            raise w.fail("hints", f"only allowed on {_kinds(TEXT_KINDS)} steps, {_on(kind)}")
        refs = _Refs(sid, earlier, (ids, i))
        text = _text(w, kind, rs[kind]) if kind in TEXT_KINDS else None
        duration = _duration(w, "idle", rs["idle"]) if kind == "idle" else 0.0
        if at + duration > MAX_SECONDS:
            raise w.fail("idle", f"lasts until {_when(at + duration, start)}, past the end of the clock "
                                 f"({_when(MAX_SECONDS, start)}, {MAX_DAYS} days after the start)")
        checks = _checks(w, rs["check"], refs) if kind == "check" else ()
        motivation = _number(w, "motivation", rs["motivation"], 0, 1) if "motivation" in rs else 0.5
        hints = _hints(w, rs["hints"]) if rs.get("hints") is not None else Hints()
        expect = _expect(w, rs["expect"], kind, refs) if rs.get("expect") is not None else Expect()
        category = _text(w, "category", rs["category"]) if "category" in rs else None
        abstain = _bool(w, "abstain", rs["abstain"]) if "abstain" in rs else False
        if abstain and (expect.recall or expect.recall_sessions):
            field = "expect.recall" if expect.recall else "expect.recall_sessions"
            raise w.fail(field, "an abstaining probe (abstain: true) has no evidence to recall; "
                                "drop one of them")
        steps.append(Step(i, sid, at, kind, text, motivation, duration, hints, expect, checks, category, abstain))
        earlier[sid], index_of[sid] = kind, i
        last_at = at
        if kind == "idle":
            idle_until, idle_step = at + duration, f"step {i} ({sid})"
    return tuple(steps)
