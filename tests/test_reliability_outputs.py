"""Outputs that survive interruption (issue 16, item 3): scenarios are streamed as they
finish, files written atomically; SIGINT/SIGTERM keeps what was done (status interrupted,
exit 130/143, one line); a full disk or an unwritable place is one line and exit 2, and
never leaves a complete-looking summary.json beside a truncated file or an empty
failure.json.

The signal tests are deterministic without timing: the LLM is a loopback server whose
answers stop (block) once the first scenario's checkpoint exists, so the run is certainly
inside the second scenario when the signal is sent.
"""

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from mtsbench.llm.testing import FakeOpenAI, valid_answer

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = "scenarios=[milk_allergy,deep_memory,field_warmup]"


def mtsbench_exe() -> list[str]:
    exe = Path(sys.executable).parent / "mtsbench"
    return [str(exe)] if exe.exists() else [shutil.which("mtsbench") or "mtsbench"]


def _wait_for(condition, proc) -> None:
    """Poll until ``condition()`` holds (the process must still run); no time limit of ours:
    pytest's own timeout, if any, applies."""
    while not condition():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


@contextmanager
def stalled_after_first_scenario(tmp_path, chunk_rows: int | None = None, sigint_ignored: bool = False,
                                 sweep: bool = False):
    """``mtsbench run`` of SCENARIOS against a loopback LLM that stops answering once the
    first scenario is checkpointed; yields (process, output dir) when the run is certainly
    inside the second scenario. The server is released and the process killed on exit.

    ``chunk_rows``: the runner streams trace and timelines in chunks of that many rows, and
    the LLM answers 20 more calls first, so the second scenario has streamed (hidden) parts.
    ``sigint_ignored``: the process starts with SIGINT ignored, as a shell starts a command
    in the background (``mtsbench run … &``, ``nohup``). ``sweep``: a sweep of two jobs, one
    at a time, stalled in its first job (``out``: that job's folder)."""
    out = tmp_path / "sw" / "0" if sweep else tmp_path / "run"
    release, waiting = threading.Event(), threading.Event()
    grace = [20 if chunk_rows else 0]

    def answer(body):
        if (out / "summary.json").exists():       # the first scenario is checkpointed: stop answering
            grace[0] -= 1
            if grace[0] < 0:
                waiting.set()
                release.wait()
        return valid_answer(body)

    args = ["run", "-m", "seed=0,1", f"hydra.sweep.dir={out.parent}", "hydra.launcher.n_jobs=1"] if sweep \
        else ["run", f"hydra.run.dir={out}"]
    args += [SCENARIOS, "llm=openai", "llm.model=fake"]
    with FakeOpenAI(answer=answer) as server:
        args.append(f"llm.base_url={server.url}")
        command = [*mtsbench_exe(), *args] if chunk_rows is None else [sys.executable, "-c", (
            f"import sys, mtsbench.harness.runner; mtsbench.harness.runner.CHUNK_ROWS = {chunk_rows}; "
            f"from mtsbench.cli import main; sys.exit(main({args!r}))")]
        ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
        proc = subprocess.Popen(command, cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=ignore)
        try:
            _wait_for(waiting.is_set, proc)
            yield proc, out
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()


@pytest.mark.parametrize("signum, code, chunk_rows", [(signal.SIGINT, 130, None), (signal.SIGTERM, 143, None),
                                                    (signal.SIGINT, 130, 5)])
def test_a_signal_keeps_the_scenarios_done(tmp_path, signum, code, chunk_rows):
    """With ``chunk_rows`` the interrupted scenario has streamed parts: they are dropped."""
    with stalled_after_first_scenario(tmp_path, chunk_rows) as (proc, out):
        if chunk_rows:
            _wait_for(lambda: list((out / "trace.parquet.partial").glob(".00001-*")), proc)
        proc.send_signal(signum)
        _, err = proc.communicate()
    assert proc.returncode == code, err
    lines = [line for line in err.splitlines() if line.startswith("mtsbench:")]
    assert len(lines) == 1 and "interrupted by " + signal.Signals(signum).name in lines[0], err
    assert "after 1 of 3 scenarios" in lines[0] and "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["scenarios_done"] == ["milk_allergy"]
    assert summary["scenarios_planned"] == ["milk_allergy", "deep_memory", "field_warmup"]
    assert summary["stopped"] == {"signal": signal.Signals(signum).name, "scenario": "deep_memory"}
    assert list(summary["scenarios"]) == ["milk_allergy"] and summary["overall"]["checks"] > 0
    trace = pd.read_parquet(out / "trace.parquet")                      # the finished scenario, readable
    assert len(trace) and set(trace["scenario"]) == {"milk_allergy"}
    assert set(pd.read_parquet(out / "timelines.parquet")["scenario"]) <= {"milk_allergy"}
    assert set(pd.read_csv(out / "metrics.csv")["scenario"]) == {"milk_allergy"}
    assert not list(out.glob("*.partial")) and not list(out.glob(".*.tmp-*"))
    assert not (out / "failure.json").exists()


def test_a_stopped_sweep_keeps_what_its_running_job_did(tmp_path):
    """SIGTERM to the sweep's own process only (``kill PID``, not its group): the launcher
    passes it to the running job's worker, which writes what it did; the job not started
    stays so; one line, exit 143."""
    with stalled_after_first_scenario(tmp_path, sweep=True) as (proc, out):
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate()
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "job 0 interrupted by SIGTERM after 1 of 3 scenarios" in err, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["scenarios_done"] == ["milk_allergy"]
    assert [j["num"] for j in json.loads((out.parent / "jobs.json").read_text())] == [0, 1]
    assert not (out.parent / "1" / "summary.json").exists()


def test_sigint_stops_a_run_started_in_the_background(tmp_path):
    """Issue 28, item 8: a run started with SIGINT ignored (``&``, ``nohup``) stops on SIGINT
    as one in the foreground does: one line, exit 130, the finished scenario kept."""
    with stalled_after_first_scenario(tmp_path, sigint_ignored=True) as (proc, out):
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail("mtsbench run ignored SIGINT")
    assert proc.returncode == 130, err
    lines = [line for line in err.splitlines() if line.startswith("mtsbench:")]
    assert len(lines) == 1 and "interrupted by SIGINT after 1 of 3 scenarios" in lines[0], err
    assert "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["scenarios_done"] == ["milk_allergy"]


@pytest.mark.parametrize("chunk_rows", [None, 5])
def test_a_killed_run_leaves_its_finished_scenarios_readable(tmp_path, chunk_rows):
    """SIGKILL: no footer can be written then, so each scenario is its own complete parts;
    the running scenario's streamed parts are hidden from a reader of the folder."""
    with stalled_after_first_scenario(tmp_path, chunk_rows) as (proc, out):
        if chunk_rows:
            _wait_for(lambda: list((out / "trace.parquet.partial").glob(".00001-*")), proc)
        proc.kill()
        proc.communicate()
    assert json.loads((out / "summary.json").read_text())["status"] == "running"
    assert not (out / "trace.parquet").exists()
    for name in ("trace.parquet", "timelines.parquet"):           # pandas reads the parts' folder in one call
        assert set(pd.read_parquet(out / f"{name}.partial")["scenario"]) <= {"milk_allergy"}
    assert len(pd.read_parquet(out / "trace.parquet.partial")) > 0


def _run_with_failing_writes(tmp_path, names: tuple[str, ...]):
    """``mtsbench run`` in a process whose writes to files named ``names`` (or their
    temporary names) fail with ENOSPC after half their bytes: a full disk."""
    out = tmp_path / "run"
    code = f"""
import builtins, errno, io, os, sys
NAMES = {names!r}
real_open = builtins.open

class Full(io.TextIOBase):
    pass

def full_open(file, mode="r", *args, **kwargs):
    f = real_open(file, mode, *args, **kwargs)
    name = os.path.basename(str(file)).lstrip(".")
    folder = os.path.basename(os.path.dirname(str(file)))    # the parts of trace.parquet.partial/
    if any(ch in mode for ch in "wa") and any(name.startswith(n) or folder.startswith(n) for n in NAMES):
        write = f.write
        def half(data):
            write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        f.write = half
    return f

builtins.open = full_open
from mtsbench.cli import main
sys.exit(main(["run", "scenarios=[milk_allergy,deep_memory]", "hydra.run.dir={out}"]))
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    return r, out


def test_a_full_disk_while_streaming_is_one_line_and_no_complete_summary(tmp_path):
    r, out = _run_with_failing_writes(tmp_path, ("trace.parquet",))
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("mtsbench:")]
    assert len(lines) == 1 and "No space left on device" in lines[0] and "trace.parquet" in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "failed" and "overall" not in summary     # never complete-looking
    assert not (out / "trace.parquet").exists()                          # no truncated trace in place
    assert not list(out.rglob(".*.tmp-*"))                                # nor a half-written part
    failure = json.loads((out / "failure.json").read_text())
    assert "No space left" in failure["error"]
    assert not list(out.glob(".*.tmp-*"))


def test_a_full_disk_while_hydra_writes_its_folder_is_one_line(tmp_path):
    """Issue 28, item 7: a disk that fills while ``.hydra/`` is written gave Hydra's traceback
    (exit 1) and no marker; now one line naming the place, exit 2, failure.json, no summary."""
    r, out = _run_with_failing_writes(tmp_path, ("config.yaml", "hydra.yaml", "overrides.yaml"))
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("mtsbench:")]
    assert len(lines) == 1 and "No space left on device" in lines[0] and ".hydra" in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not (out / "summary.json").exists()                          # nothing presented as complete
    assert "No space left" in json.loads((out / "failure.json").read_text())["error"]


def test_a_disk_that_takes_nothing_leaves_no_empty_or_complete_file(tmp_path):
    names = ("results.parquet", "summary.json", "failure.json", "metrics.csv", "trace.parquet", "timelines.parquet",
             "report.md")
    r, out = _run_with_failing_writes(tmp_path, names)
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("mtsbench:")]
    assert len(lines) == 1 and "No space left on device" in lines[0] and "Traceback" not in r.stderr
    for name in ("summary.json", "failure.json", "results.parquet", "metrics.csv"):
        assert not (out / name).exists(), name                          # nothing half-written put in place
    assert not list(out.glob(".*.tmp-*"))


@pytest.mark.parametrize("args", [["run", "scenarios=[milk_allergy]", "hydra.run.dir=/proc/x/run"],
                                  ["run", "-m", "scenarios=[milk_allergy]", "hydra.sweep.dir=/proc/x/sweep"],
                                  ["check", "scenarios/milk_allergy.yaml", "--out", "/proc/x/check"]])
def test_an_unwritable_output_directory_is_one_line(cli, args):
    r = cli(*args, cwd=REPO)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot write /proc/x" in r.stderr, r.stderr


def test_report_to_an_unwritable_place_is_one_line(cli, tmp_path):
    r = cli("run", "scenarios=[milk_allergy]", "system=bm25", f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 0, r.stderr
    r = cli("report", tmp_path / "run", "--out", "/proc/x/report")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "cannot write" in r.stderr, r.stderr


@pytest.mark.parametrize("damaged", ["results.parquet", "trace.parquet"])
def test_report_and_calibrate_refuse_a_truncated_table(cli, tmp_path, damaged):
    """Issue 28, item 7: a complete run whose results.parquet (or trace.parquet) was cut short
    gave a normal-looking report and calibration, exit 0; each now refuses in one line
    naming the file, exit 2."""
    r = cli("run", "scenarios=[milk_allergy]", "system=bm25", f"hydra.run.dir={tmp_path / 'good'}")
    assert r.returncode == 0, r.stderr
    shutil.copytree(tmp_path / "good", tmp_path / "cut")
    path = tmp_path / "cut" / damaged
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    for args in (("report", tmp_path / "cut", "--out", tmp_path / "report"),
                 ("calibrate", tmp_path / "good", tmp_path / "cut", "--out", tmp_path / "calibration")):
        r = cli(*args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert r.stderr.startswith(f"mtsbench: {path}: damaged") and "Traceback" not in r.stderr
        assert r.stdout == ""
    assert not (tmp_path / "report" / "report.md").exists() and not (tmp_path / "calibration").exists()
    assert cli("report", tmp_path / "good", "--out", tmp_path / "report").returncode == 0   # the intact run


def test_a_complete_run_says_so(cli, tmp_path):
    r = cli("run", "scenarios=[milk_allergy,deep_memory]", "system=bm25", f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "complete" and summary["scenarios_done"] == ["milk_allergy", "deep_memory"]
    assert not list((tmp_path / "run").glob("*.partial"))
    trace = pd.read_parquet(tmp_path / "run" / "trace.parquet")
    assert list(trace["scenario"].unique()) == ["milk_allergy", "deep_memory"]          # in order
    assert pq.ParquetFile(tmp_path / "run" / "trace.parquet").metadata.num_row_groups == 2   # one per scenario
    assert list(trace.columns) == ["scenario", "t", "event", "fields"]
    assert {"id", "kind"} <= set(json.loads(trace["fields"].iloc[0]))        # bm25: created with its id
