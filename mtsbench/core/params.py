"""Parameters are declared once: in the constructor's signature, with pydantic types.

A component (a config option's ``_target_`` class) or an options dataclass (a config node
without ``_target_``: ``preload``, ``generate``, ``index``, ...; ``config_check.NODES``) declares each
parameter a config may set with a type built from the aliases below or from
``typing.Annotated`` with ``pydantic.Field`` constraints::

    @declared
    class Exponential:
        def __init__(self, half_life: Positive = 6.0): ...

``@declared`` makes the constructor check its arguments (pydantic, strict: an int is a
number, a bool or ``'0.5'`` is not; numbers are finite) before it runs; the values are
passed on unchanged. A bad one is a ``ParamError`` (a ``ConfigError``) of one line:
``half_life: expected a number > 0, got -1``. A class may add ``cross_check(values)``
(a static method: the bound arguments, defaults applied, to ``(name, words)`` or None) for
a rule over two of its own parameters. A parameter with any other annotation (a component,
a path) is not a config value and is not checked.

A composed config is checked against these declarations by ``mtsbench.config.check``
before anything is built. ``build(node, path)`` is Hydra's ``instantiate`` with a
``ParamError`` named by its config path (a part built with the node, by the group it
interpolates: ``system=mts``'s ``dual: ${dual}`` is named ``dual``).
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import typing
from datetime import datetime
from typing import Annotated, Any, Callable, Literal, Mapping, Union

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError

from ..errors import ConfigError

# --- the types a parameter is declared with -----------------------------------------------

Number = Annotated[float, Field(allow_inf_nan=False)]          # any finite number (an int is one)
NonNegative = Annotated[Number, Field(ge=0)]
Positive = Annotated[Number, Field(gt=0)]
Share = Annotated[Number, Field(ge=0, le=1)]
Score = Annotated[Number, Field(ge=0, le=10)]                   # attention scores (DESIGN §1.2)
Cosine = Annotated[Number, Field(ge=-1, le=1)]
Confidence = Annotated[Number, Field(gt=0, lt=1)]
Unit = Annotated[Number, Field(gt=0, le=1)]
Natural = Annotated[int, Field(ge=0)]
Count = Annotated[int, Field(ge=1)]
Seed = Annotated[int, Field(ge=0)]
Top = Annotated[int, Field(ge=1, le=10000)]             # a probe's k
Threads = Annotated[int, Field(ge=1, le=1024)]                  # more than any machine here has cores
Text = Annotated[str, Field(min_length=1, pattern=r"\S")]
Kinds = list[Literal["say", "reply", "perceive"]]


def _must(test: Callable[[Any], bool]):
    def check(v):
        if not test(v):
            raise ValueError("out of range")
        return v
    return AfterValidator(check)


def _is_duration(v) -> bool:
    from .units import MAX_SECONDS, parse_duration

    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return math.isfinite(v) and 0 < v <= MAX_SECONDS
    try:
        return parse_duration(v) > 0
    except ValueError:
        return False


def _is_time_of_day(v) -> bool:
    import re

    m = re.fullmatch(r"(\d{1,2}):(\d{2})", v.strip(), re.ASCII) if isinstance(v, str) else None
    return bool(m) and int(m.group(1)) <= 23 and int(m.group(2)) <= 59


def _is_iso(v) -> bool:
    try:
        datetime.fromisoformat(v)
    except (TypeError, ValueError):
        return False
    return True


Duration = Annotated[Any, _must(_is_duration), Field(description="a duration such as 3h or 30d (at most 100 years)")]
TimeOfDay = Annotated[Any, _must(_is_time_of_day), Field(description="a time of day HH:MM (00:00 to 23:59)")]
IsoDatetime = Annotated[Any, _must(_is_iso), Field(description="an ISO datetime such as 2026-01-05T07:00:00")]


# --- describing a type in words ------------------------------------------------------------

def _g(x: float) -> str:
    return f"{x:g}" if abs(x) < 1e6 else f"{int(x):,}"


def _metadata(meta) -> list:
    out = []
    for m in meta:
        out.extend(getattr(m, "metadata", None) or [m])
    return out


def expected(tp) -> str:
    """What values of type ``tp`` are, in words (``a number from 0 to 1``, ``an integer >= 1
    or null``, ``a list of any of say, reply, perceive``)."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        base, *meta = typing.get_args(tp)
        words = next((m.description for m in meta if getattr(m, "description", None)), None)
        if words:
            return words
        bound = {}
        for m in _metadata(meta):
            for op in ("ge", "gt", "le", "lt"):
                if getattr(m, op, None) is not None:
                    bound[op] = getattr(m, op)
        return expected(base) + _range(bound)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = " or ".join(expected(a) for a in args)
        return inner + " or null" if len(args) < len(typing.get_args(tp)) else inner
    if origin is Literal:
        return "one of " + ", ".join(map(str, typing.get_args(tp)))
    if origin in (list, tuple):
        one = expected(typing.get_args(tp)[0])
        one = one.removeprefix("an ").removeprefix("a ")
        for single, plural in (("number", "numbers"), ("integer", "integers"), ("text", "texts"), ("one of", "any of")):
            if one.startswith(single):
                one = plural + one[len(single):]
                break
        return f"a list of {one}"
    return {bool: "true or false", int: "an integer", float: "a number", str: "text"}.get(tp, "a value")


def _range(b: dict) -> str:
    low = ("ge", b["ge"]) if "ge" in b else ("gt", b["gt"]) if "gt" in b else None
    high = ("le", b["le"]) if "le" in b else ("lt", b["lt"]) if "lt" in b else None
    sign = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    if low and high:
        if low[0] == "ge" and high[0] == "le":
            return f" from {_g(low[1])} to {_g(high[1])}"
        return f" {sign[low[0]]} {_g(low[1])} and {sign[high[0]]} {_g(high[1])}"
    one = low or high
    return f" {sign[one[0]]} {_g(one[1])}" if one else ""


def brief(value) -> str:
    """``repr`` cut at 40 characters, as messages quote a value."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# --- a class's declared parameters ----------------------------------------------------------

class ParamError(ConfigError):
    """A bad argument of a declared constructor: ``NAME: expected ..., got VALUE``."""

    def __init__(self, name: str, words: str, node: str = ""):
        super().__init__(f"{node}.{name}: {words}" if node else f"{name}: {words}")
        self.name, self.words = name, words


_CHECKED = (bool, int, float, str)


def _is_value_type(tp) -> bool:
    """Is ``tp`` a config value's type (built from numbers, text, bools, Literal, list, null)?"""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _is_value_type(typing.get_args(tp)[0]) or typing.get_args(tp)[0] is Any
    if origin in (Union, types.UnionType, list, tuple):
        return all(_is_value_type(a) for a in typing.get_args(tp) if a is not type(None) and a is not Ellipsis)
    return origin is Literal or tp in _CHECKED or tp is type(None)


class _Param(typing.NamedTuple):
    type: Any                 # the declared type; None when not a config value (not checked)
    default: Any
    adapter: TypeAdapter | None


@functools.lru_cache(maxsize=None)
def parameters(cls) -> dict[str, _Param]:
    """The constructor parameters of ``cls`` (a class or a function), by name."""
    init = cls.__init__ if isinstance(cls, type) else cls
    init = inspect.unwrap(init)
    try:
        hints = typing.get_type_hints(cls if _is_dataclass(cls) else init, include_extras=True)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: that one is not checked
        hints = {}
    out = {}
    for p in inspect.signature(init).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        tp = hints.get(p.name)
        tp = tp if tp is not None and _is_value_type(tp) else None
        adapter = TypeAdapter(tp, config=ConfigDict(strict=True)) if tp is not None else None
        out[p.name] = _Param(tp, p.default, adapter)
    return out


def _is_dataclass(cls) -> bool:
    import dataclasses

    return isinstance(cls, type) and dataclasses.is_dataclass(cls)


def plain(value):
    """``value`` as plain Python for checking: tuples as lists, numpy scalars as numbers,
    OmegaConf containers (as Hydra passes a list) as lists and dicts."""
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        value = OmegaConf.to_container(value, resolve=True)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()           # a scalar as a number, an array as a list
    return value


def problem(cls, name: str, value) -> str | None:
    """``expected ..., got VALUE`` when ``value`` is not of ``name``'s declared type, else None."""
    param = parameters(cls).get(name)
    if param is None or param.adapter is None:
        return None
    try:
        param.adapter.validate_python(plain(value))
    except ValidationError:
        return f"expected {expected(param.type)}, got {brief(value)}"
    return None


def check_args(cls, values: Mapping[str, Any], error: type[Exception] = ParamError, node: str = "") -> None:
    """Every value in ``values`` (by parameter name) of its declared type, then the class's
    ``cross_check``; ``error`` (``ParamError``) for the first problem."""
    for name, value in values.items():
        words = problem(cls, name, value)
        if words:
            raise _error(error, name, words, node)
    cross = getattr(cls, "cross_check", None)
    if cross is not None:
        full = {n: p.default for n, p in parameters(cls).items()} | dict(values)
        found = cross(full)
        if found:
            raise _error(error, *found, node)


def _error(error, name: str, words: str, node: str) -> Exception:
    return error(name, words, node) if issubclass(error, ParamError) else error(f"{name}: {words}")


def declared(cls=None, *, error: type[Exception] = ParamError, node: str = ""):
    """Class decorator: the constructor checks its arguments against their declared types
    (``check_args``) before it runs, raising ``error`` (``ParamError``, its message naming
    ``node.NAME`` for an options class read from config node ``node``; an options class may
    name its own one-line error, as ``GenerateSpec`` does)."""
    def wrap(cls):
        init = cls.__init__
        signature = inspect.signature(init)

        @functools.wraps(init)
        def __init__(self, *args, **kwargs):
            bound = signature.bind(self, *args, **kwargs)
            check_args(cls, {k: v for k, v in bound.arguments.items() if k != "self"}, error, node)
            init(self, *args, **kwargs)

        cls.__init__ = __init__
        return cls
    return wrap(cls) if cls is not None else wrap


def build(node, path: str, **given):
    """``hydra.utils.instantiate(node, **given)``; a bad argument is a ``ConfigError`` naming
    ``path.KEY``, or, when it is one of the node's parts (built with it, recursively), the
    part: by its group when named by interpolation (``system=mts``'s ``dual: ${dual}`` and
    dual's ``short_decay: ${short_decay}``: ``short_decay.half_life: expected a number > 0,
    got -1``), else by its key path."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate
    from omegaconf import OmegaConf

    # Hydra resolves a copy of the node in place, and with it the nodes it interpolates
    # (``${dual}``'s own ``${short_decay}``): build a resolved, detached copy instead
    detached = OmegaConf.create(OmegaConf.to_container(node, resolve=True)) if OmegaConf.is_config(node) else node
    try:
        return instantiate(detached, **given)
    except InstantiationException as e:
        cause = e.__cause__
        if isinstance(cause, ParamError):
            raise ConfigError(_blame(node, path) or f"{path}.{cause}") from None
        raise


def _blame(node, path: str) -> str | None:
    """``NAME.KEY: words`` for the first part of ``node`` (deepest first) whose own values
    break its class's declaration (``check_args``); None if none does."""
    from hydra.utils import get_object
    from omegaconf import OmegaConf

    if not OmegaConf.is_dict(node):
        return None
    for name, part in _parts_of(node, path):
        if "_target_" not in part:
            continue
        try:
            cls = get_object(str(part["_target_"]))
            own = {str(k): v for k, v in OmegaConf.to_container(part, resolve=True).items()
                   if not str(k).startswith("_") and not (isinstance(v, dict) and "_target_" in v)}
            check_args(cls, own)
        except ParamError as e:
            return f"{name}.{e}"
        except Exception:  # noqa: BLE001 - a part that cannot be read this way is not the one
            continue
    return None


def _parts_of(node, path: str):
    """(name, node) of ``node``'s sub-nodes, deepest first, then ``node``; a sub-node named by
    interpolation (``dual: ${dual}``) is named as what it names (``dual``)."""
    import re

    from omegaconf import OmegaConf

    raw = OmegaConf.to_container(node, resolve=False)
    for key in node.keys():
        try:
            child = node[key]
        except Exception:  # noqa: BLE001 - a missing or unresolvable value: no part
            continue
        if OmegaConf.is_dict(child):
            text = raw.get(key)
            named = re.fullmatch(r"\$\{([\w.]+)\}", text) if isinstance(text, str) else None
            yield from _parts_of(child, named.group(1) if named else f"{path}.{key}")
    yield path, node
