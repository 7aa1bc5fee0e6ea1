"""Each task's answer: its JSON schema, the validator, and the parser to a result type.

A ``Task`` couples a name with the JSON schema of its answer object and a conversion to
the typed result (``base.Summary``, ``base.Relation`` ...). ``Task.parse(text)`` finds the
first JSON object in a model's text (``extract_json``), checks it against the schema
(``validate``: types, required keys, enums, numeric ranges) and converts it; any problem
is an ``AnswerError`` whose str says what was wrong, in one line, so it can be sent back
in a repair request. Keys beyond the schema's are ignored. The same schema is sent to the
server as ``response_format`` (strict JSON-schema mode: every key required, no others).

Durations are asked for in days (``valid_days``, ``ttl_days``: numbers a model states
well), bounded like a scenario's durations (above 0, at most ``MAX_DAYS`` = 36500 days,
100 years: ``ttl_days: 1e308`` is refused as out of range, repaired or counted as a failed
call, never stored as infinity) and converted to seconds in the results. A summary's facts and events name the
turns they come from (``turns``, 1-based numbers as the prompt numbers them); the key is
in the strict schema, but an answer that leaves it out is read as ``[]`` (no turn named:
the agent then credits every summarized turn) rather than refused.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import AnswerError
from ..scenario.times import MAX_DAYS
from ..units import DAY
from .base import RELATION_LABELS, EventTag, Fact, Impression, Relation, Summary

_THINK = re.compile(r"<think>.*?</think>", re.S)


def extract_json(text: str) -> dict:
    """The first JSON object in ``text`` (prose, code fences and <think> blocks around it are ignored).

    >>> extract_json('Sure! ```json\\n{"score": 7}\\n``` done')
    {'score': 7}
    >>> extract_json("no json here")
    Traceback (most recent call last):
    mtsbench.errors.AnswerError: the answer holds no JSON object
    """
    if not isinstance(text, str) or not text.strip():
        raise AnswerError("the answer is empty")
    text = _THINK.sub("", text)
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    raise AnswerError("the answer holds no JSON object")


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def validate(schema: dict, value: Any, path: str = "") -> None:
    """Check ``value`` against the subset of JSON schema the tasks use; AnswerError if not.

    >>> validate(RATE_ATTENTION.schema, {"score": 11})
    Traceback (most recent call last):
    mtsbench.errors.AnswerError: score: 11 is above the maximum 10
    """
    where = path or "answer"
    if "anyOf" in schema:
        matching = [o for o in schema["anyOf"] if _TYPES[o["type"]](value)]
        if not matching:
            kinds = ", ".join(o["type"] for o in schema["anyOf"])
            raise AnswerError(f"{where}: expected one of {kinds}, got {_show(value)}")
        return validate(matching[0], value, path)
    kind = schema.get("type")
    if kind is not None and not _TYPES[kind](value):
        raise AnswerError(f"{where}: expected {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got {_show(value)}")
    if "enum" in schema and value not in schema["enum"]:
        raise AnswerError(f"{where}: {_show(value)} is not one of {', '.join(schema['enum'])}")
    if kind == "number":
        if "minimum" in schema and value < schema["minimum"]:
            raise AnswerError(f"{where}: {value:g} is below the minimum {schema['minimum']:g}")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            raise AnswerError(f"{where}: {value:g} must be above {schema['exclusiveMinimum']:g}")
        if "maximum" in schema and value > schema["maximum"]:
            raise AnswerError(f"{where}: {value:g} is above the maximum {schema['maximum']:g}")
    if kind == "string" and len(value.strip()) < schema.get("minLength", 0):
        raise AnswerError(f"{where}: must not be empty")
    if kind == "object":
        for key in schema.get("required", ()):
            if key not in value:
                raise AnswerError(f"{where}: missing key '{key}'")
        for key, sub in schema.get("properties", {}).items():
            validate(sub, value[key], f"{path}.{key}" if path else key)
    if kind == "array":
        for i, v in enumerate(value):
            validate(schema["items"], v, f"{where}[{i}]")


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:60]


def _obj(properties: dict) -> dict:
    """A strict-mode object schema: every property required, no others."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


_TEXT = {"type": "string", "minLength": 1}
_UNIT = {"type": "number", "minimum": 0, "maximum": 1}
_VALUE = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
_TURNS = {"type": "array", "items": {"type": "integer"}}
_FACT = _obj({"key": _TEXT, "value": _VALUE, "text": _TEXT, "belief": _UNIT, "turns": _TURNS})
_DAYS = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DAYS}
_EVENT = _obj({"category": _TEXT, "text": _TEXT, "valid_days": {"anyOf": [_DAYS, {"type": "null"}]},
               "turns": _TURNS})
_IMPRESSION = _obj({"key": _TEXT, "text": _TEXT, "belief": _UNIT, "ttl_days": _DAYS})


@dataclass(frozen=True)
class Task:
    """A typed task: its name, the JSON schema of its answer, and the conversion to a result."""

    name: str
    schema: dict
    convert: Callable[[dict], Any]
    prepare: Callable[[dict], dict] = lambda o: o     # fills keys an answer may leave out

    def parse(self, text: str) -> Any:
        """The validated, typed result of a model's answer text (AnswerError if unusable)."""
        obj = self.prepare(extract_json(text))
        validate(self.schema, obj)
        return self.convert(obj)

    def response_format(self, mode: str) -> dict | None:
        """The ``response_format`` request field for ``mode`` (json_schema, json_object, text)."""
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}
        return {"type": "json_object"} if mode == "json_object" else None


def _days(x: float | None) -> float | None:
    return None if x is None else float(x) * DAY


def _fill_turns(o: dict) -> dict:
    """Read a fact or event without ``turns`` as naming no turn (``[]``)."""
    for name in ("facts", "events"):
        items = o.get(name)
        if isinstance(items, list):
            o[name] = [x | {"turns": []} if isinstance(x, dict) and "turns" not in x else x for x in items]
    return o


def _summary(o: dict) -> Summary:
    facts = tuple(Fact(f["key"].strip(), f["value"], f["text"].strip(), float(f["belief"]), tuple(f["turns"]))
                  for f in o["facts"])
    events = tuple(EventTag(e["category"].strip(), e["text"].strip(), _days(e["valid_days"]), tuple(e["turns"]))
                   for e in o["events"])
    return Summary(o["summary"].strip(), facts, events)


RATE_ATTENTION = Task("rate_attention", _obj({"score": {"type": "number", "minimum": 0, "maximum": 10}}),
                      lambda o: float(o["score"]))
SUMMARIZE = Task("summarize", _obj({"summary": _TEXT, "facts": {"type": "array", "items": _FACT},
                                    "events": {"type": "array", "items": _EVENT}}), _summary, _fill_turns)
MERGE_EVENT = Task("merge_event", _obj({"text": _TEXT}), lambda o: o["text"].strip())
JUDGE_RELATION = Task("judge_relation", _obj({"label": {"type": "string", "enum": list(RELATION_LABELS)},
                                              "strength": _UNIT}),
                      lambda o: Relation(o["label"], float(o["strength"])))
REASSESS_BELIEF = Task("reassess_belief", _obj({"belief": _UNIT}), lambda o: float(o["belief"]))
INFER = Task("infer", _obj({"impressions": {"type": "array", "items": _IMPRESSION}}),
             lambda o: tuple(Impression(i["key"].strip(), i["text"].strip(), float(i["belief"]), _days(i["ttl_days"]))
                             for i in o["impressions"]))

SAME_EVENT = Task("same_event", _obj({"same": {"type": "boolean"}}), lambda o: bool(o["same"]))
# answering a probe from the memories it retrieved, and judging an answer against the gold one
# (evaluation: mtsbench.answer); not memory tasks, so not in TASKS (the contract checks those)
ANSWER = Task("answer", _obj({"answer": {"type": "string"}}), lambda o: o["answer"].strip())
JUDGE_ANSWER = Task("judge_answer", _obj({"correct": {"type": "boolean"}}), lambda o: bool(o["correct"]))

TASKS = {t.name: t for t in (RATE_ATTENTION, SUMMARIZE, MERGE_EVENT, JUDGE_RELATION, REASSESS_BELIEF, INFER,
                             SAME_EVENT)}


def keyless(name: str | None) -> bool:
    """A fact's or impression's key, or an event's category, that names nothing (None or blank):
    its identity is then found by memory search and judged by the LLM, not by the string.

    >>> keyless(None), keyless("  "), keyless("user.diet")
    (True, True, False)
    """
    return not (name or "").strip()
