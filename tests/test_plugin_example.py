"""The plug-in example (examples/plugin): its class through the protocol, the CLI run with
--config-dir, and the package installed: found through its ``mtsbench.configs`` entry point."""

import base64
import doctest
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import pandas as pd
from hydra.utils import instantiate
from omegaconf import OmegaConf

from mtsbench.systems.base import (UNSUPPORTED, Context, EventOf, Idle, MemorySystem, Observation, Query, Ranking,
                                   Tick)
from mtsbench.scenario.model import StepAttentionCheck, TierCheck

PLUGIN = Path(__file__).resolve().parent.parent / "examples" / "plugin"
PACKAGE = PLUGIN / "mtsbench_recency"


EXAMPLE = PACKAGE / "recency_system.py"      # imported from its file, as PYTHONPATH=examples/plugin would


def test_the_example_runs_through_the_protocol(monkeypatch, import_file):
    module = import_file("recency_system", EXAMPLE)
    assert doctest.testmod(module).failed == 0
    package = type(sys)("mtsbench_recency")
    package.RecencySystem = module.RecencySystem
    monkeypatch.setitem(sys.modules, "mtsbench_recency", package)       # what _target_ imports
    s = instantiate(OmegaConf.load(PACKAGE / "configs" / "system" / "recency.yaml"))
    assert isinstance(s, module.RecencySystem) and isinstance(s, MemorySystem)
    s.start(Context("plugin", texts=("I am allergic to milk", "nice weather", "what am I allergic to?")))
    assert s.retrieve(Query("p0", 0.0, "anything")).ranking == Ranking()
    assert s.observe(Observation("a", 0.0, "say", "I am allergic to milk")).memory == 0
    assert s.observe(Observation("b", 1800.0, "perceive", "nice weather")).memory == 1
    assert s.idle(Idle("i", 1800.0, 5400.0)).ranking is None
    out = s.retrieve(Query("p", 7200.0, "what am I allergic to?", k=1, depth=5))
    assert out.ranking.ids == [1, 0] and out.ranking.scores == [-1.5, -2.0]
    assert out.ranking.provenance == [("b",), ("a",)] and out.ranking.tokens == [3, 6]
    assert out.cost.scored == 2 and out.cost.tiers_searched == 1
    assert s.retrieve(Query("p", 7200.0, "x", depth=1)).ranking.ids == [1]
    s.tick(Tick("c", 7200.0))
    for check in (StepAttentionCheck("a", min=6), TierCheck("a", max=0), EventOf("a")):
        assert s.read(check) is UNSUPPORTED
    assert s.finish().cost.scored == 0 and s.waiting() == frozenset() and s.sample(("a",)) == []
    totals = s.totals()
    assert totals.memories == 2 and totals.llm["calls"] == 0 and len(totals.trace) == 2


def test_limit_forgets_the_oldest(import_file):
    s = import_file("recency_system", EXAMPLE).RecencySystem(limit=2)
    s.start(Context("plugin"))
    for i in range(4):
        s.observe(Observation(f"s{i}", 60.0 * i, "say", f"item {i}"))
    assert s.retrieve(Query("p", 600.0, "?", depth=5)).ranking.ids == [3, 2]
    assert s.totals().memories == 2


def test_the_readme_command_runs_end_to_end(cli, tmp_path):
    """The command of examples/plugin/README.md, run as a user would (needs the ``system``
    group in the runner and --config-dir options accepted by the override pre-check)."""
    out = tmp_path / "job"
    r = cli("run", "--config-dir", PACKAGE / "configs", "system=recency", "scenarios=[milk_allergy]",
            f"hydra.run.dir={out}", env={"PYTHONPATH": str(PLUGIN)})
    assert r.returncode == 0, r.stdout + r.stderr
    metrics = pd.read_csv(out / "metrics.csv")
    probes = metrics[metrics["check"] == "probe"]
    assert len(probes) >= 1 and (probes["scored"] >= 1).all() and (probes["llm_calls"] == 0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert "milk_allergy" in summary["scenarios"]
    assert summary["overall"]["recall"] is not None          # context_texts: earned recall, the headline
    header = next(line for line in (out / "report.md").read_text().splitlines() if line.startswith("Configuration"))
    assert header == "Configuration: `system=recency`, `system.limit=None`, `workload=probes`", header   # its own only


def test_the_checker_gives_a_verdict_per_check(import_file, capsys):
    """``check_component`` on the plug-in prints one verdict per check, and on a broken copy the
    check that failed and why, after running the others."""
    from mtsbench.evaluation.checks import check_component

    recency = import_file("recency_system", EXAMPLE).RecencySystem
    check_component("system", recency(limit=3))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "check_component('system', RecencySystem): 4 of 4 checks passed"
    assert [line.split() for line in lines[1:]] == [[n, "ok"] for n in ("contract", "constructor", "deterministic",
                                                                         "deepcopy")]

    class Forgetful(recency):
        def __init__(self, limit=None, window=10):
            super().__init__(limit)            # `window` is not stored
    with pytest.raises(AssertionError, match="constructor: .*must store its parameter 'window'"):
        check_component("system", Forgetful())
    out = capsys.readouterr().out
    assert "3 of 4 checks passed" in out and "  constructor    FAILED: Forgetful.__init__ must store" in out


def build_wheel(project: Path, out: Path) -> Path:
    """A wheel of the plug-in example as its ``pyproject.toml`` declares it (name, version,
    its package, its entry points), zipped by hand: no build backend to download."""
    tomllib = pytest.importorskip("tomllib")          # Python 3.11+
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    name, version = meta["name"].replace("-", "_"), meta["version"]
    info = f"{name}-{version}.dist-info"
    files: dict[str, bytes] = {}
    for package in tomllib.loads((project / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"][
            "wheel"]["packages"]:
        for f in sorted((project / package).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                files[f.relative_to(project).as_posix()] = f.read_bytes()
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in meta["entry-points"].items()).encode()
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for path, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode()
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    """The plug-in example pip-installed into this environment (as ``pip install
    examples/plugin`` would), uninstalled afterwards."""
    from mtsbench.config.search import plugin_dirs

    wheel = build_wheel(PLUGIN, tmp_path_factory.mktemp("wheel"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "install", "--no-deps", "--no-index", "--force-reinstall", str(wheel)],
                   check=True, capture_output=True, text=True)
    plugin_dirs.cache_clear()
    try:
        yield
    finally:
        subprocess.run([*pip, "uninstall", "--yes", "mtsbench-recency"], capture_output=True, text=True)
        plugin_dirs.cache_clear()


def test_an_installed_plugin_is_found_through_its_entry_point(installed_plugin, cli, tmp_path):
    """``pip install`` the plug-in, then ``mtsbench run system=recency``: no PYTHONPATH, no
    --config-dir (the entry point ``mtsbench.configs`` names its config folder)."""
    import importlib.metadata

    from mtsbench.config.search import groups, plugin_dirs

    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="mtsbench.configs")}
    assert eps.get("recency") == "mtsbench_recency.configs"
    assert any(Path(d).parts[-2:] == ("mtsbench_recency", "configs") for d in plugin_dirs())
    assert "recency" in groups()["system"] and "mts" in groups()["system"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = tmp_path / "job"
    r = subprocess.run([*cli_exe(), "run", "system=recency", "scenarios=[milk_allergy]", f"hydra.run.dir={out}"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    metrics = pd.read_csv(out / "metrics.csv")
    probes = metrics[metrics["check"] == "probe"]
    assert len(probes) >= 1 and (probes["llm_calls"] == 0).all()
    assert "mtsbench_recency.RecencySystem" in (out / ".hydra" / "config.yaml").read_text()
    # the plug-in's option is checked like a bundled one: a typo gets a did-you-mean naming it
    bad = subprocess.run([*cli_exe(), "run", "system=recenci"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env=env)
    assert bad.returncode != 0 and "did you mean 'recency'" in bad.stderr, bad.stderr
    # and a sweep over a bundled and the plug-in's system runs both
    sweep = tmp_path / "sweep"
    r = subprocess.run([*cli_exe(), "run", "-m", "system=bm25,recency", "scenarios=[milk_allergy]",
                        f"hydra.sweep.dir={sweep}"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (sweep / "0" / "metrics.csv").is_file() and (sweep / "1" / "metrics.csv").is_file()
    # and its own tuning study (docs/tuning.md): the plug-in's experiment searches the plug-in's parameter
    study = tmp_path / "study"
    r = subprocess.run([*cli_exe(), "run", "-m", "experiment=recency_frontier", "scenarios=[milk_allergy]",
                        "hydra.sweeper.n_trials=2", f"hydra.sweep.dir={study}"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    trials = pd.read_csv(study / "trials.csv")
    assert list(trials["state"]) == ["complete", "complete"], trials.to_dict("records")
    assert all(p.startswith("system.limit=") and 1 <= int(p.partition("=")[2]) <= 1000 for p in trials["params"])
    bad = subprocess.run([*cli_exe(), "run", "-m", "experiment=recency_frontier", "scenarios=[milk_allergy]",
                          "system.limt=range(1,5)", f"hydra.sweep.dir={tmp_path / 'x'}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert bad.returncode == 2 and "did you mean 'system.limit'" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()


def cli_exe() -> list[str]:
    """The installed ``mtsbench`` command (as conftest's ``cli`` runs it)."""
    exe = Path(sys.executable).parent / "mtsbench"
    return [str(exe)] if exe.exists() else ["mtsbench"]


def test_the_behaviour_matrix_runs_against_the_plugin(cli, tmp_path):
    """Issue 36 item 5: ``mtsbench check --matrix system=recency``. The plug-in labels nothing
    and has no state, so the attention and state expectations are n/a, never failed; the
    ablations are the seed design's, so the ablated column is n/a too."""
    out = tmp_path / "matrix"
    r = cli("check", "--matrix", "--embedder", "hashing", "--mechanism", "association", "events",
            "--config-dir", PACKAGE / "configs", "system=recency", "--out", out, env={"PYTHONPATH": str(PLUGIN)})
    assert r.returncode in (0, 1), r.stdout + r.stderr
    frame = pd.read_csv(out / "matrix.csv", keep_default_na=False)
    assert set(frame["mechanism"]) == {"association", "events"} and len(frame) == 16
    assert (frame.loc[frame["condition"] == "ablated", "outcome"] == "n/a").all()
    events = frame[(frame["mechanism"] == "events") & (frame["condition"] == "on")]
    assert (events["outcome"] == "n/a").all()                 # event checks: unsupported, not failed
    association = frame[(frame["mechanism"] == "association") & (frame["condition"] == "on")]
    assert "attention" not in " ".join(association["failed"])  # attention expectations: n/a, not failed
    assert "| events | n/a |" in (out / "matrix.md").read_text()
