"""Composing the packaged Hydra configs into a job config, checked before anything runs.

``compose`` (and ``compose_full``, which keeps the ``hydra`` node) composes with Hydra's
compose API (``initialize_config_dir``, ``compose``), in the search path of ``.search``,
after the overrides are checked (``.overrides``); then the composed config is checked:

- every value against its component's declared parameters
  (``mtsbench.config.rules.validate``, ``mtsbench.core.params``); a value from a user's option
  file (``--config-dir``) names that file (``option_files``);
- ``scenarios=NAME`` (no brackets) means the one scenario NAME: ``scenarios`` is always a
  list after ``compose`` (``scenario_list``, ``normalise``).

An error Hydra raises while composing is one line (``_composition_error``): the override
that cannot apply, with a did-you-mean or the keys its node has, instead of Hydra's
multi-line dump; Hydra's errors are told apart by composing again, not by their text.
Checking a whole ``mtsbench run`` command (sweeps, tuning studies) is
``mtsbench.harness.preflight``'s.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Callable, Sequence

from omegaconf import DictConfig, OmegaConf, open_dict

from ..errors import ConfigError
from ..core.resources import CONFIG_DIR
from .overrides import (check_added_parents, check_additions, check_overrides, check_resolves, chooses_option,
                        has_key, parse, suggest, sweep_needs_m)
from .search import groups, searching, user_dirs

Explain = Callable[[list, Sequence], "ConfigError | None"]   # (overrides, extra_dirs) -> why they do not compose


def scenario_list(value) -> list[str]:
    """``scenarios`` as a list of names or paths: a single one (``scenarios=NAME`` without
    brackets, a string) is a list of one; null is []. Used by ``compose``, the Hydra app and
    the runner (a string must never be iterated into its characters).

    >>> scenario_list("milk_allergy"), scenario_list(["a", "b"]), scenario_list(None), scenario_list("/x/y.yaml")
    (['milk_allergy'], ['a', 'b'], [], ['/x/y.yaml'])
    """
    if value is None:
        return []
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return [str(value)]
    return [str(v) for v in value]


def normalise(cfg: DictConfig) -> DictConfig:
    """``cfg`` with ``scenarios`` made a list (``scenario_list``); returns ``cfg``."""
    if "scenarios" in cfg and not OmegaConf.is_list(cfg.scenarios):
        with open_dict(cfg):
            cfg.scenarios = scenario_list(cfg.scenarios)
    return cfg


def compose(overrides: list[str], extra_dirs: Sequence[str | Path] = ()) -> tuple[DictConfig, dict]:
    """The job config for ``overrides`` and the chosen option of each group; every value
    checked (``ConfigError``, one line, for anything wrong; see the module docstring).
    ``extra_dirs``: config folders searched too (``--config-dir``)."""
    cfg = compose_full(list(overrides), extra_dirs)
    choices = choices_of(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def choices_of(runtime_choices) -> dict:
    """The option chosen in each of mtsbench's groups, from Hydra's ``runtime.choices``
    (Hydra's own ``hydra/...`` groups and unset ones left out)."""
    return {k: v for k, v in OmegaConf.to_container(runtime_choices).items()
            if not k.startswith("hydra/") and v is not None}


RUN_GROUPS = ("system", "workload")   # what every run is made of, whatever its system


def configuration(cfg: DictConfig, choices: dict) -> dict:
    """What a run's system was made of, for a report's header: the groups in ``choices`` that
    the ``system`` node is built from (``${GROUP}`` interpolations, followed through the nodes they
    name: the seed design's ``dual`` names ``long_decay``), the run's own groups (``system``,
    ``workload``) and the system's own plain parameters as ``system.KEY`` — so a plug-in
    is described by its own settings, never by the seed design's ``arousal`` or ``tiers``.

    >>> from omegaconf import OmegaConf
    >>> cfg = OmegaConf.create({"system": {"_target_": "x.Recency", "limit": 5}, "arousal": {"r": 1},
    ...                         "workload": {"k": 5}})
    >>> configuration(cfg, {"system": "recency", "arousal": "radius", "workload": "probes"})
    {'system': 'recency', 'workload': 'probes', 'system.limit': 5}
    >>> cfg = OmegaConf.create({"system": {"dual": "${dual}"}, "dual": {"long": "${long_decay}"},
    ...                         "long_decay": {"tau": 1}, "tiers": {}})
    >>> configuration(cfg, {"system": "mts", "long_decay": "power_law", "tiers": "thresholds"})
    {'system': 'mts', 'long_decay': 'power_law'}
    """
    if "system" not in cfg or not OmegaConf.is_config(cfg.system):
        return dict(choices)
    seen, todo = {"system"}, ["system"]
    while todo:
        node = cfg.get(todo.pop())
        raw = OmegaConf.to_container(node, resolve=False) if OmegaConf.is_config(node) else node
        for name in _interpolated(raw):
            if name not in seen and name in cfg:
                seen.add(name)
                todo.append(name)
    own = {f"system.{k}": v for k, v in OmegaConf.to_container(cfg.system, resolve=False).items()
           if k != "_target_" and (v is None or isinstance(v, (bool, int, float))
                                   or (isinstance(v, str) and "${" not in v))}
    return {g: c for g, c in choices.items() if g in seen or g in RUN_GROUPS} | own


def _interpolated(raw) -> set[str]:
    """The top-level keys that the ``${KEY...}`` interpolations inside ``raw`` name.

    >>> sorted(_interpolated({"a": "${dual}", "b": ["${x.y}", 3], "c": "plain"}))
    ['dual', 'x']
    """
    if isinstance(raw, str):
        return {m.split(".")[0] for m in re.findall(r"\$\{([\w.]+)\}", raw)}
    values = raw.values() if isinstance(raw, dict) else raw if isinstance(raw, list) else ()
    return set().union(*(_interpolated(v) for v in values)) if values else set()


def compose_full(overrides: list[str], extra_dirs: Sequence[str | Path] = (), keep: bool = False,
                 explain: Explain | None = None) -> DictConfig:
    """The job config with its ``hydra`` node, checked: the overrides, then every value.
    ``keep``: return the config as Hydra composed it (``scenarios`` as given;
    the check is on a normalised copy), for Hydra to run. ``explain``: asked, when Hydra
    cannot compose, for a one line of the caller's before ours (None: no such reason)."""
    from . import rules as config_rules

    config_rules.refuse_secrets(overrides)
    user_dirs(extra_dirs)                  # a missing --config-dir folder: one line, first
    check_overrides(overrides, extra_dirs)
    for o, p in zip(overrides, parse(overrides)):
        if p.is_sweep_override():
            raise sweep_needs_m(o) if getattr(p.value(), "simple_form", False) else \
                ConfigError(f"override '{o}': a sweep: add -m to run one job per value")
    check_additions(overrides, extra_dirs)
    try:
        cfg = hydra_compose(overrides, extra_dirs)
    except ConfigError:
        raise
    except Exception as e:  # noqa: BLE001 - Hydra's errors are multi-line: one line of ours
        raise (_yaml_error(e) or (explain and explain(overrides, extra_dirs))
               or _composition_error(e, overrides, extra_dirs)) from None
    return check_composed(cfg, overrides, extra_dirs, keep)


def check_composed(cfg: DictConfig, overrides: list[str], extra_dirs: Sequence[str | Path],
                   keep: bool = False) -> DictConfig:
    """``cfg``, composed from ``overrides``, checked (``compose_full``); returns it."""
    from . import rules as config_rules

    config_rules.refuse_key_reads(cfg, overrides)     # first: no later message may hold the key
    check_added_parents(cfg, overrides, extra_dirs)
    check_resolves(cfg, overrides)
    if "hydra" in cfg:
        config_rules.check_hydra(cfg, overrides)
    checked = cfg
    if keep and "scenarios" in cfg and not OmegaConf.is_list(cfg.scenarios):
        checked = copy.deepcopy(cfg)
    normalise(checked)
    config_rules.validate(checked, overrides, option_files(cfg, extra_dirs))
    return cfg


def option_files(cfg: DictConfig, extra_dirs: Sequence[str | Path]) -> dict[str, str]:
    """Top-level node -> the file in a user's config folder (``--config-dir``) it came from:
    the chosen option of its group (``DIR/GROUP/OPTION.yaml``), or for the other nodes a
    folder's ``config.yaml`` that replaced the packaged one; named in a one-line error."""
    dirs = [Path(d) for d in user_dirs(extra_dirs)]
    if not dirs:
        return {}
    choices = choices_of(cfg.hydra.runtime.choices) if OmegaConf.select(cfg, "hydra.runtime.choices") else {}
    out = {}
    for group, option in choices.items():
        found = next((d / group / f"{option}.yaml" for d in dirs if (d / group / f"{option}.yaml").is_file()), None)
        if found is not None and "/" not in group:
            out[group] = str(found)
    primary = next((d / "config.yaml" for d in dirs if (d / "config.yaml").is_file()), None)
    if primary is not None:
        out.update({str(k): str(primary) for k in cfg.keys() if str(k) not in choices and str(k) != "hydra"})
    return out


def hydra_compose(overrides: list[str], extra_dirs: Sequence[str | Path] = ()) -> DictConfig:
    """The config for ``overrides`` with its ``hydra`` node, composed by Hydra's compose API
    (the packaged configs, after ``extra_dirs``: ``searching``), unchecked."""
    from hydra import compose as compose_api
    from hydra import initialize_config_dir

    with searching(extra_dirs), \
            initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3", job_name="mtsbench"):
        return compose_api(config_name="config", overrides=list(overrides), return_hydra_config=True)


def _yaml_error(e: Exception) -> ConfigError | None:
    """One line naming the file, line and column of a config file that is not YAML (a tab,
    an unclosed quote), from PyYAML's error; None for any other error."""
    import yaml

    mark = getattr(e, "problem_mark", None)
    if not isinstance(e, yaml.MarkedYAMLError) or mark is None:
        return None
    context = f" ({e.context})" if e.context else ""
    return ConfigError(f"{mark.name}: line {mark.line + 1}, column {mark.column + 1}: not valid YAML: "
                       f"{' '.join(str(e.problem).split())}{context}")


def _composition_error(e: Exception, overrides: list[str], extra_dirs: Sequence[str | Path]) -> ConfigError:
    """One line for an error Hydra raised while composing ``overrides``: the first key
    override that cannot apply to the config the overrides before it compose to (with
    every group choice) is named: a key to set that does not exist (with a did-you-mean or
    the keys its node has), a ``+KEY`` that exists already, a ``~KEY`` with nothing to
    delete. Otherwise Hydra's first line, with the overrides."""
    from hydra.core.override_parser.types import OverrideType

    known = groups(extra_dirs)
    parsed = parse(overrides)
    chosen = [o for o, p in zip(overrides, parsed) if chooses_option(p, known)]
    keyed = [(o, p) for o, p in zip(overrides, parsed) if not chooses_option(p, known)]
    cfg = None
    for n, (o, p) in enumerate(keyed):
        if cfg is None or keyed[n - 1][1].type != OverrideType.CHANGE:   # what the ones before made of it
            try:
                cfg = hydra_compose(chosen + [k for k, _ in keyed[:n]], extra_dirs)
            except Exception:  # noqa: BLE001 - an override before this one fails: Hydra's line
                break
        key = p.key_or_group
        there = has_key(cfg, key)
        if p.type == OverrideType.CHANGE and not there:
            return ConfigError(f"override '{o}': no such key '{key}'{suggest(key, cfg)}")
        if p.type == OverrideType.ADD and there:
            return ConfigError(f"override '{o}': '{key}' exists already; drop the '+' to set it "
                               f"({key}={o.partition('=')[2]})")
        if p.type == OverrideType.DEL and not there:
            return ConfigError(f"override '{o}': no such key '{key}' to delete")
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return ConfigError(f"overrides {' '.join(overrides) or '(none)'}: {type(e).__name__}: {first}")
