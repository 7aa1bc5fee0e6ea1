"""``hydra/sweeper=grid``, the default sweeper of ``mtsbench run -m``: Hydra's basic sweeper
(``hydra/sweeper=basic``) without its second composition of jobs already checked.

The jobs are the basic sweeper's, in its order: the cartesian product of every swept key's
values (``hydra.sweeper.params`` first, then the command line's overrides, a key given in
both taking the command line's values in the place of its first appearance), launched in
batches of ``max_batch_size`` (null: one batch), numbered on from batch to batch, and each
batch composed before it is launched (``Sweeper.validate_batch_is_legal``), so a job that
does not compose stops the sweep before any job of its batch starts.

What differs: ``mtsbench run`` has composed and checked jobs before Hydra starts
(``mtsbench.harness.preflight.check_run``: every group option of a sweep, with Hydra's compose
API); those jobs (``mtsbench.harness.sweep.Sweep.checked``) are not composed again here. Each
composition costs about 0.3 s: a 16-job ablation sweep composed every job twice in
``mtsbench run``'s process before the first job started. Jobs not checked (a value of a
swept key, checked on a copy of a config: ``seed=range(0,100)``) are composed as Hydra's
basic sweeper composes them, or by the launcher when it composes them itself before any job
starts (``hydra/launcher=local``: in its worker processes, each job then composed once).
Only Hydra's public plugin interface is used (``Sweeper``, its ``validate_batch_is_legal``,
the ``OverridesParser``; the launcher from ``Plugins``).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from hydra.plugins.sweeper import Sweeper


class GridSweeper(Sweeper):
    """Every combination of the swept values (see the module docstring)."""

    def __init__(self, max_batch_size: Optional[int] = None, params: Optional[Dict[str, str]] = None) -> None:
        self.max_batch_size = max_batch_size
        self.params = params

    def setup(self, *, hydra_context, task_function, config) -> None:
        from hydra.core.plugins import Plugins

        self.hydra_context = hydra_context
        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config)

    def sweep(self, arguments: List[str]) -> Any:
        from hydra.core.override_parser.overrides_parser import OverridesParser
        from omegaconf import OmegaConf

        given = [f"{k}={v}" for k, v in (self.params or {}).items()] + list(arguments)
        parsed = OverridesParser.create(config_loader=self.hydra_context.config_loader).parse_overrides(given)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
        returns, start = [], 0
        for batch in batches(grid(parsed), self.max_batch_size):
            self.validate_batch_is_legal(batch)
            results = self.launcher.launch(batch, initial_job_idx=start)
            for r in results:
                _ = r.return_value          # a failed job's exception, raised as the basic sweeper does
            start += len(batch)
            returns.append(results)
        return returns

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Compose the jobs of ``batch`` that ``mtsbench run`` has not composed and checked,
        unless the launcher composes those itself before any starts (``COMPOSES_UNCHECKED``:
        ``hydra/launcher=local``, in its worker processes)."""
        from mtsbench.harness import sweep

        if getattr(self.launcher, "COMPOSES_UNCHECKED", False):
            return
        checked = sweep.current().checked
        super().validate_batch_is_legal([job for job in batch if sweep.job_key(job) not in checked])


def grid(overrides) -> List[List[str]]:
    """Every job of parsed ``overrides`` (Hydra's ``Override``), as Hydra's basic sweeper lists
    them: one list per key (a later override of a key replaces its values in place), a
    swept key's values from ``sweep_string_iterator``, then their cartesian product."""
    from hydra.errors import HydraException

    lists: Dict[str, List[str]] = {}
    for o in overrides:
        key = o.get_key_element()
        if not o.is_sweep_override():
            lists[key] = [f"{key}={o.get_value_element_as_str()}"]
        elif o.is_discrete_sweep():
            lists[key] = [f"{key}={v}" for v in o.sweep_string_iterator()]
        else:
            raise HydraException(f"GridSweeper does not support sweep type : {o.value_type.name}")
    return [list(job) for job in itertools.product(*lists.values())]


def batches(jobs: List[List[str]], size: Optional[int]) -> List[List[List[str]]]:
    """``jobs`` in batches of ``size`` (None or -1: one batch).

    >>> batches([["a=1"], ["a=2"], ["a=3"]], 2)
    [[['a=1'], ['a=2']], [['a=3']]]
    >>> batches([["a=1"]], None)
    [[['a=1']]]
    """
    if size is None or size == -1:
        return [jobs]
    if size <= 0:
        raise ValueError(f"hydra.sweeper.max_batch_size: {size}; expected a positive number, -1 or null")
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]
