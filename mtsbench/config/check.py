"""Checking a composed job config against the parameters its components declare
(``mtsbench.core.params``), without building anything.

``check_config(cfg)`` (``mtsbench.config.composition`` calls it, through ``config_rules.validate``,
for every job before a run or sweep starts) checks each top-level node with a ``_target_``
against that class (an unknown key gets a did-you-mean, a ``_target_`` that does not
import one too; nested ``_target_`` nodes likewise), each node of ``NODES`` by building
its options class (cheap: its rules across fields run too), and the top-level values by
``RunOptions``. The one-line ``ConfigError`` names the key path
(``short_decay.half_life: expected a number > 0, got -1``), prefixed with the option file
when the value came from a user's ``--config-dir`` (``files``). ``known`` tells whether
``+KEY`` could name a parameter.
"""

from __future__ import annotations

import difflib
from typing import Mapping

from hydra.utils import get_object

from ..errors import ConfigError
from ..core.params import ParamError, check_args, parameters

# config nodes without a _target_, and the options class each is read into
NODES = {
    "preload": "mtsbench.systems.mts.preload.PreloadSpec",
    "haystack": "mtsbench.harness.haystack.HaystackOptions",
    "generate": "mtsbench.scenario.generate.GenerateSpec",
    "index": "mtsbench.memory.memory.IndexOptions",
    "evaluation": "mtsbench.config.options.Evaluation",
    "answer": "mtsbench.evaluation.answer.Answering",
    "agent": "mtsbench.systems.mts.system.Schedule",
    "probes": "mtsbench.config.options.ProbeOptions",
    "sweep": "mtsbench.config.options.SweepOptions",
    "tune": "mtsbench.tune.objectives.TuneOptions",
}
ROOT = "mtsbench.config.options.RunOptions"            # the top-level values: seed, scenarios
HIDDEN = ("_target_", "_recursive_", "_convert_", "_partial_", "_args_")


def target_class(target, where: str):
    """The class (or function) a ``_target_`` names; ``ConfigError`` with a did-you-mean."""
    import importlib

    try:
        return get_object(str(target))
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


def _open_kwargs(cls) -> bool:
    import inspect

    init = inspect.unwrap(cls.__init__ if isinstance(cls, type) else cls)
    return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(init).parameters.values())


def _name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def check_config(cfg, files: Mapping[str, str] | None = None, overridden: set[str] = frozenset()) -> None:
    """Check the composed job config ``cfg`` (see the module docstring). ``files``: top-level
    node -> the user's option file it came from, named in the message unless an override
    (``overridden``: key paths) set the key."""
    from omegaconf import DictConfig, OmegaConf

    options = get_object(ROOT)
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
                check_node(key, node, get_object(NODES[key]))
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
        return head in parameters(get_object(ROOT))
    if head in NODES:
        return rest in parameters(get_object(NODES[head]))
    return True


def known_keys() -> list[str]:
    """The keys ``known`` accepts at the top and in ``NODES`` (for a did-you-mean)."""
    return [*parameters(get_object(ROOT)), *(f"{n}.{k}" for n, c in NODES.items() for k in parameters(get_object(c)))]


def _in_file(e: ConfigError, node: str, files, overridden) -> ConfigError:
    text = str(e)
    where = (files or {}).get(node or text.split(".", 1)[0].split(":", 1)[0])
    key = text.split(":", 1)[0]
    if where and key not in overridden:
        return ConfigError(f"{where}: {text}")
    return e
