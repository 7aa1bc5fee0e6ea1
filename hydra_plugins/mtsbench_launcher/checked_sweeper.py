"""``hydra/sweeper=checked``, the default sweeper of ``mtsbench run -m``: Hydra's basic
sweeper (the same jobs, in the same order, from the same ``hydra.sweeper.params``) without
its own check of each batch.

Hydra's basic sweeper composes every job's config in the parent process before launching
it (``Sweeper.validate_batch_is_legal``), and each job composes it again where it runs: a
16-job sweep composed its config 32 times, half of them one after another before any job
started. ``mtsbench run`` checks every job before Hydra starts (``mtsbench.config.check_run``,
one line for anything wrong) and then sets ``mtsbench.sweep.prechecked``: this sweeper then
leaves the composing to the jobs. Without the flag (Hydra driven some other way) it checks
as Hydra's does.
"""

from __future__ import annotations

from typing import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper


class CheckedSweeper(BasicSweeper):
    """Hydra's ``BasicSweeper``, its batches not composed again once ``mtsbench run`` checked them."""

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        from mtsbench import sweep

        if not sweep.prechecked:
            super().validate_batch_is_legal(batch)
