"""``hydra/launcher=ray_cluster``: the jobs of a sweep as Ray tasks (hydra-ray-launcher's
``RayLauncher``, ``pip install "mtsbench[ray]"``), made to work on a local cluster and to
behave as ``hydra/launcher=local`` does.

What it changes from the plugin:

- ``ray.init``: the plugin always adds ``object_store_memory`` (75 MiB), which Ray refuses
  when it connects to a running cluster (``ray start --head``, ``address=auto``): "object_store_memory
  must not be provided". Here the options that only size a cluster Ray starts itself
  (``START_ONLY``) are passed only when Ray starts one, and null options are dropped (see
  ``_start``: decided from the address, or from Ray's refusal when the address is null);
- each job runs in the driver's working directory (when that exists on the worker's node)
  under the sweep directory made absolute: a Ray worker starts in the directory of
  ``ray start``, where a relative ``hydra.sweep.dir`` or scenario path would otherwise land;
- as the local launcher: ``jobs.json`` before any job starts, the jobs listed on stderr and
  a progress bar over finished jobs, ``--resume`` runs only the jobs not complete, a job
  whose worker died gets ``failure.json`` (``mtsbench.harness.sweep.WorkerDied``) and the others go
  on, SIGINT/SIGTERM cancel the running jobs (each writes what it did).

Hydra imports every module of ``hydra_plugins`` to find its plugins: without the extra this
one defines no launcher (``hydra/launcher=ray_cluster`` is then refused by ``mtsbench run``
with the pip line to install it), and it imports Ray only when a sweep starts.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

try:
    from hydra_plugins.hydra_ray_launcher.ray_launcher import RayLauncher
except ImportError:           # the ray extra is not installed
    RayLauncher = None

# ray.init options that size a cluster Ray starts itself; refused when connecting to one
START_ONLY = ("num_cpus", "num_gpus", "resources", "labels", "object_store_memory", "_system_config",
              "_enable_object_reconstruction", "include_dashboard", "dashboard_host", "dashboard_port")
STOP_GRACE = 30.0      # seconds a stopped sweep waits for its cancelled jobs to write what they did


class RayClusterLauncher(RayLauncher or object):
    """hydra-ray-launcher's launcher on a local or running cluster (see the module docstring)."""

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[Any]:
        from hydra.core.singleton import Singleton
        from omegaconf import OmegaConf, open_dict
        from mtsbench.harness.progress import step_bar

        from mtsbench.harness import sweep
        from mtsbench.errors import one_line

        where = _start(OmegaConf.to_container(self.ray_cfg.init, resolve=True) or {})
        state = sweep.current()                  # the `mtsbench run` command's sweep
        sweep_dir, jobs = sweep.begin(self, job_overrides, initial_job_idx, state, absolute=True)
        configs = {}
        for num, overrides in jobs:
            cfg = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
            with open_dict(cfg):
                cfg.hydra.job.id = f"ray_{num}"
                cfg.hydra.job.num = num
                cfg.hydra.sweep.dir = str(sweep_dir)
            configs[num] = cfg
        skip = {num for num, _ in jobs if state.resume is not None and sweep.finished(sweep.job_dir(configs[num]))}
        sweep.announce(jobs, skip, f" on Ray ({where}) in {sweep_dir}", state)

        import ray

        remote = OmegaConf.to_container(self.ray_cfg.remote, resolve=True) or {}
        task = ray.remote(**{k: v for k, v in remote.items() if v is not None})(_run_job_in) if remote \
            else ray.remote(_run_job_in)
        state = Singleton.get_state()
        results: dict[int, Any] = {num: sweep.returned(o) for num, o in jobs if num in skip}
        running = {task.remote(os.getcwd(), self.hydra_context, configs[num], self.task_function, state): (num, o)
                   for num, o in jobs if num not in skip}
        try:
            with step_bar(len(jobs), initial=len(skip), desc="jobs", unit="job") as bar:
                while running:
                    done, _ = ray.wait(list(running), num_returns=1)
                    for ref in done:
                        num, overrides = running.pop(ref)
                        try:
                            results[num] = ray.get(ref)
                        except Exception as e:  # noqa: BLE001 - the worker died or the task could not run
                            results[num] = sweep.worker_died(num, overrides, sweep.job_dir(configs[num]),
                                                             f"the Ray worker running job {num} failed: {one_line(e)}")
                        bar.update(1)
        except BaseException:                      # SIGINT / SIGTERM: stop the running jobs, keep what they did
            for ref in running:
                ray.cancel(ref)                    # a KeyboardInterrupt in the job: it writes what it did
            if running:
                ray.wait(list(running), num_returns=len(running), timeout=STOP_GRACE)
            raise
        return [results[num] for num, _ in jobs]


def _start(init: dict) -> str:
    """``ray.init`` with ``init`` (the launcher's ``ray.init`` options), unless Ray is
    initialised already; the start-only options only when Ray starts a cluster itself. What
    it connected to, for the job list; a one-line exit 2 if it cannot.

    With a null address (and no ``RAY_ADDRESS``) only Ray knows whether a cluster runs (the
    last ``ray start`` on this machine): ``ray.init`` gets every option; if it refuses them
    with a ``ValueError`` (as it does for the start-only options when it found a cluster), it
    is called once more with ``address="auto"`` (documented: the same look-up, but a
    ``ConnectionError`` instead of starting a cluster) and without ``START_ONLY``. A
    ``ConnectionError`` there means no cluster runs: the first refusal is then the error of
    starting one. (Beyond its documentation, "auto" also takes a cluster whose processes run
    here without being the last ``ray start``: only then, after a refused option, can the two differ.)"""
    import ray

    init = {k: v for k, v in init.items() if v is not None}
    connecting = _connecting(init)
    if connecting:
        init = _connect_options(init)
    if not ray.is_initialized():
        try:
            _listening(init.get("address"))
            try:
                ray.init(**init)
            except ValueError as refused:
                if connecting is not None or not init.keys() & set(START_ONLY):
                    raise
                connecting = True
                try:
                    ray.init(**{**_connect_options(init), "address": "auto"})
                except ConnectionError:
                    connecting = False
                    raise refused from None
            connecting = bool(connecting)
        except (ConnectionError, ValueError, RuntimeError, TimeoutError, OSError) as e:
            from mtsbench.errors import one_line, redact

            address = init.get("address")
            auth = (" (a cluster with token authentication at an explicit address: export RAY_AUTH_MODE=token)"
                    if connecting and address not in (None, "auto") and not os.environ.get("RAY_AUTH_MODE")
                    and "nothing listens" not in str(e) else "")
            print(f"mtsbench: hydra/launcher=ray_cluster: could not "
                  f"{'connect to the Ray cluster at ' + str(address or 'auto') if connecting else 'start a local Ray cluster'}: "
                  f"{redact(one_line(e))}{auth}; start one with `ray start --head`, or drop "
                  f"hydra.launcher.ray.init.address to let the sweep start its own", file=sys.stderr)
            sys.exit(2)
    try:
        address = ray.get_runtime_context().gcs_address
    except Exception:  # noqa: BLE001 - only for the message
        address = "?"
    return f"the cluster at {address}" if connecting else f"a local cluster started for the sweep, {address}"


def _connect_options(init: dict) -> dict:
    """``init`` without the options Ray refuses when it connects to a running cluster."""
    return {k: v for k, v in init.items() if k not in START_ONLY}


def _listening(address) -> None:
    """``ConnectionError`` at once if nothing listens at a ``HOST:PORT`` address (Ray itself
    retries for minutes)."""
    import socket

    if not isinstance(address, str) or address in ("auto", "local") or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except ValueError:
        return                    # not HOST:PORT: Ray says what is wrong
    except OSError as e:
        raise ConnectionError(f"nothing listens at {address} ({e.strerror or e})") from None


def _connecting(init: dict) -> bool | None:
    """Will ``ray.init(**init)`` connect to a running cluster (True) or start one (False)? An
    address other than auto/local (or ``RAY_ADDRESS`` for a null or auto address) connects,
    auto connects or fails, local starts; None for a null address: Ray looks for a cluster
    started with ``ray start`` on this machine (``_start`` learns the answer from ``ray.init``).
    As ``ray.init``'s documentation resolves its ``address``, from public facts only."""
    address = init.get("address")
    if address in (None, "auto") and os.environ.get("RAY_ADDRESS"):
        address = os.environ["RAY_ADDRESS"]
    return None if address is None else address != "local"


def _run_job_in(cwd: str, hydra_context, sweep_config, task_function, singleton_state):
    """One job in a Ray worker (as hydra-ray-launcher runs one: Hydra's state set, then
    ``hydra.core.utils.run_job``), in the driver's working directory when this node has it."""
    from hydra.core.singleton import Singleton
    from hydra.core.utils import run_job, setup_globals

    before = os.getcwd()
    if os.path.isdir(cwd):
        os.chdir(cwd)
    try:
        setup_globals()
        Singleton.set_state(singleton_state)
        return run_job(hydra_context=hydra_context, task_function=task_function, config=sweep_config,
                       job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")
    finally:
        os.chdir(before)
