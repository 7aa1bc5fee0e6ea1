"""The BEAM study's tables, targets and figures (``beam_report`` measures what they show), and
``write_report``, which puts them together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .beam_report import BOTH, HEADLINE, ORDERED, collect, flatness, paired
from .locomo_report import paired_diff
from .locomo_tables import _n, _p, _table

SYSTEMS = ("flat_exact", "flat_hnsw", "bm25", "mts", "mts_links")


def _at(table: pd.DataFrame, run: str, size: int, scope: str) -> pd.Series | None:
    hit = table[(table["run"] == run) & (table["size"] == size) & (table["scope"] == scope)]
    return None if hit.empty else hit.iloc[0]


def size_table(table: pd.DataFrame, kind: str, scope: str) -> list[str]:
    """One row per run of table ``kind`` and haystack size."""
    head = ["run", "haystack (messages)", "probes", "R@10", f"R@{HEADLINE}t (95% CI)", "R@4096t", f"sR@{HEADLINE}t",
            f"all@{HEADLINE}t", f"chance R@{HEADLINE}t", "work / turn (scored)", "distances / turn", "ms / turn",
            "memories held", "haystack wall (s)", "peak RSS (MB)", "KB / message"]
    rows = []
    for r in table[(table["table"] == kind) & (table["scope"] == scope)].sort_values(["run", "size"]).to_dict("records"):
        rows.append([f"`{r['run']}`", _n(r["size"]), _n(r["probes"]), _p(r["recall@10"]),
                     f"{_p(r[f'recall@{HEADLINE}t'])} ({_p(r['ci_lo'])}–{_p(r['ci_hi'])})", _p(r["recall@4096t"]),
                     _p(r[f"session_recall@{HEADLINE}t"]), _p(r[f"recall_all@{HEADLINE}t"]),
                     _p(r[f"chance_recall@{HEADLINE}t"]), _n(r["work_per_turn"]), _n(r["distances_per_turn"]),
                     _n(r["ms_per_turn"], 1), _n(r["memories_before"]), _n(r["haystack_wall_s"]),
                     _n(r["max_rss_mb"]), _n(r["kb_per_message"], 1)])
    return _table(head, rows)


def category_table(cats: pd.DataFrame, runs: list[str], size: int, scope: str) -> list[str]:
    """Per category and run at one size: what each kind of question asks of the memory."""
    head = ["category", "run", "probes", f"R@{HEADLINE}t", "R@4096t", f"all@{HEADLINE}t", f"sR@{HEADLINE}t",
            "updated above original (both in budget)", "updated wins", "false recall (relevance)"]
    rows = []
    at = cats[(cats["size"] == size) & (cats["scope"] == scope) & cats["run"].isin(runs)]
    for r in at.sort_values(["category", "run"]).to_dict("records"):
        ordered = r["category"] in ORDERED
        rows.append([r["category"], f"`{r['run']}`", _n(r["probes"]), _p(r["recall@1024t"]), _p(r["recall@4096t"]),
                     _p(r["recall_all@1024t"]), _p(r["session_recall@1024t"]),
                     f"{_p(r['later_above@1024t'])} (n={r['later_above_n']})" if ordered else "",
                     _p(r["later_wins@1024t"]) if ordered else "", _p(r["false_recall_relevance"])])
    return _table(head, rows)


def targets(table: pd.DataFrame, cats: pd.DataFrame, scope: str) -> list[str]:
    """The issue's targets, as measured, with their ratios."""
    big = shared_largest(table, ("mts", "flat_exact"))
    small = min(table["size"])
    mts, flat, hnsw = (_at(table, n, big, scope) for n in ("mts", "flat_exact", "flat_hnsw"))
    rows = []
    if mts is not None and flat is not None:
        r = mts[f"recall@{HEADLINE}t"] / flat[f"recall@{HEADLINE}t"] if flat[f"recall@{HEADLINE}t"] else np.nan
        for measure in ("work_per_turn", "distances_per_turn"):
            w = mts[measure] / flat[measure] if flat[measure] else np.nan
            rows.append([f"mts >= 0.95x flat_exact's R@{HEADLINE}t with <= 0.25x its work ({'memories scored' if measure == 'work_per_turn' else 'distances'}), "
                         f"haystack {big:,}", f"{r:.2f}x recall, {w:.2f}x work", _yes(r >= 0.95 and w <= 0.25)])
    if mts is not None and hnsw is not None:
        for measure in ("work_per_turn", "distances_per_turn"):
            ok = mts[f"recall@{HEADLINE}t"] >= hnsw[f"recall@{HEADLINE}t"] and mts[measure] <= hnsw[measure]
            rows.append([f"mts at least flat_hnsw's R@{HEADLINE}t at no more work ({'memories scored' if measure == 'work_per_turn' else 'distances'})",
                         f"{_p(mts[f'recall@{HEADLINE}t'])} vs {_p(hnsw[f'recall@{HEADLINE}t'])}, "
                         f"{_n(mts[measure])} vs {_n(hnsw[measure])}", _yes(ok)])
    for name in ("mts", "flat_exact", "flat_hnsw"):
        largest = shared_largest(table, (name,))
        a, b = _at(table, name, small, scope), _at(table, name, largest, scope)
        if a is not None and b is not None and largest != small:
            g1, g2 = b["work_per_turn"] / a["work_per_turn"], b["distances_per_turn"] / a["distances_per_turn"]
            rows.append([f"{name}: work per turn at haystack {largest:,} / at {small:,}" + (" <= 2" if name == "mts" else ""),
                         f"{g1:.2f}x scored, {g2:.2f}x distances", _yes(g1 <= 2 and g2 <= 2) if name == "mts" else ""])
    ku = cats[(cats["category"] == "knowledge_update") & (cats["size"] == big) & (cats["scope"] == scope)]
    m, f = ku[ku["run"] == "mts"], ku[ku["run"] == "flat_exact"]
    if not m.empty and not f.empty:
        mv, fv = m.iloc[0]["later_above@1024t"], f.iloc[0]["later_above@1024t"]
        ok = mv is not None and not pd.isna(mv) and mv >= 0.8 and (pd.isna(fv) or mv > fv)
        rows.append([f"knowledge update: updated above original in >= 80% where both are in {HEADLINE} tokens, above "
                     "flat_exact", f"mts {_p(mv)} (n={m.iloc[0]['later_above_n']}), flat_exact {_p(fv)} "
                     f"(n={f.iloc[0]['later_above_n']})", _yes(ok)])
    return _table(["target", "measured", "met"], rows)


def speed(plan: dict, saved: dict) -> list[str]:
    """Issue 50's speed targets, from the runs' own walls (``.study-wall.json``) and their
    haystacks' per-block walls: each run's wall against flat exact's on the same plan, and the
    design's ms per message late in the haystack against early."""
    flat = saved.get("flat_exact")
    head = ["run", "run wall (s)", "/ flat_exact's", "haystack wall (s)", "ms / message, messages 1k-9k",
            "ms / message, last 8k", "late / early"]
    rows, limits = [], {"mts": 1.5, "bm25": 1.5}
    for run in plan["runs"]:
        s = saved.get(run["name"])
        if s is None or s.run_wall is None:
            continue
        f = flatness(s.haystack)
        ratio = s.run_wall / flat.run_wall if flat is not None and flat.run_wall else None
        mark = "" if ratio is None or run["name"] not in limits else f" ({_yes(ratio <= limits[run['name']])}: <= {limits[run['name']]}x)"
        late = "" if f["ratio"] is None or run["name"] != "mts" else f" ({_yes(f['ratio'] <= 2)}: <= 2)"
        rows.append([f"`{run['name']}`", _n(s.run_wall), "-" if ratio is None else f"{ratio:.2f}x{mark}",
                     _n(s.haystack["sizes"][-1]["wall_s"]), _n(f["early_ms"], 1), _n(f["late_ms"], 1),
                     "-" if f["ratio"] is None else f"{f['ratio']:.2f}{late}"])
    return _table(head, rows)


def shared_largest(table: pd.DataFrame, runs: tuple[str, ...]) -> int:
    """The largest haystack size every one of ``runs`` that ran reached (a run planned at fewer sizes
    is compared where it ran, not left out); the largest of all when none of them ran.

    >>> t = pd.DataFrame({"run": ["a", "a", "b", "b", "b"], "size": [0, 10, 0, 10, 30]})
    >>> shared_largest(t, ("a", "b")), shared_largest(t, ("b",)), shared_largest(t, ("c",))
    (10, 30, 30)
    """
    sizes = [set(table.loc[table["run"] == r, "size"]) for r in runs if (table["run"] == r).any()]
    return max(set.intersection(*sizes)) if sizes and set.intersection(*sizes) else max(table["size"])


def _yes(ok) -> str:
    return "yes" if bool(ok) else "**no**"


def ablation_table(plan: dict, saved: dict, tune: set[str]) -> list[str]:
    """Each mechanism off, paired with its base per probe at the largest haystack: overall and
    on the categories the belief rule and consolidation should matter for."""
    head = ["off", f"Δ R@{HEADLINE}t (paired 95% CI)", "Δ updated wins (knowledge update)",
            f"Δ all@{HEADLINE}t (contradiction)", "Δ work / turn", "held out: Δ R@1024t"]
    rows = []
    for run in [r for r in plan["runs"] if r.get("base") and r["name"] in saved and r["base"] in saved]:
        base, other = saved[run["base"]], saved[run["name"]]
        chats = set(other.probes["chat"])
        size = max(other.sizes)

        def diff(column: str, category: str | None = None, within=chats) -> str:
            p = paired(base, other, column, within, size)
            if category is not None:
                p = p[p["category"].astype(str) == category]
            m, lo, hi = paired_diff(p[f"{column}_base"], p[column])
            return "-" if np.isnan(m) else f"{m * 100:+.1f} ({lo * 100:+.1f} to {hi * 100:+.1f})"

        wb = _work(base, size, chats)
        rows.append([run["name"].removeprefix("ablate_"), diff(f"recall@{HEADLINE}t"),
                     diff(f"later_wins@{HEADLINE}t", "knowledge_update"),
                     diff(f"recall_all@{HEADLINE}t", "contradiction_resolution"),
                     f"{_work(other, size, chats) / wb:.2f}x" if wb else "-",
                     diff(f"recall@{HEADLINE}t", within=chats - tune)])
    return _table(head, rows)


def _work(s, size: int, chats: set[str]) -> float:
    costs = [s.cost[f"{c}_h{size}"] for c in chats if f"{c}_h{size}" in s.cost]
    return sum(c["total"] for c in costs) / max(1, sum(c["turns"] for c in costs))


def figures(table: pd.DataFrame, cats: pd.DataFrame, out: Path) -> list[str]:
    """recall_vs_size.png, work_vs_size.png, categories.png; returns their names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    rows = table[(table["scope"] == "all") & table["table"].isin(["systems", "probes"])]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for name, r in rows.groupby("run"):
        r = r.sort_values("size")
        probes = name.endswith("_probes")
        ax.plot(r["size"], r[f"recall@{HEADLINE}t"] * 100, marker="o", ls="--" if probes else "-",
                color="tab:red" if name.startswith("mts") else None, alpha=0.6 if probes else 1.0, label=name)
    ax.set_xlabel("haystack: messages of other dialogue taken in before the target")
    ax.set_ylabel(f"R@{HEADLINE}t, earned credit (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"BEAM 100K targets: recall at a {HEADLINE:,}-token context against haystack size\n"
                 "(solid: every user turn retrieves; dashed: probes only)", fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "recall_vs_size.png", dpi=120)
    plt.close(fig)
    made.append("recall_vs_size.png")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, measure, label in ((axes[0], "work_per_turn", "memories scored per turn"),
                               (axes[1], "distances_per_turn", "distance computations per turn")):
        for name, r in rows[rows["table"] == "systems"].groupby("run"):
            r = r.sort_values("size")
            ax.plot(r["size"], r[measure], marker="o", color="tab:red" if name.startswith("mts") else None, label=name)
        ax.set_yscale("log")
        ax.set_xlabel("haystack size (messages)")
        ax.set_ylabel(label + " (log)")
    axes[0].legend(fontsize=7)
    fig.suptitle("Work per target turn against haystack size (workload=reply)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "work_vs_size.png", dpi=120)
    plt.close(fig)
    made.append("work_vs_size.png")

    big = max(set(cats["size"])) if not cats.empty else None
    at = cats[(cats["scope"] == "all") & (cats["size"] == big) & cats["run"].isin(SYSTEMS)]
    if not at.empty:
        names = [n for n in SYSTEMS if n in set(at["run"])]
        categories = sorted(c for c in set(at["category"]) if c != "abstention")
        fig, ax = plt.subplots(figsize=(11, 4.5))
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            v = [at[(at["run"] == name) & (at["category"] == c)]["recall@1024t"].fillna(np.nan).mean() * 100
                 for c in categories]
            ax.bar(np.arange(len(categories)) + i * width, v, width, label=name,
                   color="tab:red" if name == "mts" else None)
        ax.set_xticks(np.arange(len(categories)) + 0.4 - width / 2, [c.replace("_", "\n") for c in categories], fontsize=7)
        ax.set_ylabel(f"R@{HEADLINE}t (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"Per BEAM category at haystack {big:,} (workload=reply)", fontsize=10)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "categories.png", dpi=120)
        plt.close(fig)
        made.append("categories.png")
    return made


def markdown(plan: dict, table: pd.DataFrame, cats: pd.DataFrame, saved: dict, made: list[str]) -> list[str]:
    tune = set(plan["tune"])
    sizes = sorted(set(table["size"]))
    held = sorted({c for s in saved.values() for c in s.probes["chat"]} - tune)
    lines = ["# The BEAM study: the seed design after a lifetime of real dialogue", "",
             f"Targets: BEAM's 100K chats (`{plan['targets']}*`), each asked its questions after a haystack of "
             f"{', '.join(f'{s:,}' for s in sizes)} messages of the other BEAM chats and LoCoMo's conversations "
             "(`haystack.*`, one memory taking in the haystack once through the whole design, copied per target). "
             f"Held out (never used to choose anything): {', '.join(f'`{c}`' for c in held)}; the tuning half: "
             f"{', '.join(f'`{c}`' for c in sorted(tune))}. Recall is earned credit; budgets in tokens.", ""]
    for scope, title in (("all", "all targets"), ("held_out", "held-out half")):
        lines += [f"## Targets ({title})", "", *targets(table, cats, scope)]
    for kind, title in (("systems", "every user turn retrieves (`workload=reply`)"),
                        ("probes", "only the probes retrieve (`workload=probes`)"),
                        ("hashing", "the hashing embedder + BM25 hybrid, `workload=reply`")):
        if (table["table"] == kind).any():
            for scope in ("all", "held_out"):
                lines += [f"## Systems by haystack size: {title} ({scope.replace('_', '-')})", "",
                          *size_table(table, kind, scope)]
    shown = sorted({sizes[-1], shared_largest(table, tuple(s for s in SYSTEMS if s in saved))}, reverse=True)
    for size in shown if not cats.empty else []:
        for scope in ("all", "held_out"):
            lines += [f"## Per category at haystack {size:,} ({scope.replace('_', '-')})", "",
                      f"Knowledge update: the updated statement's best rank above the original's when both are "
                      f"within {HEADLINE} tokens (ties 0.5), and the unconditional view; {', '.join(BOTH)}: "
                      "`all@` = every statement or event within the budget; abstention: false recall on relevance "
                      "alone (best used cosine >= 0.5).", "",
                      *category_table(cats, list(SYSTEMS), size, scope)]
    lines += ["## Speed (issue 50)", "",
              "Each run's wall time (its `mtsbench run`, haystack and every target at every size), against "
              "`flat_exact`'s on the same plan, and the haystack's wall per message early (messages 1,000-9,000) "
              "and late (the last 8,000): whether a message costs the same however much memory holds. The "
              "runs ran two at a time on 2 cores after the warm run alone, so a wall includes the other run's "
              "contention.", "", *speed(plan, saved)]
    if any(r.get("base") for r in plan["runs"]):
        off = [max(saved[r["name"]].sizes) for r in plan["runs"] if r.get("base") and r["name"] in saved]
        lines += [f"## Each mechanism off at haystack {max(off or sizes):,} (paired with `mts` per probe)", "",
                  *ablation_table(plan, saved, tune)]
    lines += ["## Figures", "", *(f"![{Path(m).stem}]({m})" for m in made), ""]
    return lines


def write_report(plan: dict, runs: Path, out: Path) -> None:
    """report.md, summary.csv, categories.csv and figures in ``out`` (notes.md, hand-written, kept
    and put first)."""
    out.mkdir(parents=True, exist_ok=True)
    table, cats, saved = collect(plan, runs)
    table.round(4).to_csv(out / "summary.csv", index=False)
    cats.round(4).to_csv(out / "categories.csv", index=False)
    made = figures(table, cats, out)
    notes = out / "notes.md"
    head = notes.read_text(encoding="utf-8").rstrip() + "\n\n" if notes.exists() else ""
    (out / "report.md").write_text(head + "\n".join(markdown(plan, table, cats, saved, made)) + "\n",
                                   encoding="utf-8")


