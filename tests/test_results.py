"""Metrics from saved results: results.parquet holds what the system returned, and
``mtsbench evaluate`` recomputes every metric from it and the scenarios alone."""

import json
from pathlib import Path

import pandas as pd
import pytest

from mtsbench.outputs.results import FILE, load

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of three bundled scenarios (probes, checks, events) and a generated one."""
    import os
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("run") / "job"
    exe = Path(sys.executable).parent / "mtsbench"
    r = subprocess.run([str(exe), "run", "scenarios=[milk_allergy,disneyland_twice,cold_then_fever_zh]",
                        "generate.days=2", "generate.turns_per_day=12", "generate.needles=3",
                        "generate.probe_min_days=1", "generate.probe_max_days=1", f"hydra.run.dir={out}"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    return out


def test_evaluate_regenerates_metrics_and_summary_exactly(cli, finished, tmp_path):
    run = tmp_path / "copy"
    run.mkdir()
    for name in (FILE, "metrics.csv", "summary.json", "trace.parquet", "timelines.parquet"):
        (run / name).write_bytes((finished / name).read_bytes())
    if (finished / "generated").exists():      # the generated scenario's path is kept relative to the run
        (run / "generated").mkdir()
        for f in (finished / "generated").iterdir():
            (run / "generated" / f.name).write_bytes(f.read_bytes())
    (run / "metrics.csv").unlink()
    (run / "summary.json").unlink()
    r = cli("evaluate", run)
    assert r.returncode == 0, r.stderr
    assert (run / "metrics.csv").read_bytes() == (finished / "metrics.csv").read_bytes()
    assert (run / "summary.json").read_bytes() == (finished / "summary.json").read_bytes()
    assert (run / "report.md").exists()


def test_results_hold_rankings_with_provenance_tokens_and_state_values(finished):
    records, meta = load(finished / FILE)
    assert list(records["seq"]) == list(range(len(records)))
    probes = records[records["record"] == "probe"]
    assert len(probes) > 0
    for rec in probes.itertuples():
        n = len(rec.ranked_ids)
        assert n == len(rec.ranked_scores) == len(rec.ranked_provenance) == len(rec.ranked_tokens)
        assert n <= 50 and rec.used <= n and all(t > 0 for t in rec.ranked_tokens)
        assert list(rec.ranked_scores) == sorted(rec.ranked_scores, reverse=True)
    checks = records[records["record"] == "check"]
    assert len(checks) > 0 and not checks["unsupported"].any()
    assert {type(json.loads(v)) for v in checks["value"]} <= {float, int, bool, type(None), list}
    assert set(meta["scenarios"]) >= {"milk_allergy", "disneyland_twice", "cold_then_fever_zh"}
    assert meta["config"]["evaluation"]["recall_at"] == [5, 10, 25, 50]
    # every observed step has its record, with the labelled score
    observed = records[records["record"] == "observe"]
    assert observed["score"].notna().all()


def test_a_new_metric_needs_no_rerun(finished):
    """What a researcher does: compute their own metric from the saved rankings."""
    records, _ = load(finished / FILE)
    probes = records[records["record"] == "probe"]
    context_tokens = probes["ranked_tokens"].map(lambda t: int(sum(t[:5])))
    assert (context_tokens > 0).all()


def test_evaluate_refuses_a_folder_without_results_in_one_line(cli, tmp_path):
    r = cli("evaluate", tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "results.parquet" in r.stderr


def test_bm25_runs_every_bundled_scenario_with_unsupported_state(cli, tmp_path):
    out = tmp_path / "bm25"
    r = cli("run", "system=bm25", f"hydra.run.dir={out}")
    assert r.returncode == 0, r.stderr
    assert "unsupported" in r.stdout
    whole = json.loads((out / "summary.json").read_text())
    summary = whole["overall"]
    assert whole["choices"]["system"] == "bm25"
    assert summary["unsupported"] > 0 and summary["checks"] + summary["unsupported"] == 58
    metrics = pd.read_csv(out / "metrics.csv")
    unsupported = metrics[metrics["value"] == "unsupported"]
    assert len(unsupported) == summary["unsupported"] and unsupported["passed"].isna().all()
    assert summary["recall"] is not None and summary["scored"] > 0
    # it labels nothing (labels = False): an attention expectation does not apply, never fails
    attention = metrics[metrics["check"] == "attention"]
    assert len(attention) > 0 and (attention["value"] == "unsupported").all()


def test_recall_at_a_token_budget_by_hand():
    """A long memory pays for its length: evidence counts only within B tokens."""
    from mtsbench.evaluation.evidence import probe_fields
    from mtsbench.scenario.model import Expect, Step

    step = Step(9, "q", 0.0, "probe", "?", expect=Expect(recall=("a", "b", "c"), k=3))
    provenance = [("x",), ("a", "b"), ("c",)]        # a 2-turn summary at rank 2
    fields = probe_fields(step, provenance, (1, 2, 3), [100, 300, 50], (99, 256, 400, 512), earned=provenance)
    assert [fields[f"recall@{d}"] for d in (1, 2, 3)] == [0.0, 0.6667, 1.0]
    # 99: nothing fits; 256: only x (the summary would overflow); 400: x and the summary; 512: all
    assert [fields[f"recall@{b}t"] for b in (99, 256, 400, 512)] == [0.0, 0.0, 0.6667, 1.0]


def test_budget_columns_and_table_in_every_run(finished):
    metrics = pd.read_csv(finished / "metrics.csv")
    for b in (256, 512, 1024, 2048):
        assert f"recall@{b}t" in metrics.columns
    evidence = json.loads((finished / "summary.json").read_text())["overall"]["evidence"]
    assert evidence["budgets"] == [256, 512, 1024, 2048]
    assert evidence["recall@2048t"] is not None
    assert "R@256t" in (finished / "report.md").read_text()


def test_a_run_streamed_in_small_chunks_writes_the_same_outputs(finished, tmp_path):
    """The runner streams trace and timelines in chunks of ``CHUNK_ROWS`` (bounded memory for
    a long scenario): with 9-row chunks, the same files as the run in one piece per scenario,
    only cut into more row groups."""
    import subprocess
    import sys

    import pyarrow.parquet as pq

    out = tmp_path / "job"
    args = ["run", "scenarios=[milk_allergy,disneyland_twice,cold_then_fever_zh]", "generate.days=2",
            "generate.turns_per_day=12", "generate.needles=3", "generate.probe_min_days=1",
            "generate.probe_max_days=1", f"hydra.run.dir={out}"]
    code = f"import sys, mtsbench.harness.runner; mtsbench.harness.runner.CHUNK_ROWS = 9; from mtsbench.cli import main; " \
           f"sys.exit(main({args!r}))"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert not list(out.glob("*.partial"))
    for name in ("trace.parquet", "timelines.parquet"):
        assert pq.ParquetFile(out / name).metadata.num_row_groups > 2 * pq.ParquetFile(
            finished / name).metadata.num_row_groups
        pd.testing.assert_frame_equal(pd.read_parquet(out / name), pd.read_parquet(finished / name))
    pd.testing.assert_frame_equal(load(out / FILE)[0].drop(columns="latency_ms"),
                                  load(finished / FILE)[0].drop(columns="latency_ms"))
    pd.testing.assert_frame_equal(pd.read_csv(out / "metrics.csv").drop(columns="latency_ms"),
                                  pd.read_csv(finished / "metrics.csv").drop(columns="latency_ms"))


def test_the_trace_keeps_every_field_through_parquet(tmp_path):
    """Fields differ between events and so do a field's types (belief: a number, a pair):
    kept as JSON, they come back as emitted, in order, one row group per scenario."""
    import numpy as np
    import pyarrow.parquet as pq

    from mtsbench.api import Run
    from mtsbench.outputs.stream import SCHEMAS, RunWriter, join_parts, trace_events

    class Scenario:
        def __init__(self, sid):
            self.id = sid

    class Done:
        def __init__(self, sid, trace, timeline):
            self.scenario, self.trace, self.timeline, self.records = Scenario(sid), trace, timeline, []

    a = [{"scenario": "a", "t": 0.0, "event": "impression", "key": "咖啡", "belief": 0.7},
         {"scenario": "a", "t": 1.5, "event": "merged", "id": np.int64(3), "belief": [0.2, 0.9]}]
    b = [{"scenario": "b", "t": 2.0, "event": "moved", "ids": [1, 2], "to": [0, 1], "why": "rebalance"}]
    row = {"scenario": "b", "index": 0, "step": "s", "memory": "m", "t": 2.0, "long": 1.0, "short": 0.5, "tier": 1}
    writer = RunWriter(tmp_path, {"scenarios": {"a": {}, "b": {}}}, ["a", "b"])
    writer.add(Done("a", a, []))
    writer.add(Done("b", b, [row]))
    assert len(pd.read_parquet(tmp_path / "trace.parquet.partial")) == 3        # readable before the end
    for name in ("trace.parquet", "timelines.parquet"):                            # as finish() joins them
        join_parts(tmp_path / f"{name}.partial", tmp_path / name, SCHEMAS[name])
    assert not list(tmp_path.glob("*.partial"))
    assert trace_events(tmp_path) == [{**e, "id": 3} if "id" in e else e for e in a + b]
    assert pq.ParquetFile(tmp_path / "trace.parquet").metadata.num_row_groups == 2
    raw = pd.read_parquet(tmp_path / "trace.parquet")
    assert list(raw.columns) == ["scenario", "t", "event", "fields"] and json.loads(raw["fields"][0])["key"] == "咖啡"
    trace = Run(tmp_path).trace
    assert trace["belief"].tolist()[:2] == [0.7, [0.2, 0.9]] and trace["ids"].tolist()[2] == [1, 2]
    assert pd.read_parquet(tmp_path / "timelines.parquet").to_dict("records") == [row]


def test_runs_written_before_parquet_are_still_read(tmp_path):
    from mtsbench.api import Run
    from mtsbench.report.data import tier_events
    from mtsbench.outputs.stream import read_timelines, trace_events

    events = [{"scenario": "s", "t": 0.0, "event": "created", "id": 1, "tier": 0},
              {"scenario": "s", "t": 5.0, "event": "moved", "ids": [1], "to": [2], "why": "rebalance"},
              {"scenario": "s", "t": 6.0, "event": "idle", "step": "x", "duration": 1.0}]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (tmp_path / "timelines.csv").write_text("scenario,index,step,memory,t,long,short,tier\ns,0,a,a,0.0,1.0,0.5,0\n")
    assert trace_events(tmp_path) == events and tier_events(tmp_path) == events[:2]
    assert Run(tmp_path).trace["event"].tolist() == ["created", "moved", "idle"]
    assert read_timelines(tmp_path)["tier"].tolist() == [0] and len(Run(tmp_path).timelines) == 1
