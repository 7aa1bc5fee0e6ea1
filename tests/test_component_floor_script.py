"""scripts/component_floor.py: every component call is recorded once (the outermost of a nest),
its arguments copied, the replay gives the same results, the originals are restored, and the
report adds the components' time to the physical floor."""

import json
from pathlib import Path

import numpy as np

from mtsbench.mechanisms import attention as mech_attention
from mtsbench.mechanisms.decay import Exponential, PowerLaw
from mtsbench.mechanisms.tiers import Thresholds
from mtsbench.memory import attention as memory_attention

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "component_floor.py"


def _places(import_file):
    return import_file("ab_steps_script", ROOT / "scripts" / "ab_steps.py").places


def test_calls_are_recorded_with_copies_and_replayed_alike(import_file):
    cf = import_file("component_floor_script", SCRIPT)
    boost, retention = mech_attention.boost, PowerLaw.retention
    recorder = cf.Recorder()
    try:
        assert recorder.wrap(_places(import_file)) > 0
        assert memory_attention.boost is not boost             # the copy imported by memory.attention too
        dt = np.array([0.0, 24.0])
        first = PowerLaw(tau=24.0, d=1.0).retention(dt, np.ones(2))
        dt[:] = 99.0                                           # the recording kept the value at the call
        memory_attention.boost(np.array([1.0]), 2.0, 10.0)
        Thresholds().assign(np.array([6.0]), np.array([1]), None, None, None)
    finally:
        recorder.restore()
    assert mech_attention.boost is boost and memory_attention.boost is boost and PowerLaw.retention is retention
    labels = [label for label, *_ in recorder.calls]
    # assign calls tiers_by_cutoffs twice inside: a nest counts once, as its outermost call
    assert labels == ["PowerLaw.retention", "mechanisms.attention.boost", "Thresholds.assign"]
    _, fn, keep, args, kwargs = recorder.calls[0]
    assert keep == 1 and isinstance(args[0], PowerLaw) and recorder.calls[1][2] == 0     # boost: a function
    assert args[1].tolist() == [0.0, 24.0]
    assert fn(*args, **kwargs).tolist() == first.tolist() == [1.0, 0.5]
    total, per = cf.replay(recorder.calls)
    assert set(per) == set(labels) and total > 0 and all(v > 0 for v in per.values())   # two passes: no order


def test_a_call_that_raises_leaves_the_recorder_balanced(import_file):
    cf = import_file("component_floor_script", SCRIPT)
    recorder = cf.Recorder()
    try:
        recorder.wrap(_places(import_file))
        try:
            Thresholds().assign(np.array(["x"]), np.array([1]), None, None, None)   # strings: numpy raises
        except Exception:
            pass
        assert recorder.depth == 0
        Thresholds().assign(np.array([6.0]), np.array([1]), None, None, None)
    finally:
        recorder.restore()
    assert [label for label, *_ in recorder.calls] == ["Thresholds.assign", "Thresholds.assign"]


def test_a_replay_runs_on_fresh_copies(import_file):
    cf = import_file("component_floor_script", SCRIPT)

    def clears(values):
        values[:] = 0.0

    kept = np.array([1.0, 2.0])
    cf.replay([("clears", clears, 0, (kept,), {})])
    assert kept.tolist() == [1.0, 2.0]


def test_a_method_keeps_its_instance_and_copies_the_rest(import_file):
    cf = import_file("component_floor_script", SCRIPT)
    curve, dt = Exponential(half_life=2.0), np.array([2.0])
    args, _ = cf.copied((curve, dt, np.ones(1)), {}, keep=1)
    assert args[0] is curve and args[1] is not dt and args[1].tolist() == [2.0]
    args, _ = cf.copied((dt, 1.0, 5.0), {}, keep=0)
    assert args[0] is not dt


def test_the_report_adds_the_components_to_the_floor(import_file, tmp_path):
    cf = import_file("component_floor_script", SCRIPT)
    boost, retention = mech_attention.boost, PowerLaw.retention
    assert cf.main(["--memories", "2000", "--replays", "2", "--out", str(tmp_path)]) == 0
    assert mech_attention.boost is boost and memory_attention.boost is boost and PowerLaw.retention is retention
    saved = json.loads((tmp_path / "component_floor.json").read_text())
    s = saved["summary"]
    assert s["steps"] > 0 and s["component_ms"] > 0 and s["physical_floor_ms"] > 0
    assert abs(s["floor_with_components_ms"] - s["physical_floor_ms"] - s["component_ms"]) < 1e-3
    calls = {r["component call"]: r for r in saved["calls"]}
    assert {"PowerLaw.retention", "Exponential.retention", "Radius.amounts", "Thresholds.assign"} <= set(calls)
    # dual attention reads both curves together: as many long-term as short-term retentions
    assert calls["PowerLaw.retention"]["calls_per_step"] == calls["Exponential.retention"]["calls_per_step"]
    assert "| floor with the components |" in (tmp_path / "component_floor.md").read_text()
