"""A sweep killed outright (issue 28, items 1 and 9): SIGKILL of ``mtsbench run -m`` no longer
leaves its workers running (parent PID 1, still writing job folders that
a ``--resume`` then wrote too, ending ``complete`` beside a trace missing rows): they die with
it (the local launcher's ``_die_with``), a job folder has one writer at a time (``mtsbench.outputs.folder_lock``),
and a resumed sweep re-runs the jobs not complete into whole files. The soak: a 16-job sweep
killed at staggered points and resumed three times ends as an uninterrupted one, byte for
byte (but the timings: ``latency_ms``, and the working folder in Hydra's ``hydra.yaml``)."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from mtsbench.outputs.folder_lock import LOCK_FILE
from mtsbench.report.status import job_status

DEATH_WAIT = 5.0        # seconds within which every process of a killed sweep must be gone


def _exe() -> str:
    exe = Path(sys.executable).parent / "mtsbench"       # as the cli fixture (tests/conftest.py) runs it
    return str(exe) if exe.exists() else shutil.which("mtsbench") or "mtsbench"


def _start(cwd, *args):
    return subprocess.Popen([_exe(), *map(str, args)], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent PID, state letter) of a process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid = text[text.rindex(")") + 2:].split()[:2]
    return int(ppid), state


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (its children, theirs, ...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (s := _stat(int(entry))) is not None and s[1] != "Z":
            children.setdefault(s[0], []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pids) -> set[int]:
    return {p for p in pids if (s := _stat(p)) is not None and s[1] != "Z"}     # a zombie is dead


def _kill_sweep(proc) -> set[int]:
    """SIGKILL the sweep's own process only (not its group); returns the processes it had
    below it, after checking they are all gone within ``DEATH_WAIT`` seconds."""
    below = _descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    end = time.monotonic() + DEATH_WAIT
    while _alive(below) and time.monotonic() < end:
        time.sleep(0.05)
    left = _alive(below)
    try:
        assert not left, f"still running {DEATH_WAIT} s after the sweep was killed: {sorted(left)}"
    finally:
        for pid in left:                    # a failed check leaves nothing behind
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    return below


def _wait_until(condition, proc, timeout=120.0, every=0.02):
    end = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"the sweep ended first: {proc.stderr.read()[-2000:]}"
        assert time.monotonic() < end, "the sweep never got there"
        time.sleep(every)


def _leftovers(folder: Path) -> list[str]:
    """Lock files, temporary files of atomic writes and stream parts left under ``folder``."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.name == LOCK_FILE or ".tmp-" in p.name or p.name.endswith(".partial"))


def test_a_killed_sweep_leaves_no_worker_and_resume_completes_every_job_whole(cli, tmp_path):
    """The issue's command: 4 jobs of milk_allergy and a generated scenario, 2 at a time, the
    sweep killed while both workers write: within seconds no process of it is left and no
    file under the sweep changes; ``--resume`` re-runs the jobs not complete (taking over
    their folders' stale locks, in one line each) and every job ends whole."""
    sweep = tmp_path / "sw"
    args = ["seed=0,1,2,3", "scenarios=[milk_allergy]", "generate.days=20", "hydra.launcher.n_jobs=2"]
    proc = _start(tmp_path, "run", "-m", *args, "hydra.sweep.dir=sw")
    try:
        # both lanes' first jobs running: Hydra has written their .hydra/
        _wait_until(lambda: all((sweep / n / ".hydra" / "overrides.yaml").exists() for n in ("0", "1")), proc)
        time.sleep(0.5)                     # into the scenarios
        below = _kill_sweep(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert len(below) >= 3, below           # both workers and loky's resource tracker
    states = {n: job_status(sweep / n) for n in ("0", "1")}
    assert "ok" not in states.values(), states
    before = {p: p.stat().st_mtime_ns for p in sweep.rglob("*") if p.is_file()}
    time.sleep(1.0)
    assert {p: p.stat().st_mtime_ns for p in sweep.rglob("*") if p.is_file()} == before   # nobody writes there

    r = cli("run", "-m", "--resume", sweep, "hydra.launcher.n_jobs=2")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    assert "resuming: 0 complete, 4 to run" in r.stderr, r.stderr
    stale = [line for line in r.stderr.splitlines() if "taking over a stale lock" in line]
    assert len(stale) == 3 and all("hydra.sweep.subdir=" in line for line in stale[1:]), stale   # the sweep's, 0's, 1's
    assert "4 jobs done" in r.stderr and "failed" not in r.stderr
    assert _leftovers(sweep) == []
    for n in range(4):
        job = sweep / str(n)
        assert job_status(job) == "ok"
        summary = json.loads((job / "summary.json").read_text())
        scenarios = summary["scenarios_planned"]
        assert summary["status"] == "complete" and summary["scenarios_done"] == scenarios
        assert scenarios == ["milk_allergy", f"gen_en_20d_s{n}"]
        results = pd.read_parquet(job / "results.parquet")
        assert sorted(results["scenario"].unique()) == sorted(scenarios)
        for name in ("trace.parquet", "timelines.parquet"):
            table = pd.read_parquet(job / name)
            assert (table["scenario"].value_counts().reindex(scenarios) > 0).all(), (n, name)
    # the killed jobs' rows, as a run of their own writes them
    r = cli("run", "seed=0", "scenarios=[milk_allergy]", "generate.days=20", "hydra.run.dir=alone")
    assert r.returncode == 0, r.stderr[-2000:]
    for name in ("trace.parquet", "timelines.parquet"):
        assert pd.read_parquet(sweep / "0" / name).equals(pd.read_parquet(tmp_path / "alone" / name)), name


HOLDER = """
import sys, time
from mtsbench.outputs import folder_lock
folder_lock.acquire(sys.argv[1], "test")
print("locked", flush=True)
if sys.argv[2] == "stdin":
    sys.stdin.read()
else:
    time.sleep(float(sys.argv[2]))
print(time.time(), flush=True)
folder_lock.release(sys.argv[1])
"""


def _holder(folder, until):
    """Another process holding ``folder``'s lock until ``until`` (seconds, or "stdin": closed)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), str(until)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_job_folder_has_one_writer_at_a_time(cli, tmp_path):
    """A job whose folder another live process has locked is not skipped as complete by
    ``--resume``: its worker waits for the lock (a worker of a killed sweep dies within a
    moment), and if the lock stays taken the job is not run, in one line, and nothing is
    written there."""
    sweep = tmp_path / "sw"
    r = cli("run", "-m", "seed=0,1", "scenarios=[milk_allergy]", "hydra.sweep.dir=sw")
    assert r.returncode == 0, r.stderr[-2000:]
    job = sweep / "1"
    before = {p: p.stat().st_mtime_ns for p in job.rglob("*") if p.is_file()}

    holder = _holder(job, "stdin")          # held through the whole resume
    try:
        r = cli("run", "-m", "--resume", sweep)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert r.returncode == 1, r.stderr[-2000:]
    assert "resuming: 1 complete, 1 to run" in r.stderr
    lines = [line for line in r.stderr.splitlines() if "job 1 not run" in line]
    assert len(lines) == 1 and f"another mtsbench process is writing there (PID {holder.pid}" in lines[0], r.stderr
    assert "Traceback" not in r.stderr and "2 jobs done; 1 failed: 1" in r.stderr
    assert {p: p.stat().st_mtime_ns for p in job.rglob("*") if p.is_file()} == before     # untouched

    # released while the resumed job waits for it: once the resume has said what it found (its
    # first line, before any job starts), not after a fixed time a busy machine may outlast
    holder = _holder(job, "stdin")
    resume = subprocess.Popen([str(Path(sys.executable).parent / "mtsbench"), "run", "-m", "--resume", str(sweep)], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = resume.stderr.readline()
    released = time.time()
    holder.stdin.close()
    holder.wait(timeout=30)
    out, err = resume.communicate(timeout=300)
    err = first + err
    assert resume.returncode == 0, err[-2000:]
    assert "resuming: 1 complete, 1 to run" in first and "2 jobs done" in err
    # written after the release, not beside it: the file clock is coarse
    assert (job / ".hydra" / "overrides.yaml").stat().st_mtime >= released - 0.05
    assert job_status(job) == "ok" and _leftovers(sweep) == []


# --- the soak -----------------------------------------------------------------------------

SOAK = ["seed=range(0,16)", "scenarios=[milk_allergy]", "hydra.launcher.n_jobs=2"]
KILLS = [(2, 0.0), (7, 0.07), (12, 0.15)]      # (jobs complete, then seconds) before each SIGKILL
TIMINGS = ["latency_ms"]                       # the wall-clock columns of results.parquet and metrics.csv


def _complete(sweep: Path) -> int:
    return sum(job_status(d) == "ok" for d in sweep.iterdir() if d.name.isdigit()) if sweep.is_dir() else 0


def _running(sweep: Path) -> int:
    """Jobs inside their scenarios: their summary.json says ``running``."""
    def running(d: Path) -> bool:
        try:
            return json.loads((d / "summary.json").read_text())["status"] == "running"
        except (OSError, ValueError, KeyError, TypeError):
            return False
    return sum(running(d) for d in sweep.iterdir() if d.name.isdigit()) if sweep.is_dir() else 0


def _files(sweep: Path) -> dict[str, bytes]:
    """Every file under the sweep (hidden ones too), as compared: the timing columns dropped
    from results.parquet (its metadata kept) and metrics.csv, the working folder taken out
    of Hydra's records, the job's log (timestamps) and the sweep's report (written at its end
    from the jobs' files compared here; its latencies are timings) only named."""
    out = {}
    for path in sorted(p for p in sweep.rglob("*") if p.is_file()):
        name = str(path.relative_to(sweep))
        data = path.read_bytes()
        if path.parent == sweep and (path.name in ("report.md", "report.html", "summary.csv") or path.suffix == ".png"):
            data = b""
        elif path.name == "mtsbench.log":
            data = b""
        elif path.name in ("hydra.yaml", "multirun.yaml"):
            data = data.replace(str(sweep.parent).encode(), b"<cwd>")
        elif path.name == "results.parquet":
            table = pq.read_table(path)
            kept = table.drop_columns([c for c in TIMINGS if c in table.column_names])
            sink = io.BytesIO()
            pd.DataFrame({"metadata": [repr(sorted(table.schema.metadata.items()))]}).to_csv(sink)
            data = sink.getvalue() + kept.to_pandas().to_csv().encode()
        elif path.name == "metrics.csv":
            frame = pd.read_csv(path)
            data = frame.drop(columns=[c for c in TIMINGS if c in frame.columns]).to_csv().encode()
        out[name] = data
    return out


def test_a_sweep_killed_and_resumed_three_times_ends_as_an_uninterrupted_one(cli, tmp_path):
    """16 jobs, 2 at a time: SIGKILLed once 2, 7 and 12 jobs are complete and another is in
    its scenarios (then 0, 70 and 150 ms later: mid-job; a job composes its config before
    its folder shows it started, so the kill waits for that, not a fixed time), each time no process of it left within seconds, resumed after each
    kill; the last resume finishes it. Every file then equals an uninterrupted sweep's."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    r = cli("run", "-m", *SOAK, "hydra.sweep.dir=sw", cwd=tmp_path / "a")
    assert r.returncode == 0, r.stderr[-2000:]
    sweep = tmp_path / "b" / "sw"
    first = ["-m", *SOAK]
    cut = 0                                 # jobs a kill left half written
    for n, (complete, then) in enumerate(KILLS):
        args = first if n == 0 else ["-m", "--resume", "sw", "hydra.launcher.n_jobs=2"]
        proc = _start(tmp_path / "b", "run", *args, "hydra.sweep.dir=sw")
        try:
            _wait_until(lambda: _complete(sweep) >= complete and _running(sweep) > 0, proc, every=0.005)
            time.sleep(then)
            _kill_sweep(proc)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert _complete(sweep) < 16, f"kill {n + 1} came after the sweep's last job"
        cut += sum(job_status(d) == "interrupted" for d in sweep.iterdir() if d.name.isdigit())
    assert cut > 0, "no kill landed inside a job"
    r = cli("run", "-m", "--resume", "sw", "hydra.launcher.n_jobs=2", cwd=tmp_path / "b")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "16 jobs done; 80 of 80 expectations passed" in r.stderr, r.stderr[-2000:]
    assert _leftovers(sweep) == []
    want, got = _files(tmp_path / "a" / "sw"), _files(sweep)
    assert sorted(got) == sorted(want)
    assert [name for name in want if got[name] != want[name]] == []


def _lane_workers_below(pid: int) -> set[int]:
    """Live loky worker processes below ``pid`` (not loky's resource tracker, kept for the process's life)."""
    def worker(p: int) -> bool:
        try:
            return b"popen_loky" in Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            return False
    return {p for p in _descendants(pid) if worker(p)}


def test_a_sweep_the_check_refuses_leaves_none_of_its_early_workers(monkeypatch, capsys):
    """The lanes' workers started while a sweep is checked (``prestart``) are stopped when the
    check refuses it: none is left running below ``mtsbench run``'s process."""
    from hydra_plugins.mtsbench_launcher import progress_joblib

    from mtsbench.cli import main

    started = []
    original = progress_joblib.prestart
    monkeypatch.setattr(progress_joblib, "prestart", lambda *a: started.extend(original(*a)) or started)
    assert not _lane_workers_below(os.getpid())
    assert main(["run", "-m", "ablate=none,tierz"]) == 2
    assert "did you mean 'tiers'?" in capsys.readouterr().err and len(started) == progress_joblib.PRESTART
    end = time.monotonic() + DEATH_WAIT
    while _lane_workers_below(os.getpid()) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _lane_workers_below(os.getpid())
