"""The belief study's report: tables, targets and a figure from ``belief_report``'s measurements, and
``write_report``, which puts them together in ``OUT`` (``report.md`` with the hand-written
``notes.md`` first, ``summary.csv``, ``paired.csv``, ``path.csv``, ``extraction.csv``, ``belief.png``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .belief_report import (HEADLINE, cassette_cost, category_rows, extraction_rows, load_runs, paired_rows,
                            path_rows, statements)
from .locomo_tables import _n, _p, _table

SHOWN = (f"later_wins@{HEADLINE}t", f"later_above@{HEADLINE}t", f"recall@{HEADLINE}t", "judge")


def _ci(r: dict, prefix: str) -> str:
    if pd.isna(r.get(prefix)):
        return "-"
    return f"{_p(r[prefix])} ({_p(r[f'{prefix}_lo'])}–{_p(r[f'{prefix}_hi'])}; n={r[f'{prefix}_n']})"


def category_table(cats: pd.DataFrame, size: int, scope: str) -> list[str]:
    head = ["category", "run", "probes", f"updated/second above first (both in {HEADLINE}t)",
            f"updated/second wins @{HEADLINE}t (95% CI)", f"R@{HEADLINE}t (95% CI)", f"all@{HEADLINE}t",
            "answer judged correct (95% CI)", "answer F1"]
    at = cats[(cats["size"] == size) & (cats["scope"] == scope)]
    rows = [[r["category"], f"`{r['run']}`", _n(r["probes"]), _ci(r, "later_above"), _ci(r, "later_wins"),
             _ci(r, "recall"), _p(r["recall_all"]), _ci(r, "judged_correct"), _n(r["answer_f1"], 3)]
            for r in at.sort_values(["category", "run"]).to_dict("records")]
    return _table(head, rows)


def paired_table(pairs: pd.DataFrame, size: int, scope: str) -> list[str]:
    head = ["B − A", "category", "measure", "n", "mean difference, points (paired 95% CI)", "sign-flip p"]
    at = pairs[(pairs["size"] == size) & (pairs["scope"] == scope) & pairs["measure"].isin(SHOWN)]
    rows = [[f"`{r['b']}` − `{r['a']}`", r["category"], r["measure"], _n(r["n"]),
             f"{r['diff'] * 100:+.1f} ({r['lo'] * 100:+.1f} to {r['hi'] * 100:+.1f})", f"{r['p']:.3g}"]
            for r in at.to_dict("records")]
    return _table(head, rows)


def _pick(pairs: pd.DataFrame, a: str, b: str, size: int, category: str, measure: str) -> dict | None:
    hit = pairs[(pairs["a"] == a) & (pairs["b"] == b) & (pairs["size"] == size) & (pairs["scope"] == "all")
                & (pairs["category"] == category) & (pairs["measure"] == measure)]
    return None if hit.empty else hit.iloc[0].to_dict()


def targets(plan: dict, pairs: pd.DataFrame, extraction: pd.DataFrame, sizes: list[int]) -> list[str]:
    """The issue's targets as measured (all targets)."""
    on, off = plan.get("path", [None, None])
    rows = []
    for size in sizes:
        d = _pick(pairs, off, on, size, "knowledge_update", f"later_wins@{HEADLINE}t") if pairs.size else None
        rows.append([f"silver hints, consolidation on − off: knowledge-update later_wins@{HEADLINE}t >= +20 points, "
                     f"CI excluding 0 (haystack {size:,})",
                     "-" if d is None else f"{d['diff'] * 100:+.1f} ({d['lo'] * 100:+.1f} to {d['hi'] * 100:+.1f}), "
                                           f"n={d['n']}", "-" if d is None else _yes(d["diff"] >= 0.2 and d["lo"] > 0)])
        q = _pick(pairs, "flat_exact", on, size, "knowledge_update", "judge") if pairs.size else None
        rows.append([f"QA on knowledge updates: `{on}` >= `flat_exact` (haystack {size:,})",
                     "- (no answers recorded)" if q is None else
                     f"{q['diff'] * 100:+.1f} ({q['lo'] * 100:+.1f} to {q['hi'] * 100:+.1f}), n={q['n']}",
                     "-" if q is None else _yes(q["diff"] >= 0)])
    if not extraction.empty:
        t = extraction.sum(numeric_only=True)
        per100 = 100 * t["false_contradictions"] / max(1, t["window_messages"])
        rows.append(["the real extractor's agreement with the oracle on contradictions, reported",
                     f"{int(t['contradictions_found'])} of {int(t['oracle_contradictions'])} found, "
                     f"{per100:.1f} false per 100 messages read", "reported"])
    rows.append(["nothing of the silver hints visible to the flat systems (a test); the default import unchanged "
                 "byte for byte", "tests/test_import_beam_silver.py", "tested"])
    return _table(["target", "measured", "met"], rows)


def _yes(ok) -> str:
    return "yes" if bool(ok) else "**no**"


def path_section(path: pd.DataFrame, plan: dict) -> list[str]:
    """What consolidation did to each question's statements and what reached the probe."""
    on, off = plan["path"]
    if path.empty:
        return ["(no silver run with its pair)", ""]
    found = path[path["found"]]
    ku = found[found["probe"].str.startswith("q_knowledge_update")]
    lines = [f"Questions: {len(path)} (per target and haystack size); a contradiction between the question's two "
             f"statements settled by consolidation in {len(found)}; on knowledge updates the **updated** statement "
             f"lost in {int((ku['loser_role'] == 2).sum()) if not ku.empty else 0} of {len(ku)}. Ranks at the probe, "
             f"`{on}` (on) against `{off}` (off), best rank of any memory earning the statement:", ""]
    lines += [path_counts(found), ""]
    head = ["scenario", "probe", "loser", "belief", "attention kept", "loser fact rank on/off",
            "loser statement rank on/off", "winner statement rank on/off"]
    rows = [[r["scenario"], r["probe"], f"statement {int(r['loser_role'])}",
             f"{r['belief_before']:.2f} → {r['belief_after']:.2f}", f"{r['kept_attention']:.2f}",
             f"{_n(r['loser_fact_rank_on'])} / {_n(r['loser_fact_rank_off'])}",
             f"{_n(r['loser_rank_on'])} / {_n(r['loser_rank_off'])}",
             f"{_n(r['winner_rank_on'])} / {_n(r['winner_rank_off'])}"] for r in found.to_dict("records")]
    return lines + _table(head, rows)


def path_counts(found: pd.DataFrame) -> str:
    """One sentence: of the settled questions, where consolidation moved a rank at the probe.

    >>> f = pd.DataFrame({"loser_fact_rank_on": [4, None, 3], "loser_fact_rank_off": [3, 5, 3],
    ...                   "loser_rank_on": [2, 1, 1], "loser_rank_off": [2, 1, 1],
    ...                   "winner_rank_on": [6, None, 2], "winner_rank_off": [6, None, 2]})
    >>> print(path_counts(f))  # doctest: +NORMALIZE_WHITESPACE
    The loser's fact ranked lower with consolidation in 2 of 3 (of those ranked in either run);
    the loser statement's best rank changed in 0 of 3, the winner's in 0 of 2.
    """
    def moved(on: str, off: str) -> tuple[int, int]:
        a, b = found[on], found[off]
        either = a.notna() | b.notna()
        return int(((a.fillna(np.inf) != b.fillna(np.inf)) & either).sum()), int(either.sum())

    a, b = found["loser_fact_rank_on"].fillna(np.inf), found["loser_fact_rank_off"].fillna(np.inf)
    either = found["loser_fact_rank_on"].notna() | found["loser_fact_rank_off"].notna()
    (ls, ln), (ws, wn) = moved("loser_rank_on", "loser_rank_off"), moved("winner_rank_on", "winner_rank_off")
    lower = int(((a > b) & either).sum())
    return (f"The loser's fact ranked lower with consolidation in {lower} of {int(either.sum())} "
            f"(of those ranked in either run); the loser statement's best rank changed in {ls} of {ln}, "
            f"the winner's in {ws} of {wn}.")


def extraction_section(extraction: pd.DataFrame, cost: dict | None, mock_only: bool = False) -> list[str]:
    if extraction.empty:
        why = "the mock-only round runs no model" if mock_only else "no cassette of the real extractor"
        return [f"Not run: {why} (`make belief BEAM=DIR RECORD=1` records it).", ""]
    t = extraction.sum(numeric_only=True)
    read = max(1, int(t["window_messages"]))
    lines = [f"On {len(extraction)} sample chats the model read {read} user messages (the summarized batches that "
             f"hold a statement). It stated a fact from {int(t['statements_extracted'])} of the oracle's "
             f"{int(t['oracle_statements'])} statements ({int(t['model_facts'])} facts in all), found "
             f"{int(t['contradictions_found'])} of the oracle's {int(t['oracle_contradictions'])} contradictions and "
             f"{int(t['false_contradictions'])} others ({100 * t['false_contradictions'] / read:.1f} per 100 messages "
             f"read).", ""]
    if cost and cost.get("s_per_call"):
        lines += [f"Its cost: {cost['calls']} requests in {cost['wall_s']:,.0f} s of recording "
                  f"({cost['s_per_call']:.1f} s a request, {cost['wall_s'] / read:.1f} s per message read; "
                  f"{cost['model']}, load average {cost['load_average']}).", ""]
    return lines + _table(list(extraction.columns), [[str(v) for v in r] for r in extraction.values.tolist()])


def cost_section(plan: dict, cassettes: Path) -> list[str]:
    """The model's requests, tokens and seconds per request of each run's cassette (none in the
    mock-only round, which reads no cassette)."""
    head = ["run", "model", "requests", "per task (requests, failed, prompt + completion tokens)", "s / request"]
    rows = []
    for r in plan["runs"]:
        c = cassette_cost(cassettes, r["name"]) if (r.get("qa") or r.get("real")) and not plan.get("mock_only") \
            else None
        if c is None:
            continue
        tasks = "; ".join(f"{k}: {v['calls']}, {v['failed']}, {v['prompt_tokens'] + v['completion_tokens']:,}"
                          for k, v in c["tasks"].items())
        rows.append([f"`{r['name']}`", str(c["model"]), _n(c["calls"]), tasks, _n(c["s_per_call"], 1)])
    none = "None: the mock-only round runs no model" if plan.get("mock_only") else "No cassette recorded yet"
    return _table(head, rows) if rows else [f"{none} (`make belief BEAM=DIR RECORD=1`).", ""]


def figure(cats: pd.DataFrame, out: Path) -> str | None:
    """belief.png: later_wins@1024t per run and category at each size, with 95% intervals."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    at = cats[cats["scope"] == "all"]
    if at.empty:
        return None
    sizes, categories = sorted(set(at["size"])), sorted(set(at["category"]))
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.5 * len(sizes), 4.5), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        names = sorted(set(at.loc[at["size"] == size, "run"]))
        width = 0.8 / max(1, len(categories))
        for i, category in enumerate(categories):
            r = at[(at["size"] == size) & (at["category"] == category)].set_index("run").reindex(names)
            mean = r["later_wins"].to_numpy(dtype=float) * 100
            err = np.abs(np.vstack([mean - r["later_wins_lo"].to_numpy(dtype=float) * 100,
                                    r["later_wins_hi"].to_numpy(dtype=float) * 100 - mean]))
            ax.bar(np.arange(len(names)) + i * width, mean, width, yerr=np.nan_to_num(err), capsize=3,
                   label=category.replace("_", " "))
        ax.set_xticks(np.arange(len(names)) + width * (len(categories) - 1) / 2, names, rotation=30, ha="right",
                      fontsize=7)
        ax.set_ylim(0, 100)
        ax.set_ylabel(f"updated / second statement wins @{HEADLINE}t (%)")
        ax.set_title(f"haystack {size:,} messages", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "belief.png", dpi=120)
    plt.close(fig)
    return "belief.png"


def write_report(plan: dict, work: Path, out: Path, cassettes: Path) -> None:
    """The report from the saved runs in ``WORK/runs`` (module docstring)."""
    out.mkdir(parents=True, exist_ok=True)
    saved = load_runs(plan, work / "runs")
    cats, pairs = category_rows(plan, saved), paired_rows(plan, saved)
    told = statements(work / "data" / "targets_silver", plan["categories"])
    on, off = plan.get("path", [None, None])
    path = path_rows(work / "runs" / on, work / "runs" / off, told) if on in saved and off in saved else pd.DataFrame()
    real = [r["name"] for r in plan["runs"] if r.get("real") == "extract" and r["name"] in saved]
    extraction = extraction_rows(work / "runs" / real[0], work / "data" / "targets_sample", told) if real \
        else pd.DataFrame()
    for frame, name in ((cats, "summary.csv"), (pairs, "paired.csv"), (path, "path.csv"), (extraction, "extraction.csv")):
        frame.round(4).to_csv(out / name, index=False)
    made = figure(cats, out)
    sizes = sorted(set(cats["size"])) if not cats.empty else []
    missing = [r["name"] for r in plan["runs"] if r["name"] not in saved]
    lines = ["# The belief study: facts, consolidation and belief on BEAM's changed facts", "",
             f"Runs: {', '.join(f'`{n}`' for n in saved)}" + (f"; not run: {', '.join(missing)}" if missing else "")
             + f". Categories: {', '.join(plan['categories'])}. Earned credit; budgets in tokens.", "",
             *(["The mock-only round (`--mock-only`): the hashing embedder with dense retrieval, no model: no "
                "answers, no real extractor.", ""] if plan.get("mock_only") else []),
             "## Targets", "", *targets(plan, pairs, extraction, sizes)]
    for size in sizes:
        for scope in ("all", "held_out"):
            lines += [f"## Per category at haystack {size:,} ({scope.replace('_', '-')})", "",
                      *category_table(cats, size, scope), f"## Paired per probe at haystack {size:,} "
                      f"({scope.replace('_', '-')})", "", *paired_table(pairs, size, scope)]
    lines += ["## From consolidation to the probe's ranking", "", *path_section(path, plan),
              "## The real extractor against the oracle", "",
              *extraction_section(extraction, cassette_cost(cassettes, real[0]) if real else None,
                                  bool(plan.get("mock_only"))),
              "## What the model cost", "", *cost_section(plan, cassettes)]
    lines += ["## Figure", "", f"![belief]({made})", ""] if made else []
    notes = out / "notes.md"
    head = notes.read_text(encoding="utf-8").rstrip() + "\n\n" if notes.exists() else ""
    (out / "report.md").write_text(head + "\n".join(lines) + "\n", encoding="utf-8")
