"""``hydra/launcher=local``, the default launcher of ``mtsbench run -m``: jobs in worker
processes on this machine (loky, as Hydra's joblib launcher), ``n_jobs`` at a time, with a
tqdm bar over finished jobs (quiet off a terminal).

Each of the ``n_jobs`` lanes is its own one-worker loky executor, reused from job to job,
so a worker that dies (killed, out of memory, a crash in C code) fails only the job it was
running: that job gets ``failure.json`` (``mtsbench.harness.sweep.WorkerDied``, with the worker's
exit code), its lane a fresh worker, and the other jobs go on. A job folder has one writer at a
time: the worker running the job locks it (``mtsbench.outputs.folder_lock``) before Hydra writes
there, waiting up to ``JOB_LOCK_WAIT`` seconds for a worker of a sweep killed outright
(which dies with it: ``_die_with``), and a job whose folder stays busy fails in one
line without writing there. A lane's worker imports what a job needs once, with its first
job (loky's own start: a fresh interpreter). Before any job starts the
sweep's ``jobs.json`` lists every job (``mtsbench.harness.sweep.write_manifest``). With
``mtsbench run -m ... --resume DIR`` (``mtsbench.harness.sweep.Sweep.resume``) a job already complete in
DIR is not run again. SIGINT or SIGTERM stops the sweep: running jobs are asked to stop
(SIGTERM: each writes what it did, ``status: interrupted``), jobs not started stay so
(``never started`` in the report), and the interrupt goes on to ``mtsbench run``.
Of the joblib options only ``n_jobs`` applies.

What every job of the sweep shares (Hydra's context, the sweep's config, the job function,
Hydra's global state) is sent to a lane's worker once, when it starts (``_start_lane``),
not with every job: a job is its number and overrides (``_lane_job``), and the worker's
Hydra state (its plugins discovered once) is kept from job to job. Each job has Hydra
compose its own config (``ConfigLoader.load_sweep_config``, as Hydra's joblib launcher does;
its ``.hydra/`` as ever). Only Hydra's public plugin interface is used (``Launcher``,
``hydra.core.utils.run_job``, ``Singleton`` state, the context's ``ConfigLoader``).
"""

from __future__ import annotations

import os
import re
import signal
import sys
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path
from typing import Any, Sequence

from hydra_plugins.hydra_joblib_launcher.joblib_launcher import JoblibLauncher

STOP_GRACE = 30.0      # seconds a stopped sweep waits for its running jobs to write what they did
JOB_LOCK_WAIT = 10.0   # seconds a job waits for its folder's lock (held by a dying worker of a killed sweep)


class ProgressJoblibLauncher(JoblibLauncher):
    """Hydra's joblib launcher made to survive a dead worker (see the module docstring)."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[Any]:
        from mtsbench.harness.progress import step_bar

        from mtsbench.harness import sweep

        # a dead worker's executor leaves a semaphore behind: not the user's concern at exit
        os.environ.setdefault("PYTHONWARNINGS", "ignore:resource_tracker:UserWarning")
        state = sweep.current()                  # the `mtsbench run` command's sweep
        sweep_dir, jobs = sweep.begin(self, job_overrides, initial_job_idx, state)
        n_jobs = _lanes(self.joblib.get("n_jobs"), len(job_overrides))
        skip = {num for num, o in jobs if state.resume is not None and sweep.finished(self._job_dir(num, o))}
        sweep.announce(jobs, skip, f", {n_jobs} at a time, in {sweep_dir}", state)
        results: dict[int, Any] = {num: sweep.returned(o) for num, o in jobs if num in skip}
        with step_bar(len(jobs), initial=len(skip), desc="jobs", unit="job") as bar:
            self._run_lanes([(n, o) for n, o in jobs if n not in skip], n_jobs, results, bar, state)
        return [results[num] for num, _ in jobs]

    def _run_lanes(self, todo: list[tuple[int, list[str]]], n_jobs: int, results: dict, bar, state) -> None:
        from concurrent.futures.process import BrokenProcessPool

        from hydra.core.singleton import Singleton
        from joblib.externals.loky.process_executor import ProcessPoolExecutor

        from mtsbench.outputs.folder_lock import FolderBusy

        start = (self.hydra_context, self.config, self.task_function, Singleton.get_state(), os.getpid())
        lanes: list = [None] * n_jobs
        pids: list = [None] * n_jobs              # each lane's worker's PID (a future), for _stop
        running: dict = {}                         # future -> (lane, num, overrides)
        todo = list(todo)
        try:
            while todo or running:
                for lane in range(n_jobs):
                    if todo and lane not in {v[0] for v in running.values()}:
                        if lanes[lane] is None:
                            lanes[lane] = ProcessPoolExecutor(max_workers=1, initializer=_start_lane, initargs=start)
                            pids[lane] = lanes[lane].submit(os.getpid)
                        num, overrides = todo.pop(0)
                        future = lanes[lane].submit(_lane_job, num, overrides)
                        running[future] = (lane, num, overrides)
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    lane, num, overrides = running.pop(future)
                    try:
                        results[num] = future.result()
                    except FolderBusy as e:            # another process writes its folder: not touched
                        results[num] = self._busy(num, overrides, e, state)
                    except BrokenProcessPool as e:     # the worker died: its lane gets a fresh one
                        results[num] = self._worker_died(num, overrides, e)
                        lanes[lane].shutdown(wait=False, kill_workers=True)
                        lanes[lane] = pids[lane] = None
                    except Exception as e:  # noqa: BLE001 - Hydra could not start the job: the lane goes on
                        results[num] = self._worker_died(num, overrides, e)
                    bar.update(1)
        except BaseException:                      # SIGINT / SIGTERM: stop the running jobs, keep what they did
            _stop(pids, running)
            for executor in lanes:
                if executor is not None:
                    executor.shutdown(wait=False, kill_workers=True)
            raise
        for executor in lanes:
            if executor is not None:
                executor.shutdown(wait=True)

    def _job_dir(self, num: int, overrides: list[str]) -> Path:
        """The directory Hydra gives job ``num`` (``hydra.sweep.dir`` / ``hydra.sweep.subdir``);
        with the default subdir (the job's number) without composing the job's config; Hydra's
        default place if its config does not compose."""
        from omegaconf import OmegaConf

        from mtsbench.harness import sweep

        subdir = OmegaConf.to_container(self.config.hydra.sweep, resolve=False).get("subdir")
        if subdir != "${hydra.job.num}":
            try:
                return sweep.job_dir(_compose(self.hydra_context.config_loader, self.config, num, overrides))
            except Exception:  # noqa: BLE001 - its config does not compose: Hydra's default place
                pass
        return Path(str(self.config.hydra.sweep.dir)) / str(num)

    def _busy(self, num: int, overrides: list[str], error: BaseException, state):
        """Job ``num`` not run: its folder's lock stayed with another live process (nothing is
        written there: the job counts as failed, ``state.busy``, a ``mtsbench.harness.sweep.Sweep``);
        its JobReturn."""
        from mtsbench.harness import sweep
        from mtsbench.errors import one_line

        state.busy.append(str(self._job_dir(num, overrides)))
        print(f"mtsbench: job {num} not run: {one_line(error)}", file=sys.stderr)
        return sweep.returned(overrides)

    def _worker_died(self, num: int, overrides: list[str], error: BaseException):
        """Record job ``num`` as failed like a job that raised; its JobReturn."""
        from mtsbench.harness import sweep
        from mtsbench.errors import one_line

        code = re.search(r"exit codes? of the workers? (?:is|are) \{?([^}]*)\}?", str(error))
        reason = (f"the worker process running job {num} died (exit code {code.group(1).strip()})" if code
                  else f"the worker process running job {num} failed: {one_line(error)}")
        return sweep.worker_died(num, overrides, self._job_dir(num, overrides), reason)


def _start_lane(hydra_context, config, task_function, singleton_state, parent: int) -> None:
    """A lane's worker process starting: bound to die with ``mtsbench run`` (PID ``parent``:
    ``_die_with``), and keeping what every job of the sweep shares, sent once, in
    ``mtsbench.harness.sweep.start_lane`` (not here: Hydra's plugin discovery executes this module again)."""
    import gc

    from mtsbench.harness import runner  # noqa: F401 - what every job imports: once, then frozen
    from mtsbench.harness import sweep

    _die_with(parent)
    gc.freeze()             # the imports out of the collector's way (a job collects far less)
    sweep.start_lane(sweep.Lane(hydra_context=hydra_context, config=config, task_function=task_function,
                                state=singleton_state))


def _die_with(parent: int) -> None:
    """End this worker when ``mtsbench run`` (PID ``parent``) ends, even killed outright
    (SIGKILL, the OOM killer; issue 28): loky's workers do not watch their parent, and a
    worker left running would write a job folder a ``--resume`` writes too. On Linux the
    parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), then a check that the parent
    did not die before it was set; elsewhere a thread looks at the parent twice a second."""
    import threading
    import time

    if sys.platform.startswith("linux"):
        import ctypes

        try:
            if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0) == 0:   # 1: PR_SET_PDEATHSIG
                if os.getppid() != parent:
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="mtsbench-parent-watch", daemon=True).start()


def _lane_job(num: int, overrides: list[str]):
    """Job ``num`` in this lane's worker: Hydra's joblib ``execute_job`` (the job's config
    composed; its directory, ``.hydra/`` and logging set up, the task run) with what the
    lane keeps; Hydra's global state carries on from the lane's previous job (its plugins
    discovered once), the job's own config and runtime set anew, as each job does.
    (``execute_job`` also made the config Hydra's current one just before ``run_job`` does
    the same: done once here.)

    Its JobReturn comes back without the job's two configs (in its ``.hydra/`` folder): of
    a JobReturn the sweep reads only the status and return value (Hydra's sweeper raises a
    failed job's exception), and pickling the configs back cost a quarter of a small job."""
    from hydra.core.singleton import Singleton
    from hydra.core.utils import run_job, setup_globals
    from omegaconf import OmegaConf

    from mtsbench.outputs import folder_lock
    from mtsbench.harness import sweep
    from mtsbench.errors import redact

    lane = sweep.lane()
    setup_globals()
    Singleton.set_state(lane.state)
    config = _compose(lane.hydra_context.config_loader, lane.config, num, overrides)
    # the job's folder as run_job makes it, one writer at a time (a FolderBusy goes back to the launcher)
    where = [OmegaConf.select(config, key) for key in ("hydra.sweep.dir", "hydra.sweep.subdir")]
    job_dir = None if None in where else sweep.job_dir(config)
    if job_dir is not None:
        note = folder_lock.acquire(job_dir, "hydra.sweep.subdir", wait=JOB_LOCK_WAIT)
        if note:
            print(f"mtsbench: {redact(note)}", file=sys.stderr)
    try:
        if job_dir is not None:
            folder_lock.sweep_leftovers(job_dir)      # a killed writer's temporary files
        ret = run_job(hydra_context=lane.hydra_context, config=config, task_function=lane.task_function,
                      job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")
    finally:
        if job_dir is not None:
            folder_lock.release(job_dir)
    ret.cfg = ret.hydra_cfg = None
    return ret


def _compose(loader, sweep_config, num: int, overrides: list[str]):
    """Job ``num``'s config as Hydra's joblib launcher composes it (``execute_job``): the
    sweep's config with the job's ``overrides``, its ``hydra.job.id`` and ``num`` set."""
    from omegaconf import open_dict

    config = loader.load_sweep_config(sweep_config, list(overrides))
    with open_dict(config):
        config.hydra.job.id = f"{config.hydra.job.name}_{num}"
        config.hydra.job.num = num
    return config


def _lanes(n_jobs, total: int) -> int:
    """Workers to run at once: ``n_jobs`` (-1 = one per core), at least 1, at most the jobs.

    >>> _lanes(2, 5), _lanes(8, 3), _lanes(-1, 1), _lanes(None, 4)
    (2, 3, 1, 1)
    """
    n = int(n_jobs) if n_jobs not in (None, 0) else 1
    if n < 0:
        n = max(1, (os.cpu_count() or 1) + 1 + n)
    return max(1, min(n, total))


def _stop(pids: list, running: dict) -> None:
    """Ask the running jobs' workers (``pids``: each lane's worker's PID, a future) to stop
    (SIGTERM: each writes what it did), wait for them."""
    for pid in pids:
        if pid is not None and pid.done() and pid.exception() is None:
            try:
                os.kill(pid.result(), signal.SIGTERM)
            except OSError:
                pass
    if running:
        wait(list(running), timeout=STOP_GRACE)
