"""Launchers that run: a 2-job sweep on each launcher whose plugin is installed (the others
skipped, naming the pip extra), then ``mtsbench report`` on it; the one-line errors for a
launcher that cannot run here; tab completion. Every command is the installed ``mtsbench``
in a subprocess.

The Ray tests start their own local cluster (``ray start --head --block`` on a free port,
in a temporary directory) and stop it when done (SIGTERM to that ``ray start`` only: never
``ray stop``, which would stop every cluster of the user); they use Ray's token
authentication as ``ray start`` sets it up (``RAY_AUTH_MODE=token``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest


def mtsbench_exe() -> list[str]:
    exe = Path(sys.executable).parent / "mtsbench"
    return [str(exe)] if exe.exists() else [shutil.which("mtsbench") or "mtsbench"]

HAS_SUBMITIT = importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None
HAS_RAY = (importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is not None
           and shutil.which("ray", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
           is not None)
NEEDS_SUBMITIT = pytest.mark.skipif(not HAS_SUBMITIT, reason='hydra-submitit-launcher not installed: '
                                    'pip install "mtsbench[slurm]"')
NEEDS_RAY = pytest.mark.skipif(not HAS_RAY, reason='hydra-ray-launcher not installed: pip install "mtsbench[ray]"')
SWEEP = ["run", "-m", "seed=0,1", "scenarios=[milk_allergy]"]
RAY_ENV = {"RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0"}


def ray_exe() -> str:
    exe = Path(sys.executable).parent / "ray"
    return str(exe) if exe.exists() else shutil.which("ray") or "ray"


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def assert_two_ok_jobs(cli, sweep_dir: Path) -> None:
    """``mtsbench report`` on the sweep: 2 jobs, both ok, pooled into one configuration."""
    for num in (0, 1):
        assert (sweep_dir / str(num) / "summary.json").is_file(), list(sweep_dir.rglob("*"))
    report = cli("report", sweep_dir)
    assert report.returncode == 0, report.stderr
    assert "(2 jobs" in report.stdout and "0 failed" in report.stdout, report.stdout
    summary = pd.read_csv(sweep_dir / "summary.csv", dtype={"jobs": str})
    assert list(summary["status"]) == ["ok"] and summary["jobs"].iloc[0].split() == ["0", "1"], summary
    assert (sweep_dir / "report.md").is_file()


# --- a 2-job sweep on each launcher ---------------------------------------------------------

def test_local_launcher_sweep(cli, tmp_path):
    done = cli(*SWEEP, f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert done.returncode == 0, done.stderr
    assert (f"2 jobs done; 10 of 10 expectations passed; report: {tmp_path / 'sweep' / 'report.md'}"
            in done.stderr), done.stderr
    assert_two_ok_jobs(cli, tmp_path / "sweep")


@NEEDS_SUBMITIT
def test_submitit_local_sweep(cli, tmp_path):
    done = cli(*SWEEP, "hydra/launcher=submitit_local", "hydra.sweep.dir=sweep")   # relative: to the cwd
    assert done.returncode == 0, done.stderr
    assert "2 jobs done" in done.stderr, done.stderr
    assert_two_ok_jobs(cli, tmp_path / "sweep")


@NEEDS_RAY
def test_ray_cluster_sweep_starts_its_own(cli, tmp_path):
    """No address and no cluster of its own: the sweep starts a local one (stopped at its end)."""
    done = cli(*SWEEP, "hydra/launcher=ray_cluster", f"hydra.sweep.dir={tmp_path / 'sweep'}",
               "hydra.launcher.ray.init.num_cpus=2",
               env={**RAY_ENV, "RAY_ADDRESS": ""}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "2 jobs done" in done.stderr, done.stderr
    assert_two_ok_jobs(cli, tmp_path / "sweep")


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster for this module's tests: (address, env, its temp dir, where
    ``ray start`` notes it as this machine's current cluster); stopped afterwards."""
    if not HAS_RAY:
        pytest.skip('hydra-ray-launcher not installed: pip install "mtsbench[ray]"')
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="mtsray", dir="/tmp")     # short: Ray's socket paths live there
    env = {**os.environ, **RAY_ENV}
    log = open(Path(temp) / "ray-start.log", "w")
    head = subprocess.Popen([ray_exe(), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
                             f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
                             "--object-store-memory=80000000", f"--temp-dir={temp}", "--disable-usage-stats"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in (Path(temp) / "ray-start.log").read_text(errors="replace"):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.skip("ray start failed: " + (Path(temp) / "ray-start.log").read_text(errors="replace")[-500:])
            time.sleep(0.5)
        yield f"127.0.0.1:{port}", RAY_ENV, temp
    finally:
        if head.poll() is None:
            head.send_signal(signal.SIGTERM)          # ray start --block stops the processes it started
            try:
                head.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(head.pid, signal.SIGKILL)
                head.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


@NEEDS_RAY
def test_ray_cluster_sweep_on_running_cluster(cli, tmp_path, ray_cluster):
    """The README's command against `ray start --head`: relative sweep dir, jobs in this directory."""
    address, env, _ = ray_cluster
    done = cli(*SWEEP, "hydra/launcher=ray_cluster", f"hydra.launcher.ray.init.address={address}",
               "hydra.sweep.dir=sweep", env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "object_store_memory" not in done.stderr
    assert "jobs on Ray (the cluster at" in done.stderr and "2 jobs done" in done.stderr, done.stderr
    assert_two_ok_jobs(cli, tmp_path / "sweep")


@NEEDS_RAY
def test_ray_cluster_sweep_without_an_address_joins_the_running_cluster(cli, tmp_path, ray_cluster):
    """Address null while a `ray start` cluster runs (Ray finds it, here in that cluster's temp
    dir): Ray refuses the start-only options, so the sweep connects to it without them."""
    address, env, temp = ray_cluster
    done = cli(*SWEEP, "hydra/launcher=ray_cluster", f"+hydra.launcher.ray.init._temp_dir={temp}",
               "hydra.launcher.ray.init.num_cpus=2", f"hydra.sweep.dir={tmp_path / 'sweep'}",
               env={**env, "RAY_ADDRESS": ""}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "must not be provided" not in done.stderr
    port = address.rpartition(":")[2]             # the host as Ray noted it: this machine's address
    assert "jobs on Ray (the cluster at " in done.stderr and f":{port}) in " in done.stderr, done.stderr
    assert "2 jobs done" in done.stderr, done.stderr
    assert_two_ok_jobs(cli, tmp_path / "sweep")


@NEEDS_RAY
def test_ray_cluster_without_a_cluster_at_the_address(cli, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                   # nothing listens there
    done = cli(*SWEEP, "hydra/launcher=ray_cluster", f"hydra.launcher.ray.init.address=127.0.0.1:{port}",
               f"hydra.sweep.dir={tmp_path / 'sweep'}", env=RAY_ENV, timeout=300)
    assert done.returncode == 2, done.stderr
    line = [x for x in done.stderr.splitlines() if x.startswith("mtsbench:")]
    assert line and "could not connect to the Ray cluster" in line[0] and "nothing listens" in line[0], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "sweep" / "jobs.json").exists()


def fake_ray(cluster: bool, start_error: str = ""):
    """A stand-in for ``ray`` as ``ray.init`` documents it: with a null or auto address it
    connects to the running cluster if there is one (refusing the start-only options), else a
    null address starts one (``start_error``: it cannot) and auto is a ``ConnectionError``."""
    from types import SimpleNamespace

    calls = []

    def init(address=None, **options):
        calls.append((address, sorted(options)))
        if cluster and address in (None, "auto"):
            if options.keys() & {"num_cpus", "object_store_memory"}:
                raise ValueError("When connecting to an existing cluster, ... must not be provided.")
        elif address == "auto":
            raise ConnectionError("Could not find any running Ray instance.")
        elif start_error:
            raise ValueError(start_error)

    return calls, SimpleNamespace(init=init, is_initialized=lambda: False,
                                  get_runtime_context=lambda: SimpleNamespace(gcs_address="127.0.0.1:6379"))


INIT = {"address": None, "num_cpus": 2, "object_store_memory": 100_000_000, "_temp_dir": "/tmp/x"}
ALL, CONNECT = ["_temp_dir", "num_cpus", "object_store_memory"], ["_temp_dir"]


@pytest.mark.parametrize("cluster, address, calls, where", [
    (True, None, [(None, ALL), ("auto", CONNECT)], "the cluster at 127.0.0.1:6379"),
    (False, None, [(None, ALL)], "a local cluster started for the sweep, 127.0.0.1:6379"),
    (True, "auto", [("auto", CONNECT)], "the cluster at 127.0.0.1:6379"),
    (True, "local", [("local", ALL)], "a local cluster started for the sweep, 127.0.0.1:6379")])
def test_ray_cluster_start_only_options_go_to_a_cluster_ray_starts(monkeypatch, cluster, address, calls, where):
    """An address null, auto or local: the start-only options (num_cpus, object_store_memory)
    reach ``ray.init`` only when it starts a cluster; with a null address Ray's refusal of them
    says a cluster runs, and the sweep connects to it (``address="auto"``) without them."""
    from hydra_plugins.mtsbench_launcher import ray_cluster

    made, ray = fake_ray(cluster)
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_cluster._start({**INIT, "address": address}) == where
    assert made == calls


def test_ray_cluster_that_cannot_start_says_why_in_one_line(monkeypatch, capsys):
    """No cluster runs and Ray refuses an option for the one it would start: that refusal,
    in one line, exit 2 (not the look-up for a running cluster that followed it)."""
    from hydra_plugins.mtsbench_launcher import ray_cluster

    made, ray = fake_ray(cluster=False, start_error="Use the 'num_cpus' argument instead of resources['CPU']")
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SystemExit) as stop:
        ray_cluster._start(INIT)
    line = one_line(capsys.readouterr().err)
    assert stop.value.code == 2 and made == [(None, ALL), ("auto", CONNECT)]
    assert "could not start a local Ray cluster: ValueError: Use the 'num_cpus' argument" in line, line


# --- launchers that cannot run here: one line, exit 2 ---------------------------------------

@NEEDS_SUBMITIT
@pytest.mark.skipif(shutil.which("sbatch") is not None, reason="SLURM is installed here")
@pytest.mark.parametrize("name", ["slurm", "submitit_slurm"])
def test_slurm_without_slurm_is_one_line(cli, tmp_path, name):
    done = cli(*SWEEP, f"hydra/launcher={name}", f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert f"hydra/launcher={name}: no SLURM on this machine" in line and "hydra/launcher=local" in line
    assert not (tmp_path / "sweep").exists()


MISSING_PLUGINS = """
import importlib.util, sys
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a, **k: (
    None if name.startswith(("hydra_plugins.hydra_ray_launcher", "hydra_plugins.hydra_submitit_launcher"))
    else real(name, *a, **k))
from mtsbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("name, extra, dist", [("ray_cluster", "ray", "hydra-ray-launcher"),
                                                ("slurm", "slurm", "hydra-submitit-launcher"),
                                                ("submitit_local", "slurm", "hydra-submitit-launcher")])
def test_launcher_without_its_extra_names_the_pip_line(tmp_path, name, extra, dist):
    """As if the extra were not installed (the plugin's module not found)."""
    done = subprocess.run([sys.executable, "-c", MISSING_PLUGINS, *SWEEP, f"hydra/launcher={name}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert one_line(done.stderr) == (f"mtsbench: hydra/launcher={name} needs {dist}, which is not installed: "
                                     f'pip install "mtsbench[{extra}]"')


def test_unknown_launcher_is_one_line(cli):
    done = cli(*SWEEP, "hydra/launcher=ray_clustr")
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert "no such launcher" in line and "did you mean 'ray_cluster'?" in line and "submitit_local" in line


# --- tab completion -------------------------------------------------------------------------

def test_completion_install_script(cli):
    done = cli("-sc", "install=bash")
    assert done.returncode == 0, done.stderr
    assert "complete -o nospace -o default -F _mtsbench_completion mtsbench" in done.stdout
    assert cli("completion", "bash").stdout == done.stdout == cli("run", "-sc", "install=bash").stdout
    bad = cli("-sc", "install=tcsh")
    assert bad.returncode == 2 and "expected `mtsbench -sc install=bash`" in one_line(bad.stderr)


def query(cli, line: str) -> list[str]:
    done = cli("-sc", "query=bash", env={"COMP_LINE": line, "COMP_POINT": str(len(line))})
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_completion_queries(cli):
    assert "long_decay=" in query(cli, "mtsbench run long_d")
    assert "run" in query(cli, "mtsbench r") and "report" in query(cli, "mtsbench r")
    assert "long_decay=exponential" in query(cli, "mtsbench run -m seed=0,1 long_decay=")
    launchers = query(cli, "mtsbench run -m hydra/launcher=")
    assert "hydra/launcher=local" in launchers
    assert ("hydra/launcher=submitit_local" in launchers) == HAS_SUBMITIT     # Hydra lists the installed plugins
    assert "attention=common_sense" in query(cli, "mtsbench check scenarios/ attention=")
    assert query(cli, "mtsbench report ") == []          # bash completes file names


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_completion_in_bash(tmp_path):
    """The installed script, sourced in bash, completes `mtsbench run long_d` with `long_decay=`."""
    exe = mtsbench_exe()[0]
    script = f"""
mtsbench() {{ "{exe}" "$@"; }}
eval "$("{exe}" -sc install=bash)"
COMP_LINE="mtsbench run long_d"; COMP_POINT=${{#COMP_LINE}}; COMP_WORDS=(mtsbench run long_d); COMP_CWORD=2
_mtsbench_completion
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    path = os.pathsep.join([str(Path(exe).parent), os.environ.get("PATH", "")])
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PATH": path})
    assert "long_decay=" in done.stdout.split(), (done.stdout, done.stderr)
