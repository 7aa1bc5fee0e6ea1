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
(``recall``, ``absent``, ``order``, ``event.same_as``, ``check`` ``attention.step``/``tier.step``/
``arousal.step`` and their ``above``) that do not name an *earlier* say/reply/perceive/probe step, an
``arousal.since`` that names no earlier step, an ``order`` naming a step twice, an ``above`` naming the
checked step itself; provenance references (``check``
``belief.from``, ``conjecture.from``, ``event_count.containing``) that do not name an
earlier say/reply/perceive step (a probe is not observed: nothing is derived from it);
a check giving both or neither of its key (``key``, ``category``) and its provenance
(``from``, ``containing``); a scenario id that is not
``[a-z0-9_]+`` or differs from the file's stem; a language other than en or zh;
expectations, hints, ``motivation``, ``category`` or ``abstain`` on the wrong step kind;
``event`` expecting both or neither of ``same_as`` and ``new``; an abstaining probe
(``abstain: true``) that also expects ``recall``, ``recall_sessions`` or ``recall_roles``;
a role of ``recall_roles`` naming a step that is not in ``recall``.

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
the answer: an adversarial or abstention question, reported but kept out of recall),
``expect.recall_roles`` (``{ROLE: [STEP...]}``: the parts of the evidence, each step also in
``recall``) and ``expect.recall_sessions`` (``{SESSION: [STEP...]}``: a session counts as found when any
of its steps is among the top k; session recall@k is the share found).

How: the file's structure -- every mapping's keys (unknown ones with a did-you-mean), types,
ranges, required fields, one kind per step, the keys each kind takes -- is validated by the
pydantic models of ``mtsbench.scenario.schema_models`` (``mtsbench schema`` prints their JSON
Schema), whose errors are worded here in the one-line format. The rules that need more than
one value are this module's own, checked step by step on the validated models: the id
against the file's name, unique step ids, ``at`` against ``start`` and the steps before
(order, idles, the 100 years), references to earlier steps, ``abstain`` with ``recall``.
Only the first problem is reported, the first in the file: the steps before a malformed
step are checked across first, and a step's own structure comes before its time and
references. ``null`` means "not given" wherever the JSON Schema allows it (``tags``,
``facts``, ``salience``, a fact's ``belief``, ...); a list key must be a list or null.
"""

from __future__ import annotations

import difflib
from datetime import datetime, timedelta
from pathlib import Path

import yaml
from pydantic import ValidationError

from ..errors import ScenarioError
from . import schema_models as sm
from . import schema_parts as sp
from .model import (OBSERVED_KINDS, STEP_KINDS, TEXT_KINDS, ArousalCheck, BeliefCheck, ConjectureCheck, EventCountCheck,
                    EventExpect, EventTag, Expect, Fact, Hints, Impression, Range, Scenario, Step, StepAttentionCheck,
                    TierCheck)
from .schema_base import all_problems
from .schema_types import LANGUAGES, MAX_K, STEP_ID, brief, join_words
from .times import MAX_DAYS, MAX_SECONDS, format_at, parse_at

__all__ = ["LANGUAGES", "MAX_K", "STEP_ID", "ScenarioError", "brief", "load_scenario", "read_text"]


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


class _Problem(Exception):
    """A problem in the step being read: FIELD and WHAT WAS EXPECTED (the step is named by the caller)."""

    def __init__(self, field: str, message: str):
        super().__init__(field, message)
        self.field, self.message = field, message
        self.steps: list = []      # the steps read before this one (set by ``_steps``)
        self.found: list = []      # (step index, problem) of every step with a problem (set by ``_steps``)


def _line(shown: str, step: str | None, field: str, message: str) -> ScenarioError:
    """The one-line error: ``PATH: [step INDEX (ID): ][FIELD: ]MESSAGE``."""
    place = f"{shown}: {step}: " if step else f"{shown}: "
    return ScenarioError(place + (f"{field}: {message}" if field else message))


class _Refs:
    """Step ids seen from the step being read (``current``, at ``index``): earlier ones (with
    their kind) and, to word an error only, every step's id (a set of the later ones per step
    would be quadratic)."""

    def __init__(self, ids: list):
        self.ids, self.earlier, self.current, self.index = ids, {}, "", 0

    def one(self, field: str, ref, kinds: tuple[str, ...] = TEXT_KINDS) -> str:
        """``ref`` (text or an integer, as validated) as the id of an earlier step of ``kinds``
        (by default the kinds that leave a memory)."""
        ref = str(ref)
        kind = self.earlier.get(ref)
        if kind is None:
            if ref == self.current:
                raise _Problem(field, f"refers to this step '{ref}' itself; expected an earlier step")
            if ref in self.ids[self.index + 1:]:
                raise _Problem(field, f"refers to step '{ref}' that comes later; expected an earlier step")
            close = difflib.get_close_matches(ref, [k for k in self.earlier if isinstance(k, str)], n=1)
            tip = f"; did you mean '{close[0]}'?" if close else ""
            raise _Problem(field, f"refers to unknown step '{ref}'{tip}")
        if kind not in kinds:
            what = "leaves no memory" if kind not in TEXT_KINDS else "is not observed, so nothing is derived from it"
            raise _Problem(field, f"refers to step '{ref}', {'an' if kind == 'idle' else 'a'} {kind} step that "
                                  f"{what}; expected a {join_words(kinds, 'or')} step")
        return ref

    def many(self, field: str, refs, kinds: tuple[str, ...] = TEXT_KINDS) -> tuple[str, ...]:
        return tuple(self.one(f"{field}[{i}]" if len(refs) > 1 else field, r, kinds) for i, r in enumerate(refs))

    def sources(self, field: str, refs) -> tuple[str, ...]:
        """A provenance reference (a step id or a list of them) as the distinct ids of earlier
        observed steps: the steps facts, impressions and events are derived from."""
        refs = refs if isinstance(refs, list) else [refs]
        return tuple(dict.fromkeys(self.many(field, refs, OBSERVED_KINDS)))


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
        plain = _indentation(e, text) if mark else None
        if plain is not None:
            column, problem = plain
            where = f" at line {mark.line + 1}, column {column}"
        else:
            problem = e.problem or e.context or "unreadable"
            if e.context and e.problem and e.context_mark:
                m = e.context_mark
                problem += f" ({e.context} that starts at line {m.line + 1}, column {m.column + 1})"
        raise ScenarioError(f"{shown}: invalid YAML{where}: {problem}") from None
    except Exception as e:  # noqa: BLE001 - the loader must never show a traceback
        raise ScenarioError(f"{shown}: invalid YAML: {type(e).__name__}: {e}") from None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _indentation(e: yaml.MarkedYAMLError, text: str) -> tuple[int, str] | None:
    """PyYAML's indentation errors in plain words: (column to point at, what was expected)
    (None: not an indentation error, PyYAML's own wording is kept)."""
    lines = text.splitlines()
    mark = e.problem_mark
    if mark is None or mark.line >= len(lines):
        return None
    line = lines[mark.line]
    problem = e.problem or ""
    if "'\\t'" in problem or "\t" in problem:
        return mark.column + 1, "a tab character; YAML indents with spaces only: expected spaces instead of the tab"
    earlier = [ln for ln in lines[:mark.line] if ln.strip() and not ln.lstrip().startswith("#")]
    if problem.startswith("mapping values are not allowed"):
        here, above = _indent(line), _indent(earlier[-1]) if earlier else 0
        if earlier and here > above:
            return here + 1, (f"bad indentation: this line is indented deeper than the line above it; expected it "
                              f"at column {above + 1}, as the key above, or a ': ' in a value to be quoted")
        return mark.column + 1, "a ': ' inside a value; expected the value in quotes (\"...\")"
    if problem.startswith("expected <block end>") and e.context_mark is not None:
        block = "list" if "collection" in (e.context or "") or "sequence" in (e.context or "") else "mapping"
        here, start = _indent(line), e.context_mark
        return here + 1, (f"bad indentation: this line lines up with nothing above it; expected column "
                          f"{start.column + 1}, as the {block} that starts at line {start.line + 1} (or the column "
                          f"of an enclosing block)")
    return None


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


def _label(index: int, sid: str | None, raw_step) -> str:
    return f"step {index} ({sid if sid is not None else brief(raw_step.get('id'))})"


def load_scenario(path: str | Path) -> Scenario:
    """Parse and validate one scenario file; ScenarioError (one line) if it is malformed."""
    path = Path(path)
    shown = str(path)
    raw = _read_yaml(path, shown)
    if raw is None:
        raise _line(shown, None, "", f"the file is empty; expected a mapping with {join_words(sm.TOP_REQUIRED)}")
    try:
        doc = sm.ScenarioFile.model_validate(raw)
    except ValidationError as e:
        problems = all_problems(e)      # every one (``mtsbench validate`` lists them all), then those across steps
        bad = {i for i, _, _ in problems if i is not None}
        ids = _step_ids(raw["steps"]) if bad else []
        found = [(i, str(_line(shown, None if i is None else _label(i, ids[i], raw["steps"][i]), field, message)))
                 for i, field, message in problems]
        found += _problems_of_the_rest(path, raw, bad)
        found.sort(key=lambda f: -1 if f[0] is None else f[0])     # the file's order; the top level first
        lines = list(dict.fromkeys(line for _, line in found))
        raise ScenarioError(lines[0], problems=lines) from None
    return _checked(path, raw, doc)


def _problems_of_the_rest(path: Path, raw: dict, bad: set[int]) -> list[tuple[int | None, str]]:
    """The problems across steps (ids, times, references) of a file whose steps ``bad`` are
    malformed, read without them ([] when the top level is malformed too)."""
    if not bad:
        return []
    try:
        doc = sm.ScenarioFile.model_validate({**raw, "steps": [s for i, s in enumerate(raw["steps"]) if i not in bad]})
    except ValidationError:
        return []
    models = iter(doc.steps)
    return _read_steps(path, raw, doc, [None if i in bad else next(models) for i in range(len(raw["steps"]))])[1]


def _checked(path: Path, raw: dict, doc: sm.ScenarioFile) -> Scenario:
    """The scenario of a validated file, checked across fields and steps: the id against the
    file's name, then ``_steps``; ScenarioError with every problem found."""
    steps, problems = _read_steps(path, raw, doc, doc.steps)
    if problems:
        lines = [line for _, line in problems]
        raise ScenarioError(lines[0], problems=lines)
    return Scenario(doc.id, doc.title, doc.language, doc.start, tuple(doc.tags), steps, path)


def _read_steps(path: Path, raw: dict, doc: sm.ScenarioFile, models: list) -> tuple[tuple, list]:
    """(the steps, [(step index or None, problem line)]) of a validated file (``models``: its
    steps' models, None for a malformed step, which is skipped)."""
    problems = []
    if doc.id != path.stem:
        problems.append((None, str(_line(str(path), None, "id", f"expected the file's name '{path.stem}', "
                                                               f"got '{doc.id}' (a scenario is named by its file: "
                                                               f"in a copy, set id: {path.stem})"))))
    ids = _step_ids(raw["steps"])
    steps: tuple = ()
    try:
        steps = _steps(raw["steps"], models, doc.start, _Refs(ids))
    except _Problem as p:
        problems += [(i, str(_line(str(path), _label(i, ids[i], raw["steps"][i]), q.field, q.message)))
                     for i, q in p.found or [(len(p.steps), p)]]
    return steps, problems


def _steps(raw_steps: list, models: list, start: datetime, refs: _Refs) -> tuple[Step, ...]:
    """The validated steps as ``Step`` objects, checked against each other (module docstring);
    the first ``_Problem`` carries the steps read before it (``.steps``) and every step's problem (``.found``)."""
    index_of: dict[str, int] = {}
    steps: list[Step] = []
    last_at, idle_until, idle_step = 0.0, 0.0, None
    found: list[tuple[int, _Problem]] = []
    for i, m in enumerate(models):
        if m is None:       # a malformed step (reported already): known by its id and kind, not read
            if isinstance(refs.ids[i], str):      # a malformed id (null, a number) names no step
                refs.earlier.setdefault(refs.ids[i], _raw_kind(raw_steps[i]))
                index_of.setdefault(refs.ids[i], i)
            continue
        try:
            sid, kind = refs.ids[i], m._kind
            refs.current, refs.index = sid, i
            if sid in index_of:
                tip = "" if m.id is not None else f" (the default id of step {i}; give it an id)"
                raise _Problem("id", f"duplicate step id '{sid}', already used by step {index_of[sid]}{tip}")
            try:
                at = parse_at(m.at, start, allow_before=True)
            except ValueError as e:
                raise _Problem("at", str(e)) from None
            if at < last_at or at < idle_until:
                _time_problem(at, m.at, start, last_at, idle_until, idle_step)
            duration = m.idle if kind == "idle" else 0.0
            if at + duration > MAX_SECONDS:
                raise _Problem("idle", f"lasts until {_when(at + duration, start)}, past the end of the clock "
                                       f"({_when(MAX_SECONDS, start)}, {MAX_DAYS} days after the start)")
            if kind in TEXT_KINDS:
                expect = Expect() if m.expect is None else _expect(m.expect, refs)
                hints = Hints() if m.hints is None else _hints(m.hints)
                if kind == "probe":
                    if m.abstain and (expect.recall or expect.recall_sessions or expect.recall_roles):
                        raise _Problem("expect.recall" if expect.recall else "expect.recall_sessions"
                                       if expect.recall_sessions else "expect.recall_roles",
                                       "an abstaining probe (abstain: true) has no evidence to recall; "
                                       "drop one of them")
                    step = Step(i, sid, at, kind, m.probe, m.motivation, 0.0, hints, expect, (), m.category,
                                m.abstain, m.answer)
                else:
                    step = Step(i, sid, at, kind, getattr(m, kind), 0.5, 0.0, hints, expect)   # positional: fast
            elif kind == "check":
                step = Step(i, sid, at, kind, checks=_checks(raw_steps[i]["check"], m.check, refs))
            else:
                step = Step(i, sid, at, kind, duration=duration)
                idle_until, idle_step = at + duration, f"step {i} ({sid})"
            steps.append(step)
            refs.earlier[sid], index_of[sid] = kind, i
            last_at = at
        except _Problem as p:      # noted, and the next steps read on: every problem is reported
            found.append((i, p))
            refs.earlier.setdefault(refs.ids[i], m._kind)
            index_of.setdefault(refs.ids[i], i)
    if found:
        first = found[0][1]
        first.steps, first.found = steps[:found[0][0]], found
        raise first
    return tuple(steps)


def _raw_kind(raw_step) -> str | None:
    """The kind a step of the file says it is (its first kind key), None if none."""
    keys = raw_step if isinstance(raw_step, dict) else {}
    return next((k for k in ("say", "reply", "perceive", "probe", "idle", "check") if k in keys), None)


def _time_problem(at: float, given: str, start: datetime, last_at: float, idle_until: float, idle_step) -> None:
    """The problem of an ``at`` before the start, before the step before, or inside an idle."""
    if at < 0:
        raise _Problem("at", f"{given} is before the scenario start ({_when(0, start)})")
    if at < last_at:
        raise _Problem("at", f"goes back in time ({_when(at, start)} after {_when(last_at, start)})")
    raise _Problem("at", f"{_when(at, start)} falls inside the idle of {idle_step}, "
                         f"which lasts until {_when(idle_until, start)}")


def _hints(m: sp.Hints) -> Hints:
    return Hints(m.salience,
                 tuple(Fact(f.key or "", f.value, f.text, f.belief) for f in m.facts) if m.facts else (),
                 None if m.event is None else EventTag(m.event.category or "", m.event.text, m.event.valid),
                 tuple(Impression(f.key or "", f.text, f.belief, f.ttl) for f in m.infer) if m.infer else ())


def _cost(m: sp.StepCost | None) -> tuple[tuple[str, Range], ...]:
    """The bounds given, by cost column (in ``STEP_COSTS``' order)."""
    given = {} if m is None else m.model_dump(exclude_none=True)
    return tuple((name, Range(b.get("min"), b.get("max"))) for name, b in given.items())


def _expect(m: sp.ObservedExpect | sp.ProbeExpect, refs: _Refs) -> Expect:
    if isinstance(m, sp.ObservedExpect):
        attention = None if m.attention is None else Range(m.attention.min, m.attention.max)
        event = None
        if m.event is not None:
            event = (EventExpect(same_as=refs.one("expect.event.same_as", m.event.same_as))
                     if m.event.same_as is not None else EventExpect(new=True))
        return Expect(attention=attention, event=event, cost=_cost(m.cost))
    recall, absent = refs.many("expect.recall", m.recall), refs.many("expect.absent", m.absent)
    sessions = tuple((name, refs.many(f"expect.recall_sessions.{name}", ids))
                     for name, ids in m.recall_sessions.items())
    roles = tuple((name, refs.many(f"expect.recall_roles.{name}", ids)) for name, ids in m.recall_roles.items())
    for name, ids in roles:
        stray = [i for i in ids if i not in recall]
        if stray:
            raise _Problem(f"expect.recall_roles.{name}", f"step '{stray[0]}' is not in expect.recall; expected "
                           "every step of a role to be evidence too")
    order = refs.many("expect.order", m.order)
    if len(set(order)) < len(order):
        twice = next(o for i, o in enumerate(order) if o in order[:i])
        raise _Problem("expect.order", f"names step '{twice}' twice; expected distinct steps, best first")
    return Expect(recall=recall, absent=absent, k=m.k, recall_sessions=sessions, recall_roles=roles, order=order,
                  cost=_cost(m.cost))


def _checks(raw: dict, m: sp.Checks, refs: _Refs) -> tuple:
    """The checks in the file's order (``raw``: the step's ``check`` mapping)."""
    out = []
    for name in raw:
        specs = getattr(m, name)
        many = isinstance(specs, list)
        for i, spec in enumerate(specs if many else [specs]):
            field = f"check.{name}[{i}]" if many else f"check.{name}"
            if name == "belief":
                source = None if spec.from_ is None else refs.sources(field + ".from", spec.from_)[0]
                out.append(BeliefCheck(spec.key, spec.value, spec.min, spec.max, source))
            elif name == "conjecture":
                sources = () if spec.from_ is None else refs.sources(field + ".from", spec.from_)
                out.append(ConjectureCheck(spec.key, spec.present, sources))
            elif name == "attention" and spec.from_ is not None:
                if spec.above is not None:
                    raise _Problem(field + ".above", "compares a step's own memory; use it with 'step', not 'from'")
                out.append(StepAttentionCheck(None, spec.min, spec.max, None, refs.sources(field + ".from", spec.from_)[0]))
            elif name == "attention":
                out.append(StepAttentionCheck(refs.one(field + ".step", spec.step), spec.min, spec.max,
                                              _other(refs, field, spec)))
            elif name == "tier":
                out.append(TierCheck(refs.one(field + ".step", spec.step), spec.max, spec.min))
            elif name == "arousal":
                since = None if spec.since is None else refs.one(field + ".since", spec.since, STEP_KINDS)
                out.append(ArousalCheck(refs.one(field + ".step", spec.step), spec.min, spec.max, since,
                                        _other(refs, field, spec)))
            else:
                containing = () if spec.containing is None else refs.sources(field + ".containing", spec.containing)
                out.append(EventCountCheck(spec.category, spec.equals, containing))
    return tuple(out)


def _other(refs: _Refs, field: str, spec) -> str | None:
    """The ``above`` step of an attention or arousal check: an earlier step, not the checked one."""
    if spec.above is None:
        return None
    other = refs.one(field + ".above", spec.above)
    if other == str(spec.step):
        raise _Problem(field + ".above", f"names the checked step '{other}' itself; expected another step to compare with")
    return other

