"""User configuration the Hydra way: a decay curve and an experiment from the user's own
config folder (--config-dir), through run, run -m and check."""

import json

import pytest


@pytest.fixture
def user_configs(tmp_path):
    root = tmp_path / "my_configs"
    (root / "long_decay").mkdir(parents=True)
    (root / "experiment").mkdir()
    (root / "long_decay" / "my_decay.yaml").write_text(
        "_target_: mtsbench.mechanisms.decay.Exponential\nhalf_life: 3.0\n", encoding="utf-8")
    (root / "experiment" / "mine.yaml").write_text(
        "# @package _global_\nhydra:\n  mode: MULTIRUN\n  sweeper:\n    params:\n      long_decay: my_decay,power_law\n",
        encoding="utf-8")
    return root


def test_a_decay_curve_of_ones_own_runs(cli, tmp_path, user_configs):
    out = tmp_path / "run"
    r = cli("run", "--config-dir", user_configs, "long_decay=my_decay", "scenarios=[milk_allergy]",
            f"hydra.run.dir={out}")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["choices"]["long_decay"] == "my_decay"


def test_an_experiment_of_ones_own_sweeps(cli, tmp_path, user_configs):
    out = tmp_path / "sweep"
    r = cli("run", "-m", "--config-dir", user_configs, "experiment=mine", "scenarios=[milk_allergy]",
            f"hydra.sweep.dir={out}")
    assert r.returncode == 0, r.stderr
    choices = [json.loads((out / str(n) / "summary.json").read_text())["choices"]["long_decay"] for n in (0, 1)]
    assert choices == ["my_decay", "power_law"]


def test_check_takes_the_same_flag_and_unknown_options_still_fail(cli, user_configs):
    r = cli("check", "--config-dir", user_configs, "long_decay=my_decay", "scenarios=[milk_allergy]")
    assert r.returncode in (0, 1) and "expectations passed" in r.stdout, r.stderr
    bad = cli("run", "--config-dir", user_configs, "long_decay=my_decay2")
    assert bad.returncode == 2 and "did you mean 'my_decay'" in bad.stderr
