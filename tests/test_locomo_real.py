"""The real LoCoMo file, end to end through the installed CLI: one conversation imported
(with and without ``--annotations``) and run on the defaults (mock LLM, hashing embedder).

The file (CC BY-NC 4.0) is never in the repository: set ``MTSBENCH_LOCOMO`` to its path
(``MTSBENCH_LOCOMO=PATH make test``; CI's ``.ci/run`` sets it when the file is there).
Without it this module skips. Only sane bounds are checked, never exact figures: the
point is that every process runs on dialogue nobody wrote for these tests.
"""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from mtsbench.scenario import load_scenario
from mtsbench.outputs.stream import trace_events

ENV = "MTSBENCH_LOCOMO"
LOCOMO = os.environ.get(ENV, "")
SKIP = (f"{ENV} is not set (point it at LoCoMo's locomo10.json to run the real-data test)" if not LOCOMO
        else f"{ENV}={LOCOMO}: no such file" if not Path(LOCOMO).is_file() else None)
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")

OUTPUTS = ["summary.json", "results.parquet", "metrics.csv", "trace.parquet", "timelines.parquet", "report.md"]


def import_and_run(cli, tmp_path, *flags):
    """``mtsbench import locomo FILE --limit 1 FLAGS`` then ``mtsbench run`` on its folder:
    the imported scenario, the run's summary and its trace."""
    done = cli("import", "locomo", LOCOMO, "-o", tmp_path / "scenario", "--limit", "1", *flags)
    assert done.returncode == 0, done.stderr
    files = sorted((tmp_path / "scenario").glob("*.yaml"))
    assert len(files) == 1, files                            # --limit 1: the first conversation only
    scenario = load_scenario(files[0])
    run = tmp_path / "run"
    done = cli("run", f"scenarios=[{tmp_path / 'scenario'}]", f"hydra.run.dir={run}")
    assert done.returncode == 0, done.stderr
    assert "evidence recall@k" in done.stdout
    for name in OUTPUTS:
        assert (run / name).is_file() and (run / name).stat().st_size > 0, name
    return scenario, json.loads((run / "summary.json").read_text()), trace_events(run), run


def check_recall(ev, probes, abstain):
    assert (ev["probes"], ev["abstain"]) == (probes, abstain)
    assert 0 < ev["with_evidence"] <= probes - abstain
    for keys in ([f"recall@{d}" for d in ev["depths"]], [f"recall@{b}t" for b in ev["budgets"]]):
        values = [ev[k] for k in keys]
        assert all(0.0 <= v <= 1.0 for v in values), dict(zip(keys, values))
        assert values == sorted(values), dict(zip(keys, values))      # non-decreasing in k / budget
        assert values[-1] > 0, dict(zip(keys, values))


@pytest.mark.parametrize("annotations", [False, True], ids=["turns", "annotations"])
def test_real_locomo_conversation_runs_every_process(cli, tmp_path, annotations):
    scenario, summary, trace, run = import_and_run(cli, tmp_path, *(["--annotations"] if annotations else []))
    sid = scenario.id
    kinds = [s.kind for s in scenario.steps]
    turns, probes, nights = kinds.count("say"), kinds.count("probe"), kinds.count("idle")
    abstain = sum(s.kind == "probe" and s.abstain for s in scenario.steps)
    assert turns > 100 and probes > 50 and abstain > 0    # a real conversation, not a fixture
    assert (nights > 0) == annotations                      # the nights come with --annotations only

    assert summary["status"] == "complete" and summary["scenarios_done"] == [sid]
    overall = summary["overall"]
    assert overall["probes"] == probes
    check_recall(overall["evidence"], probes, abstain)
    check_recall(summary["scenarios"][sid]["evidence"], probes, abstain)
    results = pd.read_parquet(run / "results.parquet")
    assert (results["record"] == "probe").sum() == probes
    assert set(results.loc[results["record"] == "probe", "step"]) == {s.id for s in scenario.steps
                                                                       if s.kind == "probe"}
    metrics = pd.read_csv(run / "metrics.csv")
    assert metrics.loc[metrics["kind"] == "probe", "step"].nunique() == probes

    # No LLM failures, positive costs.
    assert overall["llm_failures"] == 0 and overall["llm_failure_rate"] == 0
    processes = overall["processes"]
    assert all(p["failures"] == 0 for p in processes.values()), processes
    assert summary["scenarios"][sid]["llm"]["failures"] == 0
    cost = summary["cost"]["overall"]
    assert cost["turns"] == turns
    assert cost["total"] > 0 and cost["per_turn"] > 0 and cost["llm_calls"] > 0 and cost["tokens"] > 0
    assert overall["llm_calls"] > 0 and overall["tokens"] > 0

    def events(kind):
        return [e for e in trace if e["event"] == kind and e["scenario"] == sid]

    created = {e["id"]: e["kind"] for e in events("created")}
    made = [created[e["id"]] for e in events("created")]

    # Labelling: every turn became a memory with an attention score in (0, cap].
    cap = OmegaConf.load(run / ".hydra" / "config.yaml").dual.cap
    turn_scores = [e["score"] for e in events("scored") if created.get(e["id"]) == "turn"]
    assert made.count("turn") == turns and len(turn_scores) == turns
    assert all(0 < s <= cap for s in turn_scores) and len(set(turn_scores)) > 1

    # Summarization: summaries made, through the LLM.
    assert processes["summarize"]["runs"] > 0 and processes["summarize"]["calls"] > 0
    assert len(events("summarized")) > 0 and made.count("summary") > 0
    # Inference runs on every turn (it has nothing to infer from without infer hints).
    assert processes["infer"]["runs"] > 0

    if annotations:
        # Consolidation ran on each idle night, at the night's time, over some facts.
        idle = [e["t"] for e in events("idle")]
        consolidations = events("consolidation")
        assert len(idle) == nights and processes["consolidate"]["runs"] == nights
        assert [e["t"] for e in consolidations] == idle
        assert sum(len(e["facts"]) for e in consolidations) > 0
        # Events tagged, facts extracted (from the data set's own annotations).
        assert len(events("event")) > 0 and made.count("event") > 0
        assert made.count("fact") > 0 and sum(e["facts"] for e in events("summarized")) > 0


def test_the_model_s_recording_of_the_first_conversation_replays_whole(cli, tmp_path):
    """recordings/locomo_conv_26.jsonl (the packaged model's attention labels and summaries on
    LoCoMo's first conversation, ``make record LOCOMO=PATH``) replays: every request of the run
    is in it. That cassette quotes the data set, so it is never committed: skipped where it was
    not recorded."""
    cassette = Path(__file__).resolve().parent.parent / "recordings" / "locomo_conv_26.jsonl"
    if not cassette.is_file():
        pytest.skip(f"{cassette} is not recorded on this machine (make record LOCOMO=PATH; never committed)")
    done = cli("import", "locomo", LOCOMO, "-o", tmp_path / "scenario", "--limit", "1")
    assert done.returncode == 0, done.stderr
    run = tmp_path / "run"
    done = cli("run", "llm=replay", f"llm.cassette={cassette}", "llm.on_failure=skip", "ablate=inference",
               f"scenarios=[{tmp_path / 'scenario' / 'locomo_conv_26.yaml'}]", f"hydra.run.dir={run}", timeout=900)
    assert done.returncode == 0, done.stderr
    overall = json.loads((run / "summary.json").read_text())["overall"]
    records = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines() if line.strip()]
    recorded = json.loads(cassette.with_suffix(".meta.json").read_text())     # the recording run's own counts
    assert overall["llm_calls"] + overall["llm_retries"] == len(records)
    assert (overall["llm_calls"], overall["llm_failures"]) == (recorded["calls"], recorded["failures"])
