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

The lanes' workers start before Hydra does: ``mtsbench run`` starts ``PRESTART`` of them
(``prestart``; each runs ``_start_worker``: bound to die with ``mtsbench run``, the jobs'
imports made) as soon as it reads a ``-m`` command for this launcher, so that their start
overlaps the command's check; the launcher adopts as many as it has lanes and stops the
others (``mtsbench run`` stops them if no sweep starts).

What every job of the sweep shares (Hydra's context, the sweep's config, the job function,
Hydra's global state) is sent to a lane's worker once, as its first task (``_set_lane``),
not with every job: a job is its number and overrides (``_lane_job``), and the worker's
Hydra state (its plugins discovered once) is kept from job to job. A job ``mtsbench run``'s
check composed (``mtsbench.harness.sweep.Sweep.composed``: each group option of an ablation
sweep) runs on that config, sent with the job, when its ``hydra`` node records the same inputs
as Hydra's composition of the job would have (``mtsbench.harness.sweep.reusable``): composed
once, not again here. Any other job has Hydra compose its own config
(``ConfigLoader.load_sweep_config``, as Hydra's joblib launcher does); its ``.hydra/`` as
ever. Only Hydra's public plugin interface is used (``Launcher``, ``hydra.core.utils.run_job``,
``Singleton`` state, the context's ``ConfigLoader``).

The jobs ``mtsbench run`` has not composed and checked (``mtsbench.harness.sweep.Sweep.checked``:
the values of a swept key, ``seed=range(0,100)``) are composed here before any job of the
batch starts, in the lanes at once (the batch's i-th job in lane i mod n_jobs: ``_Lanes.compose``),
in place of Hydra's sweeper composing each in ``mtsbench run``'s process
(``Sweeper.validate_batch_is_legal``, skipped for this launcher: ``COMPOSES_UNCHECKED``): the
first job in order that does not compose stops the sweep with the error Hydra's sweeper
raises, before ``jobs.json`` and before any job starts. The jobs then start in order, each
in the next free lane: a lane keeps up to ``KEEP_COMPOSED`` of the configs it composed
(``Lane.composed``) and runs a job on its kept config (composed once, not twice); a job
composed in another lane (or whose lane's worker was replaced) is composed again.
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
KEEP_COMPOSED = 64     # configs a lane keeps from its compositions before the jobs start (~0.5 MB each)
PRESTART = 2           # workers started while mtsbench run checks a -m command (this launcher's default n_jobs)


class ProgressJoblibLauncher(JoblibLauncher):
    """Hydra's joblib launcher made to survive a dead worker (see the module docstring)."""

    COMPOSES_UNCHECKED = True      # composes the jobs mtsbench run has not checked before any starts

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[Any]:
        from hydra.core.singleton import Singleton

        from mtsbench.harness.progress import step_bar

        from mtsbench.harness import sweep

        # a dead worker's executor leaves a semaphore behind: not the user's concern at exit
        os.environ.setdefault("PYTHONWARNINGS", "ignore:resource_tracker:UserWarning")
        state = sweep.current()                  # the `mtsbench run` command's sweep
        n_jobs = _lanes(self.joblib.get("n_jobs"), len(job_overrides))
        lanes = _Lanes(n_jobs, (self.hydra_context, self.config, self.task_function, Singleton.get_state()),
                       adopt=state.workers)
        while state.workers:                     # started for more lanes than this sweep runs
            state.workers.pop().shutdown(wait=False, kill_workers=True)
        reuse = {initial_job_idx + i: c for i, o in enumerate(job_overrides)      # composed by the check
                 if (c := state.composed.get(tuple(o))) is not None and sweep.reusable(c, self.config, o)}
        try:
            lanes.compose([(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)
                          if sweep.job_key(o) not in state.checked and initial_job_idx + i not in reuse],
                          initial_job_idx)
            sweep_dir, jobs = sweep.begin(self, job_overrides, initial_job_idx, state)
            skip = {num for num, o in jobs if state.resume is not None and sweep.finished(self._job_dir(num, o))}
            sweep.announce(jobs, skip, f", {n_jobs} at a time, in {sweep_dir}", state)
            results: dict[int, Any] = {num: sweep.returned(o) for num, o in jobs if num in skip}
            with step_bar(len(jobs), initial=len(skip), desc="jobs", unit="job") as bar:
                self._run_lanes([(n, o, reuse.get(n)) for n, o in jobs if n not in skip], lanes, results, bar, state)
        except BaseException:
            lanes.close(kill=True)
            raise
        lanes.close()
        return [results[num] for num, _ in jobs]

    def _run_lanes(self, todo: list[tuple[int, list[str], Any]], lanes: "_Lanes", results: dict, bar, state) -> None:
        """Run ``todo`` (number, overrides, the config composed by the check or None) in ``lanes``,
        in order, each job in the next free lane."""
        from concurrent.futures.process import BrokenProcessPool

        from mtsbench.outputs.folder_lock import FolderBusy

        running: dict = {}                         # future -> (lane, num, overrides)
        todo = list(todo)
        try:
            while todo or running:
                for lane in range(len(lanes)):
                    if todo and lane not in {v[0] for v in running.values()}:
                        num, overrides, composed = todo.pop(0)
                        running[lanes.submit(lane, _lane_job, num, overrides, composed)] = (lane, num, overrides)
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    lane, num, overrides = running.pop(future)
                    try:
                        results[num] = future.result()
                    except FolderBusy as e:            # another process writes its folder: not touched
                        results[num] = self._busy(num, overrides, e, state)
                    except BrokenProcessPool as e:     # the worker died: its lane gets a fresh one
                        results[num] = self._worker_died(num, overrides, e)
                        lanes.renew(lane)
                    except Exception as e:  # noqa: BLE001 - Hydra could not start the job: the lane goes on
                        results[num] = self._worker_died(num, overrides, e)
                    bar.update(1)
        except BaseException:                      # SIGINT / SIGTERM: stop the running jobs, keep what they did
            _stop(lanes.pids, running)
            raise

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


class _Lanes:
    """The sweep's lanes: lane i is a one-worker loky executor, one of ``adopt`` (workers
    started by ``prestart``, taken from that list) or started at its first task, kept from
    task to task; its first task is ``_set_lane`` (``start``: what every job shares)."""

    def __init__(self, n: int, start: tuple, adopt: list | None = None) -> None:
        self.start = start
        self.executors: list = [None] * n
        self.pids: list = [None] * n              # each lane's worker's PID (a future), for _stop
        for lane in range(min(n, len(adopt or []))):
            self._begin(lane, adopt.pop(0))

    def __len__(self) -> int:
        return len(self.executors)

    def _begin(self, lane: int, executor) -> None:
        self.executors[lane] = executor
        self.pids[lane] = executor.submit(os.getpid)
        executor.submit(_set_lane, *self.start)

    def submit(self, lane: int, fn, *args):
        if self.executors[lane] is None:
            self._begin(lane, _worker())
        return self.executors[lane].submit(fn, *args)

    def compose(self, jobs: list[tuple[int, list[str]]], first: int) -> None:
        """Compose each of ``jobs`` (number, overrides; ``first``: the batch's first number)
        in a lane, job ``num`` in lane (num - first) mod n, where it starts when the batch's
        jobs take turns in the lanes; all before any job starts. Raises the error of the
        first job in order that does not compose (a worker that died: its ``BrokenProcessPool``)."""
        futures = {self.submit((num - first) % len(self), _lane_compose, num, overrides): num
                   for num, overrides in jobs}
        wait(list(futures))
        failed = [(num, f.exception()) for f, num in futures.items() if f.exception() is not None]
        if failed:
            raise min(failed, key=lambda e: e[0])[1]

    def renew(self, lane: int) -> None:
        """Lane ``lane``'s worker died: the lane starts a fresh one at its next task."""
        self.executors[lane].shutdown(wait=False, kill_workers=True)
        self.executors[lane] = self.pids[lane] = None

    def close(self, kill: bool = False) -> None:
        for executor in self.executors:
            if executor is not None:
                executor.shutdown(wait=not kill, kill_workers=kill)


def prestart(n: int = PRESTART) -> list:
    """``n`` lane workers started now (each a one-worker loky executor; ``_start_worker``),
    for the launcher of the sweep about to start to adopt (``_Lanes``); the caller stops
    those it does not adopt."""
    return [_worker() for _ in range(n)]


def _worker():
    """A one-worker loky executor whose worker starts now (``_start_worker``)."""
    from joblib.externals.loky.process_executor import ProcessPoolExecutor

    executor = ProcessPoolExecutor(max_workers=1, initializer=_start_worker, initargs=(os.getpid(),))
    executor.submit(int)        # loky starts its worker at the first task
    return executor


def _start_worker(parent: int) -> None:
    """A lane's worker process starting: bound to die with ``mtsbench run`` (PID ``parent``:
    ``_die_with``), what every job imports imported, once."""
    import gc

    from mtsbench.harness import runner  # noqa: F401 - what every job imports: once, then frozen

    _die_with(parent)
    gc.freeze()             # the imports out of the collector's way (a job collects far less)


def _set_lane(hydra_context, config, task_function, singleton_state) -> None:
    """A lane's first task: what every job of the sweep shares, kept in
    ``mtsbench.harness.sweep.start_lane`` (not here: Hydra's plugin discovery executes this module again)."""
    import gc

    from mtsbench.harness import sweep

    sweep.start_lane(sweep.Lane(hydra_context=hydra_context, config=config, task_function=task_function,
                                state=singleton_state))
    gc.freeze()


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


def _lane_job(num: int, overrides: list[str], composed=None):
    """Job ``num`` in this lane's worker: Hydra's joblib ``execute_job`` (the job's config
    composed; its directory, ``.hydra/`` and logging set up, the task run) with what the
    lane keeps; Hydra's global state carries on from the lane's previous job (its plugins
    discovered once), the job's own config and runtime set anew, as each job does.
    (``execute_job`` also made the config Hydra's current one just before ``run_job`` does
    the same: done once here.) ``composed``: the job's config as ``mtsbench run``'s check
    composed it (``mtsbench.harness.sweep.reusable``), run as the lane's own would be
    (``_numbered``, the sweep config's resolver cache copied as ``load_sweep_config`` copies it).

    Its JobReturn comes back without the job's two configs (in its ``.hydra/`` folder): of
    a JobReturn the sweep reads only the status and return value (Hydra's sweeper raises a
    failed job's exception), and pickling the configs back cost a quarter of a small job."""
    from hydra.core.utils import run_job
    from omegaconf import OmegaConf

    from mtsbench.outputs import folder_lock
    from mtsbench.harness import sweep
    from mtsbench.errors import redact

    lane = _this_lane()
    config = lane.composed.pop(num, None)      # composed here before the jobs started (_lane_compose)
    if composed is not None:
        OmegaConf.copy_cache(from_config=lane.config, to_config=composed)
        config = _numbered(composed, num)
    elif config is None:
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


def _lane_compose(num: int, overrides: list[str]) -> None:
    """Job ``num``'s config composed in this lane's worker before any job starts (what Hydra
    raises if it does not compose, raised); kept for the job while the lane holds fewer
    than ``KEEP_COMPOSED``."""
    lane = _this_lane()
    config = _compose(lane.hydra_context.config_loader, lane.config, num, overrides)
    if len(lane.composed) < KEEP_COMPOSED:
        lane.composed[num] = config


def _this_lane():
    """This worker's lane (``sweep.lane()``) with Hydra's global state restored from it, as
    every task in a lane begins (``_lane_job``, ``_lane_compose``)."""
    from hydra.core.singleton import Singleton
    from hydra.core.utils import setup_globals

    from mtsbench.harness import sweep

    lane = sweep.lane()
    setup_globals()
    Singleton.set_state(lane.state)
    return lane


def _compose(loader, sweep_config, num: int, overrides: list[str]):
    """Job ``num``'s config as Hydra's joblib launcher composes it (``execute_job``): the
    sweep's config with the job's ``overrides``, its ``hydra.job.id`` and ``num`` set."""
    return _numbered(loader.load_sweep_config(sweep_config, list(overrides)), num)


def _numbered(config, num: int):
    """``config`` with its ``hydra.job.id`` and ``num`` set (``execute_job``'s); returns it."""
    from omegaconf import open_dict

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
