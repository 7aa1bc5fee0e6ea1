"""scripts/profile_lifetime.py: a haystack of real-format scenarios driven through one system, a
profiled window before each size, ms per message by block, and what the design did per message."""

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "profile_lifetime.py"


def test_windows_counts_and_blocks_of_a_small_haystack(import_file, tmp_path, monkeypatch):
    pl = import_file("profile_lifetime_script", SCRIPT)
    for sub, names in (("beam", ["cold_then_fever", "contradiction"]), ("locomo", ["deep_memory", "flu_fades"])):
        (tmp_path / sub).mkdir()
        for n in names:
            shutil.copy(ROOT / "scenarios" / f"{n}.yaml", tmp_path / sub / f"{n}.yaml")
    monkeypatch.setattr(pl, "BLOCK", 10)
    case = pl.drive_case("hashing-hybrid", tmp_path, [20, "all"], 5, None)
    sizes = [w["messages"] for w in case["windows"]]
    assert sizes == [5, 5] and case["messages"] > 20
    first = case["windows"][0]
    assert first["what"].endswith("15-20") and first["memories"] > 20
    per = first["per_message"]
    assert per["embed_calls"] > 0 and per["encode_calls"] == 0          # hashing: no model behind a cache
    assert per["postings_written"] > 0 and per["tier_moves"] >= 0
    assert {m["mechanism"] for m in first["mechanisms"]} >= {"perception: store a turn", "workload=reply retrieval"}
    assert set(case["ms_per_message_by_block"]) <= set(range(case["messages"] // 10 + 1))
    out = tmp_path / "out"
    out.mkdir()
    (out / "lifetime.json").write_text(json.dumps({"hashing-hybrid": case}))
    md = pl.markdown({"hashing-hybrid": case})
    assert "| hashing-hybrid |" in md and "haystack messages 15-20" in md


def test_moves_back_after_a_promotion_are_told_apart_by_how_soon(import_file):
    pl = import_file("profile_lifetime_script", SCRIPT)
    moves = pl.Moves()
    for t, why, ids in ((0.0, "promoted", [1, 2]), (1800.0, "rebalance", [1]), (7200.0, "rebalance", [2]),
                        (7300.0, "rebalance", [2])):
        moves.count({"t": t, "event": "moved", "why": why, "ids": ids})
    counts = moves.snapshot()
    assert counts["moves_promoted"] == 2 and counts["moves_rebalance"] == 3
    assert counts["moves_back_after_promotion"] == 2        # memory 2's second move follows a rebalance
    assert counts["moves_back_within_1h"] == 1              # memory 1, half an hour after its promotion
