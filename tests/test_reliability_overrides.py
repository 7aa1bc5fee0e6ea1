"""Overrides that escaped the one-line rule (issue 28, item 5): each is refused before
anything runs, in one line naming the place and what was expected, exit 2, nothing written."""

import pytest

from mtsbench.config import rules as config_rules
from mtsbench.scenario import times

REFUSED = [
    (["run", "="], "no key before '='"),
    (["run", "=x"], "no key before '='"),
    (["run", "seed=glob(*)"], "glob() picks options of a config group"),
    (["run", "-m", "seed=glob(*)"], "glob() picks options of a config group"),
    (["run", "~dual"], "override '~dual': 'dual' cannot be deleted: system.dual reads it"),
    (["run", "~system"], "override '~system': every run reads 'system'"),
    (["run", "preload.memories=10000000000"], "preload.memories: expected at most"),
    (["run", "-m", "seed=range(0,10000000000)"], "more than sweep.max_jobs=10,000"),
    (["run", "-m", "seed=range(0,3)", "sweep.max_jobs=2"], "the sweep has 3 jobs"),
    (["run", "-m", "seed=range(0,5,0)"], "not a valid range"),
    (["run", "generate.days=100000"], "generate.days: expected an integer from 0 to 36500"),
    (["run", "index.threads=1000000"], "index.threads: expected an integer from 1 to 1024"),
    (["run", "hydra.launcher.n_jobs=0"], "hydra.launcher.n_jobs: expected an integer >= 1"),
    (["run", "-m", "seed=0,1", "hydra.launcher.n_jobs=-5"], "hydra.launcher.n_jobs: expected an integer >= 1"),
    (["run", "hydra.run.dir="], "hydra.run.dir: expected a folder for the outputs"),
    (["run", "-m", "seed=0,1", "hydra.sweep.dir="], "hydra.sweep.dir: expected a folder for the outputs"),
    (["run", "-m", "seed=0,1", "hydra.sweep.subdir="], "hydra.sweep.subdir: expected a folder"),
    (["run", "scenarios=[milk_allergy,milk_allergy]"], "scenarios: 'milk_allergy' is listed twice"),
    (["check", "scenarios=[milk_allergy,milk_allergy]"], "scenarios: 'milk_allergy' is listed twice"),
]


@pytest.mark.parametrize("args,expected", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_an_override_that_cannot_run_is_one_line_and_exit_2(cli, tmp_path, args, expected):
    r = cli(*args, timeout=120)
    assert r.returncode == 2, r.stderr[-2000:]
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.startswith("mtsbench: ") and expected in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []                     # nothing written: no outputs/, no multirun/


@pytest.mark.parametrize("text", ["hydra: [unclosed\n", "just text\n", "", "hydra:\n  overrides: 3\n"])
def test_resume_of_a_sweep_with_a_corrupt_multirun_yaml_is_one_line(cli, tmp_path, text):
    (tmp_path / "sw").mkdir()
    (tmp_path / "sw" / "multirun.yaml").write_text(text)
    r = cli("run", "-m", "--resume", "sw")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "--resume sw: sw/multirun.yaml" in r.stderr and "expected the multirun.yaml Hydra wrote" in r.stderr
    assert sorted(p.name for p in (tmp_path / "sw").iterdir()) == ["multirun.yaml"]


def test_a_scenario_file_reached_twice_is_refused(cli, tmp_path):
    """By name and by path (not the same text: only the files tell)."""
    from mtsbench.core.resources import SCENARIO_DIR

    r = cli("check", f"scenarios=[milk_allergy,{SCENARIO_DIR / 'milk_allergy.yaml'}]")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "named twice" in r.stderr and "expected each scenario once" in r.stderr


def test_a_glob_over_a_group_still_sweeps(cli, tmp_path):
    r = cli("run", "-m", "attention=glob(const*)", "seed=range(0,2)", "scenarios=[milk_allergy]",
            "hydra.sweep.dir=sw")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "#1: attention=constant seed=1" in r.stderr and "2 jobs done" in r.stderr


def test_generate_refuses_days_beyond_the_clock(cli, tmp_path):
    r = cli("generate", "--days", "100000", "--out", "x.yaml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "from 0 to 36500" in r.stderr, r.stderr
    assert not (tmp_path / "x.yaml").exists()


def test_the_generators_cap_is_the_clocks():
    from mtsbench.core.params import expected, parameters
    from mtsbench.scenario.generate import GenerateSpec

    assert expected(parameters(GenerateSpec)["days"].type) == f"an integer from 0 to {times.MAX_DAYS}"


def test_the_preload_estimate_refuses_only_what_cannot_fit():
    from omegaconf import OmegaConf

    total = config_rules.physical_memory()
    each = 1024 * 4 * config_rules.PRELOAD_COPIES + config_rules.PRELOAD_OVERHEAD
    fits = OmegaConf.create({"preload": {"memories": 100_000}, "embedder": {"dim": 1024}})
    config_rules._preload_fits(fits)                          # 2 GiB: fits any machine that runs the suite
    too_many = OmegaConf.create({"preload": {"memories": total // each + 1}, "embedder": {"dim": 1024}})
    with pytest.raises(config_rules.ConfigError, match=f"expected at most {total // each:,} on this machine"):
        config_rules._preload_fits(too_many)
