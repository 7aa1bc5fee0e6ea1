"""Checking the command line's overrides early, each refused in one line naming it:

- an override Hydra cannot parse (a syntax error, no key) or that sweeps without ``-m``
  (``parse``, ``sweep_needs_m``); ``GROUP=OPTION`` naming an unknown option, with a
  did-you-mean (``check_overrides``);
- ``+KEY=VALUE`` (adding a key) is accepted for ``hydra.*`` keys, for config groups
  (``+GROUP=OPTION``) and for a parameter a component declares (``mtsbench.core.params``), under a
  node that exists (it holds other keys) and accepts it (its ``_target_``, if any, takes a
  parameter of that name): ``retrieval._target_=mtsbench.memory.scoring.WeightedMinMax
  +retrieval.recency_weight=0.5``. Anything else (``+foo=1``, ``+retrieval.recency_weight=0.5``
  with the default retrieval class) no component would read: refused (``check_additions``,
  ``check_added_parents``). A key that exists is set without ``+`` (``++KEY`` sets or adds,
  under the same rule);
- a key that does not exist gets a did-you-mean or the keys its node has (``suggest``);
- every interpolation of the composed config resolves, and ``~KEY`` deletes no node a run
  reads (``check_resolves``).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from ..errors import ConfigError
from .search import groups, options_with_key


def parse(overrides: list[str]) -> list:
    """Hydra's parse of each override; a syntax error is one line naming the override."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    parsed = []
    for o in overrides:
        try:
            parsed.append(parser.parse_override(o))
        except Exception as e:  # noqa: BLE001 - OverrideParseException and friends
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise ConfigError(f"override '{o}': not a valid override ({first}; expected KEY=VALUE, "
                              f"e.g. llm.noise=0.1 or scenarios=[a,b])") from None
        if not parsed[-1].key_or_group.strip():
            raise ConfigError(f"override '{o}': no key before '=' (expected KEY=VALUE, e.g. seed=1 or "
                              f"scenarios=[a,b])")
    return parsed


def sweep_needs_m(override: str) -> ConfigError:
    """The one line for a comma list given without ``-m``."""
    key, _, value = override.partition("=")
    return ConfigError(f"override '{override}': a comma list is a sweep: add -m to run one job per value "
                       f"(or write {key}=[{value}] for a list, {key}='{value}' for text)")


def check_overrides(overrides: list[str], extra_dirs: Sequence[str | Path] = ()) -> None:
    """Refuse ``GROUP=OPTION`` overrides naming an unknown option, with a did-you-mean; the
    options are the packaged ones plus those in ``extra_dirs`` (``--config-dir``).

    Other overrides (``llm.noise=0.1``, ``+x=1``, sweeps with commas) are left to Hydra.
    """
    known = groups(extra_dirs)
    for o in overrides:
        name, sep, value = o.partition("=")
        if not sep or name.startswith(("+", "~", "hydra")) or "," in value or "(" in value:
            continue
        if name in known and value not in known[name]:
            hint = difflib.get_close_matches(value, known[name], n=1)
            tip = f"; did you mean '{hint[0]}'?" if hint else ""
            raise ConfigError(f"override '{o}': '{value}' is not an option of group '{name}' "
                              f"(options: {', '.join(known[name])}){tip}")


def overrides_set_scenarios(overrides: Sequence[str]) -> bool:
    """Does one of ``overrides`` set ``scenarios`` (``scenarios=...``, ``+scenarios=...``)?"""
    return any(o.partition("=")[0].strip().lstrip("+") == "scenarios" for o in overrides)


def chooses_option(parsed, known: dict[str, list[str]]) -> bool:
    """Does a parsed override choose a config group's option (``GROUP=OPTION``,
    ``hydra/launcher=...``), rather than set a key?"""
    key = parsed.key_or_group.strip()
    return "/" in key or key in known


def _added_key(override: str, extra_dirs: Sequence[str | Path]) -> str | None:
    """The key path a ``+KEY=VALUE`` / ``++KEY=VALUE`` override adds; None for other
    overrides, ``hydra.*`` keys and config groups (``+GROUP=OPTION``, Hydra's own)."""
    name = override.partition("=")[0].strip()
    if not name.startswith("+"):
        return None
    key = name.lstrip("+")
    if key.startswith("hydra") or "/" in key or key.partition("@")[0] in groups(extra_dirs):
        return None
    return key


def check_additions(overrides: list[str], extra_dirs: Sequence[str | Path]) -> None:
    """A ``+KEY`` must name a parameter some component declares (``config_check.known``)."""
    from . import check as config_check

    for o in overrides:
        key = _added_key(o, extra_dirs)
        if key is not None and not config_check.known(key):
            close = difflib.get_close_matches(key, config_check.known_keys(), n=1)
            tip = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"override '{o}': cannot add '{key}': no component reads it ('+' adds only a "
                              f"parameter a component declares, under an existing node; to set an existing "
                              f"key, drop the '+'){tip}")


def check_added_parents(cfg: DictConfig, overrides: list[str], extra_dirs: Sequence[str | Path]) -> None:
    """An added key's node must have existed: it holds some key no ``+`` override added
    (whether its class takes the key, ``config_check`` tells with the other keys)."""
    added = [k for k in (_added_key(o, extra_dirs) for o in overrides) if k]
    for o in overrides:
        key = _added_key(o, extra_dirs)
        if key is None or "." not in key:
            continue
        parent, _, _ = key.rpartition(".")
        node = OmegaConf.select(cfg, parent, default=None)
        own = [k for k in (node.keys() if isinstance(node, DictConfig) else ())
               if f"{parent}.{k}" not in added and not str(k).startswith("_")]
        if not own:
            raise ConfigError(f"override '{o}': cannot add '{key}': the chosen options have no node "
                              f"'{parent}' that reads it")


def has_key(cfg: DictConfig, key: str) -> bool:
    """Is there a key ``key`` (dotted) in ``cfg``?"""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    return isinstance(node, DictConfig) and leaf in node


def suggest(key: str, cfg: DictConfig) -> str:
    """`` (did you mean 'retrieval.candidates'?)`` or the keys the node has, for a key
    ``cfg`` does not have, and the group's other options that have it (``depth.n`` under
    ``depth=linear``: ``depth=fixed has it: depth=fixed depth.n=...``)."""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    if parent and not isinstance(node, DictConfig):
        return f" ({parent} is a value, not a node)" if node is not None else ""
    keys = [str(k) for k in node.keys() if not str(k).startswith("_") and not (not parent and k == "hydra")]
    close = difflib.get_close_matches(leaf, keys, n=1, cutoff=0.5)
    if close:
        return f" (did you mean '{parent + '.' if parent else ''}{close[0]}'?)"
    if not parent:
        return ""
    choice = OmegaConf.select(cfg, f"hydra.runtime.choices.{parent}", default=None)
    where = f"{parent}={choice}" if choice else parent
    others = [o for o in options_with_key(parent, leaf) if o != choice] if choice else []
    elsewhere = f"; {' and '.join(f'{parent}={o}' for o in others)} {'has' if len(others) == 1 else 'have'} it: " \
                f"{parent}={others[0]} {key}=..." if others else ""
    return f" ({where} has: {', '.join(keys)}{elsewhere})" if keys else f" ({where} has no keys{elsewhere})"


REQUIRED_NODES = {"system": "the memory system under test; choose another with system=OPTION"}


def check_resolves(cfg: DictConfig, overrides: list[str]) -> None:
    """Every interpolation of the job config (not its ``hydra`` node; not one reading
    Hydra's runtime, resolved only in the job) resolves, and the nodes every run reads are
    there: ``~dual`` deletes a node ``system.dual`` reads (``${dual}``) - one line naming
    the override, not an error once the run has started."""
    from omegaconf import ListConfig
    from omegaconf.errors import InterpolationResolutionError

    deleted = {o.partition("=")[0].strip().lstrip("~"): o for o in overrides if o.strip().startswith("~")}
    for key, why in REQUIRED_NODES.items():
        if key in deleted and key not in cfg:
            raise ConfigError(f"override '{deleted[key]}': every run reads '{key}' ({why})")

    def walk(node, raw, path: str) -> None:       # raw: the node unresolved (its interpolations' text)
        keys = node.keys() if isinstance(node, DictConfig) else range(len(node))
        for key in keys:
            where = f"{path}.{key}" if path else str(key)
            if not path and key == "hydra":
                continue
            text = None
            if OmegaConf.is_interpolation(node, key):
                text = str(raw[key])
                if "hydra" in text:                        # ${hydra:runtime...}: resolved in the job only
                    continue
            elif not isinstance(raw[key], (dict, list)):    # a plain value: nothing to resolve
                continue
            try:
                value = node[key]
            except InterpolationResolutionError as e:
                raise ConfigError(_unresolved(where, text, e, deleted)) from None
            except Exception:  # noqa: BLE001 - a missing value (???) or another error: the rules say
                continue
            if isinstance(value, (DictConfig, ListConfig)) and text is None:
                walk(value, raw[key], where)

    walk(cfg, OmegaConf.to_container(cfg, resolve=False), "")


def _unresolved(where: str, text: str | None, e: Exception, deleted: dict[str, str]) -> str:
    """The one line for ``where`` (set to ``text``) not resolving: naming the ``~KEY`` override
    that deleted what it reads, if one did."""
    import re

    reason = " ".join(str(e).split("\n")[0].split())
    m = re.search(r"Interpolation key '([^']+)' not found", str(e))
    if m:
        missing = m.group(1)
        for key, o in deleted.items():
            if missing == key or missing.startswith(key + "."):
                return (f"override '{o}': '{key}' cannot be deleted: {where} reads it ({text or '${' + missing + '}'}); "
                        f"set its values instead (e.g. {key}.KEY=VALUE)")
    return f"{where}: cannot resolve {text or 'it'} ({type(e).__name__}: {reason[:120]})"
