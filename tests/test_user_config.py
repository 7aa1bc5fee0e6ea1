"""User configuration the Hydra way: a decay curve and an experiment from the user's own
config folder (--config-dir), through run, run -m and check; a file of the user's named like
a packaged one replaces it (the user's folder comes first in Hydra's search path)."""

import json

import pytest
import yaml

import mtsbench
from mtsbench.outputs import results
from mtsbench.config.composition import compose
from mtsbench.core.resources import CONFIG_DIR


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


@pytest.fixture
def shadowing(tmp_path):
    """A config folder whose files are named like packaged ones: a power_law decay 20 times
    steeper (d 6 instead of 0.3) and a decay_curves experiment of two jobs instead of 25."""
    root = tmp_path / "shadowing"
    (root / "long_decay").mkdir(parents=True)
    (root / "experiment").mkdir()
    (root / "long_decay" / "power_law.yaml").write_text(
        "_target_: mtsbench.mechanisms.decay.PowerLaw\ntau: 24\nd: 6.0\n", encoding="utf-8")
    (root / "experiment" / "decay_curves.yaml").write_text(
        "# @package _global_\nhydra:\n  mode: MULTIRUN\n  sweeper:\n    params:\n"
        "      long_decay: power_law,none\n", encoding="utf-8")
    return root


def _config(run_dir) -> dict:
    """The config a run recorded in its results file."""
    return results.load(run_dir / results.FILE)[1]["config"]


def _long_attention(run_dir) -> float:
    """The summed long attention of the timelines (a memory's long part decays by long_decay)."""
    return float(mtsbench.load(run_dir).timelines["long"].sum())


def test_a_file_named_like_a_packaged_option_replaces_it(cli, tmp_path, shadowing):
    mine, packaged = tmp_path / "mine", tmp_path / "packaged"
    for out, extra in ((mine, ["--config-dir", shadowing]), (packaged, [])):
        r = cli("run", *extra, "scenarios=[milk_allergy]", f"hydra.run.dir={out}")
        assert r.returncode == 0, r.stderr
    recorded = yaml.safe_load((mine / ".hydra" / "config.yaml").read_text())
    assert recorded["long_decay"]["d"] == 6.0
    assert yaml.safe_load((packaged / ".hydra" / "config.yaml").read_text())["long_decay"]["d"] == 0.3
    assert json.loads((mine / "summary.json").read_text())["choices"]["long_decay"] == "power_law"
    assert _long_attention(mine) < 0.9 * _long_attention(packaged)     # it decays faster: behaviour, not only config


def test_compose_and_check_see_the_users_file_first(cli, shadowing):
    cfg, choices = compose(["scenarios=[milk_allergy]"], [shadowing])
    assert cfg.long_decay.d == 6.0 and choices["long_decay"] == "power_law"
    assert compose(["scenarios=[milk_allergy]"])[0].long_decay.d == 0.3      # nothing left behind
    run = mtsbench.run(["scenarios=[milk_allergy]"], config_dir=shadowing, out=shadowing.parent / "r")   # kept: read below
    assert _config(run.path)["long_decay"]["d"] == 6.0
    r = cli("check", "--config-dir", shadowing, "scenarios=[milk_allergy]", "--out", shadowing.parent / "c")
    assert r.returncode in (0, 1) and "expectations passed" in r.stdout, r.stderr
    assert _config(shadowing.parent / "c")["long_decay"]["d"] == 6.0


def test_an_experiment_named_like_a_packaged_one_replaces_it(cli, tmp_path, shadowing):
    out = tmp_path / "sweep"
    r = cli("run", "-m", "--config-dir", shadowing, "experiment=decay_curves", "scenarios=[milk_allergy]",
            f"hydra.sweep.dir={out}")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir() if p.name.isdigit()) == ["0", "1"]     # not the packaged 25
    configs = [yaml.safe_load((out / n / ".hydra" / "config.yaml").read_text()) for n in ("0", "1")]
    assert configs[0]["long_decay"]["d"] == 6.0 and configs[1]["long_decay"]["_target_"].endswith("NoDecay")


def test_the_first_folder_wins_and_a_users_config_yaml_replaces_the_primary(cli, tmp_path, shadowing):
    second = tmp_path / "second"
    (second / "long_decay").mkdir(parents=True)
    (second / "long_decay" / "power_law.yaml").write_text(
        "_target_: mtsbench.mechanisms.decay.PowerLaw\ntau: 24\nd: 1.0\n", encoding="utf-8")
    assert compose([], [shadowing, second])[0].long_decay.d == 6.0
    assert compose([], [second, shadowing])[0].long_decay.d == 1.0
    primary = tmp_path / "primary"
    primary.mkdir()
    packaged = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text())
    packaged["seed"] = 7
    (primary / "config.yaml").write_text(yaml.safe_dump(packaged), encoding="utf-8")
    assert compose([], [primary])[0].seed == 7 and compose([])[0].seed == 0


def test_a_missing_config_dir_is_one_line(cli, tmp_path):
    for command in ("run", "check"):
        r = cli(command, "--config-dir", tmp_path / "nope", "scenarios=[milk_allergy]")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no such folder" in r.stderr, r.stderr


def test_resume_keeps_the_sweeps_config_dir(cli, tmp_path, shadowing):
    out = tmp_path / "sweep"
    r = cli("run", "-m", "--config-dir", shadowing, "experiment=decay_curves", "scenarios=[milk_allergy]",
            f"hydra.sweep.dir={out}")
    assert r.returncode == 0, r.stderr
    (out / "0" / "summary.json").unlink()                      # job 0 not complete: resume re-runs it
    r = cli("run", "-m", "--resume", out)                      # no --config-dir: the sweep's own, recorded
    assert r.returncode == 0 and "resuming: 1 complete, 1 to run" in r.stderr, r.stderr
    assert json.loads((out / "0" / "summary.json").read_text())["status"] == "complete"
    assert _config(out / "0")["long_decay"]["d"] == 6.0
