"""Typed, ranged configuration (each component's declared parameters, mtsbench.core.params):
every bad override is one line and exit 2 before anything runs, for `run`, `run -m` and
`check`; every numeric field of every packaged option is a declared parameter."""

import json
import re
from pathlib import Path
from typing import Literal

import pandas as pd
import pytest
from hydra.utils import get_object
from omegaconf import DictConfig, ListConfig, OmegaConf

from mtsbench.config import check as config_check
from mtsbench.core import params
from mtsbench.cli import main
from mtsbench.config.composition import compose
from mtsbench.config.search import groups
from mtsbench.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent

# override -> the one line after "mtsbench: " starts with these words (a bad value: the key;
# a key Hydra cannot apply: the override); the list first (each through run, run -m
# and check), then more (through check)
BAD = {
    "llm.noise=abc": "llm.noise: expected a number from 0 to 1, got 'abc'",
    "arousal.r=abc": "arousal.r: expected a number >= 0, got 'abc'",
    "llm.noise=-1": "llm.noise: expected a number from 0 to 1, got -1",
    "dual.long_share=5": "dual.long_share: expected a number from 0 to 1, got 5",
    "summarize.every=0": "summarize.every: expected an integer >= 1, got 0",
    "retrieval.candidates=0": "retrieval.candidates: expected an integer >= 1, got 0",
    "retrieval.context=0": "retrieval.context: expected an integer >= 1 or null, got 0",
    "agent.rebalance_every=0": "agent.rebalance_every: expected an integer >= 1, got 0",
    "evaluation.recall_at=[0]": "evaluation.recall_at: expected a list of integers >= 1, got [0]",
    "evaluation.rank_to=-1": "evaluation.rank_to: expected an integer >= 0, got -1",
    "workload.k=0": "no such key 'workload.k' (workload=probes has no keys; workload=reply has it: workload=reply "
                    "workload.k=...)",
    "depth.n=2": "no such key 'depth.n' (depth=linear has no keys; depth=fixed has it: depth=fixed depth.n=...)",
    "+foo=1": "cannot add 'foo': no component reads it",
    "foo=1": "no such key 'foo'",
    "retrieval.kk=3": "no such key 'retrieval.kk' (retrieval=dense has: relevance_weight, attention_weight, "
                      "candidates, relevance_sd, context, relevance)",
}
MORE = {
    "retrieval.candidate=3": "no such key 'retrieval.candidate' (did you mean 'retrieval.candidates'?)",
    "llm.noise=true": "llm.noise: expected a number from 0 to 1, got True",
    "seed=1.5": "seed: expected an integer >= 0, got 1.5",
    "summarize.session_gap=1000000y": "summarize.session_gap: expected a duration",
    "consolidation.nightly_at=25:00": "consolidation.nightly_at: expected a time of day HH:MM",
    "tiers.hysteresis=-1": "tiers.hysteresis: expected a number >= 0, got -1",
    "inference.kinds=[say,think]": "inference.kinds: expected a list of any of say, reply, perceive, got ['say', 'think']",
}


def _one_line(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("command,override", [(c, o) for o in BAD for c in ("run", "run -m", "check")]
                         + [("check", o) for o in MORE])
def test_bad_override_is_one_line_naming_it(capsys, tmp_path, monkeypatch, command, override):
    monkeypatch.chdir(tmp_path)
    line = _one_line(capsys, [*command.split(), override])
    words = {**BAD, **MORE}[override]
    assert line.startswith(f"mtsbench: {words}" if words.startswith(override.partition("=")[0] + ":")
                           else f"mtsbench: override '{override}': {words}"), line
    assert not any(tmp_path.iterdir())          # nothing ran: no outputs/ or multirun/ folder


def test_through_the_installed_command(cli, tmp_path):
    for args in [("run", "llm.noise=abc"), ("run", "-m", "seed=0,1", "dual.long_share=5"),
                 ("check", "retrieval.kk=3"), ("run", "+foo=1")]:
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith(f"mtsbench: {args[-1].partition('=')[0]}:")  \
            or r.stderr.startswith(f"mtsbench: override '{args[-1]}'"), r.stderr
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "multirun").exists()


def test_group_field_of_another_option_names_the_chosen_one(capsys):
    line = _one_line(capsys, ["check", "arousal=knn", "arousal.r=0.2"])
    assert line == ("mtsbench: override 'arousal.r=0.2': no such key 'arousal.r' (arousal=knn has: k, gain, perceived; "
                    "arousal=radius has it: arousal=radius arousal.r=...)")


def test_every_job_of_a_sweep_is_checked_before_launching(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = _one_line(capsys, ["run", "-m", "seed=0,1", "llm.noise=0.1,-1"])
    assert line == "mtsbench: llm.noise: expected a number from 0 to 1, got -1"
    line = _one_line(capsys, ["run", "-m", "arousal=radius,knn", "arousal.r=0.3"])
    assert "no such key 'arousal.r' (arousal=knn has: k, gain, perceived; arousal=radius has it" in line
    line = _one_line(capsys, ["run", "-m", "experiment=ablation", "summarize.every=0"])
    assert "summarize.every: expected an integer >= 1, got 0" in line
    assert not any(tmp_path.iterdir())


def test_a_comma_list_without_m_is_one_line(capsys):
    line = _one_line(capsys, ["run", "llm.noise=0.1,0.2"])
    assert "a comma list is a sweep: add -m" in line
    line = _one_line(capsys, ["check", "llm.noise=[0.1"])
    assert line.startswith("mtsbench: override 'llm.noise=[0.1': not a valid override")


def test_adding_a_key(capsys):
    line = _one_line(capsys, ["check", "+llm.noise=0.1"])
    assert "'llm.noise' exists already; drop the '+'" in line
    line = _one_line(capsys, ["check", "+retrieval.recency_weight=0.5"])
    assert "retrieval.recency_weight: not a parameter of mtsbench.memory.retrieval.TieredSearch" in line
    line = _one_line(capsys, ["check", "+tiers.below.alpha=1"])
    assert "no node 'tiers.below'" in line
    cfg, _ = compose(["retrieval._target_=mtsbench.memory.scoring.WeightedMinMax", "+retrieval.recency_weight=0.5",
                      "++retrieval.candidates=7"])
    assert cfg.retrieval.recency_weight == 0.5 and cfg.retrieval.candidates == 7
    with pytest.raises(ConfigError, match=r"^retrieval.recency_weight: expected a number >= 0, got -1$"):
        compose(["retrieval._target_=mtsbench.memory.scoring.WeightedMinMax", "+retrieval.recency_weight=-1"])


def test_cross_field_checks_of_the_specs_run_at_compose_time():
    with pytest.raises(ConfigError, match=r"^preload.fields: expected at most"):
        compose(["preload.fields=99"])
    with pytest.raises(ConfigError, match="generate.probe_max_days: expected >= probe_min_days"):
        compose(["generate.days=3", "generate.probe_max_days=2"])


def test_a_good_override_still_runs_and_one_scenario_name_is_one_scenario(cli, tmp_path):
    out = tmp_path / "job"
    r = cli("run", "scenarios=milk_allergy", "llm.noise=0.1", "retrieval.context=5", f"hydra.run.dir={out}")
    assert r.returncode == 0, r.stderr
    assert set(pd.read_csv(out / "metrics.csv")["scenario"]) == {"milk_allergy"}
    path = REPO / "scenarios" / "flu_fades.yaml"
    r = cli("run", f"scenarios={path}", f"hydra.run.dir={tmp_path / 'abs'}")
    assert r.returncode == 0, r.stderr
    assert set(json.loads((tmp_path / "abs" / "summary.json").read_text())["scenarios"]) == {"flu_fades"}


def test_check_reads_a_scenarios_override(capsys):
    assert main(["check", "scenarios=milk_allergy"]) == 0
    assert "in 1 scenarios" in capsys.readouterr().out


def test_compose_makes_scenarios_a_list():
    assert list(compose(["scenarios=milk_allergy"])[0].scenarios) == ["milk_allergy"]
    assert list(compose(["scenarios=/x/y.yaml"])[0].scenarios) == ["/x/y.yaml"]


# --- every field of every option is declared by its component ---------------------------

def _numeric_leaves(node, path=""):
    """Key paths of the int/float leaves of a composed config (interpolations resolved; a
    node that is an interpolation of another node, as system=mts's, is that node's)."""
    for key in node.keys():
        where = f"{path}.{key}" if path else str(key)
        if OmegaConf.is_interpolation(node, key) and isinstance(node[key], (DictConfig, ListConfig)):
            continue
        value = node[key]
        if isinstance(value, DictConfig):
            yield from _numeric_leaves(value, where)
        elif isinstance(value, ListConfig):
            if any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                yield where
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield where


def _every_option():
    yield []
    for group, options in groups().items():
        if group != "experiment":
            yield from ([f"{group}={o}"] for o in options)


@pytest.fixture(scope="module")
def composed():
    """Every packaged option's composed config (each passes validation: compose checks it)."""
    return {" ".join(o) or "(defaults)": compose(o)[0] for o in _every_option()}


def _declaration(cfg, path):
    """The declared type of the parameter key ``path`` sets in ``cfg`` (None: not declared)."""
    parent, _, leaf = path.rpartition(".")
    if not parent:
        cls = get_object(config_check.ROOT)
    else:
        node = OmegaConf.select(cfg, parent)
        cls = (config_check.target_class(node._target_, parent) if "_target_" in node
               else get_object(config_check.NODES[parent]) if parent in config_check.NODES else None)
    param = params.parameters(cls).get(leaf) if cls is not None else None
    return param.type if param is not None else None


def test_every_numeric_leaf_of_every_option_is_a_declared_parameter(composed):
    missing = sorted({f"{leaf} ({name})" for name, cfg in composed.items() for leaf in _numeric_leaves(cfg)
                      if _declaration(cfg, leaf) is None})
    assert not missing, f"declare a type (mtsbench.core.params) in the constructor for: {', '.join(missing)}"
    numbers = {leaf: _declaration(cfg, leaf) for cfg in composed.values() for leaf in _numeric_leaves(cfg)}
    unbounded = sorted(leaf for leaf, tp in numbers.items() if not re.search(r">|<|from|one of", params.expected(tp)))
    mock = ["relevance_floor", "relevance_full", "restate_from", "restate_full"]   # on a scale of their own: any number
    assert unbounded == ["attention.min_relevance", "evaluation.abstain_threshold",
                         *(f"llm.base.{k}" for k in mock), *(f"llm.{k}" for k in mock)]   # llm=routed's base: the mock


def test_the_leaf_walk_sees_new_fields():
    cfg = OmegaConf.create({"a": {"x": 1, "flag": True, "name": "n", "xs": [1, 2]}, "b": "${a}", "s": "${a.x}"})
    assert sorted(_numeric_leaves(cfg)) == ["a.x", "a.xs", "s"]


@pytest.mark.parametrize("tp,good,bad", [
    (params.Share, [0, 0.5, 1], [-0.1, 1.1, "0.5", True, float("nan"), float("inf"), None]),
    (params.Count | None, [1, 10**6, None], [0, 1.0, "1", False]),
    (list[params.Count], [[], [1, 2], (1,)], [[0], 1, ["1"]]),
    (params.Unit, [1, 0.001], [0, 1.5]),
    (params.Duration, ["3h", "30d", 60, "100y"], ["101y", "3 hours", 0, "３h", True]),
    (params.TimeOfDay | None, ["00:00", "23:59", None], ["24:00", "7", 7]),
    (Literal["raise", "skip"], ["raise"], ["Raise", None]),
])
def test_declared_types(tp, good, bad):
    @params.declared
    class Component:
        def __init__(self, x: tp = None):
            self.x = x

    assert [v for v in good if params.problem(Component, "x", v)] == []
    assert [v for v in bad if not params.problem(Component, "x", v)] == []
    with pytest.raises(ConfigError, match=r"^x: expected .*, got"):
        Component(x=bad[0])
    assert Component(x=good[-1]).x is good[-1]            # the value is passed on as given


def test_expected_words():
    assert params.expected(params.Share) == "a number from 0 to 1"
    assert params.expected(params.Count | None) == "an integer >= 1 or null"
    assert params.expected(params.Confidence) == "a number > 0 and < 1"
    assert params.expected(params.Kinds) == "a list of any of say, reply, perceive"
    assert params.expected(list[params.Score]) == "a list of numbers from 0 to 10"
