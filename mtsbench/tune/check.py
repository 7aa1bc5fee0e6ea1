"""A tuning study checked before anything runs (``mtsbench.harness.preflight.check_run`` calls these).

``settings(cfg)``: the study's own settings — hydra-optuna-sweeper installed, one
``hydra.sweeper.direction`` per ``tune.objectives``, a sampler that handles several
objectives, objectives the runs are evaluated at, a budget of at least one trial, a
``front_of`` folder that holds a tuning study.

``jobs(cfg, overrides)``: the configurations whose composition checks the search space —
every choice and both bounds of every parameter, once each, the other parameters at their
first value and the parameters a conditional one depends on set so that it is drawn (as a
sweep's values are each composed once: ``mtsbench.harness.preflight._check_sweep``). Each is a base
(the overrides of a configuration) and the override set on it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Sequence

from omegaconf import OmegaConf

from ..errors import ConfigError
from .objectives import missing_cuts
from .space import Param, Space, parse

SWEEPERS = {"hydra_plugins.mtsbench_sweeper.study_sweeper.StudySweeper": "tune",
            "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper": "optuna"}
MULTI_OBJECTIVE = ("tpe", "motpe", "nsgaii", "random")   # hydra-optuna-sweeper's samplers that take several objectives
EXTRA = 'pip install "mtsbench[tune]"'


def is_study(cfg) -> bool:
    """Does ``cfg`` (with its ``hydra`` node) run a tuning study?"""
    return OmegaConf.select(cfg, "hydra.sweeper._target_", default=None) in SWEEPERS


def plugin_missing() -> str | None:
    """The one line when hydra-optuna-sweeper (and so Optuna) is not installed, else None."""
    if importlib.util.find_spec("hydra_plugins.hydra_optuna_sweeper") is None \
            or importlib.util.find_spec("optuna") is None:
        return f"a tuning study (hydra/sweeper=tune or optuna) needs hydra-optuna-sweeper, which is not installed: {EXTRA}"
    return None


def settings(cfg) -> None:
    """``ConfigError`` (one line) for the first study setting that cannot run (module docstring)."""
    from ..config.options import Evaluation

    if (missing := plugin_missing()) is not None:
        raise ConfigError(missing)
    sweeper = OmegaConf.select(cfg, "hydra.sweeper")
    name = SWEEPERS[sweeper._target_]
    objectives = [str(o) for o in (OmegaConf.select(cfg, "tune.objectives", default=None) or [])]
    raw = OmegaConf.to_container(sweeper.direction) if OmegaConf.is_config(sweeper.direction) else sweeper.direction
    directions = [getattr(d, "name", d) for d in ([raw] if isinstance(raw, str) or not isinstance(raw, list) else raw)]
    if len(directions) != len(objectives) or set(directions) - {"maximize", "minimize"}:
        raise ConfigError(f"hydra.sweeper.direction={directions}: expected maximize or minimize for each of the "
                          f"{len(objectives)} tune.objectives ({', '.join(objectives)}), in order")
    sampler = OmegaConf.select(cfg, "hydra.runtime.choices", default={}).get("hydra/sweeper/sampler")
    if len(objectives) > 1 and sampler is not None and sampler not in MULTI_OBJECTIVE:
        raise ConfigError(f"hydra/sweeper/sampler={sampler}: cannot search {len(objectives)} objectives; expected one "
                          f"of {', '.join(MULTI_OBJECTIVE)}")
    if name == "tune" and sampler == "grid":
        raise ConfigError("hydra/sweeper/sampler=grid: hydra/sweeper=tune draws each trial afresh; for a grid use the "
                          "basic sweeper (mtsbench run -m KEY=a,b,c)")
    evaluation = Evaluation.of(cfg)
    why = missing_cuts(objectives, evaluation.depths, evaluation.budgets)
    if why:
        raise ConfigError(f"tune.objectives: {why}")
    for key in ("n_trials", "n_jobs"):
        value = OmegaConf.select(sweeper, key, default=1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"hydra.sweeper.{key}: expected an integer >= 1, got {value!r}")
    front_of = OmegaConf.select(sweeper, "front_of", default=None)
    if front_of is not None:
        from .info import INFO_FILE

        info = Path(str(front_of)) / INFO_FILE
        if not info.is_file():
            raise ConfigError(f"hydra.sweeper.front_of={front_of}: not a tuning study's folder (no {INFO_FILE} there)")


def space_of(cfg, overrides: Sequence[str]) -> Space:
    """The search space ``cfg``'s sweeper would search with the command line's ``overrides``."""
    sweeper = OmegaConf.select(cfg, "hydra.sweeper")
    params = OmegaConf.to_container(sweeper.params, resolve=True) if sweeper.get("params") is not None else {}
    conditions = sweeper.get("conditions")
    conditions = OmegaConf.to_container(conditions, resolve=True) if conditions is not None else None
    task = [o for o in overrides if not o.lstrip("+~").startswith(("hydra.", "hydra/"))]
    return parse(params, task, conditions)


def jobs(space: Space, overrides: Sequence[str]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """(base, job) pairs covering every value to check (module docstring): ``job`` has one
    parameter at the value checked (what depends on it drawn or not accordingly), ``base`` the
    same configuration with that parameter at its first value. Every composition gets the
    space's fixed overrides and the command line's Hydra settings (``overrides``).

    >>> s = parse({"a": "choice(x,y)", "b": "interval(0,1)"}, [], {"b": "a=y"})
    >>> [job for base, job in jobs(s, [])]
    [('a=x',), ('a=y', 'b=0.0'), ('a=y', 'b=0.0'), ('a=y', 'b=1.0')]
    """
    hydra = [o for o in overrides if o.lstrip("+~").startswith(("hydra.", "hydra/"))]
    plain = [*hydra, *space.fixed]
    by_name = {p.name: p for p in space.params}
    out: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for p in space.params:
        forced = _required(p, by_name)
        base = tuple(plain + _assignment(space, forced))
        if not any(b.partition("=")[0] == p.name for b in base):
            continue            # never drawn: a fixed value rules it out
        out += [(base, tuple(plain + _assignment(space, {**forced, p.name: v}))) for v in p.extremes()]
    return out


def _required(p: Param, by_name: dict[str, Param]) -> dict[str, str]:
    """The values the parameters ``p`` depends on take so that ``p`` is drawn (first allowed
    value, through the chain of conditions)."""
    forced: dict[str, str] = {}
    for key, allowed in p.when:
        parent = by_name.get(key)
        if parent is not None:
            forced.update(_required(parent, by_name))
        forced[key] = allowed[0]
    return forced


def _assignment(space: Space, forced: dict[str, str]) -> list[str]:
    """Each active parameter at its forced or first value, in order."""
    chosen = dict(space.fixed_values)
    out = []
    for p in space.params:
        if p.active(chosen):
            value = forced.get(p.name, p.extremes()[0])
            chosen[p.name] = value
            out.append(f"{p.name}={value}")
    return out
