"""``hydra/launcher=local``, the default launcher of ``mtsbench run -m``: Hydra's joblib
launcher (processes on this machine) with a tqdm bar over finished jobs, quiet off a terminal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Sequence

from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher


class ProgressJoblibLauncher(JoblibLauncher):
    """Hydra's joblib launcher, with a tqdm bar over finished jobs (quiet off a terminal)."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[Any]:
        from hydra.core.singleton import Singleton
        from hydra.core.utils import configure_log, filter_overrides, setup_globals
        from hydra_plugins.hydra_joblib_launcher._core import execute_job, process_joblib_cfg
        from joblib import Parallel, delayed
        from tqdm import tqdm

        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        options = dict(self.joblib) | {"backend": "loky", "return_as": "generator"}
        process_joblib_cfg(options)
        print(f"mtsbench: {len(job_overrides)} jobs, {options.get('n_jobs')} at a time, in {sweep_dir}",
              file=sys.stderr)
        for idx, overrides in enumerate(job_overrides):
            print(f"  #{initial_job_idx + idx}: {' '.join(filter_overrides(overrides))}", file=sys.stderr)
        state = Singleton.get_state()
        jobs = Parallel(**options)(
            delayed(execute_job)(initial_job_idx + idx, overrides, self.hydra_context, self.config,
                                 self.task_function, state)
            for idx, overrides in enumerate(job_overrides))
        return list(tqdm(jobs, total=len(job_overrides), desc="jobs", unit="job", disable=None))
