"""A tuning study is a database: Optuna's storage, by default ``SWEEP_DIR/study.db`` (SQLite).

What the sweeper (``hydra_plugins.mtsbench_sweeper``) keeps there, through Optuna's public API:

- the study (``tuning`` unless ``hydra.sweeper.study_name``) with its directions and, as
  study attributes, the sampler's ``seed``, the search space (``space``, canonical JSON),
  the ``objectives`` and the budget ``n_trials``; a study resumed with another space,
  objectives or seed is refused (one line): it would not be the same study;
- each trial: its parameters (Optuna's), and as attributes the ``overrides`` its job ran
  with (``params``: the searched ones), its job folder (``job``: the trial's number, under
  the sweep folder) and, for a failed trial, its ``failure`` (the reason, one line: the
  job's error, why it stopped, or the objective it lacks); a failed trial is told
  ``FAIL``, never a value;
- the held-out evaluation of the tuning front (``hydra.sweeper.front_of``): a second study,
  ``NAME:held_out``, one trial per Pareto-optimal tuning trial, with ``tuning_trial`` (its
  number) and ``job`` (its folder) as attributes.

**Reproducible and resumable.** The sampler is created afresh for every trial, seeded with
``crc32(seed:number)`` (``TrialSeeded``), so the point a trial draws depends on the seed,
its number and the trials finished before it, not on how many trials this process drew
before: a study killed and resumed (``mtsbench run -m --resume DIR``) draws what the
uninterrupted study would have drawn. Trials a killed process left running are run again
under their own numbers and parameters (their job folder kept when it is complete), so no
finished trial runs twice and the history is the uninterrupted one.

``study.json`` in the sweep folder says where the storage is and which studies it holds
(``mtsbench report`` reads it).
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Callable, Sequence

import optuna
from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial, TrialState

from ..errors import ConfigError
from .info import DB_FILE, DEFAULT_NAME, HELD_OUT, INFO_FILE, read_info, storage_url, write_info  # noqa: F401
from .objectives import TrialFailed, values


def trial_seed(seed: int, number: int) -> int:
    """The seed of trial ``number``'s sampler in a study seeded ``seed``.

    >>> trial_seed(0, 3) == trial_seed(0, 3) != trial_seed(1, 3)
    True
    """
    return zlib.crc32(f"{seed}:{number}".encode())


class TrialSeeded(BaseSampler):
    """A sampler built afresh for each trial by ``make(seed)``, seeded ``trial_seed(seed, number)``;
    every call is the built sampler's (module docstring: why)."""

    def __init__(self, make: Callable[[int], BaseSampler], seed: int):
        self.make = make
        self.seed = seed
        self.current_: tuple[int, BaseSampler] | None = None

    def _for(self, trial: FrozenTrial) -> BaseSampler:
        if self.current_ is None or self.current_[0] != trial.number:
            self.current_ = (trial.number, self.make(trial_seed(self.seed, trial.number)))
        return self.current_[1]

    def infer_relative_search_space(self, study, trial):
        return self._for(trial).infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, search_space):
        return self._for(trial).sample_relative(study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._for(trial).sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values):
        self._for(trial).after_trial(study, trial, state, values)


def storage_of(url: str) -> optuna.storages.RDBStorage:
    """Optuna's relational storage at ``url`` (``sqlite:///PATH``, or a database server's URL);
    ``ConfigError`` (one line) for a URL it cannot open."""
    try:
        return optuna.storages.RDBStorage(url)
    except Exception as e:  # noqa: BLE001 - SQLAlchemy's and Optuna's errors: one line
        from ..errors import one_line

        raise ConfigError(f"hydra.sweeper.storage={url}: cannot open it ({one_line(e)}); expected a database URL "
                          f"such as sqlite:///PATH/study.db") from None


def exists(storage, name: str) -> bool:
    return name in [s.study_name for s in optuna.study.get_all_study_summaries(storage)]


def open_study(storage, name: str, directions: Sequence[str], make: Callable[[int], BaseSampler],
               seed: int | None, attrs: dict, resume: bool, where: str) -> optuna.Study:
    """The tuning study ``name`` in ``storage``: created (seeded ``seed``, a fresh random one
    when None, kept in the study), or loaded when ``resume`` (its stored seed, and ``attrs``:
    the space and objectives it must share with this sweep). Without ``resume`` an existing
    study is refused: the sweep folder ``where`` is taken."""
    if exists(storage, name):
        if not resume:
            raise ConfigError(f"{where} already holds study '{name}': resume it with mtsbench run -m --resume "
                              f"{where} (hydra.sweeper.n_trials=N to extend its budget), or choose another "
                              f"hydra.sweep.dir")
        stored = optuna.load_study(study_name=name, storage=storage).user_attrs
        for key, value in attrs.items():
            if key in stored and stored[key] != value:
                raise ConfigError(f"--resume {where}: study '{name}' was run with another {key} "
                                  f"({_short(stored[key])}; this sweep: {_short(value)}); a resumed study searches "
                                  f"the same space with the same objectives")
        if seed is not None and stored.get("seed", seed) != seed:
            raise ConfigError(f"--resume {where}: study '{name}' was seeded {stored['seed']} "
                              f"(hydra.sweeper.sampler.seed={seed} given); resume it with the same seed")
        study = optuna.load_study(study_name=name, storage=storage,
                                  sampler=TrialSeeded(make, int(stored["seed"])))
        if list(d.name.lower() for d in study.directions) != list(directions):
            raise ConfigError(f"--resume {where}: study '{name}' has directions "
                              f"{[d.name.lower() for d in study.directions]}, this sweep {list(directions)}")
        return study
    seed = int.from_bytes(os.urandom(4), "little") if seed is None else int(seed)
    study = optuna.create_study(study_name=name, storage=storage, directions=list(directions),
                                sampler=TrialSeeded(make, seed))
    study.set_user_attr("seed", seed)
    for key, value in attrs.items():
        study.set_user_attr(key, value)
    return study


def _short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def unfinished(study: optuna.Study) -> list[FrozenTrial]:
    """Trials left running by a process that stopped (the study's folder is locked by this
    one, so none is running elsewhere)."""
    return [t for t in study.get_trials(deepcopy=False) if t.state in (TrialState.RUNNING, TrialState.WAITING)]


def finish(study: optuna.Study, storage, number: int, job_dir: Path, objectives: Sequence[str],
           trial: optuna.trial.Trial | None = None) -> tuple[list[float] | None, str | None]:
    """Tell trial ``number`` what its job in ``job_dir`` gave: its objective values, or
    ``FAIL`` with the reason as its ``failure`` attribute. ``trial``: the trial object when
    this process asked it (else the reason is set through the storage's public API).
    Returns (values, None) or (None, reason)."""
    try:
        scored = values(job_dir, objectives)
    except TrialFailed as e:
        fail(study, storage, number, str(e), trial)
        return None, str(e)
    study.tell(trial if trial is not None else number, scored)
    return scored, None


def fail(study: optuna.Study, storage, number: int, reason: str, trial: optuna.trial.Trial | None = None) -> None:
    """Tell trial ``number`` ``FAIL``, its ``failure`` attribute the reason (set through the
    trial object, or for a trial another process asked through the storage's public API)."""
    if trial is not None:
        trial.set_user_attr("failure", reason)
    else:
        study_id = storage.get_study_id_from_name(study.study_name)
        storage.set_trial_user_attr(storage.get_trial_id_from_study_id_trial_number(study_id, number),
                                    "failure", reason)
    study.tell(trial if trial is not None else number, state=TrialState.FAIL)


def front(study: optuna.Study) -> list[FrozenTrial]:
    """The study's Pareto-optimal complete trials (Optuna's ``best_trials``), by number."""
    return sorted(study.best_trials, key=lambda t: t.number)


def held_out_study(storage, name: str, directions: Sequence[str]) -> optuna.Study:
    """The held-out evaluation of study ``name``'s front (``NAME:held_out``), created when new."""
    return optuna.create_study(study_name=name + HELD_OUT, storage=storage, directions=list(directions),
                               load_if_exists=True)


def record_held_out(held: optuna.Study, tuned: FrozenTrial, job: str, result: tuple[list[float] | None, str | None],
                    overrides: list[str]) -> None:
    """Add the held-out evaluation of tuning trial ``tuned`` (its job folder ``job``, its
    values or failure) to the held-out study."""
    scored, reason = result
    attrs = {"tuning_trial": tuned.number, "job": job, "overrides": overrides,
             **({"failure": reason} if reason is not None else {})}
    held.add_trial(optuna.trial.create_trial(
        state=TrialState.COMPLETE if scored is not None else TrialState.FAIL, values=scored,
        params=tuned.params, distributions=tuned.distributions, user_attrs=attrs))


def consecutive(items: list, number: Callable = lambda x: x[0]) -> list[list]:
    """``items`` split into runs of consecutive numbers (a launcher numbers a batch's jobs
    from its first).

    >>> consecutive([(3, 'a'), (4, 'b'), (7, 'c')])
    [[(3, 'a'), (4, 'b')], [(7, 'c')]]
    """
    runs: list[list] = []
    for item in items:
        if runs and number(item) == number(runs[-1][-1]) + 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs
