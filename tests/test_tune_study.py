"""Tuning studies end to end (issue 35): ``mtsbench run -m hydra/sweeper=tune`` on bundled
scenarios (hashing embedder, mock LLM, a few trials), its database, a kill and a resume, a
failed trial's reason, the held-out evaluation of the front, and hydra-optuna-sweeper's own
sweeper on the same app."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

optuna = pytest.importorskip("optuna")
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")


SPACE = ('hydra.sweeper.params={arousal: "choice(radius,none)", arousal.r: "interval(0.05,0.5)", '
         'retrieval.attention_weight: "interval(0,1)", tiers: "choice(thresholds,flat)"}')
CONDITIONS = 'hydra.sweeper.conditions={arousal.r: "arousal=radius"}'
STUDY = ["-m", "hydra/sweeper=tune", "scenarios=[milk_allergy,flu_fades]", SPACE, CONDITIONS,
         "hydra.sweeper.sampler.n_startup_trials=2"]


def _exe() -> str:
    return str(Path(sys.executable).parent / "mtsbench")


def _trials(folder, name="tuning"):
    study = optuna.load_study(study_name=name, storage=f"sqlite:///{folder / 'study.db'}")
    return study, study.get_trials(deepcopy=False)


def _summary_values(job):
    s = json.loads((job / "summary.json").read_text())
    return [s["overall"]["evidence"]["recall@1024t"], s["cost"]["overall"]["per_turn"]]


def test_a_study_is_a_database_of_its_trials_and_its_front_runs_again_held_out(cli, tmp_path):
    folder = tmp_path / "study"
    r = cli("run", *STUDY, "hydra.sweeper.n_trials=4", f"hydra.sweep.dir={folder}")
    assert r.returncode == 0, r.stderr
    study, trials = _trials(folder)
    assert [t.state.name for t in trials] == ["COMPLETE"] * 4
    for t in trials:                                  # trial N is job N, scored from its own summary.json
        assert t.user_attrs["job"] == str(t.number)
        assert t.values == _summary_values(folder / str(t.number))
        assert ("arousal.r" in t.params) == (t.params["arousal"] == "radius")
        assert t.user_attrs["overrides"][:1] == ["scenarios=[milk_allergy,flu_fades]"]
    assert "trial 3: recall@1024t" in r.stderr
    assert "## Tuning front" in (folder / "report.md").read_text()

    again = cli("run", *STUDY, "hydra.sweeper.n_trials=4", f"hydra.sweep.dir={folder}")
    assert again.returncode == 2 and "already holds study 'tuning': resume it with mtsbench run -m --resume" \
        in again.stderr and len(again.stderr.strip().splitlines()) == 1

    held = folder / "held_out"
    r = cli("run", "-m", "hydra/sweeper=tune", "scenarios=[cold_then_fever]", SPACE, CONDITIONS,
            f"hydra.sweeper.front_of={folder}", f"hydra.sweep.dir={held}")
    assert r.returncode == 0, r.stderr
    front = sorted(t.number for t in study.best_trials)
    _, evaluated = _trials(folder, "tuning:held_out")
    assert sorted(t.user_attrs["tuning_trial"] for t in evaluated) == front
    runs = {tuple(t.user_attrs["overrides"]) for t in evaluated}
    assert len({t.user_attrs["job"] for t in evaluated}) == len(runs)     # identical parameters ran once
    for t in evaluated:
        tuned = trials[t.user_attrs["tuning_trial"]]
        assert t.params == tuned.params and t.values == _summary_values(held / t.user_attrs["job"])
        assert "scenarios=[cold_then_fever]" in t.user_attrs["overrides"]
    resumed = cli("run", "-m", "--resume", held)
    assert resumed.returncode == 0 and "0 Pareto-optimal trial(s) to evaluate in 0 run(s)" in resumed.stderr
    report = cli("report", folder, "--out", tmp_path / "rep")
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Held-out evaluation of the tuning front" in text and "## Parameter importances" in text


def test_a_killed_study_resumes_without_repeating_a_finished_trial_and_reaches_the_same_front(cli, tmp_path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert cli("run", *STUDY, "hydra.sweeper.n_trials=6", f"hydra.sweep.dir={whole}").returncode == 0
    proc = subprocess.Popen([_exe(), "run", *STUDY, "hydra.sweeper.n_trials=6", f"hydra.sweep.dir={cut}"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while not (cut / "2").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)                              # trials 0 and 1 told, trials 2 and 3 launched
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _, before = _trials(cut)
    finished = {t.number: (cut / str(t.number) / "summary.json").stat().st_mtime_ns
                for t in before if t.state.name == "COMPLETE"}
    assert finished and any(t.state.name == "RUNNING" for t in before)

    r = cli("run", "-m", "--resume", cut)
    assert r.returncode == 0, r.stderr
    assert "finishing" in r.stderr and "a stopped process left running" in r.stderr
    for number, mtime in finished.items():           # no finished trial ran again
        assert (cut / str(number) / "summary.json").stat().st_mtime_ns == mtime
    a, ta = _trials(whole)
    b, tb = _trials(cut)
    assert [(t.number, t.state.name, t.params, t.values) for t in ta] == \
        [(t.number, t.state.name, t.params, t.values) for t in tb]
    assert sorted(t.number for t in a.best_trials) == sorted(t.number for t in b.best_trials)


def test_a_failed_trial_is_marked_failed_with_its_reason_never_scored(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\ntitle: broken\nsteps:\n  - {at: not-a-time, say: hello}\n")
    folder = tmp_path / "study"
    r = cli("run", "-m", "hydra/sweeper=tune", f'hydra.sweeper.params={{scenarios: "choice([milk_allergy],[{bad}])"}}',
            "hydra.sweeper.n_trials=4", "hydra.sweeper.sampler.seed=5", f"hydra.sweep.dir={folder}")
    assert r.returncode == 1, r.stderr               # a sweep with a failed job exits 1; the study went on
    _, trials = _trials(folder)
    failed = [t for t in trials if t.state.name == "FAIL"]
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    assert failed and complete and len(trials) == 4
    for t in failed:
        assert t.values is None and str(bad) in t.params["scenarios"]
        reason = json.loads((folder / str(t.number) / "failure.json").read_text())
        assert t.user_attrs["failure"] == f"{reason['type']}: {reason['error']}"
        assert "bad.yaml" in t.user_attrs["failure"]
        assert f"trial {t.number}: failed: " in r.stderr
    text = (folder / "report.md").read_text()
    assert failed[0].user_attrs["failure"].split(":")[0] in text.split("## Trials")[1]


def test_hydra_optuna_sweepers_own_sweeper_gets_the_objectives_from_the_app(cli, tmp_path):
    folder = tmp_path / "plain"
    r = cli("run", "-m", "hydra/sweeper=optuna", "scenarios=[milk_allergy]", "hydra.sweeper.direction=[maximize,minimize]",
            "hydra.sweeper.n_trials=2", "hydra.sweeper.sampler.seed=0",
            "retrieval.attention_weight=interval(0,1)", f"hydra.sweep.dir={folder}")
    assert r.returncode == 0, r.stderr
    solutions = yaml.safe_load((folder / "optimization_results.yaml").read_text())["solutions"]
    scored = sorted(_summary_values(folder / str(n)) for n in (0, 1))
    assert all(s["values"] in scored for s in solutions)


@pytest.mark.parametrize("args, words", [
    (["hydra/sweeper=tune", "hydra.sweeper.direction=[maximize]", SPACE], "expected maximize or minimize for each of the 2"),
    (["hydra/sweeper=tune", "hydra/sweeper/sampler=cmaes", SPACE], "cannot search 2 objectives"),
    (["hydra/sweeper=tune", SPACE, "tune.objectives=[overall.evidence.recall@100t,cost.overall.per_turn]"],
     "not evaluated at 100 tokens"),
    (["hydra/sweeper=tune", 'hydra.sweeper.params={arousal.r: "interval(0.1,0.5)"}', "arousal=none"],
     "no such key 'arousal.r'"),
    (["retrieval.attention_weight=interval(0,1)"], "interval() is searched by a tuning study"),
])
def test_a_study_that_cannot_run_is_one_line_before_anything_runs(cli, tmp_path, args, words):
    r = cli("run", "-m", "scenarios=[milk_allergy]", *args, f"hydra.sweep.dir={tmp_path / 's'}")
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "s").exists()


@pytest.mark.parametrize("launcher", ["joblib", "ray_cluster"])
def test_a_study_runs_its_trials_on_the_configured_launcher(cli, tmp_path, launcher):
    if launcher == "ray_cluster":
        pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="the ray extra is not installed")
    folder = tmp_path / launcher
    r = cli("run", *STUDY, "hydra.sweeper.n_trials=2", f"hydra/launcher={launcher}", f"hydra.sweep.dir={folder}",
            *(["hydra.launcher.ray.init.num_cpus=2"] if launcher == "ray_cluster" else []), timeout=600)
    assert r.returncode == 0, r.stderr
    _, trials = _trials(folder)
    assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE"]
    assert all(t.values == _summary_values(folder / str(t.number)) for t in trials)
