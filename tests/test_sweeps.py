"""Experiments, sweeps on the local launcher, failed jobs, timelines and `mtsbench report`."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose as hydra_compose
from hydra import initialize_config_dir

from mtsbench.config.composition import ConfigError, compose
from mtsbench.config.search import groups
from mtsbench.core.resources import CONFIG_DIR
from mtsbench.report.jobs import find_jobs
from mtsbench.report.plots import pareto_front
from mtsbench.config.options import ProbeOptions
from mtsbench.harness.runner import at_motivation, run
from mtsbench.scenario.loader import load_scenario

REPO = Path(__file__).resolve().parent.parent
TINY = """id: tiny
title: A fact said once is found when asked
language: en
start: 2026-01-05T08:00:00
steps:
  - {id: code, at: d0 18:30, say: "My locker code at the gym is 4512.", hints: {salience: 4}}
  - {at: d1 09:00, say: "The train was late again.", hints: {salience: 2}}
  - {at: d1 10:00, say: "I watched a film about whales.", hints: {salience: 2}}
  - {id: ask, at: d2 09:00, probe: "What is my gym locker code?", motivation: 1.0, expect: {recall: [code], k: 2}}
  - {id: state, at: d2 10:00, check: {attention: {step: code, min: 0.1}}}
"""


def sweep_params(name: str) -> dict:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=[f"experiment={name}"], return_hydra_config=True)
    return dict(cfg.hydra.sweeper.params)


def sweeper_of(name: str) -> str:
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=[f"experiment={name}"], return_hydra_config=True)
    return str(cfg.hydra.sweeper._target_)


@pytest.mark.parametrize("name", groups()["experiment"])
def test_experiment_sweeps_name_only_known_options(name):
    params = sweep_params(name)
    assert params, f"experiment {name} has no sweep"
    if sweeper_of(name).endswith("StudySweeper"):       # a tuning study's space (docs/tuning.md): each value composed
        pytest.importorskip("optuna")
        from mtsbench.harness.preflight import check_run

        assert check_run(["-m", f"experiment={name}", "scenarios=[milk_allergy]"]) is not None
        return
    known = groups()
    for key, values in params.items():
        for value in str(values).split(","):
            if key in known:
                assert value in known[key], (name, key, value)
            else:
                cfg, _ = compose([f"experiment={name}", f"{key}={value}", "scenarios=[milk_allergy]"])
                assert cfg is not None


def test_presets_sweep_lists_every_preset():
    assert sorted(sweep_params("presets")["preset"].split(",")) == sorted(groups()["preset"])


def test_ablation_turns_off_one_mechanism_each():
    _, base = compose([])
    for option in sweep_params("ablation")["ablate"].split(","):
        cfg, choices = compose([f"ablate={option}"])
        changed = {g for g in base if choices.get(g) != base[g]}
        assert len(changed) <= 1, (option, changed)


def test_probe_motivation_override(tmp_path):
    scenario = load_scenario(REPO / "scenarios" / "deep_memory.yaml")
    low = at_motivation(scenario, 0.1)
    assert {s.motivation for s in low.steps if s.kind == "probe"} == {0.1}
    assert at_motivation(scenario, None) is scenario
    with pytest.raises(ConfigError, match=r"^probes.motivation: expected a number from 0 to 1 or null, got 2$"):
        ProbeOptions(motivation=2)


def test_timelines_sample_only_named_memories_and_match_the_checks(tmp_path):
    cfg, choices = compose(["scenarios=[field_warmup]"])
    frame = run(cfg, tmp_path, choices)
    t = pd.read_parquet(tmp_path / "timelines.parquet")
    assert set(t["memory"]) == {"basil"}
    dormant = frame[(frame["step"] == "dormant") & (frame["check"] == "attention")]["value"].iloc[0]
    at_check = t[t["step"] == "dormant"]
    assert float((at_check["long"] + at_check["short"]).iloc[0]) == pytest.approx(dormant, abs=1e-4)
    warm = t[t["step"] == "warm"]["tier"].iloc[0]
    assert warm == frame[(frame["step"] == "warm") & (frame["check"] == "tier")]["value"].astype(int).iloc[0]


def test_pareto_front_by_hand():
    cost = np.array([10.0, 20.0, 20.0, 5.0, 30.0])
    recall = np.array([0.8, 0.9, 0.7, 0.5, 0.9])
    assert pareto_front(cost, recall).tolist() == [True, True, False, True, False]


def test_did_you_mean_names_experiments(cli):
    r = cli("run", "-m", "experiment=preset")
    assert r.returncode == 2 and "did you mean 'presets'" in r.stderr and r.stderr.count("\n") == 1


def test_sweep_with_a_crashing_job_reports_the_rest(cli, tmp_path):
    (tmp_path / "tiny.yaml").write_text(TINY)
    bad = REPO / "tests" / "data" / "malformed" / "backwards.yaml"
    sweep = tmp_path / "sweep"
    r = cli("run", "-m", f"scenarios=[{tmp_path / 'tiny.yaml'}],[{bad}]", "preset=mts,recency_only",
            f"hydra.sweep.dir={sweep}")
    assert r.returncode == 1, r.stderr                      # a job failed: the sweep says so
    assert "2 failed" in r.stderr and "Traceback" not in r.stderr
    r = cli("report", sweep, "--out", tmp_path / "report")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "report"
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 4 and list(summary["status"]) == ["ok", "ok", "failed", "failed"]
    assert "goes back in time" in summary["error"].iloc[2]
    assert summary["recall"].iloc[0] == 1.0 and summary["recall"].iloc[1] == 0.0   # recency_only misses it
    assert {"latency_p50_ms", "latency_p95_ms", "scored", "llm_calls", "tokens", "overrides"} <= set(summary.columns)
    report = (out / "report.md").read_text()
    assert "## Pass matrix" in report and "| failed |" in report
    for png in ("pareto_scored.png", "pareto_tokens.png", "pass_matrix.png", "timeline_tiny.png"):
        assert (out / png).stat().st_size > 1000 and f"({png})" in report
    labels = [j.label for j in find_jobs(sweep)]
    assert labels[0].endswith("preset=mts") and labels[1].endswith("preset=recency_only")


def test_report_on_a_single_run_keeps_its_report(cli, tmp_path):
    (tmp_path / "tiny.yaml").write_text(TINY)
    r = cli("run", f"scenarios=[{tmp_path / 'tiny.yaml'}]", f"hydra.run.dir={tmp_path / 'run'}")
    assert r.returncode == 0, r.stderr
    assert cli("report", tmp_path / "run").returncode == 0
    report = (tmp_path / "run" / "report.md").read_text()
    assert report.startswith("# mtsbench run report") and "timeline_tiny.png" in report
    assert len(pd.read_csv(tmp_path / "run" / "summary.csv")) == 1
    r = cli("report", tmp_path / "nowhere")
    assert r.returncode == 2 and "no such directory" in r.stderr
