"""Tuning studies without running one (issue 35): the search space, the objectives a job gives,
the checks before a study starts, per-trial seeding, and the report of a study saved by hand."""

from __future__ import annotations

import json

import pytest

optuna = pytest.importorskip("optuna")
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")

from mtsbench.errors import ConfigError  # noqa: E402
from mtsbench.tune import check, objectives, space  # noqa: E402
from mtsbench.tune.objectives import TrialFailed  # noqa: E402


def test_the_space_reads_hydras_sweep_syntax_and_the_command_line_wins():
    s = space.parse({"arousal": "choice(radius, knn, none)", "arousal.r": "interval(0.05, 0.6)",
                     "arousal.k": "range(1, 21)", "arousal.gain": "tag(log, interval(0.5, 20))",
                     "tiers.cutoffs": "choice([5.0],[5.0,2.0])", "stemmer": "choice('null', english)", "k": 3},
                    ["arousal.k=range(2,4)", "seed=7", "arousal.gain=2.0"],
                    {"arousal.r": "arousal=radius", "arousal.k": "arousal=knn"})
    by = {p.name: p for p in s.params}
    assert list(by) == ["arousal", "arousal.r", "arousal.k", "tiers.cutoffs", "stemmer"]
    assert by["arousal.k"].kind == "int" and (by["arousal.k"].low, by["arousal.k"].high) == (2, 3)   # range's stop excluded
    assert by["tiers.cutoffs"].choices == ("[5.0]", "[5.0,2.0]")
    assert by["stemmer"].choices == ("null", "english")
    assert s.fixed == ("k=3", "seed=7", "arousal.gain=2.0")          # a plain value on the command line fixes a key
    assert by["arousal.r"].when == (("arousal", ("radius",)),)


@pytest.mark.parametrize("params, conditions, words", [
    ({"a": "interval(1, 1)"}, None, "low < high"),
    ({"a": "tag(log, interval(0, 1))"}, None, "low > 0 on a log scale"),
    ({"a": "range(5, 1)"}, None, "has no values"),
    ({"a": "choice(x, y)", "b": "interval(0, 1)"}, {"b": "a=z"}, "a never takes z"),
    ({"b": "interval(0, 1)", "a": "choice(x, y)"}, {"b": "a=x"}, "neither a parameter listed before b"),
    ({"a": "choice(x, y)"}, {"c": "a=x"}, "conditions.c: not a parameter"),
])
def test_a_space_that_cannot_be_searched_is_one_line(params, conditions, words):
    with pytest.raises(ConfigError, match=words) as e:
        space.parse(params, [], conditions)
    assert "\n" not in str(e.value)


def test_a_trial_draws_only_the_parameters_its_conditions_allow():
    s = space.parse({"arousal": "choice(radius, none)", "arousal.r": "interval(0.05, 0.6)",
                     "w": "tag(log, interval(0.1, 10))"}, [], {"arousal.r": "arousal=radius"})
    study = optuna.create_study(directions=["maximize", "minimize"], sampler=optuna.samplers.RandomSampler(seed=3))
    drawn = []
    for _ in range(12):
        trial = study.ask()
        drawn.append(space.draw(s, trial))
        study.tell(trial, [0.5, 1.0])
    for overrides in drawn:
        keys = [o.partition("=")[0] for o in overrides]
        assert ("arousal.r" in keys) == ("arousal=radius" in overrides)
        w = float(next(o for o in overrides if o.startswith("w=")).partition("=")[2])
        assert 0.1 <= w <= 10
    assert {"arousal=radius", "arousal=none"} <= {o for d in drawn for o in d}


def test_the_check_composes_every_value_once_with_what_it_depends_on():
    s = space.parse({"arousal": "choice(radius, knn, none)", "arousal.r": "interval(0.1, 0.5)",
                     "arousal.k": "range(1, 4)", "tiers": "choice(thresholds, flat)"}, ["scenarios=[a]"],
                    {"arousal.r": "arousal=radius", "arousal.k": "arousal=knn"})
    jobs = [job for _, job in check.jobs(s, ["scenarios=[a]", "hydra.sweep.dir=x"])]
    assert ("hydra.sweep.dir=x", "scenarios=[a]", "arousal=knn", "arousal.k=1", "tiers=thresholds") in jobs
    assert ("hydra.sweep.dir=x", "scenarios=[a]", "arousal=knn", "arousal.k=3", "tiers=thresholds") in jobs
    assert ("hydra.sweep.dir=x", "scenarios=[a]", "arousal=none", "tiers=thresholds") in jobs   # r not set with none
    assert all(not ("arousal.r" in " ".join(j) and "arousal=knn" in j) for j in jobs)


def _job(tmp_path, name, summary=None, failure=None):
    folder = tmp_path / name
    folder.mkdir()
    if summary is not None:
        (folder / "summary.json").write_text(json.dumps(summary))
    if failure is not None:
        (folder / "failure.json").write_text(json.dumps(failure))
    return folder


def test_objectives_come_from_the_summary_and_a_job_without_them_says_why(tmp_path):
    names = ["overall.evidence.recall@1024t", "cost.overall.per_turn"]
    good = _job(tmp_path, "good", {"status": "complete", "overall": {"evidence": {"recall@1024t": 0.625}},
                                   "cost": {"overall": {"per_turn": 812.5}}})
    assert objectives.values(good, names) == [0.625, 812.5]
    cases = {
        "raised": (None, {"type": "ScenarioError", "error": "x.yaml: step 3: expected a time"},
                   "ScenarioError: x.yaml: step 3: expected a time"),
        "stopped": ({"status": "interrupted", "stopped": "SIGTERM"}, None, "did not complete (status interrupted: SIGTERM)"),
        "unreliable": ({"status": "unreliable"}, None, "llm.max_failure_rate"),
        "missing": ({"status": "complete", "overall": {"evidence": {}}, "cost": {"overall": {"per_turn": 1.0}}}, None,
                    "objective overall.evidence.recall@1024t is missing"),
        "nan": ({"status": "complete", "overall": {"evidence": {"recall@1024t": float("nan")}},
                 "cost": {"overall": {"per_turn": 1.0}}}, None, "not a finite number"),
        "empty": (None, None, "wrote no summary.json"),
    }
    for name, (summary, failure, words) in cases.items():
        with pytest.raises(TrialFailed, match=words.replace("(", r"\(").replace(")", r"\)")):
            objectives.values(_job(tmp_path, name, summary, failure), names)


def test_an_objective_the_runs_are_not_evaluated_at_is_named():
    assert "1024 tokens" in objectives.missing_cuts(["overall.evidence.recall@1024t"], [10], [256])
    assert objectives.missing_cuts(["overall.evidence.recall@256t"], [10], [256]) is None


def test_per_trial_seeding_draws_the_same_point_whatever_drew_before():
    """The sampler of trial N is seeded from the study's seed and N: a process that starts at
    trial 4 with trials 0-3 in the database (a resumed study) draws what the process that
    drew trials 0-3 itself drew for trial 4; one sampler seeded once would not."""
    from mtsbench.tune.study import TrialSeeded

    def make(seed):
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=3)

    def objective(x):
        return [x, (x - 0.3) ** 2]

    def drawn_at_4(sampler) -> tuple[float, float]:
        whole = optuna.create_study(directions=["maximize", "minimize"], sampler=sampler())
        for _ in range(5):
            trial = whole.ask()
            x = trial.suggest_float("x", 0, 1)
            whole.tell(trial, objective(x))
        resumed = optuna.create_study(directions=["maximize", "minimize"], sampler=sampler())
        for t in whole.trials[:4]:
            resumed.add_trial(optuna.trial.create_trial(params=t.params, distributions=t.distributions,
                                                        values=t.values))
        return whole.trials[4].params["x"], resumed.ask().suggest_float("x", 0, 1)

    uninterrupted, resumed = drawn_at_4(lambda: TrialSeeded(make, 11))
    assert uninterrupted == resumed
    uninterrupted, resumed = drawn_at_4(lambda: make(11))      # one sampler, seeded once: it differs
    assert uninterrupted != resumed


def _saved_study(folder, rows, held=None):
    """A tuning study saved by hand: (x, y, values or a failure reason) per trial."""
    from mtsbench.tune.info import write_info
    from mtsbench.tune.study import held_out_study

    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{folder / 'study.db'}"
    study = optuna.create_study(study_name="tuning", storage=url, directions=["maximize", "minimize"])
    study.set_user_attr("seed", 0)
    dist = {"x": optuna.distributions.UniformDistribution(0, 1), "y": optuna.distributions.UniformDistribution(0, 1)}
    for x, y, result in rows:
        failed = isinstance(result, str)
        study.add_trial(optuna.trial.create_trial(
            state=optuna.trial.TrialState.FAIL if failed else optuna.trial.TrialState.COMPLETE,
            values=None if failed else result, params={"x": x, "y": y}, distributions=dist,
            user_attrs={"params": [f"x={x}", f"y={y}"], **({"failure": result} if failed else {})}))
    if held:
        h = held_out_study(url, "tuning", ["maximize", "minimize"])
        for number, values in held.items():
            t = study.trials[number]
            h.add_trial(optuna.trial.create_trial(values=values, params=t.params, distributions=t.distributions,
                                                  user_attrs={"tuning_trial": number, "job": str(number)}))
    write_info(folder, {"role": "tuning", "study": "tuning", "storage": "study.db", "sampler": "TPESampler",
                        "objectives": ["overall.evidence.recall@1024t", "cost.overall.per_turn"], "n_trials": len(rows)})
    return study


def test_the_report_of_a_saved_study_shows_both_fronts_importances_and_reasons(tmp_path):
    from mtsbench.report.aggregate import write

    # recall follows x alone (y is noise), work follows recall: the front is trials 0, 1, 2, 3
    rows = [(0.1, 0.9, [0.10, 100.0]), (0.4, 0.2, [0.40, 300.0]), (0.7, 0.5, [0.70, 500.0]),
            (0.9, 0.1, [0.90, 900.0]), (0.5, 0.8, [0.45, 600.0]), (0.2, 0.6, [0.15, 400.0]),
            (0.3, 0.3, [0.30, 800.0]), (0.6, 0.7, [0.55, 950.0]), (0.8, 0.4, "ScenarioError: bad.yaml: line 2")]
    _saved_study(tmp_path / "s", rows, held={0: [0.12, 110.0], 1: [0.50, 320.0], 2: [0.45, 480.0], 3: [0.80, 950.0]})
    report = write(tmp_path / "s", tmp_path / "out")
    trials = __import__("pandas").read_csv(tmp_path / "out" / "trials.csv")
    assert sorted(trials.loc[trials["front"], "trial"]) == [0, 1, 2, 3]
    assert trials.loc[trials["trial"] == 8, "state"].item() == "fail"
    assert trials.loc[trials["trial"] == 8, "failure"].item() == "ScenarioError: bad.yaml: line 2"
    assert trials.loc[trials["trial"] == 3, "held_out recall@1024t"].item() == 0.80
    imp = __import__("pandas").read_csv(tmp_path / "out" / "importances.csv")
    recall = imp[(imp["objective"] == "recall@1024t") & (imp["scope"] == "all complete trials")].set_index("param")
    assert recall["importance"].sum() == pytest.approx(1.0, abs=1e-3)
    assert recall.loc["x", "importance"] > recall.loc["y", "importance"]
    text = report.read_text()
    assert "## Tuning front" in text and "## Held-out evaluation of the tuning front" in text
    assert "ScenarioError: bad.yaml: line 2" in text
    # held out, trial 2 (0.45 at 480) is beaten by trial 1 (0.50 at 320): off the held-out front
    held = text.split("## Held-out evaluation")[1].split("##")[0]
    row2 = next(line for line in held.splitlines() if line.startswith("| 2 |"))
    row1 = next(line for line in held.splitlines() if line.startswith("| 1 |"))
    assert "yes" in row1 and "yes" not in row2
    assert "Chosen point** (the tuning front's best `recall@1024t`, chosen on tuning values): trial 3" in text
    for figure in ("front.png", "history.png", "importance.png"):
        assert (tmp_path / "out" / figure).stat().st_size > 1000


def test_a_folder_that_is_not_a_study_is_one_line(tmp_path):
    from mtsbench.errors import ReportError
    from mtsbench.report.study import load

    (tmp_path / "study.json").write_text(json.dumps({"role": "tuning", "study": "tuning", "storage": "study.db"}))
    with pytest.raises(ReportError, match="cannot read study 'tuning'"):
        load(tmp_path)
