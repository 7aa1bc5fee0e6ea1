"""Figures across configurations, from ``summary.csv`` and saved results only (Agg).

- ``plot_recall_curves``: evidence recall@k against k and recall within a context budget
  against the budget in tokens, a line per configuration (identical lines shared) with
  95% intervals as error bars.
- ``plot_heatmaps``: for a sweep over two keys (``decay_curves``, ``arousal_radius``, ...),
  recall, pass rate and total cost per turn on the grid, each cell with its interval.
- ``plot_llm_cost``: LLM calls and tokens per process (the steps' attention labelling, and
  summarization, consolidation, inference), a bar per configuration, mean over seeds.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .intervals import fmt  # noqa: E402
from .plots import color, errors, save, short_labels  # noqa: E402
from .seeds import Config  # noqa: E402
from .timeplots import distinct, legend_name  # noqa: E402

MAX_LINES = 12


def _columns(table: pd.DataFrame, pattern: str) -> list[tuple[int, str]]:
    """(number, column) of the columns matching ``pattern`` with any value, by number."""
    found = [(int(m.group(1)), c) for c in table.columns if (m := re.fullmatch(pattern, c))]
    return sorted((n, c) for n, c in found if pd.to_numeric(table[c], errors="coerce").notna().any())


def plot_recall_curves(table: pd.DataFrame, path: Path) -> Path | None:
    """Recall@k and recall@budget curves (None without evidence recall on the probes)."""
    t = table[table["status"] == "ok"].reset_index(drop=True)
    depth, budget = _columns(t, r"recall@(\d+)"), _columns(t, r"recall@(\d+)t")
    if not depth and not budget:
        return None
    names = dict(zip(t["config"], short_labels(t["config"].astype(str).tolist())[0]))
    panels = [(p, label) for p, label in ((depth, "k (memories returned)"), (budget, "context budget (tokens)")) if p]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels) + 2.6, 4.2), squeeze=False)
    for ax, (columns, xlabel) in zip(axes[0], panels):
        _curves(ax, t, columns, names)
        ax.set_xscale("log", base=2)
        ax.set_xticks([n for n, _ in columns], [str(n) for n, _ in columns])
        ax.set_xlabel(xlabel)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("evidence recall (mean over probes, 95% interval)")
    axes[0, -1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle("Evidence recall at k and at a context budget", fontsize=10, y=1.0, va="bottom")
    return save(fig, path)


def _curves(ax, t: pd.DataFrame, columns: list[tuple[int, str]], names: dict) -> None:
    """A line per distinct curve of ``columns`` (x = their numbers), with error bars."""
    xs = np.array([n for n, _ in columns], dtype=float)
    values = t[[c for _, c in columns]].apply(pd.to_numeric, errors="coerce")
    groups = list(distinct({i: tuple(np.round(values.loc[i].to_numpy(dtype=float), 4)) for i in t.index}).items())
    shown = groups[:MAX_LINES]
    for n, (i, members) in enumerate(shown):
        line = pd.DataFrame({"value": values.loc[i].to_numpy(dtype=float),
                             "value_lo": [t.loc[i].get(f"{c}_lo") for _, c in columns],
                             "value_hi": [t.loc[i].get(f"{c}_hi") for _, c in columns]})
        shift = xs * (1 + 0.012 * (n - len(shown) / 2))     # dodge overlapping error bars
        ax.errorbar(shift, line["value"], yerr=errors(line, "value"), fmt="-o", ms=3, lw=1.1, capsize=2,
                    color=color(n, len(shown)), label=legend_name([names[t.loc[m, "config"]] for m in members]))
    if len(groups) > MAX_LINES:
        ax.text(0.01, 0.01, f"{len(groups) - MAX_LINES} more distinct curves not drawn (summary.csv has them)",
                transform=ax.transAxes, fontsize=7)


def grid_keys(labels: list[str]) -> tuple[str, str] | None:
    """The two keys of a two-dimensional sweep: every label sets the same two keys and each
    takes at least two values; else None.

    >>> grid_keys(["a=1 b=x", "a=2 b=x", "a=1 b=y"]), grid_keys(["a=1", "a=2"])
    (('a', 'b'), None)
    """
    parsed = [dict(p.split("=", 1) for p in label.split() if "=" in p) for label in labels]
    keys = {tuple(d) for d in parsed}
    if len(keys) != 1 or len(next(iter(keys))) != 2:
        return None
    a, b = next(iter(keys))
    if min(len({d[a] for d in parsed}), len({d[b] for d in parsed})) < 2:
        return None
    return a, b


HEAT = [("recall", "earned recall@k", "RdYlGn"), ("pass_rate", "pass rate", "RdYlGn"),
        ("cost_per_turn", "memories scored per turn (total cost)", "Blues")]


def plot_heatmaps(table: pd.DataFrame, path: Path) -> Path | None:
    """Recall, pass rate and cost on the grid of a two-key sweep; None for other sweeps."""
    t = table[table["status"] == "ok"]
    keys = grid_keys(t["config"].astype(str).tolist())
    if keys is None:
        return None
    parsed = t["config"].map(lambda s: dict(p.split("=", 1) for p in s.split()))
    t = t.assign(_a=parsed.map(lambda d: d[keys[0]]), _b=parsed.map(lambda d: d[keys[1]]))
    rows, cols = list(dict.fromkeys(t["_a"])), list(dict.fromkeys(t["_b"]))
    shown = [h for h in HEAT if h[0] in t and pd.to_numeric(t[h[0]], errors="coerce").notna().any()]
    fig, axes = plt.subplots(1, len(shown), figsize=(0.9 * len(cols) * len(shown) + 2.2 * len(shown) + 1,
                                                     0.5 * len(rows) + 2), squeeze=False)
    for ax, (column, title, cmap) in zip(axes[0], shown):
        _heatmap(ax, t, column, rows, cols, cmap)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(keys[1], fontsize=8)
    axes[0, 0].set_ylabel(keys[0], fontsize=8)
    fig.suptitle(f"{keys[0]} x {keys[1]} (cells: mean [95% interval])", fontsize=10, y=1.0, va="bottom")
    return save(fig, path)


def _heatmap(ax, t: pd.DataFrame, column: str, rows: list, cols: list, cmap: str) -> None:
    """One heatmap of ``column`` on the grid, each cell labelled 'mean [lo, hi]'."""
    grid = np.full((len(rows), len(cols)), np.nan)
    text = np.full(grid.shape, "", dtype=object)
    for _, r in t.iterrows():
        i, j = rows.index(r["_a"]), cols.index(r["_b"])
        grid[i, j] = pd.to_numeric(r[column], errors="coerce")
        digits = 2 if column != "cost_per_turn" else 1
        text[i, j] = fmt(grid[i, j], r.get(f"{column}_lo"), r.get(f"{column}_hi"), digits).replace(" [", "\n[")
    colors = matplotlib.colormaps[cmap].copy()
    colors.set_bad("0.85")
    vmax = 1 if column != "cost_per_turn" else max(np.nanmax(grid), 1e-9)
    ax.imshow(np.ma.masked_invalid(grid), cmap=colors, vmin=0, vmax=vmax, aspect="auto")
    for (i, j), s in np.ndenumerate(text):
        r, g, b, _ = colors(grid[i, j] / vmax) if not np.isnan(grid[i, j]) else (1, 1, 1, 1)
        ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"     # readable on any cell
        ax.text(j, i, s, ha="center", va="center", fontsize=6.5, color=ink)
    ax.set_xticks(range(len(cols)), cols, fontsize=7, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows if ax.get_subplotspec().is_first_col() else [], fontsize=7)


PROCESSES = ["summarize", "consolidate", "infer"]


def llm_cost(config: Config) -> dict[str, dict[str, float]]:
    """{part: {calls, tokens}} of ``config``, mean over seeds: each background process's own
    calls (whatever their task: a summary's or a conjecture's attention rating counts to the
    process that made it) and ``labelling``, the rest — the calls the steps made (their
    attention ratings), i.e. the run's total minus the processes', so the parts add up to it.

    >>> from types import SimpleNamespace as NS
    >>> job = NS(summary={"overall": {"llm_calls": 17, "tokens": 4203, "processes": {
    ...     "summarize": {"calls": 6, "tokens": 2107}, "infer": {"calls": 5, "tokens": 1244}}}})
    >>> llm_cost(NS(jobs=[job]))["labelling"]
    {'calls': 6.0, 'tokens': 852.0}
    """
    parts: dict[str, dict[str, list[float]]] = {}
    for job in config.jobs:
        overall = job.summary.get("overall") or {}
        processes = {p: (overall.get("processes") or {}).get(p) or {} for p in PROCESSES}
        total = {"calls": float(overall.get("llm_calls") or 0), "tokens": float(overall.get("tokens") or 0)}
        labelling = {k: total[k] - sum(float(p.get(k) or 0) for p in processes.values()) for k in total}
        for part, totals in ({"labelling": labelling} | processes).items():
            for k in ("calls", "tokens"):
                parts.setdefault(part, {}).setdefault(k, []).append(float(totals.get(k) or 0))
    return {part: {k: float(np.mean(v)) for k, v in totals.items()} for part, totals in parts.items()}


def plot_llm_cost(configs: list[Config], path: Path) -> Path | None:
    """Stacked bars of LLM calls and tokens per process; None if no configuration called an LLM."""
    costs = {c.label: llm_cost(c) for c in configs}
    if not any(v["calls"] for parts in costs.values() for v in parts.values()):
        return None
    names = short_labels(list(costs))[0]
    parts = ["labelling", *PROCESSES]
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.32 * len(costs) + 1.8), squeeze=False, sharey=True)
    for ax, measure in zip(axes[0], ("calls", "tokens")):
        left = np.zeros(len(costs))
        for n, part in enumerate(parts):
            values = np.array([costs[c].get(part, {}).get(measure, 0.0) for c in costs])
            ax.barh(range(len(costs)), values, left=left, color=plt.cm.Set2(n), label=part)
            left += values
        ax.set_xlim(left=0)
        ax.set_xlabel(f"LLM {measure} per run (mean over seeds)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=7)
    axes[0, 0].set_yticks(range(len(costs)), names, fontsize=7)
    axes[0, 0].invert_yaxis()
    axes[0, 1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle("LLM cost per process (labelling: the steps' own calls, their attention ratings)", fontsize=10, y=1.0, va="bottom")
    return save(fig, path)
