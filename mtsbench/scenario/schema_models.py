"""A scenario file's structure as pydantic models: the loader validates with them, and
``mtsbench schema`` prints their JSON Schema (``json_schema()``) for editors.

The models check each mapping on its own: keys (unknown ones with a did-you-mean), kinds,
types, ranges, required fields, one step kind per step, which keys a step kind takes.
What needs more than one value -- time order, ``at`` against ``start``, references to
earlier steps, unique step ids, the id against the file's name -- the loader checks on
the validated models (``mtsbench.scenario.loader``). Field docstrings are the schema's
descriptions; defaults (k 5, fact belief 0.7, motivation 0.5) are the schema's defaults.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Optional, Union

from pydantic import BeforeValidator, ConfigDict, Discriminator, Field, Tag
from pydantic.json_schema import GenerateJsonSchema, SkipJsonSchema

from .model import OBSERVED_KINDS, STEP_KINDS
from .schema_base import Strict
from .schema_parts import EXPECT_KEYS, Checks, Hints, NoExpect, ObservedExpect, ProbeExpect
from .schema_types import (At, Bool, Duration, Language, ScenarioId, Start, StepId, Text, Unit, brief, fail,
                           join_words, list_of, on_kind)

STEP_KEYS = ("id", "at", *STEP_KINDS, "motivation", "category", "abstain", "answer", "hints", "expect")
SCHEMA_URL = "https://json-schema.org/draft/2020-12/schema"


class _Step(Strict):
    _family: ClassVar[tuple] = STEP_KEYS
    _keep_none: ClassVar[tuple] = STEP_KINDS          # say: null is bad text, not a missing kind
    id: Optional[StepId] = None
    """The name references and results use: letters, digits, _ . : - (default: s<INDEX>, INDEX 0-based)."""
    at: At
    """When: 'dN HH:MM' (calendar day N from the start's date; d0 09:00) or an ISO datetime; never back in time."""

    @classmethod
    def _more(cls, data: dict) -> None:
        expect = data.get("expect")
        if isinstance(expect, dict):
            for key in expect:
                if key in EXPECT_PLACES and cls._kind not in EXPECT_PLACES[key]:
                    raise fail(f"only allowed on {join_words(EXPECT_PLACES[key])} steps, {on_kind(cls._kind)}",
                               f"expect.{key}")


class SayStep(_Step):
    """The user says something (stored as a turn)."""

    _kind: ClassVar[str] = "say"
    say: Text
    """What the user says."""
    hints: Optional[Hints] = None
    """What a perfect LLM would output for the step (read by the mock LLM only)."""
    expect: Optional[ObservedExpect] = None
    """What the memory should get right at this step: attention, event, cost."""


class ReplyStep(_Step):
    """The agent replies (stored as a turn)."""

    _kind: ClassVar[str] = "reply"
    reply: Text
    """What the agent replies."""
    hints: Optional[Hints] = None
    """What a perfect LLM would output for the step (read by the mock LLM only)."""
    expect: Optional[ObservedExpect] = None
    """What the memory should get right at this step: attention, event, cost."""


class PerceiveStep(_Step):
    """The agent perceives something in the world (stored as a perception)."""

    _kind: ClassVar[str] = "perceive"
    perceive: Text
    """What the agent perceives."""
    hints: Optional[Hints] = None
    """What a perfect LLM would output for the step (read by the mock LLM only)."""
    expect: Optional[ObservedExpect] = None
    """What the memory should get right at this step: attention, event, cost."""


class ProbeStep(_Step):
    """The agent asks its memory a question (not stored as a memory); judged on the top k memories."""

    _kind: ClassVar[str] = "probe"
    probe: Text
    """The question."""
    motivation: Unit = 0.5
    """How much solving it matters, 0-1 (with depth=linear: how many tiers deep the search goes)."""
    category: Text = None
    """The group its evidence recall is reported under (e.g. temporal, multi-hop)."""
    abstain: Bool = False
    """true: the memory does not hold the answer (adversarial question); no recall expected."""
    answer: Text = None
    """The gold answer (imported data sets): scored with answer.enabled (docs/llm.md); never shown to the system."""
    hints: Optional[Hints] = None
    """Accepted, but no system reads a probe's hints."""
    expect: Optional[ProbeExpect] = None
    """What the probe must find: recall, absent, k, recall_sessions, recall_roles; and its cost."""


class IdleStep(_Step):
    """Time passes with nothing said (a night, a holiday): summarize, consolidate, re-tier."""

    _kind: ClassVar[str] = "idle"
    idle: Duration
    """How long; no step may start before at + idle."""
    expect: SkipJsonSchema[Optional[NoExpect]] = None


class CheckStep(_Step):
    """Reads the memory's state at its time and asserts on it."""

    _kind: ClassVar[str] = "check"
    check: Checks
    """One or more of belief, conjecture, attention, tier, event_count, arousal."""
    expect: SkipJsonSchema[Optional[NoExpect]] = None


STEP_MODELS = {"say": SayStep, "reply": ReplyStep, "perceive": PerceiveStep, "probe": ProbeStep,
               "idle": IdleStep, "check": CheckStep}
STEP_PLACES = {key: tuple(k for k, m in STEP_MODELS.items() if key in m.model_fields) for key in STEP_KEYS}
EXPECT_PLACES = {key: (*(OBSERVED_KINDS if key in ObservedExpect.model_fields else ()),
                       *(("probe",) if key in ProbeExpect.model_fields else ())) for key in EXPECT_KEYS}
_Step._places = STEP_PLACES
assert all(EXPECT_PLACES.values()) and set(EXPECT_KEYS) == {*ObservedExpect.model_fields, *ProbeExpect.model_fields} \
    and set(STEP_MODELS) == set(STEP_KINDS)


def _step_shape(value):
    """Before a step's kind is known: a mapping, known keys, an ``at``, exactly one kind."""
    if not isinstance(value, dict):
        raise fail(f"expected a mapping with 'at' and one of {', '.join(STEP_KINDS)}, got {brief(value)}")
    if not _STEP_KEY_SET.issuperset(value):
        raise _Step._unknown(next(key for key in value if key not in _STEP_KEY_SET))
    if value.get("at") is None:
        raise fail("missing (required); expected 'dN HH:MM' or an ISO datetime", "at")
    if len(_KIND_SET.intersection(value)) != 1:
        kinds = [k for k in STEP_KINDS if k in value]
        quoted = [f"'{k}'" for k in kinds]
        have = ("has no step kind" if not kinds else
                f"has both {join_words(quoted)}" if len(kinds) == 2 else f"has {join_words(quoted)}")
        raise fail(f"{have}; a step has exactly one of {', '.join(STEP_KINDS)}")
    return value


def _step_tag(value) -> str:
    """The union tag of a step that passed ``_step_shape``: ``~`` and its kind."""
    for kind in STEP_KINDS:
        if kind in value:
            return _TAGS[kind]
    return "~say"   # not reached: _step_shape ran first


_STEP_KEY_SET, _KIND_SET, _TAGS = frozenset(STEP_KEYS), frozenset(STEP_KINDS), {k: f"~{k}" for k in STEP_KINDS}
Step = Annotated[Union[tuple(Annotated[m, Tag(_TAGS[k])] for k, m in STEP_MODELS.items())],
                 Discriminator(_step_tag), BeforeValidator(_step_shape)]


class ScenarioFile(Strict):
    """A scenario: a multi-day timeline of steps replayed against a memory system (docs/scenarios.md)."""

    model_config = ConfigDict(title="mtsbench scenario")
    id: ScenarioId
    """Lowercase letters, digits and _; equal to the file's name without .yaml."""
    title: Text
    """One line for listings and reports."""
    language: Language
    """The language of the LLM's prompts and of the mock's summaries."""
    start: Start
    """The simulated clock's origin, an ISO datetime such as 2026-03-02T09:00:00 (a date: midnight)."""
    tags: Optional[Annotated[list[Text], BeforeValidator(list_of("a list such as [attention, events]"))]] = ()
    """Free labels shown by mtsbench scenarios."""
    steps: Annotated[list[Step], Field(min_length=1), BeforeValidator(
        list_of("a list of steps", "expected at least one step, got []"))]
    """The timeline, in time order: each step has at, exactly one kind key and the keys its kind takes."""


TOP_REQUIRED = tuple(name for name, f in ScenarioFile.model_fields.items() if f.is_required())
ScenarioFile._what = f"a mapping with {join_words(TOP_REQUIRED)} at the top level"


class _Schema(GenerateJsonSchema):
    """Leaves out ``default: null`` where null is not a valid value (a default that only means "not given")."""

    def default_schema(self, schema):
        out = super().default_schema(schema)
        if out.get("default", 0) is None and not any(branch.get("type") == "null" for branch in out.get("anyOf", ())):
            out.pop("default")
        return out


def json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a scenario file, for editors (``mtsbench schema``)."""
    return {"$schema": SCHEMA_URL, **ScenarioFile.model_json_schema(schema_generator=_Schema)}


def schema_text() -> str:
    """``json_schema()`` as the text ``mtsbench schema`` prints (and docs/scenario.schema.json holds)."""
    import json

    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def schema_main(argv: list[str]) -> int:
    """``mtsbench schema [-o FILE]``: the JSON Schema on stdout, or written to FILE; exit 0, or 2
    with one line when FILE cannot be written."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="mtsbench schema", description="Print the JSON Schema of scenario files "
                                     "(for editors: docs/scenarios.md, 'Editor support').")
    parser.add_argument("-o", "--out", metavar="FILE", help="write it to FILE instead of stdout")
    ns = parser.parse_args(argv)
    text = schema_text()
    if ns.out is None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:            # mtsbench schema | head: no traceback
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    try:
        with open(ns.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        from ..errors import OutputError, redact

        print(f"mtsbench: {redact(str(OutputError(ns.out, e)))}", file=sys.stderr)
        return 2
    print(f"wrote {ns.out}")
    return 0
