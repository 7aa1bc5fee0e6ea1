"""The Python API: mtsbench.run / mtsbench.load, and an import that changes nothing."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mtsbench
from mtsbench.errors import ReportError

REPO = Path(__file__).resolve().parent.parent


def test_import_leaves_blas_threads_and_environment_alone():
    code = ("import os, numpy; from threadpoolctl import threadpool_info; "
            "before = [i['num_threads'] for i in threadpool_info()]; import mtsbench, mtsbench.harness.runner; "
            "after = [i['num_threads'] for i in threadpool_info()]; "
            "assert before == after, (before, after); assert 'OPENBLAS_NUM_THREADS' not in os.environ; print('ok')")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    r = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_run_and_load_give_the_same_frames(tmp_path):
    run = mtsbench.run(["scenarios=[milk_allergy]"], out=tmp_path / "r")
    assert run.pass_rate == 1.0 and len(run.probes) == 1 and len(run.expectations) == 5
    loaded = mtsbench.load(tmp_path / "r")
    assert isinstance(loaded, mtsbench.Run)
    assert loaded.metrics.equals(run.metrics)
    assert set(loaded.results["record"]) >= {"observe", "probe"}
    assert {"t", "event"} <= set(loaded.trace.columns) and len(loaded.timelines) > 0


def test_load_a_sweep_with_overrides_as_columns(cli, tmp_path):
    r = cli("run", "-m", "preset=mts,flat_rag", "scenarios=[milk_allergy]", f"hydra.sweep.dir={tmp_path / 's'}")
    assert r.returncode == 0, r.stderr
    sweep = mtsbench.load(tmp_path / "s")
    assert isinstance(sweep, mtsbench.Sweep) and len(sweep.jobs) == 2
    assert list(sweep.summary["config"]) == ["preset=mts", "preset=flat_rag"]
    probes = sweep.probes
    assert set(probes["preset"]) == {"mts", "flat_rag"} and set(probes["job"]) == {0, 1}
    assert len(sweep.expectations) == 10 and "preset" in sweep.results.columns


def test_load_refuses_a_folder_that_holds_no_run(tmp_path):
    with pytest.raises(ReportError, match="not a run directory"):
        mtsbench.load(tmp_path)


def test_the_notebook_example_runs(tmp_path):
    r = subprocess.run([sys.executable, "-P", str(REPO / "examples" / "notebook.py")], capture_output=True,
                       text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "pass rate 1.0" in r.stdout and "total cost per turn" in r.stdout


def test_sweep_runs_a_sweep_and_returns_it(tmp_path):
    """``mtsbench.run_sweep`` (issue 29: ``mtsbench.run`` could not run a sweep): the sweep runs as
    ``mtsbench run -m`` would, its report is written, and it comes back as a ``Sweep``."""
    sweep = mtsbench.run_sweep(["preset=mts,flat_rag", "scenarios=[milk_allergy]"], out=tmp_path / "s")
    assert isinstance(sweep, mtsbench.Sweep) and sweep.path == tmp_path / "s"
    assert list(sweep.summary["config"]) == ["preset=mts", "preset=flat_rag"]
    assert list(sweep.summary["status"]) == ["ok", "ok"]
    assert set(sweep.probes["preset"]) == {"mts", "flat_rag"}
    assert (tmp_path / "s" / "report.md").is_file() and (tmp_path / "s" / "multirun.yaml").is_file()


def test_run_with_multirun_keeps_nothing_without_out_and_bad_overrides_are_one_line(tmp_path):
    import tempfile

    from mtsbench.errors import ConfigError

    before = set(Path(tempfile.gettempdir()).glob("mtsbench-sweep-*"))
    sweep = mtsbench.run(["seed=0,1", "scenarios=[milk_allergy]"], multirun=True)
    assert isinstance(sweep, mtsbench.Sweep) and len(sweep.jobs) == 2
    assert not sweep.path.exists() and set(Path(tempfile.gettempdir()).glob("mtsbench-sweep-*")) == before
    assert len(sweep.expectations) == 10 and set(sweep.probes["seed"]) == {"0", "1"}   # read before removal
    with pytest.raises(ConfigError) as caught:
        mtsbench.run_sweep(["presett=mts,flat_rag"], out=tmp_path / "bad")
    assert "\n" not in str(caught.value) and "presett" in str(caught.value), caught.value
