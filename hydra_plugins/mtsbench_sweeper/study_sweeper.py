"""``hydra/sweeper=tune``: a multi-objective tuning study, each trial a job of the configured
launcher (``pip install "mtsbench[tune]"``; docs/tuning.md).

It takes hydra-optuna-sweeper's settings (``sampler`` from its sampler configs,
``direction``, ``storage``, ``study_name``, ``n_trials``, ``n_jobs``, ``params``) and does what
that plugin's sweeper does (ask Optuna for ``n_jobs`` trials, launch them as one batch on
``hydra/launcher``, tell Optuna their objectives), plus what a study needs here and the
plugin does not do (its ``OptunaSweeperImpl`` numbers jobs from 0 in every process, counts
``n_trials`` per process, leaves a killed process's trials running for ever, keeps a failed
trial's reason only in its log, and reads objectives from the task's return value only):

- the study is a database in the sweep folder (``SWEEP_DIR/study.db`` unless
  ``storage``), and trial N's job folder is ``SWEEP_DIR/N``; ``n_trials`` is the study's
  budget, however many processes it takes;
- ``mtsbench run -m --resume DIR`` continues the study: trials a killed process left
  running are finished under their own numbers (their job kept when complete), then new
  ones are asked until the budget; sampling is seeded per trial, so the resumed study is the
  uninterrupted one (``mtsbench.tune.study``);
- a trial's objectives (``tune.objectives``) are read from its job's ``summary.json``; a job
  that has none (it failed, stopped, or lacks the value) is told ``FAIL`` with its reason;
- ``conditions``: a parameter drawn only when others take given values (``mtsbench.tune.space``);
- ``front_of: DIR``: no search; the Pareto-optimal trials of the study in ``DIR`` run again
  with this sweep's overrides (other scenarios: the held-out half; trials with identical
  parameters once, as a run is deterministic) and are recorded in that study's database as
  ``NAME:held_out``.

Hydra imports every module of ``hydra_plugins`` to find its plugins: this one imports
Optuna only when a study runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List

from hydra.plugins.sweeper import Sweeper


class StudySweeper(Sweeper):
    """A tuning study (see the module docstring)."""

    def __init__(self, sampler: Any, direction: Any, storage: str | None = None, study_name: str | None = None,
                 n_trials: int = 20, n_jobs: int = 2, params: Any = None, conditions: Any = None,
                 front_of: str | None = None) -> None:
        self.sampler = sampler
        self.direction = direction
        self.storage = storage
        self.study_name = study_name
        self.n_trials = n_trials
        self.n_jobs = n_jobs
        self.params = params
        self.conditions = conditions
        self.front_of = front_of

    def setup(self, *, hydra_context, task_function, config) -> None:
        from hydra.core.plugins import Plugins

        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(config=config, hydra_context=hydra_context,
                                                                task_function=task_function)

    def sweep(self, arguments: List[str]) -> Any:
        from omegaconf import OmegaConf

        from mtsbench.errors import ConfigError, redact
        from mtsbench.tune.space import parse

        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        try:
            space = parse(_plain(self.params), arguments, _plain(self.conditions))
            objectives = [str(o) for o in OmegaConf.select(self.config, "tune.objectives", default=None) or []]
            directions = _directions(self.direction, len(objectives))
            if OmegaConf.to_container(self.config.hydra.sweep, resolve=False).get("subdir") != "${hydra.job.num}":
                raise ConfigError("hydra.sweep.subdir: a study's trials are its folders by number; keep the "
                                  "default ${hydra.job.num}")
            sweep_dir.mkdir(parents=True, exist_ok=True)
            OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
            if self.front_of:
                return self._held_out(sweep_dir, space, objectives)
            return self._search(sweep_dir, space, objectives, directions)
        except ConfigError as e:
            print(f"mtsbench: {redact(str(e))}", file=sys.stderr)
            raise SystemExit(2) from None

    def _search(self, sweep_dir: Path, space, objectives: list[str], directions: list[str]) -> None:
        import numpy as np
        import optuna

        from mtsbench.harness import sweep
        from mtsbench.tune import study as st

        _quiet(optuna)
        url = self.storage or f"sqlite:///{(sweep_dir / st.DB_FILE).absolute()}"
        storage = st.storage_of(url)
        name = self.study_name or st.DEFAULT_NAME
        seed = _plain(self.config.hydra.sweeper.sampler).get("seed")
        study = st.open_study(storage, name, directions, self._sampler_factory(), seed,
                              {"space": space.signature(), "objectives": objectives}, sweep.current().resume is not None,
                              str(sweep_dir))
        study.set_user_attr("n_trials", int(self.n_trials))
        st.write_info(sweep_dir, {"role": "tuning", "study": name,
                                  "storage": st.DB_FILE if self.storage is None else url,
                                  "objectives": objectives, "directions": directions,
                                  "sampler": type(self.sampler).__name__, "n_trials": int(self.n_trials)})
        left = st.unfinished(study)
        if left:
            print(f"mtsbench: study '{name}': finishing {len(left)} trial(s) a stopped process left running: "
                  f"{', '.join(str(t.number) for t in left)}", file=sys.stderr)
        for t in [t for t in left if "overrides" not in t.user_attrs]:
            st.fail(study, storage, t.number, "its process stopped before the trial's overrides were recorded")
        for run in st.consecutive([(t.number, list(t.user_attrs["overrides"]), None) for t in left
                                   if "overrides" in t.user_attrs]):
            self._run(study, storage, sweep_dir, run, objectives)
        while (done := len(study.get_trials(deepcopy=False))) < self.n_trials:
            batch = []
            for _ in range(min(max(1, int(self.n_jobs)), self.n_trials - done)):
                with np.errstate(divide="ignore", invalid="ignore"):   # TPE normalising equal objective values
                    trial = study.ask()
                    params = _draw(space, trial)
                overrides = [*space.fixed, *params]
                trial.set_user_attr("params", params)
                trial.set_user_attr("overrides", overrides)
                trial.set_user_attr("job", str(trial.number))
                batch.append((trial.number, overrides, trial))
            print(f"mtsbench: study '{name}': trials {batch[0][0]}-{batch[-1][0]} of {self.n_trials}",
                  file=sys.stderr)
            for run in st.consecutive(batch):
                self._run(study, storage, sweep_dir, run, objectives)
        complete = [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]
        print(f"mtsbench: study '{name}': {len(complete)} of {len(study.get_trials(deepcopy=False))} trials "
              f"complete, {len(st.front(study)) if complete else 0} on the front; {url}", file=sys.stderr)

    def _run(self, study, storage, sweep_dir: Path, run: list, objectives: list[str]) -> None:
        """Launch one run of consecutive trials (number, overrides, trial object or None) and tell each."""
        from mtsbench.tune import study as st

        self.launcher.launch([overrides for _, overrides, _ in run], initial_job_idx=run[0][0])
        for number, _, trial in run:
            scored, reason = st.finish(study, storage, number, sweep_dir / str(number), objectives, trial)
            print(f"mtsbench: trial {number}: " + (_shown(objectives, scored) if scored else f"failed: {reason}"),
                  file=sys.stderr)

    def _held_out(self, sweep_dir: Path, space, objectives: list[str]) -> None:
        """Run the front of the study in ``front_of`` with this sweep's fixed overrides."""
        import optuna

        from mtsbench.harness import sweep
        from mtsbench.errors import ConfigError
        from mtsbench.tune import study as st

        _quiet(optuna)
        source = Path(str(self.front_of))
        info = st.read_info(source)
        if info is None or info.get("role") != "tuning":
            raise ConfigError(f"hydra.sweeper.front_of={source}: not a tuning study's folder (expected its "
                              f"{st.INFO_FILE}, written by hydra/sweeper=tune)")
        if st.read_info(sweep_dir) is not None and sweep.current().resume is None:
            raise ConfigError(f"{sweep_dir} already holds a held-out evaluation: resume it with mtsbench run -m "
                              f"--resume {sweep_dir}, or choose another hydra.sweep.dir")
        url = st.storage_url(source, info)
        storage = st.storage_of(url)
        tuned = optuna.load_study(study_name=info["study"], storage=storage)
        if info.get("objectives") and list(info["objectives"]) != objectives:
            raise ConfigError(f"tune.objectives={objectives}: the study in {source} was scored on "
                              f"{info['objectives']}; a held-out evaluation scores the same")
        held = st.held_out_study(storage, info["study"], [d.name.lower() for d in tuned.directions])
        st.write_info(sweep_dir, {"role": "held_out", "study": info["study"], "held_out": info["study"] + st.HELD_OUT,
                                  "tuning": _relative(source, sweep_dir), "storage": url})
        recorded = held.get_trials(deepcopy=False)
        seen = {t.user_attrs.get("tuning_trial") for t in recorded}
        todo = [t for t in st.front(tuned) if t.number not in seen]
        done = {tuple(t.user_attrs.get("overrides", [])): t.user_attrs.get("job") for t in recorded}
        groups: dict[tuple, list] = {}         # a deterministic run: identical overrides run once
        for t in todo:
            groups.setdefault(tuple([*space.fixed, *t.user_attrs.get("params", [])]), []).append(t)
        base = 1 + max((int(t.user_attrs.get("job", -1)) for t in recorded), default=-1)
        new = [o for o in groups if o not in done]
        jobs = {**done, **{o: str(base + i) for i, o in enumerate(new)}}
        print(f"mtsbench: held-out evaluation of study '{info['study']}': {len(todo)} Pareto-optimal trial(s) to "
              f"evaluate in {len(new)} run(s)" + (f", {len(seen)} evaluated before" if seen else ""), file=sys.stderr)
        if new:
            self.launcher.launch([list(o) for o in new], initial_job_idx=base)
        for overrides, members in groups.items():
            result = _score(sweep_dir / jobs[overrides], objectives)
            for t in members:
                st.record_held_out(held, t, jobs[overrides], result, list(overrides))
                print(f"mtsbench: trial {t.number} held out (job {jobs[overrides]}): "
                      + (_shown(objectives, result[0]) if result[0] else f"failed: {result[1]}"), file=sys.stderr)

    def _sampler_factory(self):
        """``make(seed)``: the configured sampler (``hydra.sweeper.sampler``) built with ``seed``."""
        from hydra.utils import instantiate

        node = self.config.hydra.sweeper.sampler

        def make(seed: int):
            return instantiate(node, seed=seed)
        return make


def _quiet(optuna) -> None:
    """Optuna's log to warnings, and no warning that an API of its 2.10 release is experimental
    (``create_trial``, ``add_trial``, multi-objective TPE): the sweeper's own lines say what happens."""
    import warnings

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def _score(job_dir: Path, objectives: list[str]):
    from mtsbench.tune.objectives import TrialFailed, values

    try:
        return values(job_dir, objectives), None
    except TrialFailed as e:
        return None, str(e)


def _draw(space, trial) -> list[str]:
    from mtsbench.tune.space import draw

    return draw(space, trial)


def _plain(node) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True) if OmegaConf.is_config(node) else (node or {})


def _directions(direction: Any, n: int) -> list[str]:
    """``hydra.sweeper.direction`` as a list of ``maximize``/``minimize``, one per objective."""
    from omegaconf import OmegaConf

    from mtsbench.errors import ConfigError

    raw = OmegaConf.to_container(direction) if OmegaConf.is_config(direction) else direction
    items = [raw] if isinstance(raw, str) else list(raw or [])
    names = [getattr(d, "name", d) for d in items]
    bad = [d for d in names if d not in ("maximize", "minimize")]
    if bad or len(names) != n:
        raise ConfigError(f"hydra.sweeper.direction={names}: expected maximize or minimize for each of the {n} "
                          f"tune.objectives, in order")
    return names


def _shown(objectives: list[str], scored: list[float]) -> str:
    return ", ".join(f"{o.rpartition('.')[2]} {v:.4g}" if abs(v) < 1000 else f"{o.rpartition('.')[2]} {v:,.0f}"
                     for o, v in zip(objectives, scored))


def _relative(target: Path, start: Path) -> str:
    import os

    try:
        return os.path.relpath(target.absolute(), start.absolute())
    except ValueError:          # another drive
        return str(target.absolute())
