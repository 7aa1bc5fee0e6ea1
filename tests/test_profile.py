"""Error profiles (``mtsbench.llm.profile``, ``profiled``, ``mtsbench.calibration.profile_fit``): the math
against hand-computed values, the file's checks, the fit's determinism, and a regression run
of the packaged profile against committed results.

``tests/data/profiled/metrics.csv`` is ``llm=profiled`` on two recorded scenarios; if a change
is meant to alter it, regenerate it::

    mtsbench run llm=profiled "scenarios=[milk_allergy,cold_then_fever]" hydra.run.dir=/tmp/prof
    cp /tmp/prof/metrics.csv tests/data/profiled/metrics.csv
"""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from mtsbench.errors import ConfigError
from mtsbench.evaluation.evaluate import WALL_CLOCK_COLUMNS
from mtsbench.llm import profile as pm
from mtsbench.llm.base import Association, Item
from mtsbench.llm.mock import MockLLM

GOLDEN = Path(__file__).parent / "data" / "profiled" / "metrics.csv"
PACKAGED = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def test_quantile_draws_match_hand_computed_values():
    # table (0, 4, 10) at p = (0, 0.5, 1): u = 0.25 -> 2, u = 0.75 -> 4 + 6 * 0.5 = 7
    assert pm.quantile_draw([0, 4, 10], 0.25) == 2.0 and pm.quantile_draw([0, 4, 10], 0.75) == 7.0
    # on log days: (1, 10, 1000) at u = 0.75 -> exp(log 10 + 0.5 * (log 1000 - log 10)) = 100
    assert math.isclose(pm.log_quantile_draw([1, 10, 1000], 0.75), 100.0)
    assert pm.quantiles([3, 1, 2], 2) == [1.0, 2.0, 3.0] and pm.quantiles([]) == []
    assert pm.categorical({"same": 1, "contradicts": 0, "unrelated": 3}, 0.3) == "unrelated"
    assert pm.categorical({"same": 1, "contradicts": 0, "unrelated": 3}, 0.2) == "same"
    # score 7 in bin [6, 8): position 0.5; the table (5, 8, 10) there gives 8
    assert pm.position([0, 6, 8, 10], 1, 7.0) == 0.5 and pm.quantile_draw([5, 8, 10], 0.5) == 8.0


@given(st.lists(st.floats(0, 10), min_size=1, max_size=30), st.floats(0, 1))
def test_a_draw_lies_within_its_table(values, u):
    q = pm.quantiles(values, 10)
    assert q[0] - 1e-9 <= pm.quantile_draw(q, u) <= q[-1] + 1e-9


@given(st.floats(-5, 15))
def test_every_score_falls_in_one_bin(x):
    assert 0 <= pm.bin_of([0, 2, 4, 6, 8, 10], x) <= 4


def test_the_packaged_profile_loads_by_name():
    p = pm.load(PACKAGED)
    assert PACKAGED in pm.packaged_profiles() and 0 <= p.get("facts", "recall") <= 1


def test_a_malformed_profile_names_the_file_and_key(tmp_path):
    data = yaml.safe_load((pm.PROFILE_DIR / f"{PACKAGED}.yaml").read_text())
    data["relation"]["same"] = {"same": "often"}
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as e:
        pm.load(str(bad))
    assert str(e.value).startswith(f"{bad}: relation.same: expected probabilities") and "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="nosuch does not exist"):
        pm.load("nosuch")


def test_a_profiled_answer_depends_on_the_call_only():
    item = Item("The milk is on the table.", "perceive", "s1")
    one, two = MockLLM(profile=PACKAGED), MockLLM(profile=PACKAGED)
    two.rate_attention(Item("Something else first.", "say", "s0"), [])       # another call first
    scores = [llm.rate_attention(item, [Association("allergic to milk", 8.0, 0.4)]) for llm in (one, two)]
    assert scores[0] == scores[1] and 0 <= scores[0] <= 10
    # extras come from the turn's own text
    summary = MockLLM(profile=PACKAGED).summarize([Item("I moved to Oslo. The flat is small.", "say", "s0")] * 3)
    assert all(f.text in ("I moved to Oslo.", "The flat is small.") for f in summary.facts)


def test_a_malformed_profile_fails_a_run_in_one_line(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("attention: {bins: [0, 10], quantiles: [[5]]}\n")
    r = cli("run", "llm=mock", f"llm.profile={bad}", "scenarios=[milk_allergy]", f"hydra.run.dir={tmp_path}/run")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert f"{bad}: facts.recall: missing" in r.stderr


def test_the_packaged_profile_reproduces_the_committed_metrics(cli, tmp_path):
    golden = pd.read_csv(GOLDEN)
    scenarios = list(dict.fromkeys(golden["scenario"]))
    r = cli("run", "llm=profiled", f"scenarios=[{','.join(scenarios)}]", f"hydra.run.dir={tmp_path}/run")
    assert r.returncode == 0, r.stderr
    got = pd.read_csv(tmp_path / "run" / "metrics.csv")
    pd.testing.assert_frame_equal(got.drop(columns=WALL_CLOCK_COLUMNS), golden.drop(columns=WALL_CLOCK_COLUMNS))


def test_fitting_the_same_runs_twice_gives_the_same_profile(cli, tmp_path):
    scen = "scenarios=[milk_allergy,contradiction]"
    for name, llm in (("a", "mock"), ("b", "recorded")):
        assert cli("run", f"llm={llm}", scen, f"hydra.run.dir={tmp_path}/{name}").returncode == 0
    for out in ("p1.yaml", "p2.yaml"):
        r = cli("calibrate", "--fit", tmp_path / "a", tmp_path / "b", "-o", tmp_path / out)
        assert r.returncode == 0, r.stderr
    one = (tmp_path / "p1.yaml").read_text()
    assert one == (tmp_path / "p2.yaml").read_text()
    p = pm.check(yaml.safe_load(one), "p1.yaml")
    assert p.get("fitted_from", "scenarios") == ["contradiction", "milk_allergy"]
    # the model states more facts than the hints: extra facts per said turn above 0
    assert p.get("facts", "extra_per_turn")["say"] > 0 and np.isclose(sum(p.get("relation", "same").values()), 1, atol=1e-3)


def test_the_attention_fit_is_the_models_scores_per_mock_bin():
    from mtsbench.calibration.profile_fit import fit_attention

    steps = [f"s{i}" for i in range(12)]
    a = pd.DataFrame({"scenario": "x", "step": steps, "score": [1.0] * 6 + [9.0] * 6})
    b = pd.DataFrame({"scenario": "x", "step": steps, "score": [5.0] * 6 + [8.0, 8, 8, 10, 10, 10]})
    got = fit_attention(a, b)
    assert got["items"] == [6, 0, 0, 0, 6] and got["quantiles"][0] == [5.0] * 21
    assert got["quantiles"][4][0] == 8.0 and got["quantiles"][4][-1] == 10.0
    # an empty bin takes all pairs' table: 6 fives, 3 eights, 3 tens -> median 6.5 (between 5 and 8)
    assert got["quantiles"][2][10] == 6.5


def test_a_conclusion_survives_only_with_the_same_breaks_and_signs():
    from mtsbench.studies.transfer import survival

    t = pd.DataFrame([
        {"ablate": "depth", "llm": "mock", "broken_ids": "a:1:s1:recall", "recall_sign": 0, "cost_sign": 1},
        {"ablate": "depth", "llm": "profiled", "broken_ids": "a:1:s1:recall", "recall_sign": 0, "cost_sign": 1},
        {"ablate": "events", "llm": "mock", "broken_ids": "b:2:s2:event", "recall_sign": 0, "cost_sign": 0},
        {"ablate": "events", "llm": "profiled", "broken_ids": "", "recall_sign": 0, "cost_sign": 0}])
    s = survival(t, "mock", "profiled").set_index("ablate")
    assert bool(s.loc["depth", "survives"]) and not bool(s.loc["events", "survives"])
    assert s.loc["events", "broken_from"] == 1 and s.loc["events", "broken_to"] == 0


def test_an_ablation_run_on_some_scenarios_is_compared_with_the_reference_on_those_alone(tmp_path):
    """The real model's ablations run on the scenarios that test them: broken checks, recall and
    cost per turn are compared with ablate=none on the same scenarios, not on all of its."""
    from types import SimpleNamespace

    from mtsbench.studies.transfer import conclusions

    def run(name, rows, per, cost):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps({
            "overall": {"recall": 0.0, "passed": 0, "checks": 0}, "cost": {"overall": {"per_turn": 99.0},
                                                                          "scenarios": cost},
            "scenarios": per}))
        e = pd.DataFrame(rows, columns=["scenario", "index", "step", "check", "passed"])
        return SimpleNamespace(path=tmp_path / name, expectations=e)

    none = run("none", [("a", 1, "s1", "recall", True), ("b", 2, "s2", "recall", True)],
               {"a": {"recall": 1.0, "probes": 2, "passed": 1, "checks": 1},
                "b": {"recall": 0.5, "probes": 2, "passed": 1, "checks": 1}},
               {"a": {"total": 10, "turns": 5}, "b": {"total": 100, "turns": 5}})
    depth = run("depth", [("a", 1, "s1", "recall", False)], {"a": {"recall": 0.5, "probes": 2, "passed": 0, "checks": 1}},
                {"a": {"total": 10, "turns": 5}})
    got = conclusions({("none", "recorded"): none, ("depth", "recorded"): depth}, only={"depth": ["a"]})
    row = got.set_index("ablate").loc["depth"]
    assert (row["broken_ids"], row["scenarios"], row["passed"], row["checks"]) == ("a:1:s1:recall", "a", 0, 1)
    assert (row["recall"], row["recall_sign"], row["cost_per_turn"], row["cost_sign"]) == (0.5, -1, 2.0, 0)
