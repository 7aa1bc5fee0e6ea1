"""Checking a run command before anything launches: ``check_run(argv)`` checks what
``mtsbench run ARGV`` would run, each job's config as ``mtsbench.config.composition.compose``
checks one, and refuses the first problem in one line (``ConfigError``):

- a sweep (``-m``): every value of every swept key is composed once, with Hydra's compose
  API, and checked before any job starts (``_check_sweep``); a sweep of more jobs than
  ``sweep.max_jobs`` (``mtsbench.config.options.SweepOptions``) is refused before its jobs
  are listed (``_check_sweep_size``);
- a tuning study (``hydra/sweeper=tune``): its settings and every value of its search space
  (``mtsbench.tune.check``; ``_check_study``), and hydra-optuna-sweeper being installed
  (``_sweeper_missing``).

Here, not in ``mtsbench.config``, because tuning studies (``mtsbench.tune``) sit above the config path.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import math
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from ..config import composition
from ..config.options import DEFAULT_MAX_JOBS
from ..config.overrides import chooses_option, has_key, parse, sweep_needs_m
from ..config.search import groups, hydra_group_options, split_config_dirs
from ..errors import ConfigError
from ..tune import check as tune_check
from .sweep import job_key

SWEEP_COMBOS_COMPOSED = 8   # two or more swept groups with up to this many combinations: each composed
KEPT_FOR_LAUNCH = 64        # job configs kept for the local launcher (``check_run``'s ``composed``; ~0.3 MB each)


def check_run(argv: Sequence[str], checked: set | None = None, composed: dict | None = None) -> DictConfig | None:
    """Check what ``mtsbench run ARGV`` would run before Hydra launches anything: compose
    the job (for a sweep, its first job) and validate it, then every value of a sweep's
    swept keys (``_check_sweep``); ``ConfigError`` (one line) for the first problem.
    Returns the (first) job's config with its ``hydra`` node, as composed. With Hydra's
    informational flags (``--cfg``, ``--info``, ``--help``, ...) nothing is checked (None)
    but secrets on the command line, refused always. ``checked``: a set given is filled with
    the ``mtsbench.harness.sweep.job_key`` of each sweep job composed here, which the grid
    sweeper then does not compose again (``hydra_plugins.mtsbench_sweeper.grid_sweeper``).
    ``composed``: a dict given is filled with the config of each sweep job composed here (with
    the Hydra overrides the sweep's Hydra adds: ``sweep_adds``), by its task overrides (a
    tuple; up to ``KEPT_FOR_LAUNCH``), which the local launcher runs without composing the job
    again (``mtsbench.harness.sweep.reusable`` says when it may)."""
    from ..config.rules import refuse_secrets

    refuse_secrets([a for a in argv if "=" in a and not a.startswith("-")])
    dirs, rest = split_config_dirs(argv)
    if any(a.startswith("-") and a not in ("-m", "--multirun") for a in rest):
        return None
    multirun = any(a in ("-m", "--multirun") for a in rest)
    overrides = [a for a in rest if not a.startswith("-")]
    parsed = parse(overrides)
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
        cfg = _compose(first, dirs, keep=True)
    except ConfigError:     # a study's sweeps are its space, drawn with its fixed values: not a grid's first job
        study = _study_of(plain, dirs) if len(plain) < len(overrides) else None
        if study is None:
            raise
        return _check_study(study, overrides, dirs)
    multirun = multirun or "MULTIRUN" in str(OmegaConf.select(cfg, "hydra.mode", default=""))
    swept = [o for o, p in zip(overrides, parsed) if p.is_sweep_override()]
    if not multirun:
        if swept:
            raise sweep_needs_m(swept[0])
        return cfg
    if tune_check.is_study(cfg):
        return _check_study(cfg, overrides, dirs)
    params = OmegaConf.select(cfg, "hydra.sweeper.params", default=None) or {}
    args = [f"{k}={v}" for k, v in params.items()] + overrides
    chosen: dict[str, tuple[str, object]] = {}   # as Hydra's basic sweeper: the command line wins over params
    for o, p in zip(args, parse(args)):
        chosen[p.get_key_element()] = (o, p)
    sizes = {key: _sweep_size(o, p, known, dirs) if p.is_sweep_override() else 1 for key, (o, p) in chosen.items()}
    _check_sweep_size(cfg, sizes)             # before listing the jobs: range(0,10000000000) would fill memory
    axes = {key: [f"{key}={v}" for v in _swept(o, p, known, dirs)] if p.is_sweep_override() else [o]
            for key, (o, p) in chosen.items()}
    done = {job_key(first)}
    adds = sweep_adds(cfg, rest)
    kept = {} if composed is None else composed
    if not adds:                    # the first job (if it is one) composed as the sweep's Hydra composes it
        kept[tuple(cfg.hydra.overrides.task)] = cfg
    _check_sweep(cfg, axes, first, dirs, done, adds, kept)
    if checked is not None:
        common = [o for o, p in zip(overrides, parsed) if not p.is_sweep_override()
                  and o.lstrip("+~").startswith(("hydra.", "hydra/"))]
        checked.update(job_key(job, common) for job in done)
    return cfg


def sweep_adds(cfg: DictConfig, argv: Sequence[str]) -> list[str]:
    """The Hydra overrides a sweep's jobs have beyond the command line's ``argv`` (``cfg``: its
    first job's config, composed from ``argv``): the sweep's folder pinned (``pin_folder``, as
    ``mtsbench run`` adds it) and ``hydra.mode=MULTIRUN``, which Hydra adds for ``-m`` unless
    the config's own mode is MULTIRUN.

    >>> cfg = OmegaConf.create({"hydra": {"mode": None, "sweep": {"dir": "out"}}})
    >>> sweep_adds(cfg, ["-m", "seed=0,1"]), sweep_adds(cfg, ["seed=0,1"])
    (['hydra.mode=MULTIRUN'], [])
    """
    multirun = any(a in ("-m", "--multirun") for a in argv)
    mode = "MULTIRUN" in str(OmegaConf.select(cfg, "hydra.mode", default=""))
    return (pin_folder(cfg, "hydra.sweep.dir", Path(str(cfg.hydra.sweep.dir)))
            + (["hydra.mode=MULTIRUN"] if multirun and not mode else []))


def pin_folder(cfg, key: str, folder: Path) -> list[str]:
    """``[KEY='FOLDER']`` when ``cfg``'s ``key`` (``hydra.run.dir``, ``hydra.sweep.dir``) is an
    interpolation (the default's ``${now:...}``), else []: Hydra composes the config again
    and must write where ``mtsbench run`` checked and locked, not a second later's folder.

    >>> pin_folder(OmegaConf.create({"d": "${x}", "x": "a b"}), "d", Path("a b"))
    ["d='a b'"]
    >>> pin_folder(OmegaConf.create({"d": "out"}), "d", Path("out"))
    []
    """
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent) if parent else cfg
    if not OmegaConf.is_interpolation(node, leaf):
        return []
    quoted = str(folder).replace("'", "\\'")
    return [f"{key}='{quoted}'"]


def _compose(overrides: list[str], extra_dirs: Sequence[str | Path], keep: bool = False) -> DictConfig:
    """``composition.compose_full``, a missing tuning-study plug-in told in its own line."""
    return composition.compose_full(overrides, extra_dirs, keep, explain=_sweeper_missing)


def _sweeper_missing(overrides: list[str], extra_dirs: Sequence[str | Path]) -> ConfigError | None:
    """The one line when ``overrides`` do not compose only because they choose a tuning study
    (``hydra/sweeper=tune``, here or in an experiment) without hydra-optuna-sweeper, whose
    sampler configs it uses: told apart by composing again with Hydra's basic sweeper; else None."""
    missing = tune_check.plugin_missing()
    if missing is None:
        return None
    try:
        composition.hydra_compose([o for o in overrides if not o.lstrip("+~").startswith("hydra/sweeper")]
                                  + ["hydra/sweeper=basic"], extra_dirs)
    except Exception:  # noqa: BLE001 - something else is wrong: the composition's own line says what
        return None
    return ConfigError(missing)


def _study_of(plain: list[str], extra_dirs: Sequence[str | Path], strict: bool = False) -> DictConfig | None:
    """The config of the command line's ``plain`` (non-sweep) overrides when it runs a tuning
    study, else None (also when it does not compose, unless ``strict``: then its one line)."""
    try:
        cfg = _compose(plain, extra_dirs, keep=True)
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
        if job_key(job) in composed:
            continue
        changed = sorted(set(job) - set(base))
        if len(changed) == 1 and len(job) == len(base):
            if base not in bases:
                bases[base] = _compose(list(base), extra_dirs, keep=True)
                composed.add(job_key(base))
            if _value_checked(bases[base], list(base), changed[0], known, extra_dirs):
                composed.add(job_key(job))
                continue
        composed.add(job_key(job))
        _compose(list(job), extra_dirs)
    return cfg


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
        names = hydra_group_options(key, dirs)
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


def _check_sweep(cfg: DictConfig, axes: dict[str, list[str]], first: list[str], extra_dirs: Sequence[str | Path],
                 composed: set[tuple[str, ...]], adds: Sequence[str] = (), kept: dict | None = None) -> None:
    """The jobs of a sweep beyond the first one (``cfg``, composed from ``first``), checked
    by composing every value of every swept key once, the other keys at their first value
    (Hydra's compose API, each composition checked as ``compose`` checks one): the usual
    one line names what is wrong, before any job starts. A value of a key (``seed=3``) is
    checked on the first job's config with that value set (``_value_checked``). Two or
    more swept groups with at most ``SWEEP_COMBOS_COMPOSED`` combinations have each combination composed (checks
    across nodes: ``system=bm25`` with ``retrieval=hybrid``). A sweep of N values of one
    key costs N compositions, not one per job. ``composed``: the jobs composed (each its
    ``job_key``), ``first``'s already; those composed here are added. Each is composed with
    ``adds`` after its overrides (``sweep_adds``) and kept in ``kept`` by its task overrides."""
    known = groups(extra_dirs)
    lists = list(axes.values())
    base = [values[0] for values in lists]

    def composing(job: list[str]) -> None:
        if job_key(job) not in composed:
            composed.add(job_key(job))
            config = _compose(job + list(adds), extra_dirs, keep=True)
            if kept is not None and len(kept) < KEPT_FOR_LAUNCH:
                kept[tuple(config.hydra.overrides.task)] = config

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
    from hydra.core.override_parser.types import OverrideType

    p = parse([override])[0]
    key = p.key_or_group
    if p.type != OverrideType.CHANGE or p.package is not None or key.startswith("hydra") \
            or chooses_option(p, known) or not has_key(cfg, key):
        return False
    value = p.value()
    parent, _, leaf = key.rpartition(".")
    node = OmegaConf.select(cfg, parent) if parent else cfg
    if isinstance(value, (dict, list)) or "${" in str(value) or OmegaConf.is_interpolation(node, leaf) \
            or OmegaConf.is_config(OmegaConf.select(node, leaf, throw_on_missing=False)):
        return False
    job = copy.deepcopy(cfg)
    OmegaConf.update(job, key, value, merge=True)
    composition.check_composed(job, [o for o in first if parse([o])[0].key_or_group != key] + [override],
                               extra_dirs)
    return True


def _group_of(key: str, known: dict[str, list[str]]) -> str | None:
    """The config group a sweep key chooses an option of (None for a value's key)."""
    name = key.strip().lstrip("+~").partition("@")[0]
    return name if name in known else None
