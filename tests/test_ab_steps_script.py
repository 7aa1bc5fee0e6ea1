"""scripts/ab_steps.py: blocks alternate A B B A, every mtsbench reference to OLD (``from x import f``
copies included) is swapped for NEW in NEW's blocks and restored after, and the report names both."""

import sys
from pathlib import Path

import numpy as np

from mtsbench.memory import graph_index, index, memory, topk

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "ab_steps.py"


def test_blocks_alternate_a_b_b_a(import_file):
    ab = import_file("ab_steps_script", SCRIPT)
    assert ab.order(9) == [0, 1, 1, 0, 0, 1, 1, 0, 0]


def test_every_copy_of_the_function_is_found(import_file):
    ab = import_file("ab_steps_script", SCRIPT)
    holders = {getattr(h, "__name__", h) for h, name in ab.places(topk.top_per_row)}
    assert {"mtsbench.memory.topk", "mtsbench.memory.memory", "mtsbench.memory.index",
            "mtsbench.memory.graph_index"} <= holders


def test_new_runs_in_its_blocks_and_old_is_restored(import_file, tmp_path, monkeypatch, capsys):
    ab = import_file("ab_steps_script", SCRIPT)
    (tmp_path / "counted_topk.py").write_text(
        "from mtsbench.memory.topk import top_per_row as original\ncalls = [0]\n\n"
        "def top_per_row(scores, k):\n    calls[0] += 1\n    return original(scores, k)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    old = topk.top_per_row
    assert ab.main(["mtsbench.memory.topk:top_per_row=counted_topk:top_per_row", "--memories", "2000",
                    "--block", "50"]) == 0
    counted = sys.modules["counted_topk"]
    assert counted.calls[0] > 0                                  # NEW ran, reached through the copies
    assert memory.top_per_row is index.top_per_row is graph_index.top_per_row is topk.top_per_row is old
    out = capsys.readouterr().out
    assert "OLD mtsbench.memory.topk:top_per_row:" in out and "NEW counted_topk:top_per_row:" in out
    ratio = float(out.split("NEW / OLD: ")[1].split()[0])
    assert np.isfinite(ratio) and ratio > 0


def test_a_spec_without_an_attribute_is_one_line(import_file):
    ab = import_file("ab_steps_script", SCRIPT)
    try:
        ab.resolve("mtsbench.memory.topk")
    except SystemExit as e:
        assert "expected module:attribute" in str(e)
    else:
        raise AssertionError("no error")
