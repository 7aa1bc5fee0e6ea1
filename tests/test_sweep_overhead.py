"""A sweep's checks and launch path (issues 13, 26): every value of every swept key is
composed once before launching (Hydra's compose API), not every job; a bad value stops the
sweep with its one line, and a job composed by that check is not composed again by the
sweeper; Hydra is used through its public API only (``hydra.main``, a sweeper plugin and a
launcher plugin)."""

import json
import os

import pytest
from omegaconf import OmegaConf, open_dict

import mtsbench.config.composition as composition
from mtsbench.harness.preflight import check_run
from mtsbench.cli import main
from mtsbench.errors import ConfigError


@pytest.fixture
def compositions(monkeypatch):
    """Every override list ``composition.compose_full`` composes, in order."""
    seen: list[list[str]] = []
    original = composition.compose_full

    def counting(overrides, *args, **kwargs):
        seen.append(list(overrides))
        return original(overrides, *args, **kwargs)

    monkeypatch.setattr(composition, "compose_full", counting)
    return seen


def test_a_sweep_composes_each_swept_value_once_not_each_job(compositions):
    cfg = check_run(["-m", "experiment=ablation", "scenarios=[milk_allergy]"])
    ablations = OmegaConf.select(cfg, "hydra.sweeper.params.ablate").split(",")
    assert "MULTIRUN" in str(cfg.hydra.mode) and len(ablations) > 10
    assert sorted(o for c in compositions for o in c if o.startswith("ablate=")) == \
        sorted(f"ablate={a}" for a in ablations)      # each once, plus the first job (no ablate)
    compositions.clear()
    check_run(["-m", "seed=0,1,2", "llm.noise=0.1,0.2", "ablate=none,tiers,arousal"])
    assert len(compositions) == 1 + 2       # the first job, each other option; values on its copy: 3, not 18
    compositions.clear()
    check_run(["-m", "seed=range(0,50)", "scenarios=[milk_allergy]"])
    assert len(compositions) == 1
    compositions.clear()                        # ablate=arousal chooses arousal=none, which has no r
    with pytest.raises(ConfigError, match="no such key 'arousal.r'"):
        check_run(["-m", "ablate=none,tiers,arousal", "arousal.r=0.3"])
    assert [o for o in compositions[-1] if o.startswith("ablate")] == ["ablate=arousal"]


def test_a_key_under_a_swept_group_composes_each_option(compositions):
    with pytest.raises(ConfigError, match=r"no such key 'arousal.r' \(arousal=knn has: k, gain, perceived; arousal=radius has it"):
        check_run(["-m", "arousal=radius,knn", "arousal.r=0.3"])


@pytest.mark.parametrize("argv,words", [
    (["-m", "seed=0,1", "llm.noise=0.1,-1"], "llm.noise: expected a number from 0 to 1, got -1"),
    (["-m", "seed=0,1", "agent.rebalance_every=5,0"], "agent.rebalance_every: expected an integer >= 1, got 0"),
    (["-m", "ablate=none,tierz"], "did you mean 'tiers'?"),
    (["-m", "seed=0,1", "retrieval.kk=3,4"], "no such key 'retrieval.kk'"),
    (["-m", "seed=0,1", "retrieval.candidates=8,0"], "retrieval.candidates: expected an integer >= 1, got 0"),
])
def test_every_value_is_still_checked(compositions, argv, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        check_run(argv)


def test_an_option_of_ones_own_is_checked_from_its_file(tmp_path, compositions):
    (tmp_path / "long_decay").mkdir()
    (tmp_path / "long_decay" / "bad.yaml").write_text(
        "_target_: mtsbench.mechanisms.decay.Exponential\nhalf_life: -3.0\n", encoding="utf-8")
    (tmp_path / "ablate").mkdir()
    (tmp_path / "ablate" / "mine.yaml").write_text(
        "# @package _global_\ndefaults:\n  - override /long_decay: bad\n", encoding="utf-8")
    for sweep in ("long_decay=power_law,bad", "ablate=none,mine"):
        with pytest.raises(ConfigError, match="long_decay.half_life: expected a number > 0, got -3.0"):
            check_run(["-m", "--config-dir", str(tmp_path), sweep])


def test_a_single_run_is_hydras_run_of_its_overrides(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main(["run", "scenarios=milk_allergy", f"hydra.run.dir={out}"]) == 0, capsys.readouterr().err
    saved = OmegaConf.load(out / ".hydra" / "config.yaml")
    assert saved.scenarios == "milk_allergy"    # as Hydra composed it; the run reads it as a list
    hydra = OmegaConf.load(out / ".hydra" / "hydra.yaml").hydra
    assert str(hydra.mode) == "RUN" and "hydra.mode=RUN" in hydra.overrides.hydra
    assert json.loads((out / "summary.json").read_text())["scenarios_done"] == ["milk_allergy"]


def test_two_swept_groups_are_checked_together(compositions):
    with pytest.raises(ConfigError, match="system=bm25 ranks by BM25 alone"):
        check_run(["-m", "system=mts,bm25", "retrieval=dense,hybrid"])


def test_an_option_interpolating_a_top_level_key_is_composed(compositions):
    # llm/mock.yaml says `seed: ${seed}`: read inside its own node that would recurse
    cfg = check_run(["-m", "experiment=real_llm"])    # sweeps llm: mock,recorded
    assert "MULTIRUN" in str(cfg.hydra.mode) and ["llm=recorded", "experiment=real_llm"] in [c[:2] for c in compositions]


def test_a_lane_job_returns_its_status_without_its_configs(monkeypatch):
    from types import SimpleNamespace

    import hydra.core.utils
    from hydra.core.singleton import Singleton
    from hydra.core.utils import JobReturn, JobStatus
    from hydra_plugins.mtsbench_launcher import progress_joblib
    from omegaconf.basecontainer import BaseContainer

    from mtsbench.harness import sweep

    full = JobReturn(overrides=["seed=1"], cfg=OmegaConf.create({"seed": 1}), hydra_cfg=OmegaConf.create({}),
                     status=JobStatus.COMPLETED, _return_value=None)
    composed = OmegaConf.create({"hydra": {"job": {"name": "mtsbench"}}})
    loader = SimpleNamespace(load_sweep_config=lambda config, overrides: composed)
    monkeypatch.setattr(hydra.core.utils, "run_job", lambda **kwargs: full)
    monkeypatch.setattr(Singleton, "_instances", Singleton._instances)      # Hydra's state as it was, after
    monkeypatch.setattr(BaseContainer, "_resolvers", BaseContainer._resolvers)
    lane = sweep.Lane(hydra_context=SimpleNamespace(config_loader=loader), config=None, task_function=None,
                      state=Singleton.get_state())
    monkeypatch.setattr(sweep, "lane", lambda: lane)
    ret = progress_joblib._lane_job(1, ["seed=1"])
    assert ret.cfg is None and ret.hydra_cfg is None
    assert ret.overrides == ["seed=1"] and ret.status == JobStatus.COMPLETED and ret.return_value is None
    assert composed.hydra.job.num == 1 and composed.hydra.job.id == "mtsbench_1"


VALIDATED = """
import sys
from hydra.plugins.sweeper import Sweeper
seen = []
validate = Sweeper.validate_batch_is_legal
def validating(self, batch):        # the jobs the sweeper composes before launching them
    seen.extend(" ".join(job) for job in batch)
    return validate(self, batch)
Sweeper.validate_batch_is_legal = validating
from mtsbench.cli import main
code = main(sys.argv[1:])
print(code, *seen, sep="\\n")
"""


def test_the_sweeper_composes_only_the_jobs_the_check_did_not(tmp_path):
    """``mtsbench run``'s check composed each ablation (the seed at its first value); the other
    jobs (a seed is a value, checked on a copy of a config) are composed before launching by
    the local launcher, in its lanes, so the sweep's own process composes none of them; a
    launcher without that (Hydra's basic sweeper here composes every job) leaves them to
    the sweeper, as Hydra's basic sweeper composed every job; the jobs are the basic sweeper's."""
    import subprocess
    import sys

    def sweep(*sweeper):
        out = tmp_path / ("basic" if sweeper else "grid")
        done = subprocess.run([sys.executable, "-c", VALIDATED, "run", "-m", "ablate=none,tiers", "seed=0,1",
                               "scenarios=[milk_allergy]", f"hydra.sweep.dir={out}", *sweeper], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        assert done.stdout.splitlines()[0] == "0", done.stderr
        return done.stdout.splitlines()[1:], json.loads((out / "jobs.json").read_text())

    composed, jobs = sweep()
    assert composed == []
    assert [j["overrides"] for j in jobs] == [[f"ablate={a}", f"seed={s}", "scenarios=[milk_allergy]"]
                                              for a in ("none", "tiers") for s in (0, 1)]
    every, basic_jobs = sweep("hydra/sweeper=basic")
    assert basic_jobs == jobs and len(every) == 4


def test_the_check_keeps_each_job_it_composed_as_hydra_composes_it(tmp_path):
    """Each ablation is a job of the sweep, composed with the Hydra overrides the sweep's Hydra
    has (the folder pinned by ``mtsbench run``, ``hydra.mode=MULTIRUN`` that Hydra adds for
    ``-m``), kept by its task overrides; a first job composed before those were known is not kept."""
    from pathlib import Path

    from mtsbench.harness.preflight import pin_folder

    composed: dict = {}
    cfg = check_run(["-m", "experiment=ablation", "scenarios=[milk_allergy]", f"hydra.sweep.dir={tmp_path}"],
                    set(), composed)
    ablations = OmegaConf.select(cfg, "hydra.sweeper.params.ablate").split(",")
    jobs = [(f"ablate={a}", "experiment=ablation", "scenarios=[milk_allergy]") for a in ablations]
    assert set(jobs) <= set(composed)
    assert all(list(composed[j].hydra.overrides.hydra) == [f"hydra.sweep.dir={tmp_path}"] for j in jobs)
    composed.clear()
    cfg = check_run(["-m", "ablate=none,tiers"], set(), composed)
    pinned = pin_folder(cfg, "hydra.sweep.dir", Path(str(cfg.hydra.sweep.dir)))
    assert list(composed) == [("ablate=tiers",)] and len(pinned) == 1
    assert list(composed["ablate=tiers",].hydra.overrides.hydra) == [*pinned, "hydra.mode=MULTIRUN"]


def test_a_config_is_run_as_composed_only_when_composed_from_the_same_inputs():
    from mtsbench.harness.sweep import reusable

    def composed(hydra, task, name="mtsbench"):
        return OmegaConf.create({"hydra": {"overrides": {"hydra": hydra, "task": task},
                                           "job": {"name": name, "config_name": "config"},
                                           "runtime": {"cwd": "/w", "config_sources": [{"path": "p"}]}}})

    master = composed(["hydra.sweep.dir=x"], ["seed=0,1"])
    assert reusable(composed(["hydra.sweep.dir=x"], ["seed=1"]), master, ["seed=1"])
    assert not reusable(composed(["hydra.sweep.dir=x"], ["seed=1"]), master, ["seed=2"])
    assert not reusable(composed([], ["seed=1"]), master, ["seed=1"])     # Hydra added an override of its own
    assert not reusable(composed(["hydra.sweep.dir=x"], ["seed=1"], name="app"), master, ["seed=1"])


REUSED = """
import sys
import mtsbench.harness.sweep as sweep
seen = []
reusable = sweep.reusable
def judged(*args):                  # the launcher's verdict on each config the check composed
    seen.append(reusable(*args))
    return seen[-1]
sweep.reusable = judged
from mtsbench.cli import main
print(main(sys.argv[1:]), *seen)
"""


def test_a_job_composed_by_the_check_runs_on_that_config(tmp_path):
    """Job 1 (``ablate=tiers``, composed by the check) runs on the check's config; job 0 (the
    first job, composed before Hydra's ``hydra.mode=MULTIRUN`` was known) is composed by Hydra
    in its lane: their ``.hydra/`` differ only where the jobs do."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", REUSED, "run", "-m", "ablate=none,tiers", "scenarios=[milk_allergy]",
                           f"hydra.sweep.dir={tmp_path / 'sweep'}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == ["0", "True"], done.stderr
    first, second = (OmegaConf.load(tmp_path / "sweep" / n / ".hydra" / "hydra.yaml").hydra for n in "01")
    assert list(second.overrides.hydra) == list(first.overrides.hydra) == \
        [f"hydra.sweep.dir={tmp_path / 'sweep'}", "hydra.mode=MULTIRUN"]
    for job in (first, second):
        for key in ("overrides.task", "job.override_dirname", "job.id", "job.num", "runtime.output_dir",
                    "runtime.choices.ablate", "runtime.choices.tiers"):
            parent, _, leaf = key.rpartition(".")
            del OmegaConf.select(job, parent)[leaf]
    assert first == second


class _Inline:
    """An executor running each task at once, in this process (a lane without a worker)."""

    def __init__(self, lane: int, seen: list) -> None:
        self.lane, self.seen = lane, seen

    def submit(self, fn, *args):
        from concurrent.futures import Future

        future = Future()
        try:
            future.set_result(fn(self.lane, *args))
        except Exception as e:  # noqa: BLE001 - the future holds it, as a worker's does
            future.set_exception(e)
        return future


def test_the_lanes_adopt_the_workers_started_before_hydra():
    """The workers started while the command was checked become the first lanes, each given
    what the jobs share as its first task; those beyond the lanes are left to the command."""
    from hydra_plugins.mtsbench_launcher import progress_joblib

    class Recording:
        def __init__(self):
            self.tasks = []

        def submit(self, fn, *args):
            self.tasks.append((fn, args))

    started = [Recording(), Recording(), Recording()]
    first, second, third = started
    lanes = progress_joblib._Lanes(2, start=("context", "config", "task", "state"), adopt=started)
    assert lanes.executors == [first, second] and started == [third]
    for worker in (first, second):
        assert [fn for fn, _ in worker.tasks] == [os.getpid, progress_joblib._set_lane]
        assert worker.tasks[1][1] == ("context", "config", "task", "state")


def test_the_lanes_compose_every_job_first_and_raise_the_first_that_fails(monkeypatch):
    """Job ``num`` of a batch from ``first`` is composed in lane (num - first) mod n; all are
    composed before the first failure (in job order) is raised."""
    from hydra_plugins.mtsbench_launcher import progress_joblib

    seen: list = []

    def composing(lane, num, overrides):
        seen.append((lane, num))
        if overrides == ["bad"]:
            raise ValueError(f"job {num} does not compose")

    monkeypatch.setattr(progress_joblib, "_lane_compose", composing)
    lanes = progress_joblib._Lanes(2, start=())
    lanes.executors = [_Inline(0, seen), _Inline(1, seen)]
    lanes.compose([(5, ["ok"]), (6, ["ok"]), (7, ["ok"])], first=5)
    assert seen == [(0, 5), (1, 6), (0, 7)]
    seen.clear()
    with pytest.raises(ValueError, match="job 3 does not compose"):
        lanes.compose([(2, ["ok"]), (3, ["bad"]), (4, ["bad"]), (7, ["ok"])], first=1)
    assert seen == [(1, 2), (0, 3), (1, 4), (0, 7)]


def test_the_grid_lists_jobs_as_hydras_basic_sweeper_does():
    """Parameters first, the command line after; a key given twice keeps its first place
    with the last values; a fixed override is in every job; batches keep the order."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra_plugins.mtsbench_sweeper.grid_sweeper import batches, grid

    parsed = OverridesParser.create().parse_overrides(["ablate=none,tiers", "seed=range(0,2)", "scenarios=[a,b]",
                                                       "ablate=arousal,tiers,none", "+x=1"])
    jobs = grid(parsed)
    assert jobs == [[f"ablate={a}", f"seed={s}", "scenarios=[a,b]", "+x=1"]
                    for a in ("arousal", "tiers", "none") for s in (0, 1)]
    assert batches(jobs, 4) == [jobs[:4], jobs[4:]] and batches(jobs, None) == [jobs]


PARENT = """
import sys
import mtsbench.harness.sweep as sweep
seen = []
manifest = sweep.write_manifest
def launching(*args, **kwargs):     # the jobs are about to start: what has this process imported?
    seen.extend(["launching", *(m for m in ("pandas", "mtsbench.harness.runner") if m in sys.modules)])
    return manifest(*args, **kwargs)
sweep.write_manifest = launching
from mtsbench.cli import main
code = main(sys.argv[1:])
print(code, *seen)
"""


def test_the_sweeps_own_process_imports_no_pandas_nor_scenario_models(tmp_path):
    """What a job needs is imported by the lanes' workers, not by the sweep's own process
    (by the time the jobs start; the sweep's end imports pandas to write the report)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PARENT, "run", "-m", "seed=0,1", "scenarios=[milk_allergy]",
                           f"hydra.sweep.dir={tmp_path / 'sweep'}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.split() == ["0", "launching"], done.stderr
    assert sorted(p.name for p in (tmp_path / "sweep").glob("*/summary.json")) == ["summary.json"] * 2


def test_a_sweeps_job_configs_are_hydras_composition_of_their_overrides(cli, tmp_path):
    from hydra import compose, initialize_config_dir

    from mtsbench.core.resources import CONFIG_DIR

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
    from mtsbench.harness import finish as outputs

    run = tmp_path / "run"
    assert cli("run", "scenarios=[milk_allergy]", f"hydra.run.dir={run}").returncode == 0
    calls = []
    original = outputs.aggregate
    monkeypatch.setattr(outputs, "aggregate", lambda *a, **k: calls.append(1) or original(*a, **k))
    outputs.evaluate_dir(run)
    once = json.loads((run / "summary.json").read_text())
    assert len(calls) == 1
    scenario, overall = once["scenarios"]["milk_allergy"], once["overall"]
    own = ("processes", "llm", "dataset")          # a scenario's alone: its data set names the scenario
    assert {k: overall[k] for k in scenario if k not in own} == {k: v for k, v in scenario.items() if k not in own}
    assert once["cost"]["overall"] == once["cost"]["scenarios"]["milk_allergy"]


def test_the_package_uses_libraries_through_their_public_api_only():
    """No module of mtsbench or its Hydra plugins imports a library's private module or name
    (a dotted part with a leading underscore: ``hydra._internal``, ``ray._private``, a plugin's
    ``_launcher_util``, ``from ray import _private``), which any release may change; the
    project's own modules (relative or ``mtsbench.``) are its own. Also as text, for a name
    imported through ``importlib``."""
    import ast
    import importlib
    from pathlib import Path

    own = ("mtsbench", "hydra_plugins.mtsbench_launcher")
    roots = [Path(importlib.import_module(m).__file__).parent for m in own]
    sources = [p for root in roots for p in root.rglob("*.py")]
    assert len(sources) > 50
    private = []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            private += [f"{path}:{node.lineno}: {name}" for name in names
                        if not name.startswith(tuple(f"{m}." for m in own))
                        and any(part.startswith("_") and not part.startswith("__") for part in name.split("."))]
        private += [f"{path}: {word}" for word in ("hydra._internal", "._private", "_launcher_util") if word in text]
    assert private == []


def test_a_run_after_a_failed_sweep_in_the_same_process_is_not_failed(tmp_path, monkeypatch, capsys):
    """A sweep's failed jobs are its command's (``sweep.Sweep``): a single run (or a sweep) in the
    same process (a notebook, pytest) must not inherit an earlier sweep's failures and exit 1,
    even one still running around it."""
    from mtsbench.harness import sweep

    monkeypatch.chdir(tmp_path)
    earlier = sweep.Sweep(failed=[str(tmp_path / "earlier" / "0")], resume=tmp_path / "earlier")
    with sweep.running(earlier):
        assert main(["run", "scenarios=milk_allergy", f"hydra.run.dir={tmp_path / 'run'}"]) == 0, \
            capsys.readouterr().err
        assert sweep.current() is earlier
    assert sweep.current() is not earlier and sweep.current().resume is None
