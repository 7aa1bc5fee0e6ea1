"""One writer per run or sweep folder (issue 28, item 2): two runs started together into one
``hydra.run.dir`` no longer both exit 0 with the first one's outputs lost under ``status:
complete``: the second gets one line and exit 2 and writes nothing there; a lock left by a
killed run is taken over, in one line."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from mtsbench.outputs.folder_lock import LOCK_FILE

SLOW = ["preload.memories=20000", "scenarios=[milk_allergy]"]     # a run of several seconds


def _exe() -> str:
    exe = Path(sys.executable).parent / "mtsbench"       # as the cli fixture (tests/conftest.py) runs it
    return str(exe) if exe.exists() else shutil.which("mtsbench") or "mtsbench"


def _start(tmp_path, *args):
    return subprocess.Popen([_exe(), *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _wait_for(path, proc, timeout=120):
    end = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.1)


def test_a_second_run_into_a_busy_folder_is_refused_and_the_first_keeps_its_outputs(cli, tmp_path):
    first = _start(tmp_path, "run", *SLOW, "seed=3", "hydra.run.dir=same")
    _wait_for(tmp_path / "same" / LOCK_FILE, first)
    assert (tmp_path / "same" / LOCK_FILE).read_text().strip() == str(first.pid)
    second = cli("run", "seed=4", "scenarios=[milk_allergy]", "hydra.run.dir=same")
    out, err = first.communicate(timeout=300)
    assert second.returncode == 2, second.stderr[-2000:]
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert "hydra.run.dir=" in second.stderr and f"PID {first.pid}" in second.stderr
    assert "another mtsbench process is writing there" in second.stderr
    assert first.returncode == 0, err[-2000:]
    overrides = yaml.safe_load((tmp_path / "same" / ".hydra" / "overrides.yaml").read_text())
    assert "seed=3" in overrides and "seed=4" not in overrides        # the first run's, whole
    assert not (tmp_path / "same" / LOCK_FILE).exists()               # released when done


def test_a_second_sweep_or_resume_into_a_busy_sweep_folder_is_refused(tmp_path):
    # four slow jobs on two lanes, and the two refused commands started together: the sweep
    # must still hold its folder when they look (run one after the other, on a loaded 2-core
    # machine, they once outlasted a two-job sweep)
    first = _start(tmp_path, "run", "-m", "seed=0,1,2,3", *SLOW, "hydra.sweep.dir=sw")
    _wait_for(tmp_path / "sw" / LOCK_FILE, first)
    refused = [_start(tmp_path, "run", "-m", "seed=5,6", "scenarios=[milk_allergy]", "hydra.sweep.dir=sw"),
               _start(tmp_path, "run", "-m", "--resume", "sw")]
    results = [(r.communicate(timeout=300), r.returncode) for r in refused]
    out, err = first.communicate(timeout=600)
    for (_, stderr), code in results:
        assert code == 2 and stderr.count("\n") == 1, stderr[-2000:]
        assert "hydra.sweep.dir=" in stderr and f"PID {first.pid}" in stderr
    assert first.returncode == 0 and "4 jobs done" in err, err[-2000:]
    jobs = yaml.safe_load((tmp_path / "sw" / "multirun.yaml").read_text())["hydra"]["overrides"]["task"]
    assert "seed=0,1,2,3" in jobs
    assert sorted(p.name for p in (tmp_path / "sw").iterdir() if p.name.isdigit()) == ["0", "1", "2", "3"]
    assert not (tmp_path / "sw" / LOCK_FILE).exists()


def test_the_lock_of_a_killed_run_is_taken_over_and_said_so(cli, tmp_path):
    killed = _start(tmp_path, "run", *SLOW, "hydra.run.dir=same")
    _wait_for(tmp_path / "same" / LOCK_FILE, killed)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.communicate(timeout=60)
    assert (tmp_path / "same" / LOCK_FILE).read_text().strip() == str(killed.pid)   # left behind
    r = cli("run", "scenarios=[milk_allergy]", "hydra.run.dir=same")
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and f"taking over a stale lock of PID {killed.pid}, which is no longer running" in lines[0]
    assert not (tmp_path / "same" / LOCK_FILE).exists()


def test_a_stale_sweep_lock_is_taken_over_too(cli, tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / "sw").mkdir()
    (tmp_path / "sw" / LOCK_FILE).write_text(f"{gone.pid}\n")
    r = cli("run", "-m", "seed=0,1", "scenarios=[milk_allergy]", "hydra.sweep.dir=sw")
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"taking over a stale lock of PID {gone.pid}" in r.stderr.splitlines()[0]
    assert not (tmp_path / "sw" / LOCK_FILE).exists()


def test_check_out_is_locked_too(cli, tmp_path):
    first = _start(tmp_path, "check", *SLOW, "--out", "out")
    _wait_for(tmp_path / "out" / LOCK_FILE, first)
    second = cli("check", "scenarios=[milk_allergy]", "--out", "out")
    first.communicate(timeout=300)
    assert second.returncode == 2 and second.stderr.count("\n") == 1 and "--out=" in second.stderr, second.stderr
    assert first.returncode == 0
