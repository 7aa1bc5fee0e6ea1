"""The LoCoMo study's tables, targets and figures (``locomo_report`` computes the figures they
show), and ``write_report``, which puts them together."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..report.intervals import bootstrap
from .locomo_report import DEPTHS, KINDS, collect, paired_diff

PCT = 100.0
DRAGON = {"R@5": 56.7, "R@10": 66.2, "R@25": 76.7, "R@50": 82.7}


def _p(x, digits: int = 1) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x * PCT:.{digits}f}"


def _n(x, digits: int = 0) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:,.{digits}f}"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows), ""]


def _row(table: pd.DataFrame, name: str, scope: str = "all") -> pd.Series | None:
    hit = table[(table["run"] == name) & (table["scope"] == scope)]
    return None if hit.empty else hit.iloc[0]


def recall_table(table: pd.DataFrame, names: list[str], scope: str) -> list[str]:
    head = ["run", *(f"R@{d}" for d in DEPTHS), "R@1024t (95% CI)", "chance R@10", "chance R@1024t",
            "prov. R@10", "prov. R@1024t", "work / turn", "false recall (score)", "false recall (relevance)",
            "abstention AUC", "answer proxy", "attention AUC"]
    rows = []
    for name in names:
        r = _row(table, name, scope)
        if r is None:
            continue
        rows.append([f"`{name}`", *(_p(r[f"recall@{d}"]) for d in DEPTHS),
                     f"{_p(r['recall@1024t'])} ({_p(r['recall@1024t_lo'])}–{_p(r['recall@1024t_hi'])})",
                     _p(r["chance_recall@10"]), _p(r["chance_recall@1024t"]), _p(r["prov_recall@10"]),
                     _p(r["prov_recall@1024t"]), _n(r["work_per_turn"]), _p(r["false_recall"]),
                     _p(r["false_recall_relevance"]), _n(r["abstention_auc"], 3),
                     _p(r["answer_proxy"]), _n(r["attention_auc"], 3)])
    return _table(head, rows)


def work_table(table: pd.DataFrame, names: list[str]) -> list[str]:
    head = ["run", "work / turn", *(f"{k}" for k in KINDS), "LLM calls / turn", "tokens / turn", "wall (s)"]
    rows = []
    for name in names:
        r = _row(table, name)
        if r is not None:
            rows.append([f"`{name}`", _n(r["work_per_turn"]), *(_n(r[f"work_{k}"]) for k in KINDS),
                         _n(r["llm_calls_per_turn"], 2), _n(r["tokens_per_turn"]), _n(r["wall_s"])])
    return _table(head, rows)


def category_table(probes: dict, names: list[str]) -> list[str]:
    cats = ["single-hop", "multi-hop", "temporal", "open-domain"]
    head = ["run", *(f"{c} R@10" for c in cats), *(f"{c} R@1024t" for c in cats)]
    rows = []
    for name in names:
        if name not in probes:
            continue
        p = probes[name]
        cells = []
        for column in ("recall@10", "recall@1024t"):
            for c in cats:
                v = pd.to_numeric(p.loc[p["category"] == c, column], errors="coerce").dropna()
                lo_hi = ""
                if len(v):
                    _, lo, hi = bootstrap([v.to_numpy(dtype=float)])
                    lo_hi = f" ({_p(lo)}–{_p(hi)})"
                cells.append(_p(float(v.mean()) if len(v) else None) + lo_hi)
        rows.append([f"`{name}`", *cells])
    return _table(head, rows)


def compared(table: pd.DataFrame, probes: dict, names: list[str], column: str = "recall@1024t") -> list[str]:
    head = ["run", "base", f"Δ {column} (paired 95% CI)", "verdict", "Δ work / turn", "work vs base",
            "Δ R@10"]
    rows = []
    for name in names:
        r = _row(table, name)
        base = r["base"]
        if base not in probes:
            continue
        a = pd.to_numeric(probes[base][column], errors="coerce")
        b = pd.to_numeric(probes[name][column], errors="coerce").reindex(a.index)
        m, lo, hi = paired_diff(a, b)
        verdict = "no difference" if lo <= 0 <= hi else "better" if lo > 0 else "worse"
        b10 = pd.to_numeric(probes[name]["recall@10"], errors="coerce").reindex(a.index)
        m10, _, _ = paired_diff(pd.to_numeric(probes[base]["recall@10"], errors="coerce"), b10)
        rb = _row(table, base)
        rows.append([f"`{name}`", f"`{base}`", f"{m * PCT:+.1f} ({lo * PCT:+.1f} to {hi * PCT:+.1f})", verdict,
                     f"{r['work_per_turn'] - rb['work_per_turn']:+,.0f}",
                     f"{r['work_per_turn'] / rb['work_per_turn']:.2f}×", f"{m10 * PCT:+.1f}"])
    return _table(head, rows)


def targets(table: pd.DataFrame) -> list[str]:
    raw = table[(table["data"] == "raw") & (table["scope"] == "all") & table["table"].isin(["retrieval", "peers", "reply"])]
    lines = ["| target | measured | met |", "|---|---|---|"]
    if len(raw):
        best = raw.sort_values("recall@10", ascending=False).iloc[0]
        held = _row(table, best["run"], "held_out")
        lines.append(f"| best raw-turn configuration R@10 >= 70 (categories 1-4, earned) | `{best['run']}`: "
                     f"{_p(best['recall@10'])} (held-out five: {_p(held['recall@10'])}) | "
                     f"{'yes' if best['recall@10'] >= 0.70 else 'no'} |")
    f, m = _row(table, "flat_reply"), _row(table, "mts_reply")
    if f is not None and m is not None:
        ratio, work = m["recall@1024t"] / f["recall@1024t"], m["work_per_turn"] / f["work_per_turn"]
        lines.append(f"| mts >= 0.95× flat_rag's R@1024t with <= 0.25× its work per turn (workload=reply) | "
                     f"{ratio:.2f}× recall, {work:.2f}× work | {'yes' if ratio >= 0.95 and work <= 0.25 else 'no'} |")
    for name in ("mts_hashing_dense", "mts_minilm_hybrid"):
        r = _row(table, name)
        if r is not None and r["attention_auc"] is not None:
            lines.append(f"| attention AUC of the mock >= 0.65 (`{name}`) | {r['attention_auc']:.3f} | "
                         f"{'yes' if r['attention_auc'] >= 0.65 else 'no'} |")
    for mts, flat in (("mts_minilm_dense", "flat_minilm_dense"), ("mts_hashing_dense", "flat_hashing_dense")):
        a, b = _row(table, mts), _row(table, flat)
        if a is not None and b is not None and a["false_recall_relevance"] is not None:
            lines.append(f"| mts false recall below flat_rag's (`{mts}` vs `{flat}`; best used relevance >= 0.5, "
                         f"the same cosine for both) | {_p(a['false_recall_relevance'])} vs "
                         f"{_p(b['false_recall_relevance'])} (on each one's own score: {_p(a['false_recall'])} vs "
                         f"{_p(b['false_recall'])}) | "
                         f"{'yes' if a['false_recall_relevance'] < b['false_recall_relevance'] else 'no'} |")
    return lines + [""]


def names_of(plan: dict, *tables: str) -> list[str]:
    return [r["name"] for r in plan["runs"] if r["table"] in tables]


def markdown(table: pd.DataFrame, probes: dict, plan: dict, made: list[str]) -> list[str]:
    main = names_of(plan, "retrieval", "peers", "reply", "annotations")
    lines = ["# The LoCoMo study (report)", "",
             "Ten conversations of LoCoMo (5,882 turns; 1,535 questions of categories 1–4 with evidence, 446 "
             "adversarial), mock LLM. Recall is **earned credit**: a memory counts for an evidence turn only when "
             "its text holds at least half the turn's content words (`mtsbench/evaluation/credit.py`); `prov.` columns give "
             "the provenance-only figure reported before, `chance` the same rankings scored against random "
             "evidence. `work / turn`: memories scored (distances and postings) per dialogue turn, every search of "
             "every kind. Percentages; 95% bootstrap intervals over probes. Tuning conversations: "
             + ", ".join(f"`{s}`" for s in plan["tune"]) + "; the held-out table repeats the figures on the other "
             f"five. LoCoMo paper's DRAGON over raw turns: R@5/10/25/50 = "
             + " / ".join(f"{v}" for v in DRAGON.values()) + ".", "",
             "## Targets", "", *targets(table),
             "## Recall and work, all ten conversations", "", *recall_table(table, main, "all"),
             "## The same, the five held-out conversations", "", *recall_table(table, main, "held_out"),
             "## Recall per category (earned, 95% CI)", "", *category_table(probes, main),
             "## Work per turn by kind", "", *work_table(table, [r["name"] for r in plan["runs"]]),
             "## Attention conditions (paired with their base run)", "",
             *recall_table(table, names_of(plan, "attention"), "all"),
             *compared(table, probes, names_of(plan, "attention")),
             "## Each mechanism off in turn (workload=reply, MiniLM + hybrid; paired with `mts_reply`)", "",
             *compared(table, probes, names_of(plan, "ablation")),
             *recall_table(table, names_of(plan, "ablation"), "all"),
             "## The processes on the data set's annotations (paired with `mts_annotations`)", "",
             "On raw turns the mock extracts no fact, event or impression (nothing hints them), so "
             "consolidation, events and inference change nothing there; with the annotations as the "
             "perfect extractor they have something to work on.", "",
             *compared(table, probes, names_of(plan, "ablation_annotations")),
             *corrections_table(table, main),
             "## Figures", "", *(f"![{Path(m).stem}]({m})" for m in made), ""]
    return lines


def corrections_table(table: pd.DataFrame, names: list[str]) -> list[str]:
    """The headline figures with and without LoCoMo's citation corrections (empty without them)."""
    if not table["scope"].astype(str).str.endswith("_corrected").any():
        return []
    head = ["run", "scope", "R@10", "R@10 corrected", "R@1024t", "R@1024t corrected", "Δ R@1024t"]
    rows = []
    for scope in ("all", "held_out"):
        for name in names:
            a, b = _row(table, name, scope), _row(table, name, scope + "_corrected")
            if a is not None and b is not None:
                rows.append([f"`{name}`", scope.replace("_", "-"), _p(a["recall@10"]), _p(b["recall@10"]),
                             _p(a["recall@1024t"]), _p(b["recall@1024t"]),
                             f"{(b['recall@1024t'] - a['recall@1024t']) * PCT:+.1f}"])
    return ["## With LoCoMo's citation corrections", "",
            "The same saved rankings scored against the evidence as the locomo-audit project corrected it "
            "(its WRONG_CITATION findings: `mtsbench import locomo FILE --corrections ERRORS`); nothing re-ran, "
            "since a system never sees the evidence.", "", *_table(head, rows)]


def figures(table: pd.DataFrame, probes: dict, plan: dict, out: Path) -> list[str]:
    """pareto.png (R@1024t against work per turn), ablation.png, attention.png; returns their names."""
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    rows = table[(table["scope"] == "all") & table["table"].isin(["retrieval", "peers", "reply"])]
    fig, ax = plt.subplots(figsize=(10, 5.5))
    key = []
    for n, r in enumerate(sorted(rows.to_dict("records"), key=lambda r: (-r["recall@1024t"], r["work_per_turn"])),
                          start=1):
        y, lo, hi = r["recall@1024t"] * PCT, r["recall@1024t_lo"] * PCT, r["recall@1024t_hi"] * PCT
        ax.errorbar(r["work_per_turn"], y, yerr=[[y - lo], [hi - y]], fmt="o", capsize=3,
                    color="tab:red" if r["run"].startswith("mts") else "tab:blue")
        ax.annotate(str(n), (r["work_per_turn"], y), fontsize=7, xytext=(4, 3), textcoords="offset points")
        key.append(f"{n:>2}  {r['run']}")
    # numbers on the points, names in a key beside the plot: labels of close points never mix up
    fig.text(0.80, 0.92, "\n".join(key), fontsize=7, family="monospace", va="top")
    fig.subplots_adjust(right=0.78)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("work per turn (memories scored, all searches; log)")
    ax.set_ylabel("R@1024t, earned credit (%)")
    ax.set_ylim(0, 100)
    ax.set_title("LoCoMo: recall at a 1,024-token context against total work\n(red: the seed design)", fontsize=10)
    fig.savefig(out / "pareto.png", dpi=120)
    plt.close(fig)
    made.append("pareto.png")

    names = names_of(plan, "ablation")
    if names and "mts_reply" in probes:
        base = probes["mts_reply"]
        diffs = [paired_diff(pd.to_numeric(base["recall@1024t"], errors="coerce"),
                             pd.to_numeric(probes[n]["recall@1024t"], errors="coerce").reindex(base.index))
                 for n in names]
        rb = table[(table["run"] == "mts_reply") & (table["scope"] == "all")].iloc[0]
        work = [table[(table["run"] == n) & (table["scope"] == "all")].iloc[0]["work_per_turn"] / rb["work_per_turn"]
                for n in names]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 0.45 * len(names) + 1.5), sharey=True)
        yy = np.arange(len(names))
        m = np.array([d[0] for d in diffs]) * PCT
        lo, hi = np.array([d[1] for d in diffs]) * PCT, np.array([d[2] for d in diffs]) * PCT
        a1.barh(yy, m, xerr=[m - lo, hi - m], color="tab:gray", capsize=3)
        a1.axvline(0, color="k", lw=0.8)
        a1.set_yticks(yy, [n.removeprefix("ablate_") for n in names])
        a1.set_xlabel("Δ R@1024t vs mts_reply (points, paired 95% CI)")
        a2.barh(yy, work, color="tab:orange")
        a2.axvline(1, color="k", lw=0.8)
        a2.set_xlabel("work per turn, × mts_reply")
        fig.suptitle("Each mechanism off in turn (LoCoMo, workload=reply)", fontsize=10)
        fig.tight_layout()
        fig.savefig(out / "ablation.png", dpi=120)
        plt.close(fig)
        made.append("ablation.png")

    hists = table[(table["scope"] == "all") & table.get("attention_hist", pd.Series(dtype=object)).notna()]
    picks = [n for n in ("mts_hashing_dense", "mts_minilm_hybrid", "attention_common_sense",
                         "attention_observations", "attention_oracle") if n in set(hists["run"])]
    if picks:
        fig, axes = plt.subplots(1, len(picks), figsize=(3.2 * len(picks), 3), sharey=False)
        for ax, name in zip(np.atleast_1d(axes), picks):
            h = json.loads(hists[hists["run"] == name].iloc[0]["attention_hist"])
            ev, ot = np.array(h["evidence"], float), np.array(h["other"], float)
            x = np.arange(len(ev))
            ax.bar(x - 0.2, ev / max(ev.sum(), 1), 0.4, label="evidence turns")
            ax.bar(x + 0.2, ot / max(ot.sum(), 1), 0.4, label="other turns")
            auc = hists[hists["run"] == name].iloc[0]["attention_auc"]
            ax.set_title(f"{name}\nAUC {auc:.3f}", fontsize=8)
            ax.set_xlabel("labelled attention (bin)")
            ax.set_ylim(0, 1)
        np.atleast_1d(axes)[0].set_ylabel("share of turns")
        np.atleast_1d(axes)[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "attention.png", dpi=120)
        plt.close(fig)
        made.append("attention.png")
    return made


def write_report(plan: dict, runs: Path, out: Path) -> None:
    """report.md, summary.csv and figures in ``out`` (notes.md, hand-written, kept and put first)."""
    out.mkdir(parents=True, exist_ok=True)
    table, probes = collect(plan, runs)
    table.round(4).to_csv(out / "summary.csv", index=False)
    made = figures(table, probes, plan, out)
    notes = out / "notes.md"
    head = notes.read_text(encoding="utf-8").rstrip() + "\n\n" if notes.exists() else ""
    (out / "report.md").write_text(head + "\n".join(markdown(table, probes, plan, made)) + "\n", encoding="utf-8")
