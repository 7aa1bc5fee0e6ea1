"""A lifetime haystack (``haystack.*``): targets asked after N messages of other dialogue."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.errors import ConfigError
from mtsbench.harness.haystack import Haystack, HaystackOptions, messages_of, since
from mtsbench.scenario.model import OBSERVED_KINDS, Scenario, Step

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

TARGETS = ["milk_allergy", "deep_memory"]


def conv(sid: str, n: int, start=datetime(2024, 3, 1, 9), gap: float = 60.0) -> Scenario:
    steps = tuple(Step(i, f"s{i}", gap * i, "say", f"{sid} says line {i}") for i in range(n))
    probe = Step(n, "q", gap * n, "probe", "what did they say?")
    return Scenario(sid, sid, "en", start, (), (*steps, probe))


def test_the_haystack_is_the_other_dialogue_in_a_seeded_order_with_prefixed_ids():
    sources = [conv("a", 3), conv("b", 2), conv("c", 4), conv("t", 5)]
    one = Haystack.build(sources, [conv("t", 5)], HaystackOptions(messages=[0, 4, "all"], seed=0))
    again = Haystack.build(sources, [conv("t", 5)], HaystackOptions(messages=[0, 4, "all"], seed=0))
    orders = {Haystack.build(sources, [], HaystackOptions(messages=["all"], seed=s)).order for s in range(12)}
    assert one == again and len(orders) > 1                     # same seed, same haystack; seeds differ
    assert sorted(one.order) == ["a", "b", "c"]                  # the target is never its own haystack
    assert one.sizes == (0, 4, 9)                                # 'all' resolved; probes are not messages
    assert all(s.kind != "probe" for s in one.steps)
    observed = [s for s in one.steps if s.kind in OBSERVED_KINDS]
    assert all(s.id.split("/")[0] in one.order for s in observed)
    assert [s.kind for s in one.steps].count("idle") == 2        # a night between two conversations
    times = [s.at for s in one.steps]
    assert times == sorted(times)


def test_a_size_larger_than_the_sources_is_one_line():
    with pytest.raises(ConfigError, match=r"haystack.messages: expected at most 3 .*got 10"):
        Haystack.build([conv("a", 3)], [], HaystackOptions(messages=[10]))


@given(st.lists(st.integers(1, 6), min_size=1, max_size=5), st.data())
@settings(max_examples=40, deadline=None)
def test_a_cut_holds_exactly_its_size(lengths, data):
    hay = Haystack.build([conv(f"c{i}", n) for i, n in enumerate(lengths)], [], HaystackOptions(messages=["all"]))
    size = data.draw(st.integers(0, hay.sizes[-1]))
    assert messages_of(hay.steps[:hay.cut(size)]) == size


def test_a_placed_target_starts_after_the_haystack_at_its_own_time_of_day():
    hay = Haystack.build([conv("a", 3, datetime(2024, 1, 5, 9))], [], HaystackOptions(messages=["all"], gap="1d"))
    target = conv("t", 2, datetime(2023, 6, 1, 14, 30))
    night = hay.night_before(hay.cut(3))
    placed = hay.place(target, night.end, 3)
    first = hay.start + pd.Timedelta(seconds=placed.steps[0].at)
    assert placed.id == "t_h3" and placed.start == hay.start
    assert first.time() == target.start.time() and first >= hay.start + pd.Timedelta(seconds=night.end)
    assert [s.at - placed.steps[0].at for s in placed.steps] == [s.at for s in target.steps]


def test_since_subtracts_nested_totals():
    assert since({"calls": 4, "by_task": {"rate": {"calls": 3}}, "note": "x"},
                 {"calls": 1, "by_task": {"rate": {"calls": 1}}}) == \
        {"calls": 3, "by_task": {"rate": {"calls": 2}}, "note": "x"}


def _run(cli, tmp_path, name, *overrides):
    out = tmp_path / name
    done = cli("run", f"scenarios=[{','.join(TARGETS)}]", *overrides, f"hydra.run.dir={out}")
    assert done.returncode == 0, done.stderr
    return out


def _probes(out):
    m = pd.read_csv(out / "metrics.csv", low_memory=False)
    return m[m["check"].isin(["probe", "attention"])].drop(columns=["scenario"]).reset_index(drop=True)


def test_a_target_after_an_empty_haystack_runs_as_it_does_alone(cli, tmp_path):
    plain = _run(cli, tmp_path, "plain")
    hay = _run(cli, tmp_path, "hay", f"haystack.sources=[{SCENARIOS}]", "haystack.messages=[0]")
    summary = json.loads((hay / "summary.json").read_text())
    assert list(summary["scenarios"]) == [f"{t}_h0" for t in TARGETS]
    a, b = _probes(plain), _probes(hay)
    cols = [c for c in a if c.startswith(("recall", "passed", "value", "step"))]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    for t in TARGETS:   # the target's totals count its own steps only
        assert summary["scenarios"][f"{t}_h0"]["llm_calls"] == json.loads(
            (plain / "summary.json").read_text())["scenarios"][t]["llm_calls"]


def test_targets_after_a_haystack_count_their_own_work_and_the_haystack_apart(cli, tmp_path):
    out = _run(cli, tmp_path, "hay", f"haystack.sources=[{SCENARIOS}]", "haystack.messages=[0,60,all]",
               "workload=reply")
    report = json.loads((out / "haystack.json").read_text())
    sizes = [s["messages"] for s in report["sizes"]]
    assert sizes[:2] == [0, 60] and sizes[2] > 60
    assert not set(report["order"]) & set(TARGETS)
    assert report["sizes"][2]["memories"] > report["sizes"][1]["memories"] > 0
    assert report["block"] == 1000 and len(report["block_wall_s"]) == sizes[2] // 1000    # a wall per 1,000 taken in
    assert report["sizes"][1]["cost"]["turns"] > 0 and report["sizes"][1]["cost"]["scored"]["reply"] > 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["scenarios"]) == [f"{t}_h{n}" for n in sizes for t in TARGETS]
    small, big = summary["cost"]["scenarios"][f"deep_memory_h0"], summary["cost"]["scenarios"][f"deep_memory_h{sizes[2]}"]
    assert small["turns"] == big["turns"]          # the target's own turns, whatever came before
    results = pd.read_parquet(out / "results.parquet")
    ranked = [p for ps in results["ranked_provenance"].dropna() for m in ps for p in m]
    assert any("/" in p for p in ranked)           # haystack memories compete in the targets' rankings ...
    m = pd.read_csv(out / "metrics.csv", low_memory=False)
    assert m.loc[m["check"] == "probe", "recall@5"].notna().any()   # ... and never earn a target's credit


def test_a_memory_with_graph_tiers_is_copied_whole(cli, tmp_path):
    # tiers above 8 members are faiss graphs here: a copy must carry its graph and bitmaps, not share them
    out = _run(cli, tmp_path, "graph", f"haystack.sources=[{SCENARIOS}]", "haystack.messages=[0,140]",
               "index.exact_below=8")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "complete" and len(summary["scenarios"]) == 2 * len(TARGETS)
    assert summary["cost"]["overall"]["distances"] > 0


def test_bm25_with_a_stemmer_forks_per_target(cli, tmp_path):
    # PyStemmer's Stemmer cannot be deep-copied: the system leaves it out of its state and makes a new one
    args = ("system=bm25", "system.stemmer=english", "system.context=2")
    plain = _run(cli, tmp_path, "plain", *args)
    out = _run(cli, tmp_path, "hay", *args, f"haystack.sources=[{SCENARIOS}]", "haystack.messages=[0,60]")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "complete" and len(summary["scenarios"]) == 2 * len(TARGETS)
    m = pd.read_csv(out / "metrics.csv", low_memory=False)
    a, b = _probes(plain), m[m["check"].isin(["probe", "attention"]) & m["scenario"].str.endswith("_h0")]
    cols = [c for c in a if c.startswith(("recall", "value", "step"))]
    pd.testing.assert_frame_equal(a[cols], b[cols].reset_index(drop=True))


def test_the_same_seed_gives_the_same_lifetime(cli, tmp_path):
    args = (f"haystack.sources=[{SCENARIOS}]", "haystack.messages=[50]")
    a, b = _run(cli, tmp_path, "a", *args), _run(cli, tmp_path, "b", *args)
    ra, rb = (pd.read_parquet(p / "results.parquet").drop(columns=["latency_ms"]) for p in (a, b))
    pd.testing.assert_frame_equal(ra, rb)
    other = _run(cli, tmp_path, "c", *args, "haystack.seed=7")
    assert json.loads((other / "haystack.json").read_text())["order"] != \
        json.loads((a / "haystack.json").read_text())["order"]


def test_bad_haystack_options_are_one_line(cli, tmp_path):
    done = cli("run", "scenarios=[milk_allergy]", f"haystack.sources=[{SCENARIOS}]", "haystack.messages=[-1]")
    assert done.returncode != 0 and "haystack.messages" in done.stderr and "Traceback" not in done.stderr
    done = cli("run", "scenarios=[milk_allergy]", f"haystack.sources=[{tmp_path / 'nowhere'}]", "haystack.messages=[1]")
    assert done.returncode != 0 and "nowhere" in done.stderr and "Traceback" not in done.stderr
