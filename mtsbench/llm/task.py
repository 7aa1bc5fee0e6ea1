"""What an LLM task is (``Task``), and the reading of its answer: JSON found, validated, converted.

A ``Task`` is one object holding everything about one task (``mtsbench.llm.tasks`` holds one
module per task and registers them): the call's signature and doc (the backends' method of
the task's name has them), the JSON schema of its answer and the conversion to the typed
result (``base.Summary``, ``base.Relation`` ...), the prompt templates per language and
the fields they are filled with, the mock's answer, the fake server's answer, and the
contract check's example call. ``Task.parse(text)`` finds the
first JSON object in a model's text (``extract_json``), checks it against the schema
(``validate``: types, required keys, enums, numeric ranges) and converts it; any problem
is an ``AnswerError`` whose str says what was wrong, in one line, so it can be sent back
in a repair request. Keys beyond the schema's are ignored. The same schema is sent to the
server as ``response_format`` (strict JSON-schema mode: every key required, no others).

Durations are asked for in days (``valid_days``, ``ttl_days``: numbers a model states
well), bounded like a scenario's durations (above 0, at most ``MAX_DAYS`` = 36500 days,
100 years: ``ttl_days: 1e308`` is refused as out of range, repaired or counted as a failed
call, never stored as infinity: ``DAYS``) and converted to seconds in the results
(``seconds``; the mock states them back with ``days``).
"""

from __future__ import annotations

import inspect
import json
import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping

from ..errors import AnswerError
from ..scenario.model import FactHint, Hints, InferHint
from ..scenario.times import MAX_DAYS
from ..core.units import DAY
from .base import Fact, Item
from .prompts import lang

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

    >>> validate(obj({"score": {"type": "number", "minimum": 0, "maximum": 10}}), {"score": 11})
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


def obj(properties: dict) -> dict:
    """A strict-mode object schema: every property required, no others."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


TEXT = {"type": "string", "minLength": 1}
UNIT = {"type": "number", "minimum": 0, "maximum": 1}
TURNS = {"type": "array", "items": {"type": "integer"}}
DAYS = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_DAYS}


def seconds(days: float | None) -> float | None:
    """A duration an answer states in days, in seconds (None stays None)."""
    return None if days is None else float(days) * DAY


def days(secs: float | None) -> float | None:
    """A duration in seconds as an answer states it, in days (None stays None)."""
    return None if secs is None else secs / DAY


def _unchanged(o: dict) -> dict:
    return o


@dataclass(frozen=True)
class Task:
    """One LLM task (see the module docstring). The functions given all take the call's
    arguments as bound to ``call``'s signature, defaults applied, in order (``*args``):

    - ``call``: a stub whose name, signature and docstring are the task's method's;
    - ``schema``, ``convert`` (answer object -> result), ``prepare`` (fills keys an answer
      may leave out, before validation);
    - ``templates``: the prompt per language (``{field}`` placeholders), ``fields(lg,
      *args)``: the fields in template language ``lg``, ``language(*args)``: the call's
      language (system prompt, repair message, template; None: its ``language`` argument);
    - ``mock(llm, noise, *args) -> (result, answer object)``: the mock's answer (None: the
      mock has no such task), given the ``MockLLM`` and the call's noise, and
      ``noise_inputs(*args)``: the text its noise is seeded from (None: never noised);
    - ``fake(h) -> answer object``: the fake server's valid answer, ``h`` the crc32 of the prompt;
    - ``example() -> args`` and ``check(result)``: the contract checker's call (None: not
      checked) and its assertions;
    - ``memory``: a task of memory's processes (False: evaluation's, like ``answer``);
    - ``examples``: the phrases the task's prompts show as examples, and those they showed
      before (``mtsbench.evaluation.copies`` flags answers that copy one; ``mtsbench calibrate``
      counts them);
    - ``expectation(result, tokens) -> result or None``: the result read again from the
      answer's token log-probabilities where the server returns them (``logprobs.py``; a
      score as the expectation over its tokens' probabilities); None: the parsed result
      stands. A backend asks for log-probabilities only for a task that has one.
    """

    call: Callable[..., Any]
    schema: dict
    convert: Callable[[dict], Any]
    templates: Mapping[str, str]
    fields: Callable[..., dict]
    fake: Callable[[int], dict]
    language: Callable[..., str] | None = None
    mock: Callable[..., tuple[Any, dict]] | None = None
    noise_inputs: Callable[..., str] | None = None
    example: Callable[[], tuple] | None = None
    check: Callable[[Any], None] | None = None
    prepare: Callable[[dict], dict] = _unchanged
    memory: bool = True
    expectation: Callable[[Any, list], Any] | None = None
    examples: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.call.__name__

    @cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.call)

    def bind(self, *args, **kwargs) -> tuple:
        """The call's arguments, bound to the signature with defaults applied, in order
        (TypeError as for a method, when they do not fit)."""
        if not kwargs and len(args) == len(self.signature.parameters):
            return args                                   # all given, in order (the usual call)
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args

    def language_of(self, *args) -> str:
        """The language a call (``args`` as ``bind`` gives them) is asked in."""
        if self.language is not None:
            return self.language(*args)
        return args[list(self.signature.parameters).index("language")]

    def render(self, args: tuple) -> str:
        """The user message of a call (``args`` as ``bind`` gives them), in its language."""
        lg = lang(self.language_of(*args))
        return self.templates[lg].format(**self.fields(lg, *args))

    def prompt(self, *args, **kwargs) -> str:
        """The user message of the call with these arguments (the task's method's)."""
        return self.render(self.bind(*args, **kwargs))

    def answer_lines(self) -> tuple[str, ...]:
        """The last line of each language's prompt (the answer format it asks for), as rendered:
        what tells a prompt of this task from the others'."""
        return tuple(t.rsplit("\n", 1)[-1].replace("{{", "{").replace("}}", "}") for t in self.templates.values())

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


# the contract checker's sample inputs, shared by the tasks' examples (``checks.check_llm``)
SAMPLE_ITEM = Item("A glass of milk is on the table.", "perceive", "s0", "en",
                   Hints(salience=1, facts=(FactHint("user.allergy.milk", "The user is allergic to milk", True),),
                         infer=(InferHint("user.diet", "The user avoids dairy", 0.4, 86400.0),)))
SAMPLE_FACT = Fact("user.allergy.milk", True, "The user is allergic to milk", 0.7)


def keyless(name: str | None) -> bool:
    """A fact's or impression's key, or an event's category, that names nothing (None or blank):
    its identity is then found by memory search and judged by the LLM, not by the string.

    >>> keyless(None), keyless("  "), keyless("user.diet")
    (True, True, False)
    """
    return not (name or "").strip()
