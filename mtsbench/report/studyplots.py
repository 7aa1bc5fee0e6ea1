"""A tuning study's figures, drawn from its trials table (``report.trials``; matplotlib, Agg).

- ``front``: the first objective against the second (recall against work per turn), every
  complete trial grey, the tuning front joined as a step line, each front point's held-out
  evaluation beside it (joined to it by a thin line) and the held-out front joined too; the
  work axis is logarithmic when it spans more than a factor of 20;
- ``history``: each objective by trial number, failed trials marked on the axis, the best
  so far (on the first objective) as a line;
- ``importance``: each objective's parameter importances over all complete trials, as bars.

Each returns the PNG's path, or None when there is nothing to draw.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, MaxNLocator

from .plots import pareto_front, plt, save

LABELS = {"per_turn": "total work per turn (memories scored, every search)", "recall@1024t": "earned recall@1024t"}


def _front_line(ax, x: np.ndarray, y: np.ndarray, **style) -> None:
    """The front as a staircase: from the cheapest point, each next point up and right."""
    order = np.argsort(x)
    ax.step(x[order], y[order], where="post", **style)


def front(frame: pd.DataFrame, names: list[str], directions: list[str], path: Path) -> Path | None:
    if len(names) < 2 or frame.empty:
        return None
    done = frame[frame["state"] == "complete"]
    if done.empty:
        return None
    y_name, x_name = names[0], names[1]
    fig, ax = plt.subplots(figsize=(7.5, 5))
    ax.scatter(done[x_name], done[y_name], s=18, color="#bbbbbb", label="tuning trials", zorder=2)
    on = done[done["front"]]
    x, y = on[x_name].to_numpy(float), on[y_name].to_numpy(float)
    _front_line(ax, x, y, color="#1f77b4", lw=1.2, zorder=3)
    ax.scatter(x, y, s=30, color="#1f77b4", label="tuning front", zorder=4)
    for _, r in on.iterrows():
        ax.annotate(str(r["trial"]), (r[x_name], r[y_name]), textcoords="offset points", xytext=(4, 3), fontsize=7)
    hx, hy = f"held_out {x_name}", f"held_out {y_name}"
    held = on[on[hx].notna() & on[hy].notna()] if hx in on else on.iloc[0:0]
    if len(held):
        for _, r in held.iterrows():
            ax.plot([r[x_name], r[hx]], [r[y_name], r[hy]], color="#ff7f0e", lw=0.6, alpha=0.6, zorder=2)
        cost, quality = held[hx].to_numpy(float), held[hy].to_numpy(float)
        sign_c = 1 if directions[1] == "minimize" else -1
        sign_q = 1 if directions[0] == "maximize" else -1
        mask = pareto_front(sign_c * cost, sign_q * quality)
        _front_line(ax, cost[mask], quality[mask], color="#ff7f0e", lw=1.2, zorder=3)
        ax.scatter(cost, quality, s=30, marker="D", color="#ff7f0e", label="held-out evaluation", zorder=4)
    xs = pd.concat([done[x_name], held[hx]] if len(held) else [done[x_name]]).to_numpy(float)
    if xs.min() > 0 and xs.max() / xs.min() > 20:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xlabel(LABELS.get(x_name, x_name) + (" (lower is better)" if directions[1] == "minimize" else ""))
    ax.set_ylabel(LABELS.get(y_name, y_name) + (" (higher is better)" if directions[0] == "maximize" else ""))
    ax.set_title(f"{y_name} against {x_name}: {len(done)} complete trials, {len(on)} on the tuning front")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return save(fig, path)


def history(frame: pd.DataFrame, names: list[str], path: Path) -> Path | None:
    if frame.empty or not names:
        return None
    fig, axes = plt.subplots(len(names), 1, figsize=(7.5, 2.6 * len(names)), sharex=True, squeeze=False)
    failed = frame[frame["state"] == "fail"]
    done = frame[frame["state"] == "complete"]
    for ax, name in zip(axes[:, 0], names):
        ax.scatter(done["trial"], done[name], s=14, color="#1f77b4")
        if len(failed):
            low = done[name].min() if len(done) else 0.0
            ax.scatter(failed["trial"], [low] * len(failed), marker="x", color="#d62728", s=20, label="failed")
            ax.legend(fontsize=8)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    if len(done):
        best = done[names[0]].cummax()
        axes[0, 0].step(done["trial"], best, where="post", color="#2ca02c", lw=1, label="best so far")
        axes[0, 0].legend(fontsize=8)
    axes[-1, 0].set_xlabel("trial")
    axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0, 0].set_title(f"{len(frame)} trials in order ({len(failed)} failed)")
    return save(fig, path)


def importance(imp: pd.DataFrame, path: Path) -> Path | None:
    main = imp[imp["scope"] == "all complete trials"] if len(imp) else imp
    if main.empty:
        return None
    objectives = list(dict.fromkeys(main["objective"]))
    params = list(main.groupby("param")["importance"].max().sort_values().index)
    fig, ax = plt.subplots(figsize=(7.5, 0.35 * len(params) * len(objectives) + 1.2))
    height = 0.8 / len(objectives)
    for k, objective in enumerate(objectives):
        values = main[main["objective"] == objective].set_index("param")["importance"].reindex(params).fillna(0)
        ax.barh(np.arange(len(params)) + k * height, values.to_numpy(), height=height, label=objective)
    ax.set_yticks(np.arange(len(params)) + height * (len(objectives) - 1) / 2, params, fontsize=8)
    ax.set_xlabel("importance (mean decrease in impurity; each objective's sum to 1)")
    ax.set_title(f"Parameter importances over the {int(main['trials'].iloc[0])} complete trials")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="x")
    return save(fig, path)
