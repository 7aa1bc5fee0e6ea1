"""The frontier study's own logic (issue 35), on hand-made trial tables: the halves of the data,
the question it answers on the held-out half, each system's chosen point, the held-out fronts."""

from __future__ import annotations

import pandas as pd
import pytest

from mtsbench.studies.frontier import halves, load_plan
from mtsbench.studies.frontier_report import answer, chosen, held_front


def _rows(system, role, points):
    """(trial, tuning recall, tuning work, on the tuning front, held-out recall, held-out work)."""
    return [{"system": system, "role": role, "trial": t, "state": "complete", "recall": r, "work": w, "front": f,
             "held_out_recall": hr, "held_out_work": hw, "params": f"x={t}", "mechanisms_all_on": "arousal, tiers"}
            for t, r, w, f, hr, hw in points]


def test_the_question_is_asked_against_the_best_flat_held_out_point():
    frame = pd.DataFrame(_rows("flat_rag", "flat", [(0, 0.70, 400.0, True, 0.72, 410.0)])
                         + _rows("bm25", "flat", [(0, 0.80, 500.0, True, 0.78, 520.0), (1, 0.60, 200.0, True, 0.61, 190.0)])
                         + _rows("mts", "design", [(3, 0.76, 900.0, True, 0.75, 500.0),     # 0.96x at 0.96x work: a match
                                                   (5, 0.79, 2000.0, True, 0.77, 1900.0),   # recall enough, too much work
                                                   (8, 0.50, 300.0, True, 0.49, 280.0)]))
    a = answer(frame)
    assert a["flat"]["system"] == "bm25" and a["flat"]["trial"] == 0
    assert a["target"] == pytest.approx(0.95 * 0.78) and a["limit"] == 520.0
    assert a["hit"]["trial"] == 3
    frame.loc[(frame["system"] == "mts") & (frame["trial"] == 3), "held_out_recall"] = 0.70     # now below 0.741
    a = answer(frame)
    assert a["hit"] is None and a["design_best"]["trial"] == 5 and a["best_within"]["trial"] == 3


def test_each_system_chooses_on_tuning_values_and_the_held_out_front_is_per_system():
    frame = pd.DataFrame(_rows("mts", "design", [(1, 0.80, 900.0, True, 0.70, 800.0), (2, 0.60, 300.0, True, 0.65, 350.0),
                                                 (4, 0.55, 600.0, False, None, None)])
                         + _rows("bm25", "flat", [(0, 0.70, 100.0, True, 0.69, 120.0)]))
    picked = chosen(frame).set_index("system")
    assert picked.loc["mts", "trial"] == 1 and picked.loc["bm25", "trial"] == 0   # best tuning recall, not held out
    front = held_front(frame)
    assert list(frame.loc[front, "trial"]) == [1, 2, 0]                            # never compared across systems


def test_the_halves_come_from_the_plan(tmp_path):
    folder = tmp_path / "locomo"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.yaml").write_text("id: x\n")
    plan = {"tune": {"locomo": ["a"]}, "held_out": {"locomo": None}}
    tune, held = halves(plan, {"locomo": folder})
    assert [p.stem for p in tune] == ["a"] and [p.stem for p in held] == ["b", "c"]
    with pytest.raises(SystemExit, match="no scenario z"):
        halves({"tune": {"locomo": ["z"]}}, {"locomo": folder})
    packaged = load_plan()
    assert packaged["tune"]["locomo"] == ["locomo_conv_26", "locomo_conv_30", "locomo_conv_41", "locomo_conv_42",
                                          "locomo_conv_43"]
    assert {s["experiment"] for s in packaged["systems"]} == {"frontier_mts", "frontier_flat", "frontier_bm25"}
