"""Tuning studies: a search space of overrides searched by Optuna through Hydra (docs/tuning.md).

- ``space``: ``hydra.sweeper.params`` (Hydra's override syntax: ``choice``, ``range``,
  ``interval``, ``tag(log, ...)``) and ``hydra.sweeper.conditions`` read into parameters,
  and a trial's overrides drawn from them;
- ``objectives``: what a trial is scored on (``tune.objectives``: values of its
  ``summary.json``), and why a job that has none failed;
- ``study``: the study as a database (Optuna's storage, default ``SWEEP_DIR/study.db``):
  opening or resuming it, per-trial seeded sampling, trials finished or failed with their
  reason;
- ``check``: a study's space checked before anything runs (each value composed);
- ``mechanisms``: which mechanisms of the seed design a configuration has on;
- ``report``: ``mtsbench report`` of a study's folder: both fronts, the trials, importances.

The sweeper itself is ``hydra_plugins.mtsbench_sweeper`` (``hydra/sweeper=tune``): Hydra
instantiates sweepers from the ``hydra_plugins`` namespace only. Optuna is imported only
when a study runs or is reported (``pip install "mtsbench[tune]"``).
"""
