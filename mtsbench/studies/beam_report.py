"""The BEAM study's figures, from saved runs only (``WORK/runs/NAME``).

Each run holds every target chat once per haystack size, named ``<chat>_h<N>``. From its
``metrics.csv`` (probe rows), ``summary.json`` (cost per scenario), ``results.parquet``
(each step's wall time) and ``haystack.json`` (what the haystack cost) this module measures,
per run, size and scope (all targets; the held-out half, the targets not in ``tune``):

- recall, earned credit: R@10 and R@B at every budget (95% bootstrap interval over probes at
  1,024 tokens), session recall, any- and all-evidence recall; the chance baseline;
- per BEAM category the same, with ``later_above`` / ``later_wins`` (knowledge update: the
  updated statement above the original) and, for abstention, false recall on relevance
  alone (``top_relevance`` >= 0.5: comparable across systems sharing an embedder);
- work per target turn two ways: memories scored by every search (the LoCoMo study's
  measure) and index distance computations (exact scans, graph queries, graph inserts'
  estimates: what an approximate index really spends); LLM tokens; wall milliseconds per
  target turn (its own steps' wall time, probes included, not the haystack's);
- the haystack's own cost: memories held, wall time, peak RSS, and memory per message: the
  growth of the peak RSS from the smallest size to this one over the messages between.

Ablations are paired with their ``base`` run per probe (same chat, size and question).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ReportError
from ..report.intervals import bootstrap
from ..outputs.results import load

BUDGETS = (256, 512, 1024, 2048, 4096, 8192)
HEADLINE = 1024
RELEVANCE_THRESHOLD = 0.5
ORDERED = ("knowledge_update",)                 # categories whose roles have an order (stale -> updated)
BOTH = ("contradiction_resolution", "temporal_reasoning", "event_ordering")   # need every statement / event


def split_size(sid: str) -> tuple[str, int]:
    """(chat, haystack size) of a scenario id ``<chat>_h<N>``.

    >>> split_size("beam_100k_10_h30000")
    ('beam_100k_10', 30000)
    """
    chat, _, size = sid.rpartition("_h")
    if not chat or not size.isdigit():
        raise ReportError(f"{sid}: expected a scenario id <chat>_h<size> (a run with haystack.messages)")
    return chat, int(size)


def _mean(frame: pd.DataFrame, column: str) -> float | None:
    if column not in frame:
        return None
    v = pd.to_numeric(frame[column], errors="coerce").dropna()
    return None if v.empty else float(v.mean())


class Saved:
    """One run's saved files, read once: probe rows (with ``chat`` and ``size``), per-scenario
    costs, wall time per scenario and the haystack's own record."""

    def __init__(self, folder: Path):
        summary = json.loads((folder / "summary.json").read_text()) if (folder / "summary.json").exists() else {}
        if summary.get("status") != "complete":
            raise ReportError(f"{folder}: no finished run (run the study first, or --only the runs you have)")
        budgets = set((summary["overall"].get("evidence") or {}).get("budgets") or [])
        missing = [b for b in BUDGETS if b not in budgets]
        if missing:
            raise ReportError(f"{folder}: evaluated without budgets {missing}; the BEAM study reports at "
                              f"{list(BUDGETS)} tokens (evaluation.recall_at_tokens)")
        metrics = pd.read_csv(folder / "metrics.csv", low_memory=False)
        probes = metrics[metrics["check"] == "probe"].copy()
        probes[["chat", "size"]] = [split_size(s) for s in probes["scenario"]]
        self.probes = probes
        self.cost = summary["cost"]["scenarios"]
        records, _ = load(folder / "results.parquet")
        self.wall_ms = records.groupby("scenario")["latency_ms"].sum().to_dict()
        self.haystack = json.loads((folder / "haystack.json").read_text())
        wall = folder / ".study-wall.json"
        self.run_wall = json.loads(wall.read_text()) if wall.exists() else None

    @property
    def sizes(self) -> list[int]:
        return sorted(set(self.probes["size"]))


def answerable_probes(rows: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    """(which of ``rows`` are abstention questions, the answerable ones: not abstention, with
    their evidence scored)."""
    abstain = rows["abstain"].astype(str) == "True"
    return abstain, rows[~abstain & pd.to_numeric(rows["recall@10"], errors="coerce").notna()]


def measure(saved: Saved, size: int, chats: set[str]) -> dict:
    """One run's figures at one haystack size over the target ``chats``."""
    at = saved.probes[(saved.probes["size"] == size) & saved.probes["chat"].isin(chats)]
    abstain, answerable = answerable_probes(at)
    out: dict = {"probes": int(len(answerable)), "abstaining": int(abstain.sum())}
    for c in ("recall@10", *(f"recall@{b}t" for b in BUDGETS), f"session_recall@{HEADLINE}t",
              f"recall_any@{HEADLINE}t", f"recall_all@{HEADLINE}t", f"chance_recall@{HEADLINE}t", "answer_proxy"):
        out[c] = _mean(answerable, c)
    _, out["ci_lo"], out["ci_hi"] = bootstrap(
        [pd.to_numeric(answerable[f"recall@{HEADLINE}t"], errors="coerce").dropna().to_numpy(dtype=float)])
    rel = pd.to_numeric(at.loc[abstain, "top_relevance"], errors="coerce").fillna(-np.inf)
    out["false_recall_relevance"] = float(np.mean(rel >= RELEVANCE_THRESHOLD)) if abstain.any() else None
    sids = [f"{c}_h{size}" for c in sorted(chats) if f"{c}_h{size}" in saved.cost]
    costs = [saved.cost[s] for s in sids]
    turns = sum(c["turns"] for c in costs) or 1
    out["turns"] = turns
    out["work_per_turn"] = sum(c["total"] for c in costs) / turns
    out["distances_per_turn"] = sum(c["distances"] + c["insert_distances_est"] for c in costs) / turns
    out["tokens_per_turn"] = sum(c["tokens"] for c in costs) / turns
    out["ms_per_turn"] = sum(saved.wall_ms.get(s, 0.0) for s in sids) / turns
    entry = next((e for e in saved.haystack["sizes"] if e["messages"] == size), None)
    out["memories_before"] = entry["memories"] if entry else None
    out["haystack_wall_s"] = entry["wall_s"] if entry else None
    out["max_rss_mb"] = entry["max_rss_mb"] if entry else None
    first = saved.haystack["sizes"][0]
    out["kb_per_message"] = (1024 * (entry["max_rss_mb"] - first["max_rss_mb"]) / (size - first["messages"])
                             if entry and size > first["messages"] else None)
    return out


def flatness(haystack: dict, last: int = 8, early: tuple[int, int] = (1, 9)) -> dict:
    """ms per haystack message over its blocks (``haystack.json``'s ``block_wall_s``: the wall
    time at every ``block`` messages) — messages 1,000-9,000 (blocks 2-9) and the last
    ``last`` blocks — and their ratio (issue 50: at most 2, the per-message cost flat in store
    size); None where the haystack is too short.

    >>> f = flatness({"block": 1000, "block_wall_s": [1.0 * (i + 1) for i in range(20)]})
    >>> f["early_ms"], f["late_ms"], f["ratio"]
    (1.0, 1.0, 1.0)
    """
    walls, block = haystack.get("block_wall_s") or [], haystack.get("block", 1000)
    per = np.diff([0.0, *walls]) * 1000.0 / block          # ms per message in each block
    if len(per) < early[1] + last:
        return {"early_ms": None, "late_ms": None, "ratio": None}
    a, b = float(np.mean(per[early[0]:early[1]])), float(np.mean(per[-last:]))
    return {"early_ms": round(a, 2), "late_ms": round(b, 2), "ratio": round(b / a, 2) if a else None}


def by_category(saved: Saved, size: int, chats: set[str]) -> dict[str, dict]:
    """Per BEAM category at one size: recall at the headline budget and what the category asks."""
    at = saved.probes[(saved.probes["size"] == size) & saved.probes["chat"].isin(chats)]
    out = {}
    for category, rows in at.groupby(at["category"].astype(str)):
        abstain, ans = answerable_probes(rows)
        rel = pd.to_numeric(rows.loc[abstain, "top_relevance"], errors="coerce").fillna(-np.inf)
        out[category] = {
            "probes": int(len(rows)), "with_evidence": int(len(ans)),
            "recall@1024t": _mean(ans, f"recall@{HEADLINE}t"), "recall@4096t": _mean(ans, "recall@4096t"),
            "recall_all@1024t": _mean(ans, f"recall_all@{HEADLINE}t"),
            "session_recall@1024t": _mean(ans, f"session_recall@{HEADLINE}t"),
            "later_above@1024t": _mean(ans, f"later_above@{HEADLINE}t"),
            "later_above_n": int(pd.to_numeric(ans.get(f"later_above@{HEADLINE}t"), errors="coerce").notna().sum())
            if f"later_above@{HEADLINE}t" in ans else 0,
            "later_wins@1024t": _mean(ans, f"later_wins@{HEADLINE}t"),
            "false_recall_relevance": float(np.mean(rel >= RELEVANCE_THRESHOLD)) if abstain.any() else None}
    return out


def collect(plan: dict, runs: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Saved]]:
    """summary.csv rows (run x size x scope), the per-category rows, and each run's saved files."""
    rows, cats, saved = [], [], {}
    tune = set(plan["tune"])
    for run in plan["runs"]:
        folder = runs / run["name"]
        s = saved[run["name"]] = Saved(folder)
        every = set(s.probes["chat"])
        for scope, chats in (("all", every), ("held_out", every - tune)):
            if not chats:
                continue
            for size in s.sizes:
                rows.append({"run": run["name"], "table": run["table"], "scope": scope, "size": size,
                             "base": run.get("base"), "run_wall_s": s.run_wall, **measure(s, size, chats)})
                for category, figures in by_category(s, size, chats).items():
                    cats.append({"run": run["name"], "scope": scope, "size": size, "category": category, **figures})
    return pd.DataFrame(rows), pd.DataFrame(cats), saved


def paired(base: Saved, other: Saved, column: str, chats: set[str], size: int | None = None) -> pd.DataFrame:
    """``column`` of the probes both runs asked (same chat, size, step), side by side."""
    def frame(s: Saved) -> pd.DataFrame:
        p = s.probes[s.probes["chat"].isin(chats) & (s.probes["size"] == (size if size is not None else max(s.sizes)))]
        return p.set_index(["chat", "step"])[[column, "category"]]
    a, b = frame(base), frame(other)
    both = a.join(b[[column]], how="inner", lsuffix="_base")
    both[column] = pd.to_numeric(both[column], errors="coerce")
    both[f"{column}_base"] = pd.to_numeric(both[f"{column}_base"], errors="coerce")
    return both
