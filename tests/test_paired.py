"""Paired comparisons replace interval overlap: configurations run on the same probes are
compared on their paired differences (a seeded sign-flip permutation test), and a measure
on which every value is identical names no best."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mtsbench.report.intervals import bootstrap, bootstrap_totals
from mtsbench.report.jobs import Job
from mtsbench.report.paired import comparison_lines, compare, line, reference_lines, sign_flip_p, unit_values
from mtsbench.report.seeds import Config


def _units(values, seed=""):
    index = pd.MultiIndex.from_tuples([(seed, "s", f"p{i}", "probe", 0) for i in range(len(values))],
                                      names=["seed", "scenario", "step", "check", "n"])
    return pd.Series(np.asarray(values, dtype=float), index=index)


def _overlap(a, b):
    (_, lo1, hi1), (_, lo2, hi2) = bootstrap([a]), bootstrap([b])
    return lo1 <= hi2 and lo2 <= hi1


def test_overlapping_intervals_but_a_paired_difference():
    base = np.linspace(0.1, 0.9, 30)          # probes of very different difficulty
    a, b = base + 0.05, base                  # a is better on every probe, by a little
    assert _overlap(a, b)                     # the old rule: a tie
    result = compare({"A": _units(a), "B": _units(b)})
    (label, diff, p), = result["against"]
    assert result["top"] == "A" and label == "B" and diff == pytest.approx(-0.05) and p < 0.001
    text = line("recall@k", result)
    assert text.startswith("- **recall@k**: best `A` 0.550: every other configuration is lower by a paired test")


def test_separate_intervals_but_too_few_probes_for_a_difference():
    a, b = [1.0] * 5, [0.9] * 5               # intervals are points 1.0 and 0.9: no overlap
    assert not _overlap(a, b)                 # the old rule: A is best, nothing tied
    result = compare({"A": _units(a), "B": _units(b)})
    assert result["against"][0][2] == pytest.approx(2 / 32)   # exact: 2 of 32 sign assignments
    text = line("recall@k", result)
    assert "but no best: no difference found from `B` (-0.100, p=0.0625)" in text and "best `A`" not in text


def test_all_identical_values_name_no_best():
    result = compare({"A": _units([1.0] * 8), "B": _units([1.0] * 8), "C": _units([1.0] * 8)})
    text = line("recall@k", result)
    assert text == ("- **recall@k**: every configuration has the same value, 1.000, on every probe: "
                    "no best and no difference to test.")
    # equal per probe but not constant: still no best
    text = line("recall@k", compare({"A": _units([0.5, 1.0]), "B": _units([0.5, 1.0])}))
    assert "no best" in text and "p=1" in text


def test_permutation_p_is_seeded_and_exact_for_few_units():
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, 1, 200)
    assert sign_flip_p(d) == sign_flip_p(d) and sign_flip_p(d, seed=1) != sign_flip_p(d)
    assert sign_flip_p([0.0] * 10) == 1.0 and sign_flip_p([1.0, -1.0]) == 1.0


def _job(tmp_path, num, label, recall):
    d = tmp_path / str(num)
    d.mkdir()
    pd.DataFrame({"scenario": "s", "step": [f"p{i}" for i in range(len(recall))], "check": "probe",
                  "passed": None, "recall": recall, "recall_provenance@k": recall}).to_csv(d / "metrics.csv",
                                                                                             index=False)
    return Job(dir=d, num=num, summary={"overall": {}}, label=label)


def test_units_pair_by_seed_and_probe_from_metrics_files(tmp_path):
    base = list(np.linspace(0.1, 0.9, 12))
    a = Config("x=a", [_job(tmp_path, 0, "x=a seed=0", [v + 0.05 for v in base]),
                       _job(tmp_path, 2, "x=a seed=1", [v + 0.04 for v in base])])
    b = Config("x=b", [_job(tmp_path, 1, "x=b seed=0", base), _job(tmp_path, 3, "x=b seed=1", base)])
    units = unit_values(a, "recall")
    assert len(units) == 24 and set(units.index.get_level_values("seed")) == {"0", "1"}
    lines = comparison_lines([b, a], [("recall", "recall@k")])
    assert lines[0].startswith("- **recall@k**: best `x=a`") and "`x=b` (-0.045, p=" in lines[0]


def _costed(num, label, per_turn, tokens):
    """A job whose summary.json gives per-scenario cost per turn and tokens (scenarios s0, s1, ...)."""
    scenarios = {f"s{i}": {"tokens": t} for i, t in enumerate(tokens)}
    cost = {"scenarios": {f"s{i}": {"per_turn": c, "total": c * 10, "turns": 10} for i, c in enumerate(per_turn)}}
    return Job(dir=Path(f"/nowhere/{num}"), num=num, summary={"overall": {}, "scenarios": scenarios, "cost": cost},
               label=label)


def test_cost_is_compared_lower_first_per_scenario():
    """Issue 51: an ablation that changes only what a design spends shows in a paired test."""
    cheap = Config("ablate=arousal", [_costed(1, "ablate=arousal", [10.0 + i for i in range(8)], [100] * 8)])
    design = Config("ablate=none", [_costed(0, "ablate=none", [30.0 + i for i in range(8)], [100] * 8)])
    lines = comparison_lines([design, cheap], [("cost_per_turn", "total cost per turn", True),
                                               ("tokens", "LLM tokens", True)])
    assert lines[0] == ("- **total cost per turn**: best `ablate=arousal` 13.5: every other configuration is higher "
                        "by a paired test: `ablate=none` (+20.0, p=0.00781).")
    assert "every configuration has the same value" in lines[1]
    against = reference_lines([design, cheap], [("cost_per_turn", "total cost per turn", True)])
    assert against[0] == "## Against `ablate=none`" and "- `ablate=arousal`: total cost per turn -20.0 (p=0.00781)." \
        in against
    assert against[-2] == "Moved by a paired test (p < 0.05): `ablate=arousal` (total cost per turn)."


def test_cost_intervals_resample_scenarios_within_seeds():
    """A per-run total's interval: scenarios resampled (one seed gives an interval, not a point)."""
    from mtsbench.report.seeds import scenario_parts

    job = _costed(0, "x", [10.0, 20.0, 60.0], [1, 2, 3])
    parts = scenario_parts(job.summary, "cost_per_turn")
    mean, lo, hi = bootstrap_totals([parts], ratio=True)
    assert mean == pytest.approx(30.0) and lo < mean < hi
    assert bootstrap_totals([scenario_parts(job.summary, "tokens")])[0] == 6.0
