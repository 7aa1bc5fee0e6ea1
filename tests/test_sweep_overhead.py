"""A sweep's fixed cost per job (issue 13): its jobs are checked before launching without
composing each one; Hydra's sweeper does not compose them all once more; a single run
composes its config once; and a bad value still stops the sweep with its one line."""

import json

import pytest
from omegaconf import OmegaConf, open_dict

import mtsbench.config as config
from mtsbench.cli import main
from mtsbench.errors import ConfigError


@pytest.fixture
def compositions(monkeypatch):
    """Every override list ``config._compose_full`` composes, in order."""
    seen: list[list[str]] = []
    original = config._compose_full

    def counting(overrides, *args, **kwargs):
        seen.append(list(overrides))
        return original(overrides, *args, **kwargs)

    monkeypatch.setattr(config, "_compose_full", counting)
    return seen


def test_a_sweep_of_one_group_is_checked_with_one_composition(compositions):
    cfg = config.check_run(["-m", "experiment=ablation", "scenarios=[milk_allergy]"])
    assert len(compositions) == 1 and "MULTIRUN" in str(cfg.hydra.mode)
    compositions.clear()
    config.check_run(["-m", "seed=0,1,2", "llm.noise=0.1,0.2", "ablate=none,tiers,arousal"])
    assert len(compositions) == 1
    compositions.clear()                        # ablate=arousal chooses arousal=none, which has no r
    with pytest.raises(ConfigError, match="no such key 'arousal.r'"):
        config.check_run(["-m", "ablate=none,tiers,arousal", "arousal.r=0.3"])
    assert [o for o in compositions[-1] if o.startswith("ablate")] == ["ablate=arousal"]


def test_a_key_under_a_swept_group_composes_each_option(compositions):
    with pytest.raises(ConfigError, match=r"no such key 'arousal.r' \(arousal=knn has: k, gain\)"):
        config.check_run(["-m", "arousal=radius,knn", "arousal.r=0.3"])


@pytest.mark.parametrize("argv,words", [
    (["-m", "seed=0,1", "llm.noise=0.1,-1"], "llm.noise: expected a number from 0 to 1, got -1"),
    (["-m", "seed=0,1", "agent.rebalance_every=5,0"], "agent.rebalance_every: expected an integer >= 1, got 0"),
    (["-m", "ablate=none,tierz"], "did you mean 'tiers'?"),
    (["-m", "seed=0,1", "retrieval.kk=3,4"], "no such key 'retrieval.kk'"),
])
def test_every_value_is_still_checked(compositions, argv, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        config.check_run(argv)


def test_an_option_of_ones_own_is_checked_from_its_file(tmp_path, compositions):
    (tmp_path / "long_decay").mkdir()
    (tmp_path / "long_decay" / "bad.yaml").write_text(
        "_target_: mtsbench.mechanisms.decay.Exponential\nhalf_life: -3.0\n", encoding="utf-8")
    (tmp_path / "ablate").mkdir()
    (tmp_path / "ablate" / "mine.yaml").write_text(
        "# @package _global_\ndefaults:\n  - override /long_decay: bad\n", encoding="utf-8")
    for sweep in ("long_decay=power_law,bad", "ablate=none,mine"):
        with pytest.raises(ConfigError, match="long_decay.half_life: expected a number > 0, got -3.0"):
            config.check_run(["-m", "--config-dir", str(tmp_path), sweep])
    assert len(compositions) == 2               # the first job of each, nothing more


def test_the_sweeper_leaves_composing_to_the_jobs_once_checked(monkeypatch):
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra_plugins.mtsbench_launcher.checked_sweeper import CheckedSweeper

    from mtsbench import sweep

    calls = []
    monkeypatch.setattr(BasicSweeper, "validate_batch_is_legal", lambda self, batch: calls.append(batch))
    sweeper = CheckedSweeper.__new__(CheckedSweeper)
    monkeypatch.setattr(sweep, "prechecked", True)
    sweeper.validate_batch_is_legal([["seed=0"]])
    assert calls == []
    monkeypatch.setattr(sweep, "prechecked", False)
    sweeper.validate_batch_is_legal([["seed=0"]])
    assert calls == [[["seed=0"]]]


def test_a_single_run_composes_its_config_once(tmp_path, monkeypatch, capsys):
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    loads = []
    original = ConfigLoaderImpl.load_configuration

    def counting(self, *args, **kwargs):
        loads.append(kwargs.get("run_mode"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counting)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main(["run", "scenarios=milk_allergy", f"hydra.run.dir={out}"]) == 0, capsys.readouterr().err
    assert len(loads) == 1
    saved = OmegaConf.load(out / ".hydra" / "config.yaml")
    assert saved.scenarios == "milk_allergy"    # as Hydra composed it; the run reads it as a list
    hydra = OmegaConf.load(out / ".hydra" / "hydra.yaml").hydra
    assert str(hydra.mode) == "RUN" and "hydra.mode=RUN" in hydra.overrides.hydra
    assert json.loads((out / "summary.json").read_text())["scenarios_done"] == ["milk_allergy"]


def test_two_swept_groups_are_checked_together(compositions):
    with pytest.raises(ConfigError, match="system=bm25 ranks by BM25 alone"):
        config.check_run(["-m", "system=mts,bm25", "retrieval=dense,hybrid"])


def test_an_option_interpolating_a_top_level_key_is_checked_from_its_file(compositions):
    # llm/mock.yaml says `seed: ${seed}`: read inside its own node that would recurse
    cfg = config.check_run(["-m", "experiment=real_llm"])    # sweeps llm: mock,recorded
    assert "MULTIRUN" in str(cfg.hydra.mode) and len(compositions) <= 2


# Evaluated in the worker: a builtin is pickled by name, so the worker needs no import of this
# test module (under `make test` the repository is not on a forked worker's sys.path).
IN_WORKER = ("('mtsbench.runner' in __import__('sys').modules and 'pandas' in __import__('sys').modules"
             " and __import__('gc').get_freeze_count() > 0, __import__('os').getpid())")


def test_a_lane_worker_is_forked_with_what_a_job_imports():
    import os

    from joblib.externals.loky.process_executor import ProcessPoolExecutor

    from mtsbench import workers

    context = workers.context()
    try:
        assert context is not None and workers._running()
        executor = ProcessPoolExecutor(max_workers=1, context=context)
        preloaded, pid = executor.submit(eval, IN_WORKER).result(timeout=120)
        executor.shutdown(wait=True)
    finally:
        workers.stop()
    assert preloaded and pid != os.getpid()
    assert not workers._running()


@pytest.mark.parametrize("argv, started", [(["-m", "seed=0,1"], True), (["--resume", "multirun/x"], True),
                                           (["-m", "hydra/launcher=local", "seed=0,1"], True),
                                           (["seed=1"], False), (["-m", "hydra/launcher=ray_cluster"], False)])
def test_the_workers_server_starts_early_only_for_a_sweep_on_this_machine(monkeypatch, argv, started):
    from mtsbench import workers

    calls = []
    monkeypatch.setattr(workers, "context", lambda: calls.append(1))
    workers.start(argv)
    assert bool(calls) == started


def _composed_both_ways(monkeypatch, compose):
    """``compose()`` with Hydra's own interpolation map and with ``hydra_speedups``' one."""
    from hydra._internal import defaults_list

    from mtsbench import hydra_speedups

    hydra_speedups.install()
    patched = defaults_list._create_interpolation_map
    original = patched.original
    fast = compose()
    monkeypatch.setattr(defaults_list, "_create_interpolation_map", original)
    plain = compose()
    monkeypatch.setattr(defaults_list, "_create_interpolation_map", patched)
    return fast, plain


@pytest.mark.parametrize("overrides", [[], ["ablate=tiers"], ["preset=flat_rag", "seed=3"],
                                       ["experiment=decay_curves", "long_decay=exponential"],
                                       ["system=bm25", "retrieval=bm25"]])
def test_composition_with_the_cheaper_interpolation_map_is_hydras(monkeypatch, overrides):
    fast, plain = _composed_both_ways(monkeypatch, lambda: config._hydra_compose(overrides))
    assert OmegaConf.to_yaml(fast) == OmegaConf.to_yaml(plain)


def test_an_interpolated_default_still_resolves(tmp_path, monkeypatch):
    from hydra import compose, initialize_config_dir

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "config.yaml").write_text("defaults:\n  - a: x\n  - b: ${a}_y\n  - _self_\n")
    (tmp_path / "a" / "x.yaml").write_text("v: 1\n")
    (tmp_path / "a" / "z.yaml").write_text("v: 2\n")
    (tmp_path / "b" / "x_y.yaml").write_text("w: 1\n")
    (tmp_path / "b" / "z_y.yaml").write_text("w: 2\n")

    def composed():
        with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
            return OmegaConf.to_container(compose(config_name="config", overrides=["a=z"]))

    fast, plain = _composed_both_ways(monkeypatch, composed)
    assert fast == plain == {"a": {"v": 2}, "b": {"w": 2}}


def test_a_lane_job_returns_its_status_without_its_configs(monkeypatch):
    from types import SimpleNamespace

    import hydra.core.utils
    from hydra.core.singleton import Singleton
    from hydra.core.utils import JobReturn, JobStatus
    from hydra_plugins.mtsbench_launcher import progress_joblib
    from omegaconf.basecontainer import BaseContainer

    from mtsbench import sweep

    full = JobReturn(overrides=["seed=1"], cfg=OmegaConf.create({"seed": 1}), hydra_cfg=OmegaConf.create({}),
                     status=JobStatus.COMPLETED, _return_value=None)
    composed = OmegaConf.create({"hydra": {"job": {"name": "mtsbench"}}})
    loader = SimpleNamespace(load_sweep_config=lambda config, overrides: composed)
    monkeypatch.setattr(hydra.core.utils, "run_job", lambda **kwargs: full)
    monkeypatch.setattr(Singleton, "_instances", Singleton._instances)      # Hydra's state as it was, after
    monkeypatch.setattr(BaseContainer, "_resolvers", BaseContainer._resolvers)
    monkeypatch.setattr(sweep, "lane", {"hydra_context": SimpleNamespace(config_loader=loader), "config": None,
                                        "task_function": None, "state": Singleton.get_state()})
    ret = progress_joblib._lane_job(1, ["seed=1"])
    assert ret.cfg is None and ret.hydra_cfg is None
    assert ret.overrides == ["seed=1"] and ret.status == JobStatus.COMPLETED and ret.return_value is None
    assert composed.hydra.job.num == 1 and composed.hydra.job.id == "mtsbench_1"


def test_a_lanes_first_job_is_composed_by_the_sweeps_process_and_run_as_sent(monkeypatch):
    """Each lane's first job comes composed (as its worker would compose it; None if it does
    not compose: the worker fails it as before), and the worker runs that config."""
    from types import SimpleNamespace

    import hydra.core.utils
    from hydra.core.singleton import Singleton
    from hydra_plugins.mtsbench_launcher import progress_joblib
    from omegaconf.basecontainer import BaseContainer

    from mtsbench import sweep

    def load_sweep_config(config, overrides):
        if overrides == ["seed=bad"]:
            raise ValueError("does not compose")
        return OmegaConf.create({"hydra": {"job": {"name": "mtsbench"}}, "overrides": overrides})

    launcher = SimpleNamespace(hydra_context=SimpleNamespace(config_loader=SimpleNamespace(
        load_sweep_config=load_sweep_config)), config=None)
    composed = progress_joblib.ProgressJoblibLauncher._composed(launcher, 3, ["seed=3"])
    assert composed.overrides == ["seed=3"] and composed.hydra.job.num == 3 and composed.hydra.job.id == "mtsbench_3"
    assert progress_joblib.ProgressJoblibLauncher._composed(launcher, 4, ["seed=bad"]) is None

    ran = []
    monkeypatch.setattr(hydra.core.utils, "run_job", lambda **kwargs: ran.append(kwargs["config"]) or SimpleNamespace())
    monkeypatch.setattr(Singleton, "_instances", Singleton._instances)      # Hydra's state as it was, after
    monkeypatch.setattr(BaseContainer, "_resolvers", BaseContainer._resolvers)
    unused = SimpleNamespace(load_sweep_config=None)                         # composing again would fail
    monkeypatch.setattr(sweep, "lane", {"hydra_context": SimpleNamespace(config_loader=unused), "config": None,
                                        "task_function": None, "state": Singleton.get_state()})
    progress_joblib._lane_job(3, ["seed=3"], composed)
    assert ran == [composed]


PARENT = """
import sys
import mtsbench.sweep as sweep
seen = []
manifest = sweep.write_manifest
def launching(*args, **kwargs):     # the jobs are about to start: what has this process imported?
    seen.extend(["launching", *(m for m in ("pandas", "mtsbench.runner") if m in sys.modules)])
    return manifest(*args, **kwargs)
sweep.write_manifest = launching
from mtsbench.cli import main
code = main(sys.argv[1:])
print(code, *seen)
"""


def test_the_sweeps_own_process_imports_no_pandas_nor_scenario_models(tmp_path):
    """What a job needs is imported by the workers' server, beside the checks, not before them
    (by the time the jobs start; the sweep's end imports pandas to write the report)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PARENT, "run", "-m", "seed=0,1", "scenarios=[milk_allergy]",
                           f"hydra.sweep.dir={tmp_path / 'sweep'}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == ["0", "launching"], done.stderr
    assert sorted(p.name for p in (tmp_path / "sweep").glob("*/summary.json")) == ["summary.json"] * 2


def _loader(keep: bool):
    from mtsbench.hydra_app import config_loader
    from mtsbench.hydra_speedups import keep_files

    with config.searching(()):
        loader = config_loader()
    if keep:
        keep_files(loader)
    return loader


def test_a_loader_keeping_its_files_composes_each_job_as_a_fresh_one(tmp_path):
    """No job's overrides, nor a change to a composed config, reach the next composition;
    the merges it starts from are those a fresh loader would make."""
    from hydra.types import RunMode

    kept = _loader(keep=True)
    ablations = [[f"ablate={a}", "experiment=ablation"] for a in config.groups()["ablate"]]
    jobs = [["ablate=tiers", "seed=3", "llm.noise=0.2"], ["ablate=none"], ["preset=flat_rag", "retrieval=hybrid"],
            ["ablate=tiers"], [], *ablations, *ablations[::-1], ["ablate=summarize", "+summarize.bogus=1"],
            ["ablate=summarize"]]
    for overrides in jobs:
        try:
            cfg = kept.load_configuration(config_name="config", overrides=overrides, run_mode=RunMode.RUN)
        except Exception as e:  # noqa: BLE001 - as a fresh loader fails
            with pytest.raises(type(e)):
                _loader(keep=False).load_configuration(config_name="config", overrides=overrides,
                                                       run_mode=RunMode.RUN)
            continue
        fresh = _loader(keep=False).load_configuration(config_name="config", overrides=overrides,
                                                       run_mode=RunMode.RUN)
        assert OmegaConf.to_yaml(cfg) == OmegaConf.to_yaml(fresh)
        with open_dict(cfg):
            cfg.seed = 99                               # changed: the job's own copy
            cfg.tiers.clear()
    assert len(kept.repository.kept) > 20 and kept.merged          # files parsed, merges kept


def test_a_sweeps_job_configs_are_hydras_composition_of_their_overrides(cli, tmp_path):
    from hydra import compose, initialize_config_dir

    from mtsbench.resources import CONFIG_DIR

    sweep = tmp_path / "sweep"
    done = cli("run", "-m", "ablate=none,tiers,arousal", "seed=0,1", "scenarios=[milk_allergy]", f"hydra.sweep.dir={sweep}")
    assert done.returncode == 0, done.stderr
    jobs = sorted(sweep.glob("*/.hydra"))
    assert len(jobs) == 6
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        for job in jobs:
            overrides = list(OmegaConf.load(job / "overrides.yaml"))
            assert (job / "config.yaml").read_text() == OmegaConf.to_yaml(compose("config", overrides)), job


def test_a_run_of_one_scenario_is_aggregated_once_and_as_before(cli, tmp_path, monkeypatch):
    """Its overall aggregate and cost are its scenario's, computed once (the files are as
    before: compared with a sweep's job folders before the change)."""
    from mtsbench import outputs

    run = tmp_path / "run"
    assert cli("run", "scenarios=[milk_allergy]", f"hydra.run.dir={run}").returncode == 0
    calls = []
    original = outputs.aggregate
    monkeypatch.setattr(outputs, "aggregate", lambda *a, **k: calls.append(1) or original(*a, **k))
    outputs.evaluate_dir(run)
    once = json.loads((run / "summary.json").read_text())
    assert len(calls) == 1
    scenario, overall = once["scenarios"]["milk_allergy"], once["overall"]
    assert {k: overall[k] for k in scenario if k not in ("processes", "llm")} == \
        {k: v for k, v in scenario.items() if k not in ("processes", "llm")}
    assert once["cost"]["overall"] == once["cost"]["scenarios"]["milk_allergy"]
