"""Parameters are declared once: in the constructor's signature, with pydantic types.

A component (a config option's ``_target_`` class) or an options dataclass (a config node
without ``_target_``: ``preload``, ``generate``, ``index``, ...; ``NODES``) declares each
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

``check_config(cfg)`` checks a composed job config against these declarations without
building anything (``mtsbench.config`` calls it for every job before a run or sweep
starts): each top-level node with a ``_target_`` against that class (an unknown key gets
a did-you-mean, a ``_target_`` that does not import one too; nested ``_target_`` nodes
likewise), each node of ``NODES`` by building its options class, and the top-level values
by ``RunOptions``. The one-line ``ConfigError`` names the key path
(``short_decay.half_life: expected a number > 0, got -1``), prefixed with the option file
when the value came from a user's ``--config-dir`` (``files``). ``build(node, path)`` is
Hydra's ``instantiate`` with a ``ParamError`` named by its config path.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import math
import types
import typing
from datetime import datetime
from typing import Annotated, Any, Callable, Literal, Mapping, Union

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError

from .errors import ConfigError

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
    from .scenario.times import MAX_SECONDS, parse_duration

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


def _open_kwargs(cls) -> bool:
    init = inspect.unwrap(cls.__init__ if isinstance(cls, type) else cls)
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(init).parameters.values())


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
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        return item()
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


# --- a composed config ----------------------------------------------------------------------

# config nodes without a _target_, and the options class each is read into
NODES = {
    "preload": "mtsbench.preload.PreloadSpec",
    "generate": "mtsbench.scenario.generate.GenerateSpec",
    "index": "mtsbench.memory.memory.IndexOptions",
    "evaluation": "mtsbench.run_options.Evaluation",
    "answer": "mtsbench.answer.Answering",
    "agent": "mtsbench.systems.mts.Schedule",
    "probes": "mtsbench.run_options.ProbeOptions",
    "sweep": "mtsbench.config.SweepOptions",
}
ROOT = "mtsbench.run_options.RunOptions"            # the top-level values: seed, scenarios
HIDDEN = ("_target_", "_recursive_", "_convert_", "_partial_", "_args_")


def _object(path: str):
    """The class or function ``module.NAME`` names (as Hydra's ``_target_``)."""
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def target_class(target, where: str):
    """The class (or function) a ``_target_`` names; ``ConfigError`` with a did-you-mean."""
    import importlib

    try:
        return _object(str(target))
    except Exception:  # noqa: BLE001 - not importable: say what is there instead
        module, _, name = str(target).rpartition(".")
        try:
            names = [n for n in dir(importlib.import_module(module)) if not n.startswith("_")]
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean '{module}.{close[0]}'?)" if close else f" ({module} has no '{name}')"
        except Exception:  # noqa: BLE001 - the module itself is not there
            hint = f" (no module '{module}')" if module else ""
        raise ConfigError(f"{where}._target_: cannot import '{target}'{hint}") from None


def check_node(path: str, node: Mapping, cls=None) -> None:
    """Check the plain dict ``node`` at ``path``: against its ``_target_`` (and its nested
    ``_target_`` nodes), or against the options class ``cls``; ``ConfigError`` naming the key."""
    if cls is None:
        cls = target_class(node["_target_"], path)
    values = {k: v for k, v in node.items() if k not in HIDDEN}
    declared_ = parameters(cls)
    if not _open_kwargs(cls):
        for key in values:
            if key not in declared_:
                close = difflib.get_close_matches(str(key), list(declared_), n=1)
                tip = f" (did you mean '{path}.{close[0]}'?)" if close else \
                    f" ({_name(cls)} takes: {', '.join(declared_) or 'nothing'})"
                raise ConfigError(f"{path}.{key}: not a parameter of {_name(cls)}{tip}")
    for key, value in values.items():
        if isinstance(value, dict) and "_target_" in value:
            check_node(f"{path}.{key}", value)
    checked = {k: v for k, v in values.items() if not (isinstance(v, dict) and "_target_" in v)}
    try:
        check_args(cls, checked)
        if "_target_" not in node:                   # an options class: cheap to build, and checks its cross rules
            build_options = getattr(cls, "from_config", None) or (lambda n: cls(**n))
            build_options(values)
    except ParamError as e:
        raise ConfigError(f"{path}.{e.name}: {e.words}") from None
    except ConfigError as e:
        text = str(e)
        raise ConfigError(text if text.startswith(f"{path}.") else f"{path}.{text}") from None


def _name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def check_config(cfg, files: Mapping[str, str] | None = None, overridden: set[str] = frozenset()) -> None:
    """Check the composed job config ``cfg`` (see the module docstring). ``files``: top-level
    node -> the user's option file it came from, named in the message unless an override
    (``overridden``: key paths) set the key."""
    from omegaconf import DictConfig, OmegaConf

    options = _object(ROOT)
    root = {k: _resolved(cfg, k) for k in parameters(options) if k in cfg}
    try:
        check_node("", root, options)
    except ConfigError as e:
        raise _in_file(ConfigError(str(e).removeprefix(".")), "", files, overridden) from None
    for key in cfg.keys():
        key = str(key)
        value = cfg[key] if key != "hydra" else None
        if not isinstance(value, DictConfig) or OmegaConf.is_interpolation(cfg, key):
            continue                                  # a value (above), Hydra's node, or another node's
        try:
            node = _own(value, _resolved(cfg, key))
            if "_target_" in node:
                check_node(key, node)
            elif key in NODES:
                check_node(key, node, _object(NODES[key]))
        except ConfigError as e:
            raise _in_file(e, key, files, overridden) from None


def _resolved(cfg, key: str):
    from omegaconf import OmegaConf

    try:
        value = cfg[key]
        return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
    except ConfigError:
        raise
    except Exception as e:  # noqa: BLE001 - an interpolation that does not resolve
        raise ConfigError(f"{key}: cannot resolve it ({type(e).__name__}: {' '.join(str(e).split())[:120]})") from None


def _own(node, resolved: dict) -> dict:
    """``resolved`` without the keys that are another node (``embedder: ${embedder}``): checked there."""
    from omegaconf import OmegaConf

    return {k: v for k, v in resolved.items()
            if not (isinstance(v, dict) and OmegaConf.is_interpolation(node, k))}


def known(key: str) -> bool:
    """Can ``+KEY`` name a parameter? A top-level value of ``RunOptions``, a field of a node of
    ``NODES``; under another node the node's ``_target_`` class decides (once composed)."""
    head, _, rest = key.partition(".")
    if not rest:
        return head in parameters(_object(ROOT))
    if head in NODES:
        return rest in parameters(_object(NODES[head]))
    return True


def known_keys() -> list[str]:
    """The keys ``known`` accepts at the top and in ``NODES`` (for a did-you-mean)."""
    return [*parameters(_object(ROOT)), *(f"{n}.{k}" for n, c in NODES.items() for k in parameters(_object(c)))]


def check_value(cfg, key: str, value) -> bool:
    """True when ``KEY=VALUE`` was checked against the declaration of ``KEY`` in the job config
    ``cfg`` (``ConfigError`` if the value is refused); False when its node's class cannot be
    told here (no ``_target_``, an interpolation) or KEY is not a declared value."""
    from omegaconf import DictConfig, OmegaConf

    parent, _, leaf = key.rpartition(".")
    if not parent:
        cls = _object(ROOT)
    else:
        node = OmegaConf.select(cfg, parent, default=None)
        if not isinstance(node, DictConfig):
            return False
        if "_target_" in node and not OmegaConf.is_interpolation(node, "_target_"):
            cls = target_class(node["_target_"], parent)
        elif parent in NODES:
            cls = _object(NODES[parent])
        else:
            return False
    param = parameters(cls).get(leaf)
    if param is None or param.adapter is None:
        return False
    words = problem(cls, leaf, value)
    if words:
        raise ConfigError(f"{key}: {words}")
    return True


def check_option(body: dict, cfg, chosen: set[str]) -> bool:
    """Check an option file's values (``body``: its nodes by top-level name, unresolved) without
    composing: a node with a ``_target_`` against that class, a node without against the class
    the job config ``cfg`` has there (or its ``NODES`` class), a top-level value against
    ``RunOptions``; ``ConfigError`` for a bad one. False when the file alone cannot tell: an
    interpolation, a node of a group its defaults choose (``chosen``), a rule across fields."""
    from omegaconf import DictConfig

    for key, value in body.items():
        if "${" in str(value):
            return False
        if not isinstance(value, dict):
            cls = _object(ROOT)
            if key not in parameters(cls) or key == "scenarios":      # (each scenario once: composing tells)
                return False
            words = problem(cls, key, value)
            if words:
                raise ConfigError(f"{key}: {words}")
            continue
        if "_target_" in value:
            check_node(key, value)
            continue
        node = cfg.get(key) if isinstance(cfg, DictConfig) and key not in chosen else None
        if key in NODES:
            cls = _object(NODES[key])
        elif isinstance(node, DictConfig) and isinstance(node.get("_target_"), str):
            cls = target_class(node["_target_"], key)
        else:
            return False
        if hasattr(cls, "__post_init__") or hasattr(cls, "cross_check") \
                or any(isinstance(v, dict) for v in value.values()) or not set(value) <= set(parameters(cls)):
            return False                    # whole-node rules, nested nodes, unknown keys: composing tells
        for name, v in value.items():
            words = problem(cls, name, v)
            if words:
                raise ConfigError(f"{key}.{name}: {words}")
    return True


def _in_file(e: ConfigError, node: str, files, overridden) -> ConfigError:
    text = str(e)
    where = (files or {}).get(node or text.split(".", 1)[0].split(":", 1)[0])
    key = text.split(":", 1)[0]
    if where and key not in overridden:
        return ConfigError(f"{where}: {text}")
    return e


def build(node, path: str, **given):
    """``hydra.utils.instantiate(node, **given)``; a bad argument is a ``ConfigError`` naming ``path.KEY``."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        return instantiate(node, **given)
    except InstantiationException as e:
        cause = e.__cause__
        if isinstance(cause, ParamError):
            raise ConfigError(f"{path}.{cause}") from None
        raise
