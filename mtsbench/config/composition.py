"""Finding and composing the packaged Hydra configs, and checking overrides early.

Every composed job config is checked before anything runs (``compose``, ``check_run``):

- an override Hydra cannot apply (``foo=1``, ``retrieval.kk=3``, ``+llm.noise=1``, a
  syntax error, a comma list without ``-m``) is one line naming the override, with a
  did-you-mean or the keys the node has, instead of Hydra's multi-line dump;
- ``+KEY=VALUE`` (adding a key) is accepted for ``hydra.*`` keys, for config groups
  (``+GROUP=OPTION``) and for a parameter a component declares (``mtsbench.core.params``), under a
  node that exists (it holds other keys) and accepts it (its ``_target_``, if any, takes a
  parameter of that name): ``retrieval._target_=mtsbench.memory.scoring.WeightedMinMax
  +retrieval.recency_weight=0.5``. Anything else (``+foo=1``, ``+retrieval.recency_weight=0.5``
  with the default retrieval class) no component would read: refused. A key that exists is
  set without ``+`` (``++KEY`` sets or adds, under the same rule);
- every value is checked against its component's declared parameters
  (``mtsbench.config.rules.validate``, ``mtsbench.core.params``); a value from a user's option
  file (``--config-dir``) names that file;
- ``scenarios=NAME`` (no brackets) means the one scenario NAME: ``scenarios`` is always a
  list after ``compose`` (``scenario_list``);
- a sweep (``check_run``): every value of every swept key is composed once, with Hydra's
  compose API, and checked as above before any job starts (``_check_sweep``).

Hydra is used through its public API only: the compose API (``initialize_config_dir``,
``compose``), a ``SearchPathPlugin``, the override parser, the config loader's
``get_group_options``; Hydra's errors are told apart by composing again, not by their text.

A user's config folders (``--config-dir DIR``, repeatable; ``compose(..., extra_dirs)``)
come *before* the packaged ``configs/`` in Hydra's search path (``searching``): a file
there adds an option or experiment (``DIR/long_decay/my_decay.yaml``) or replaces the
packaged one of the same name (``DIR/long_decay/power_law.yaml``); the first folder given
wins over the next. A ``DIR/config.yaml`` replaces the packaged primary config as a whole
(Hydra's rule for a primary config: the first found is used, nothing is merged); without
one the packaged ``config.yaml`` is used. Hydra's own groups (``hydra/...``) keep Hydra's
order: its built-in options are found before any folder's.

An installed plug-in package adds its config folder through an entry point in the group
``mtsbench.configs`` (``plugin_dirs``): in its ``pyproject.toml``,
``[project.entry-points."mtsbench.configs"] NAME = "PACKAGE.configs"`` names a package
(or a package's sub-folder) holding group folders (``PACKAGE/configs/system/NAME.yaml``).
Those folders come *after* the packaged ``configs/`` (a plug-in adds options, it does not
replace bundled ones; a user's ``--config-dir`` still comes first), so ``system=NAME``
works once the package is installed, without ``PYTHONPATH`` or ``--config-dir``.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import math
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from omegaconf import DictConfig, OmegaConf, open_dict

from ..errors import ConfigError
from ..core.params import Count, declared
from ..core.resources import CONFIG_DIR
from ..tune import check as tune_check


COMPOSITE_GROUPS = ("preset", "ablate", "experiment")   # set many groups at once; not mechanisms


PLUGIN_GROUP = "mtsbench.configs"          # the entry-point group of plug-in packages' config folders
PLUGIN_PROVIDER = "mtsbench plug-in"        # the provider name Hydra shows for them


@functools.lru_cache(maxsize=None)
def plugin_dirs() -> tuple[str, ...]:
    """The config folders of installed plug-in packages: each entry point of the group
    ``mtsbench.configs`` names a package (``NAME = "PACKAGE.configs"``) whose folder holds
    group folders (``system/NAME.yaml``); ordered by entry-point name, duplicates dropped.
    The package is located, not imported (its parent packages are). An entry point whose
    package cannot be found is skipped with a one-line warning on stderr."""
    import importlib.metadata
    import importlib.util
    import sys

    out: list[str] = []
    for ep in sorted(importlib.metadata.entry_points(group=PLUGIN_GROUP), key=lambda e: (e.name, e.value)):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        try:
            spec = importlib.util.find_spec(ep.module)
            locations = list(spec.submodule_search_locations or []) if spec else []
        except Exception as e:  # noqa: BLE001 - a broken plug-in must not stop every run
            locations, spec = [], f"{type(e).__name__}: {e}"
        folder = next((str(Path(d).resolve()) for d in locations if Path(d).is_dir()), None)
        if folder is None:
            print(f"mtsbench: plug-in entry point '{ep.name} = {ep.value}' ({PLUGIN_GROUP}, distribution {dist}): "
                  f"no package folder '{ep.module}' found; skipped", file=sys.stderr)
        elif folder not in out:
            out.append(folder)
    return tuple(out)


def groups(extra: Sequence[str | Path] = ()) -> dict[str, list[str]]:
    """Every config group and its options, read from the packaged ``configs/`` folder,
    installed plug-ins' (``plugin_dirs``) and the ``extra`` ones (a user's ``--config-dir``;
    ``hydra/`` holds Hydra's own groups)."""
    found: dict[str, set[str]] = {}
    for root in (CONFIG_DIR, *map(Path, plugin_dirs()), *map(Path, extra)):
        for d in (sorted(root.iterdir()) if root.is_dir() else []):
            if d.is_dir() and not d.name.startswith("_") and d.name != "hydra":
                found.setdefault(d.name, set()).update(p.stem for p in d.glob("*.yaml"))
    return {g: sorted(found[g]) for g in sorted(found)}


SEARCH_PROVIDER = "mtsbench --config-dir"   # the provider name Hydra shows (--info searchpath, config_sources)
_user_dirs: tuple[str, ...] = ()            # the folders ``searching`` puts first; read by the plugin below
_PLUGIN = None                              # the plugin class, once registered with Hydra


def _search_plugin():
    """The Hydra ``SearchPathPlugin`` putting ``_user_dirs`` before the packaged configs
    (Hydra's ``main`` entry) and installed plug-ins' folders (``plugin_dirs``) after them,
    registered with Hydra once; Hydra asks it whenever it builds a search path
    (``hydra.main``, ``initialize_config_dir``)."""
    global _PLUGIN
    if _PLUGIN is None:
        from hydra.core.config_search_path import ConfigSearchPath, SearchPathQuery
        from hydra.core.plugins import Plugins
        from hydra.plugins.search_path_plugin import SearchPathPlugin

        class UserConfigDirs(SearchPathPlugin):
            """``mtsbench.config.composition._user_dirs``, in order, before the packaged configs;
            ``plugin_dirs()``, in order, after them."""

            def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
                for d in _user_dirs:
                    search_path.prepend(SEARCH_PROVIDER, f"file://{d}", anchor=SearchPathQuery(provider="main"))
                for d in reversed(plugin_dirs()):    # each appended right after main: reversed keeps their order
                    search_path.append(PLUGIN_PROVIDER, f"file://{d}", anchor=SearchPathQuery(provider="main"))

        Plugins.instance().register(UserConfigDirs)
        _PLUGIN = UserConfigDirs
    return _PLUGIN


def user_dirs(dirs: Sequence[str | Path]) -> tuple[str, ...]:
    """``dirs`` as absolute paths, in order, duplicates dropped; ``ConfigError`` (one line)
    for one that is not a folder."""
    out: list[str] = []
    for d in dirs:
        path = Path(d).expanduser()
        if not path.is_dir():
            raise ConfigError(f"--config-dir {d}: no such folder (a folder with the configs' group layout, "
                              f"e.g. DIR/long_decay/NAME.yaml)")
        if str(path.resolve()) not in out:
            out.append(str(path.resolve()))
    return tuple(out)


@contextmanager
def searching(dirs: Sequence[str | Path] = ()) -> Iterator[tuple[str, ...]]:
    """While inside, every config Hydra composes (``compose``, the ``mtsbench run`` app, a
    sweep's jobs) searches ``dirs`` first, then the packaged configs (see the module
    docstring); yields the folders as absolute paths. ``ConfigError`` for a missing folder."""
    global _user_dirs
    resolved = user_dirs(dirs)
    previous = _user_dirs
    if resolved or plugin_dirs():
        _search_plugin()
    _user_dirs = resolved
    try:
        yield resolved
    finally:
        _user_dirs = previous


def split_config_dirs(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The folders named by ``--config-dir DIR``, ``--config-dir=DIR`` or ``-cd DIR`` in ``argv``,
    and ``argv`` without those flags (``mtsbench run`` gives the folders to Hydra through
    ``searching``, not the flag: Hydra's own ``--config-dir`` puts the folder after the
    packaged configs).

    >>> split_config_dirs(["--config-dir", "a", "x=1", "-cd", "b", "--config-dir=c", "-m"])
    (['a', 'b', 'c'], ['x=1', '-m'])
    """
    dirs, rest, skip = [], [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
        elif a in ("--config-dir", "-cd"):
            skip = True
            dirs.extend(argv[i + 1:i + 2])
        elif a.startswith("--config-dir="):
            dirs.append(a.partition("=")[2])
        else:
            rest.append(a)
    return dirs, rest


def mechanism_groups() -> dict[str, list[str]]:
    """The groups that each choose one mechanism (every group but presets and experiments)."""
    return {g: opts for g, opts in groups().items() if g not in COMPOSITE_GROUPS}


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


def overrides_set_scenarios(overrides: Sequence[str]) -> bool:
    """Does one of ``overrides`` set ``scenarios`` (``scenarios=...``, ``+scenarios=...``)?"""
    return any(o.partition("=")[0].strip().lstrip("+") == "scenarios" for o in overrides)


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
    cfg = _compose_full(list(overrides), extra_dirs)
    choices = choices_of(cfg.hydra.runtime.choices)
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices


def choices_of(runtime_choices) -> dict:
    """The option chosen in each of mtsbench's groups, from Hydra's ``runtime.choices``
    (Hydra's own ``hydra/...`` groups and unset ones left out)."""
    return {k: v for k, v in OmegaConf.to_container(runtime_choices).items()
            if not k.startswith("hydra/") and v is not None}


def _sweep_needs_m(override: str) -> ConfigError:
    """The one line for a comma list given without ``-m``."""
    key, _, value = override.partition("=")
    return ConfigError(f"override '{override}': a comma list is a sweep: add -m to run one job per value "
                       f"(or write {key}=[{value}] for a list, {key}='{value}' for text)")


def _compose_full(overrides: list[str], extra_dirs: Sequence[str | Path] = (), keep: bool = False) -> DictConfig:
    """The job config with its ``hydra`` node, checked: the overrides, then every value.
    ``keep``: return the config as Hydra composed it (``scenarios`` as given;
    the check is on a normalised copy), for Hydra to run."""
    from . import rules as config_rules

    config_rules.refuse_secrets(overrides)
    user_dirs(extra_dirs)                  # a missing --config-dir folder: one line, first
    check_overrides(overrides, extra_dirs)
    for o, p in zip(overrides, _parse(overrides)):
        if p.is_sweep_override():
            raise _sweep_needs_m(o) if getattr(p.value(), "simple_form", False) else \
                ConfigError(f"override '{o}': a sweep: add -m to run one job per value")
    _check_additions(overrides, extra_dirs)
    try:
        cfg = _hydra_compose(overrides, extra_dirs)
    except ConfigError:
        raise
    except Exception as e:  # noqa: BLE001 - Hydra's errors are multi-line: one line of ours
        raise (_yaml_error(e) or _sweeper_missing(overrides, extra_dirs)
               or _composition_error(e, overrides, extra_dirs)) from None
    return _check_composed(cfg, overrides, extra_dirs, keep)


def _check_composed(cfg: DictConfig, overrides: list[str], extra_dirs: Sequence[str | Path],
                    keep: bool = False) -> DictConfig:
    """``cfg``, composed from ``overrides``, checked (``_compose_full``); returns it."""
    from . import rules as config_rules

    config_rules.refuse_key_reads(cfg, overrides)     # first: no later message may hold the key
    _check_added_parents(cfg, overrides, extra_dirs)
    _check_resolves(cfg, overrides)
    if "hydra" in cfg:
        config_rules.check_hydra(cfg, overrides)
    checked = cfg
    if keep and "scenarios" in cfg and not OmegaConf.is_list(cfg.scenarios):
        import copy

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


def _sweeper_missing(overrides: list[str], extra_dirs: Sequence[str | Path]) -> ConfigError | None:
    """The one line when ``overrides`` do not compose only because they choose a tuning study
    (``hydra/sweeper=tune``, here or in an experiment) without hydra-optuna-sweeper, whose
    sampler configs it uses: told apart by composing again with Hydra's basic sweeper; else None."""
    missing = tune_check.plugin_missing()
    if missing is None:
        return None
    try:
        _hydra_compose([o for o in overrides if not o.lstrip("+~").startswith("hydra/sweeper")]
                       + ["hydra/sweeper=basic"], extra_dirs)
    except Exception:  # noqa: BLE001 - something else is wrong: _composition_error says what
        return None
    return ConfigError(missing)


REQUIRED_NODES = {"system": "the memory system under test; choose another with system=OPTION"}


def _check_resolves(cfg: DictConfig, overrides: list[str]) -> None:
    """Every interpolation of the job config (not its ``hydra`` node; not one reading
    Hydra's runtime, resolved only in the job) resolves, and the nodes every run reads are
    there: ``~dual`` deletes a node ``system.dual`` reads (``${dual}``) - one line naming
    the override, not an error once the run has started."""
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

    from omegaconf import ListConfig

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


def _hydra_compose(overrides: list[str], extra_dirs: Sequence[str | Path] = ()) -> DictConfig:
    """The config for ``overrides`` with its ``hydra`` node, composed by Hydra's compose API
    (the packaged configs, after ``extra_dirs``: ``searching``)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with searching(extra_dirs), \
            initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3", job_name="mtsbench"):
        return hydra_compose(config_name="config", overrides=list(overrides), return_hydra_config=True)


def _hydra_group_options(group: str, extra_dirs: Sequence[str | Path] = ()) -> list[str]:
    """The options of one of Hydra's own groups (``hydra/launcher``), as Hydra's config
    loader lists them (its built-in ones, the packaged ones, ``extra_dirs``' ones)."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.object_type import ObjectType

    with searching(extra_dirs), \
            initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3", job_name="mtsbench"):
        return GlobalHydra.instance().config_loader().get_group_options(group, results_filter=ObjectType.CONFIG)


def _parse(overrides: list[str]) -> list:
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


def _check_additions(overrides: list[str], extra_dirs: Sequence[str | Path]) -> None:
    from . import check as config_check

    for o in overrides:
        key = _added_key(o, extra_dirs)
        if key is not None and not config_check.known(key):
            close = difflib.get_close_matches(key, config_check.known_keys(), n=1)
            tip = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(f"override '{o}': cannot add '{key}': no component reads it ('+' adds only a "
                              f"parameter a component declares, under an existing node; to set an existing "
                              f"key, drop the '+'){tip}")


def _check_added_parents(cfg: DictConfig, overrides: list[str], extra_dirs: Sequence[str | Path]) -> None:
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


def _composition_error(e: Exception, overrides: list[str], extra_dirs: Sequence[str | Path]) -> ConfigError:
    """One line for an error Hydra raised while composing ``overrides``: the first key
    override that cannot apply to the config the overrides before it compose to (with
    every group choice) is named: a key to set that does not exist (with a did-you-mean or
    the keys its node has), a ``+KEY`` that exists already, a ``~KEY`` with nothing to
    delete. Otherwise Hydra's first line, with the overrides."""
    from hydra.core.override_parser.types import OverrideType

    known = groups(extra_dirs)
    parsed = _parse(overrides)
    chosen = [o for o, p in zip(overrides, parsed) if _chooses_option(p, known)]
    keyed = [(o, p) for o, p in zip(overrides, parsed) if not _chooses_option(p, known)]
    cfg = None
    for n, (o, p) in enumerate(keyed):
        if cfg is None or keyed[n - 1][1].type != OverrideType.CHANGE:   # what the ones before made of it
            try:
                cfg = _hydra_compose(chosen + [k for k, _ in keyed[:n]], extra_dirs)
            except Exception:  # noqa: BLE001 - an override before this one fails: Hydra's line
                break
        key = p.key_or_group
        there = _has(cfg, key)
        if p.type == OverrideType.CHANGE and not there:
            return ConfigError(f"override '{o}': no such key '{key}'{_suggest(key, cfg)}")
        if p.type == OverrideType.ADD and there:
            return ConfigError(f"override '{o}': '{key}' exists already; drop the '+' to set it "
                               f"({key}={o.partition('=')[2]})")
        if p.type == OverrideType.DEL and not there:
            return ConfigError(f"override '{o}': no such key '{key}' to delete")
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return ConfigError(f"overrides {' '.join(overrides) or '(none)'}: {type(e).__name__}: {first}")


def _chooses_option(parsed, known: dict[str, list[str]]) -> bool:
    """Does a parsed override choose a config group's option (``GROUP=OPTION``,
    ``hydra/launcher=...``), rather than set a key?"""
    key = parsed.key_or_group.strip()
    return "/" in key or key in known


def _has(cfg: DictConfig, key: str) -> bool:
    """Is there a key ``key`` (dotted) in ``cfg``?"""
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent, default=None) if parent else cfg
    return isinstance(node, DictConfig) and leaf in node


def _suggest(key: str, cfg: DictConfig) -> str:
    """`` (did you mean 'retrieval.candidates'?)`` or the keys the node has, for a key
    ``cfg`` does not have."""
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
    return f" ({where} has: {', '.join(keys)})" if keys else f" ({where} has no keys)"


def check_run(argv: Sequence[str]) -> DictConfig | None:
    """Check what ``mtsbench run ARGV`` would run before Hydra launches anything: compose
    the job (for a sweep, its first job) and validate it, then every value of a sweep's
    swept keys (``_check_sweep``); ``ConfigError`` (one line) for the first problem.
    Returns the (first) job's config with its ``hydra`` node, as composed. With Hydra's
    informational flags (``--cfg``, ``--info``, ``--help``, ...) nothing is checked (None)
    but secrets on the command line, refused always."""
    from .rules import refuse_secrets

    refuse_secrets([a for a in argv if "=" in a and not a.startswith("-")])
    dirs, rest = split_config_dirs(argv)
    if any(a.startswith("-") and a not in ("-m", "--multirun") for a in rest):
        return None
    multirun = any(a in ("-m", "--multirun") for a in rest)
    overrides = [a for a in rest if not a.startswith("-")]
    parsed = _parse(overrides)
    known = groups(dirs)
    plain = [o for o, p in zip(overrides, parsed) if not p.is_sweep_override()]
    continuous = [o for o, p in zip(overrides, parsed) if p.is_sweep_override() and not p.is_discrete_sweep()]
    if continuous:          # interval(): only a tuning study searches one
        study = _study_of(plain, dirs, strict=True)
        if study is None:
            raise ConfigError(f"override '{continuous[0]}': only comma lists, range() and choice() can be swept "
                              f"(interval() is searched by a tuning study: hydra/sweeper=tune, docs/tuning.md)")
        return _check_study(study, overrides, dirs)
    for o, p in zip(overrides, parsed):
        if p.is_sweep_override() and _sweep_size(o, p, known, dirs) == 0:
            raise ConfigError(f"override '{o}': the sweep has no values")
    first = [f"{p.get_key_element()}={next(iter(_swept(o, p, known, dirs)))}" if p.is_sweep_override() else o
             for o, p in zip(overrides, parsed)]
    try:
        cfg = _compose_full(first, dirs, keep=True)
    except ConfigError:     # a study's sweeps are its space, drawn with its fixed values: not a grid's first job
        study = _study_of(plain, dirs) if len(plain) < len(overrides) else None
        if study is None:
            raise
        return _check_study(study, overrides, dirs)
    multirun = multirun or "MULTIRUN" in str(OmegaConf.select(cfg, "hydra.mode", default=""))
    swept = [o for o, p in zip(overrides, parsed) if p.is_sweep_override()]
    if not multirun:
        if swept:
            raise _sweep_needs_m(swept[0])
        return cfg
    if tune_check.is_study(cfg):
        return _check_study(cfg, overrides, dirs)
    params = OmegaConf.select(cfg, "hydra.sweeper.params", default=None) or {}
    args = [f"{k}={v}" for k, v in params.items()] + overrides
    chosen: dict[str, tuple[str, object]] = {}   # as Hydra's basic sweeper: the command line wins over params
    for o, p in zip(args, _parse(args)):
        chosen[p.get_key_element()] = (o, p)
    sizes = {key: _sweep_size(o, p, known, dirs) if p.is_sweep_override() else 1 for key, (o, p) in chosen.items()}
    _check_sweep_size(cfg, sizes)             # before listing the jobs: range(0,10000000000) would fill memory
    axes = {key: [f"{key}={v}" for v in _swept(o, p, known, dirs)] if p.is_sweep_override() else [o]
            for key, (o, p) in chosen.items()}
    _check_sweep(cfg, axes, first, dirs)
    return cfg


def _study_of(plain: list[str], extra_dirs: Sequence[str | Path], strict: bool = False) -> DictConfig | None:
    """The config of the command line's ``plain`` (non-sweep) overrides when it runs a tuning
    study, else None (also when it does not compose, unless ``strict``: then its one line)."""
    try:
        cfg = _compose_full(plain, extra_dirs, keep=True)
    except ConfigError:
        if strict:
            raise
        return None
    return cfg if tune_check.is_study(cfg) else None


def _check_study(cfg: DictConfig, overrides: list[str], extra_dirs: Sequence[str | Path]) -> DictConfig:
    """A tuning study's settings and search space checked before it starts (``mtsbench.tune.check``):
    every value of every parameter composed once (a value of a key set on its base's config,
    as ``_value_checked`` does, without composing); returns ``cfg``."""
    tune_check.settings(cfg)
    known = groups(extra_dirs)
    bases: dict[tuple[str, ...], DictConfig] = {}
    composed: set[tuple[str, ...]] = set()
    for base, job in tune_check.jobs(tune_check.space_of(cfg, overrides), overrides):
        if tuple(sorted(job)) in composed:
            continue
        changed = sorted(set(job) - set(base))
        if len(changed) == 1 and len(job) == len(base):
            if base not in bases:
                bases[base] = _compose_full(list(base), extra_dirs, keep=True)
                composed.add(tuple(sorted(base)))
            if _value_checked(bases[base], list(base), changed[0], known, extra_dirs):
                composed.add(tuple(sorted(job)))
                continue
        composed.add(tuple(sorted(job)))
        _compose_full(list(job), extra_dirs)
    return cfg


DEFAULT_MAX_JOBS = 10000      # sweep.max_jobs when the config has none (a --config-dir config.yaml of its own)


@declared(node="sweep")
@dataclass(frozen=True)
class SweepOptions:
    """The ``sweep`` node: a sweep of more jobs than ``max_jobs`` is refused before it starts."""

    max_jobs: Count = DEFAULT_MAX_JOBS


def _check_sweep_size(cfg: DictConfig, sizes: dict[str, int]) -> None:
    """``ConfigError`` (one line) for a sweep of more jobs than ``sweep.max_jobs``."""
    jobs = math.prod(sizes.values())
    cap = OmegaConf.select(cfg, "sweep.max_jobs", default=None)
    cap = cap if isinstance(cap, int) and not isinstance(cap, bool) else DEFAULT_MAX_JOBS
    if jobs > cap:
        shape = " x ".join(f"{key}: {n:,} values" for key, n in sizes.items() if n > 1)
        raise ConfigError(f"-m: the sweep has {jobs:,} jobs ({shape}), more than sweep.max_jobs={cap:,}; "
                          f"sweep fewer values, or raise the cap with sweep.max_jobs={jobs}")


def _glob_names(o: str, p, known: dict[str, list[str]], dirs: Sequence[str | Path]) -> list[str]:
    """The options ``GROUP=glob(...)`` picks (``dirs``: the user's config folders);
    ``ConfigError`` for a key that is not a config group."""
    key = p.key_or_group.strip().lstrip("+~")
    if key in known:
        names = known[key]
    elif "/" in key:          # Hydra's own groups: hydra/launcher=glob(*)
        names = _hydra_group_options(key, dirs)
    else:
        hint = difflib.get_close_matches(key, list(known), n=1)
        raise ConfigError(f"override '{o}': glob() picks options of a config group, and '{key}' is not one "
                          + (f"(did you mean '{hint[0]}'?)" if hint else "(sweep a value with a comma list or range())"))
    return p.value().filter(list(names))


def _swept(o: str, p, known: dict[str, list[str]], dirs: Sequence[str | Path]):
    """The values (text) a sweep override takes, lazily (a range is not listed)."""
    from hydra.core.override_parser.types import Glob

    if isinstance(p.value(), Glob):
        return iter(_glob_names(o, p, known, dirs))
    return p.sweep_string_iterator()


def _sweep_size(o: str, p, known: dict[str, list[str]], dirs: Sequence[str | Path]) -> int:
    """How many values a sweep override takes, counted without listing them."""
    from hydra.core.override_parser.types import ChoiceSweep, Glob, RangeSweep

    value = p.value()
    if isinstance(value, Glob):
        return len(_glob_names(o, p, known, dirs))
    if isinstance(value, RangeSweep):
        try:
            values = value.range()
            if isinstance(values, range):
                return len(values)
            return max(0, math.ceil((value.stop - value.start) / value.step))
        except (ValueError, ZeroDivisionError, TypeError, OverflowError) as e:
            raise ConfigError(f"override '{o}': not a valid range ({e}); expected range(START, STOP[, STEP]) "
                              f"with a step that is not 0") from None
    if isinstance(value, ChoiceSweep):
        return len(value.list)
    return len(value) if isinstance(value, list) else 1


SWEEP_COMBOS_COMPOSED = 8   # two or more swept groups with up to this many combinations: each composed


def _check_sweep(cfg: DictConfig, axes: dict[str, list[str]], first: list[str],
                 extra_dirs: Sequence[str | Path]) -> None:
    """The jobs of a sweep beyond the first one (``cfg``, composed from ``first``), checked
    by composing every value of every swept key once, the other keys at their first value
    (Hydra's compose API, each composition checked as ``compose`` checks one): the usual
    one line names what is wrong, before any job starts. A value of a key (``seed=3``) is
    checked on the first job's config with that value set (``_value_checked``). Two or
    more swept groups with at most ``SWEEP_COMBOS_COMPOSED`` combinations have each combination composed (checks
    across nodes: ``system=bm25`` with ``retrieval=hybrid``). A sweep of N values of one
    key costs N compositions, not one per job."""
    known = groups(extra_dirs)
    lists = list(axes.values())
    base = [values[0] for values in lists]
    composed = {tuple(sorted(first))}

    def composing(job: list[str]) -> None:
        if tuple(sorted(job)) not in composed:
            composed.add(tuple(sorted(job)))
            _compose_full(job, extra_dirs)

    for i, values in enumerate(lists):
        for o in values:
            if o not in first and not _value_checked(cfg, first, o, known, extra_dirs):
                composing(base[:i] + [o] + base[i + 1:])
    swept = [i for i, k in enumerate(axes) if _group_of(k, known) and len(lists[i]) > 1]
    if len(swept) > 1 and math.prod(len(lists[i]) for i in swept) <= SWEEP_COMBOS_COMPOSED:
        for choice in itertools.product(*(lists[i] for i in swept)):
            job = list(base)
            for i, o in zip(swept, choice):
                job[i] = o
            composing(job)


def _value_checked(cfg: DictConfig, first: list[str], override: str, known: dict[str, list[str]],
                   extra_dirs: Sequence[str | Path]) -> bool:
    """True when ``override`` (one value of a swept key) sets a value the first job's config
    ``cfg`` (composed from ``first``) has, and was checked on a copy of ``cfg`` with that
    value set as Hydra sets one (``OmegaConf.update``) - the checks of a composed job, at
    no composition's cost (a sweep of ``seed=range(0,100)`` composes once). False when it is
    more than a value (a group's option, a node, ``+``/``~``, an interpolation, a list, a
    ``hydra.`` key, a key the first job lacks): the job is composed instead."""
    import copy

    from hydra.core.override_parser.types import OverrideType

    p = _parse([override])[0]
    key = p.key_or_group
    if p.type != OverrideType.CHANGE or p.package is not None or key.startswith("hydra") \
            or _chooses_option(p, known) or not _has(cfg, key):
        return False
    value = p.value()
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent) if parent else cfg
    if isinstance(value, (dict, list)) or "${" in str(value) or OmegaConf.is_interpolation(node, leaf) \
            or OmegaConf.is_config(OmegaConf.select(node, leaf, throw_on_missing=False)):
        return False
    job = copy.deepcopy(cfg)
    OmegaConf.update(job, key, value, merge=True)
    _check_composed(job, [o for o in first if _parse([o])[0].key_or_group != key] + [override], extra_dirs)
    return True


def _group_of(key: str, known: dict[str, list[str]]) -> str | None:
    """The config group a sweep key chooses an option of (None for a value's key)."""
    name = key.strip().lstrip("+~").partition("@")[0]
    return name if name in known else None
