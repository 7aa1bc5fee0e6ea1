"""mtsbench generate, the generate and preload config nodes, and pre-loaded stores (kept small)."""

import json

import numpy as np
import pandas as pd
import pytest

from mtsbench.config.composition import ConfigError, compose
from mtsbench.memory.store import MemoryStore
from mtsbench.systems.mts.preload import PreloadSpec, preload
from mtsbench.harness.runner import build_system, run
from mtsbench.scenario.generate import GenerateError, GenerateSpec, render, write
from mtsbench.scenario.loader import load_scenario
from mtsbench.scenario.vocab import NEEDLES
from mtsbench.outputs.stream import trace_events

SMALL = ["--days", "5", "--turns-per-day", "12", "--needles", "4", "--probe-min-days", "2"]


def test_generate_is_byte_identical_for_a_seed_and_validates(cli, tmp_path):
    a, b, c = (cli("generate", *SMALL, "--seed", seed, "--out", tmp_path / name)
               for seed, name in (("3", "a"), ("3", "b"), ("4", "c")))
    assert a.returncode == b.returncode == c.returncode == 0, a.stderr
    fa, fb = tmp_path / "a" / "gen_en_5d_s3.yaml", tmp_path / "b" / "gen_en_5d_s3.yaml"
    assert fa.read_bytes() == fb.read_bytes()
    assert fa.read_bytes() != (tmp_path / "c" / "gen_en_5d_s4.yaml").read_bytes()
    v = cli("validate", fa)
    assert v.returncode == 0 and v.stdout.startswith("ok  "), v.stderr


def test_the_bundled_generated_dialogue_is_what_its_command_writes(cli, tmp_path):
    """scenarios/generated_weeks.yaml (the default run's six weeks, issue 51) is byte for byte what
    its header's options write: regenerated, never edited by hand."""
    from mtsbench.scenario.catalog import bundled_dir

    bundled = bundled_dir() / "generated_weeks.yaml"
    command = next(line for line in bundled.read_text().splitlines() if line.startswith("# mtsbench generate "))
    done = cli(*command[2:].split()[1:], "--out", tmp_path / "generated_weeks.yaml")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "generated_weeks.yaml").read_bytes() == bundled.read_bytes()
    scenario = load_scenario(bundled)
    probes = [s for s in scenario.steps if s.kind == "probe"]
    assert scenario.days_spanned >= 42 and len(probes) == 60 and all(s.expect.recall for s in probes)


def test_generate_refuses_bad_options_in_one_line(cli, tmp_path):
    r = cli("generate", "--turns-per-day", "0", "--out", tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == "mtsbench: generate: --turns-per-day: expected an integer >= 1, got 0"
    r = cli("generate", "--language", "fr", "--out", tmp_path)
    assert r.returncode == 2 and "--language: expected one of en, zh, got 'fr'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("language", ["en", "zh"])
def test_needles_are_planted_reminded_and_probed_without_the_answer(tmp_path, language):
    spec = GenerateSpec(days=12, turns_per_day=10, needles=6, awaken=0.5, reminders=2, distractors=3,
                        probe_min_days=5, language=language, seed=2)
    s = load_scenario(write(spec, tmp_path))
    by_id = {st.id: st for st in s.steps}
    needles = [st for st in s.steps if st.id.startswith("n") and "." not in st.id]
    assert len(needles) == 6
    awakened = 0
    for n in needles:
        value = str(n.hints.facts[0].value)
        ask, ask2 = by_id[n.id + ".ask"], by_id[n.id + ".ask2"]
        assert ask.expect.recall == ask2.expect.recall == (n.id,) and ask.expect.k == 10
        assert (ask.motivation, ask2.motivation) == (0.2, 0.9)
        assert ask.at - n.at >= 4 * 86400 and ask2.at > ask.at
        for probe in (ask, ask2):
            assert value not in probe.text and probe.hints.salience is None and not probe.hints.facts
        reminders = [st for st in s.steps if st.id.startswith(n.id + ".r")]
        if reminders:
            awakened += 1
            assert len(reminders) == 2 and all(n.at < r.at < ask.at and value not in r.text for r in reminders)
            assert all(1800 <= ask.at - r.at <= 4 * 3600 for r in reminders[-2:])
        distractors = [st for st in s.steps if st.id.startswith(n.id + ".d")]
        assert len(distractors) == 3 and all(n.at < d.at < ask.at for d in distractors)
    assert awakened == 3
    assert sum(st.kind == "idle" for st in s.steps) == 12


def test_every_needle_attribute_template_hides_its_value():
    for language, attrs in NEEDLES.items():
        for attr, (state, ask, mention, _) in attrs.items():
            assert "{value}" in state and "{value}" not in ask and "{value}" not in mention, (language, attr)


def test_spec_validation_names_the_option():
    with pytest.raises(GenerateError, match=r"^awaken: expected a number from 0 to 1, got 2$"):
        GenerateSpec(awaken=2)
    with pytest.raises(GenerateError, match=r"^probe_max_days: expected >= probe_min_days"):
        GenerateSpec(probe_min_days=9, probe_max_days=3)
    assert render(GenerateSpec(days=2, turns_per_day=1, needles=0)).count("\n- ") == 4


def test_add_is_add_many_of_one_row():
    one, many = MemoryStore(dim=2, capacity=1), MemoryStore(dim=2, capacity=1)
    rows = [("a", (1.0, 0.0), ("s0",), "k", 3, 0.4, {"x": 1}), ("b", (0.0, 1.0), (), None, None, 1.0, None)]
    for text, vec, prov, key, value, belief, meta in rows:
        one.add(text, "fact", created=5.0, provenance=prov, vector=np.array(vec), key=key, value=value,
                belief=belief, meta=meta)
    many.add_many([r[0] for r in rows], "fact", created=5.0, vectors=np.array([r[1] for r in rows]),
                  provenance=[r[2] for r in rows], keys=[r[3] for r in rows], values=[r[4] for r in rows],
                  belief=np.array([r[5] for r in rows]), metas=[r[6] for r in rows])
    for name in ("vectors", "kind", "created", "belief", "long_t", "short_t", "alive", "parts"):
        assert np.array_equal(getattr(one, name)[:2], getattr(many, name)[:2]), name
    for name in ("text", "provenance", "key", "value", "meta", "by_key", "by_step"):
        assert getattr(one, name) == getattr(many, name), name


def test_preload_fills_every_tier_index_consistently(tmp_path):
    cfg, _ = compose(["embedder.dim=128", "preload.memories=0"])
    system = build_system(cfg, load_scenario(write(GenerateSpec(days=2, turns_per_day=3, needles=0), tmp_path)))
    agent = system.memory_                                   # preload fills any memory (store, index, tiering, ...)
    ids = preload(agent, PreloadSpec(memories=2000, seed=1))
    store, index = agent.store, agent.index
    assert store.size == 2000 and ids.tolist() == list(range(2000))
    assert np.all(store.created[:2000] < 0) and np.all(store.created[:2000] >= -365 * 86400)
    members = np.concatenate([index.tiers[t].members() for t in range(index.n_tiers)])
    assert sorted(members.tolist()) == ids.tolist()
    for t in range(index.n_tiers):
        assert np.all(store.tier[index.tiers[t].members()] == t)
    assert index.sizes()[-1] > index.sizes()[0]           # most of a year-old store is dormant
    assert agent.trace[-1]["event"] == "preloaded" and agent.trace[-1]["memories"] == 2000
    # the tiers are what a full pass at the start assigns
    assert np.array_equal(agent.tiering.targets(store, ids, 0.0, full=True), store.tier[ids])


def test_preload_options_are_checked_in_one_line():
    with pytest.raises(ConfigError, match=r"^preload.important: expected a number from 0 to 1, got 3$"):
        PreloadSpec(important=3)
    with pytest.raises(ConfigError, match=r"^preload.memories: expected an integer >= 0"):
        PreloadSpec(memories=-1)


def _frame(tmp_path, name, overrides):
    cfg, choices = compose(["generate.days=5", "generate.turns_per_day=15", "generate.needles=4",
                            "generate.probe_min_days=2", "preload.memories=1500", "embedder.dim=128", *overrides])
    return run(cfg, tmp_path / name, choices).drop(columns=["latency_ms"])


def test_generated_scenario_with_a_preloaded_store_runs_deterministically_and_incrementally(tmp_path):
    a = _frame(tmp_path, "a", [])
    b = _frame(tmp_path, "b", [])
    full = _frame(tmp_path, "full", ["agent.incremental_rebalance=false"])
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, full)       # the incremental rebalance changes nothing
    assert trace_events(tmp_path / "a") == trace_events(tmp_path / "full")
    assert (tmp_path / "a" / "generated" / "gen_en_5d_s0.yaml").is_file()
    probes = a[a["check"] == "probe"]          # generated needles: probes scored by recall, no pass/fail rows
    assert len(probes) == 8 and set(probes["k"]) == {10} and probes["recall"].notna().all()
    assert not (a["check"] == "recall").any()
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert list(summary["scenarios"]) == ["gen_en_5d_s0"]


def test_run_with_a_generated_scenario_and_a_preloaded_store_writes_a_report(cli, tmp_path):
    r = cli("run", "generate.days=3", "generate.turns_per_day=8", "generate.needles=2", "preload.memories=500",
            "embedder.dim=64", f"hydra.run.dir={tmp_path / 'out'}")
    assert r.returncode == 0, r.stderr
    assert "no expectations to pass: 4 probes of generated data (generated), scored by recall" in r.stdout
    assert (tmp_path / "out" / "report.md").is_file() and (tmp_path / "out" / "generated" / "gen_en_3d_s0.yaml").is_file()
    r = cli("run", "generate.days=3", "generate.awaken=5")
    assert r.returncode == 2
    assert r.stderr.strip() == "mtsbench: generate.awaken: expected a number from 0 to 1, got 5"
