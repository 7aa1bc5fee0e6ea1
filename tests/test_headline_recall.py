"""One report, one verdict (issue 51): every recall a report headlines is earned credit.

On the bundled set plus one real LoCoMo conversation and one real BEAM chat, the seed design
and flat retrieval are run and compared by ``mtsbench report A B``. Where a summary's credit
by provenance alone flatters the design (its summaries name every turn they cover), the
Summary's ``recall``, the leaderboard, the Pareto data and the paired test must all take the
side of earned credit: the sign of every headline comparison equals the sign of the earned
comparison at each probe's own k, computed here from ``results.parquet`` and the scenarios
alone, with no code of the report.

The data sets are never in the repository: set ``MTSBENCH_LOCOMO`` (LoCoMo's locomo10.json)
and ``MTSBENCH_BEAM`` (a folder of BEAM's chats); without them this module skips.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mtsbench.cli import main
from mtsbench.outputs.results import load
from mtsbench.scenario import load_scenario
from mtsbench.scenario.catalog import bundled_names

LOCOMO, BEAM = os.environ.get("MTSBENCH_LOCOMO", ""), os.environ.get("MTSBENCH_BEAM", "")
SKIP = ("MTSBENCH_LOCOMO and MTSBENCH_BEAM must both be set (LoCoMo's locomo10.json, a folder of BEAM's chats)"
        if not (LOCOMO and BEAM) else None if Path(LOCOMO).is_file() and Path(BEAM).is_dir()
        else f"MTSBENCH_LOCOMO={LOCOMO} or MTSBENCH_BEAM={BEAM}: not found")
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")
MTSBENCH = Path(sys.executable).parent / "mtsbench"
CONFIGS = {"design": [], "flat": ["preset=flat_rag"]}


def _mtsbench(*args, cwd):
    done = subprocess.run([str(MTSBENCH), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The design and flat retrieval on the bundled set, one LoCoMo conversation and one BEAM
    chat, and the report comparing them: {name: run folder}, the report folder."""
    root = tmp_path_factory.mktemp("headline")
    _mtsbench("import", "locomo", LOCOMO, "-o", root / "data", "--limit", "1", cwd=root)
    _mtsbench("import", "beam", BEAM, "-o", root / "data", "--limit", "1", cwd=root)
    scenarios = f"scenarios=[{','.join([*bundled_names(), str(root / 'data')])}]"
    folders = {name: root / name for name in CONFIGS}
    for name, overrides in CONFIGS.items():
        _mtsbench("run", scenarios, *overrides, f"hydra.run.dir={folders[name]}", cwd=root)
    _mtsbench("report", *folders.values(), "--out", root / "report", cwd=root)
    return folders, root / "report"


def earned_at_own_k(run: Path) -> dict[str, float]:
    """Mean over probes with evidence of the share of their evidence steps that a memory among
    the first k used carries (``ranked_earned``), from the saved results and scenarios only:
    over all probes (``all``) and per data set (the scenario's first tag for imported and
    generated data, ``bundled`` otherwise)."""
    records, meta = load(run / "results.parquet")
    scenarios = {sid: load_scenario(info["path"]) for sid, info in meta["scenarios"].items()}
    shares: dict[str, list[float]] = {}
    for rec in records[records["record"] == "probe"].itertuples():
        scenario = scenarios[rec.scenario]
        step = scenario.steps[int(rec.index)]
        if not step.expect.recall:
            continue
        top = [set(p) for p in rec.ranked_earned[: min(step.expect.k, int(rec.used))]]
        share = np.mean([any(s in p for p in top) for s in step.expect.recall])
        name = scenario.tags[0] if scenario.tags[0] in ("locomo", "beam", "generated") else "bundled"
        for key in ("all", name):
            shares.setdefault(key, []).append(share)
    return {key: float(np.mean(v)) for key, v in shares.items()}


def test_every_headline_takes_the_side_of_earned_credit(runs):
    folders, report = runs
    by_set = {name: earned_at_own_k(folder) for name, folder in folders.items()}
    earned = {name: v["all"] for name, v in by_set.items()}
    truth = np.sign(earned["design"] - earned["flat"])
    assert truth != 0, earned

    summary = pd.read_csv(report / "summary.csv")
    by_name = {name: summary[summary["config"].str.startswith(f"source={name}")].iloc[0] for name in folders}
    for name in folders:        # the Summary's recall (and every Pareto axis, read from it) is earned at own k
        assert by_name[name]["recall"] == pytest.approx(earned[name], abs=1e-3), (name, earned)
    assert np.sign(by_name["design"]["recall"] - by_name["flat"]["recall"]) == truth
    provenance = by_name["design"]["recall_provenance@k"] - by_name["flat"]["recall_provenance@k"]
    assert not np.isnan(provenance)                           # kept, under its own name

    text = (report / "report.md").read_text(encoding="utf-8")
    board = text.split("## Leaderboard (every source)")[1].split("\n## ")[0]
    first = next(line for line in board.splitlines() if line.startswith("| 1 |"))
    assert f"| {'design' if truth > 0 else 'flat'} |" in first, board
    paired = next(line for line in text.splitlines() if line.startswith("- **earned recall@k**"))
    winner = "design" if truth > 0 else "flat"
    assert f"`source={winner}" in paired.split(":")[1] or f"highest mean `source={winner}" in paired, paired
    table = text.split("## Per data set")[1].split("\n## ")[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("| source=")]
    for data_set in ("bundled", "generated", "locomo", "beam"):    # never pooled alone; each its own sign
        got = {r[0].split()[0].removeprefix("source="): float(r[4]) for r in rows if r[1] == data_set}
        assert got.keys() == folders.keys(), table
        for name in folders:
            assert got[name] == pytest.approx(by_set[name][data_set], abs=2e-3), (data_set, name)
        assert np.sign(round(got["design"] - got["flat"], 3)) == np.sign(round(by_set["design"][data_set]
                                                                              - by_set["flat"][data_set], 3))
    for name in folders:        # each run's own summary and report say the same
        overall = json.loads((folders[name] / "summary.json").read_text(encoding="utf-8"))["overall"]
        assert overall["recall"] == pytest.approx(earned[name], abs=1e-3)
        own = (folders[name] / "report.md").read_text(encoding="utf-8")
        assert f"mean earned recall@k {overall['recall']}" in own
        assert "probes of imported or generated data (beam, generated, locomo), scored by recall" in own.splitlines()[2]
        assert "| locomo_conv_" not in own.split("## Failed expectations")[1].split("\n## ")[0]   # no failed check


def test_show_lists_what_a_real_probe_ranked(runs):
    """``mtsbench show`` on a LoCoMo probe of the design's real run: its ranking, the memories its
    search could see, within two seconds."""
    folders, _ = runs
    listing = _mtsbench("show", folders["design"], cwd=folders["design"]).stdout.splitlines()
    probe = next(line.split() for line in listing if line.startswith("locomo_"))
    out = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out):
        assert main(["show", str(folders["design"]), "--probe", probe[1], "--scenario", probe[0]]) == 0
    assert time.perf_counter() - started < 2.0
    shown = out.getvalue()
    assert f"probe {probe[1]} of {probe[0]}" in shown and "it could see" in shown
    rows = [line for line in shown.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == 10 and all(len(r.split()) >= 10 for r in rows), rows
