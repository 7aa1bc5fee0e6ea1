"""Figures of a run or sweep, drawn from result tables only (matplotlib, Agg backend).

- ``plot_pareto``: earned recall (the headline, as everywhere) against a cost, one point per configuration with its 95%
  intervals as error bars, the Pareto frontier (configurations no other beats on both:
  higher recall, the pass rate breaking ties, and lower cost) joined and marked, as
  ann-benchmarks draws its recall/queries-per-second plots; labels never overlap
  (``labels``). Cost axes start at 0; the recall axis ends at 1; both hold every error bar
  whole (the limits are set from the intervals' ends, and a bar on the edge is not clipped).
- ``plot_pass_matrix``: configuration x scenario, the share of expectations passed (a
  colour bar; cell text white on dark cells).

``save`` wraps every title to the width of its plot.

Time figures are in ``timeplots``, the sweep's curves, heatmaps and LLM cost in
``sweepplots``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .labels import label_points  # noqa: E402


def pareto_front(cost, recall, tiebreak=None) -> np.ndarray:
    """Mask of the points no other point dominates: none has cost <= and quality >= with
    one of them strict, quality being recall and, where recall ties, ``tiebreak`` (the pass
    rate). Equal points are all on the frontier.

    >>> pareto_front(np.array([1.0, 2.0, 3.0, 2.0]), np.array([0.5, 0.9, 0.9, 0.4])).tolist()
    [True, True, False, False]
    >>> pareto_front([1.0, 2.0], [0.5, 0.5], tiebreak=[0.4, 0.9]).tolist()
    [True, True]
    """
    cost, recall = np.asarray(cost, dtype=float), np.asarray(recall, dtype=float)
    second = np.zeros_like(recall) if tiebreak is None else np.nan_to_num(np.asarray(tiebreak, dtype=float), nan=-1.0)
    le = cost[None, :] <= cost[:, None]          # [i, j]: j costs no more than i
    tie = recall[None, :] == recall[:, None]
    better = (recall[None, :] > recall[:, None]) | (tie & (second[None, :] > second[:, None]))
    same = tie & (second[None, :] == second[:, None])
    strict = (cost[None, :] < cost[:, None]) | better
    return ~(le & (better | same) & strict).any(axis=1)


def short_labels(labels: list[str]) -> tuple[list[str], str]:
    """(labels without their keys, the keys) when every label sets the same keys in the same
    order; else the labels unchanged and "".

    >>> short_labels(["preset=mts", "preset=flat_rag"])
    (['mts', 'flat_rag'], 'preset')
    >>> short_labels(["a=1 b=2", "a=2 b=x"]), short_labels(["a=1", "b=2"])
    ((['1, 2', '2, x'], 'a, b'), (['a=1', 'b=2'], ''))
    """
    split = [[part.split("=", 1) for part in lab.split()] for lab in labels]
    keys = {tuple(kv[0] for kv in parts) if all(len(kv) == 2 for kv in parts) else None for parts in split}
    if len(keys) != 1 or None in keys or not next(iter(keys)):
        return list(labels), ""
    return [", ".join(kv[1] for kv in parts) for parts in split], ", ".join(next(iter(keys)))


def save(fig, path: Path) -> Path:
    """Write ``fig`` as a PNG (tight box, fast compression; titles wrapped to their plots'
    width, ``wrap_titles``), close it, return ``path``."""
    wrap_titles(fig)
    fig.savefig(path, dpi=100, bbox_inches="tight", pil_kwargs={"compress_level": 3})   # fast, a little larger
    plt.close(fig)
    return path


def wrap_titles(fig) -> None:
    """Wrap every title no wider than what it names: an axes' title to the axes' width, the
    figure's title to the span of its axes (a title is never wider than its plot)."""
    renderer = fig.canvas.get_renderer()
    shown = [ax for ax in fig.axes if ax.get_visible()]
    for ax in shown:
        width = ax.get_window_extent(renderer).width
        for title in (ax.title, ax._left_title, ax._right_title):
            _wrap(title, width, renderer)
    if getattr(fig, "_suptitle", None) is not None and shown:
        boxes = [ax.get_window_extent(renderer) for ax in shown]
        _wrap(fig._suptitle, max(b.x1 for b in boxes) - min(b.x0 for b in boxes), renderer)


def _wrap(text, width: float, renderer) -> None:
    """Re-wrap matplotlib Text ``text`` at word breaks until it fits ``width`` pixels."""
    content = text.get_text()
    if not content or width <= 0:
        return
    for _ in range(6):
        if text.get_window_extent(renderer).width <= width:
            return
        longest = max(len(line) for line in content.splitlines())
        ratio = width / text.get_window_extent(renderer).width
        chars = max(10, int(longest * ratio * 0.95))
        content = "\n".join(textwrap.fill(line, chars, break_long_words=False) for line in content.splitlines())
        text.set_text(content)


def color(n: int, count: int):
    """The n-th of ``count`` line colours: tab10's strong ones up to 10 lines, then tab20."""
    return plt.cm.tab10(n % 10) if count <= 10 else plt.cm.tab20(n % 20)


def numeric(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """``frame``'s finished rows with ``columns`` as numbers, rows missing any dropped."""
    t = frame[frame["status"] == "ok"].copy()
    for c in columns:
        t[c] = pd.to_numeric(t[c], errors="coerce") if c in t else np.nan
    return t.dropna(subset=list(columns))


def errors(t: pd.DataFrame, column: str) -> np.ndarray | None:
    """[below, above] error-bar lengths of ``column`` from its ``_lo``/``_hi`` columns."""
    if f"{column}_lo" not in t or t[f"{column}_lo"].isna().all():
        return None
    lo = pd.to_numeric(t[f"{column}_lo"], errors="coerce").fillna(t[column])
    hi = pd.to_numeric(t[f"{column}_hi"], errors="coerce").fillna(t[column])
    return np.vstack([(t[column] - lo).clip(lower=0), (hi - t[column]).clip(lower=0)])


def extent(t: pd.DataFrame, column: str, end: str = "_hi") -> pd.Series:
    """How far ``column``'s error bars reach on the side ``end`` (``_hi`` or ``_lo``): the
    interval's end where there is one, else the value itself (so an axis set from it holds
    both every point and every bar).

    >>> extent(pd.DataFrame({"c": [1.0, 2.0], "c_hi": [1.5, None]}), "c").tolist()
    [1.5, 2.0]
    """
    values = pd.to_numeric(t[column], errors="coerce")
    if f"{column}{end}" not in t:
        return values
    ends = pd.to_numeric(t[f"{column}{end}"], errors="coerce").fillna(values)
    return ends.combine(values, max if end == "_hi" else min)


def recall_limits(low: float) -> tuple[float, float]:
    """The recall axis: from a little below the lowest value (never below 0) to exactly 1
    (recall cannot pass 1, so neither does the axis; points at 1 are drawn unclipped).

    >>> recall_limits(0.95), recall_limits(0.01)
    ((0.9, 1.0), (0.0, 1.0))
    """
    bottom = max(0.0, round(low - 0.05, 6))
    return bottom, 1.0


def plot_pareto(table: pd.DataFrame, cost: str, cost_label: str, path: Path) -> Path | None:
    """Recall against ``cost`` for the configurations with both numbers, 95% intervals as
    error bars, the frontier (pass rate breaking recall ties) joined; None if none has both."""
    t = numeric(table, "recall", cost)
    if t.empty:
        return None
    pass_rate = pd.to_numeric(t.get("pass_rate"), errors="coerce") if "pass_rate" in t else None
    front = pareto_front(t[cost].to_numpy(), t["recall"].to_numpy(),
                         None if pass_rate is None else pass_rate.to_numpy())
    fig, ax = plt.subplots(figsize=(8, 5.2))
    bars = ax.errorbar(t[cost], t["recall"], xerr=errors(t, cost), yerr=errors(t, "recall"), fmt="none",
                       ecolor="0.7", elinewidth=0.8, capsize=2, zorder=1)
    for artist in bars.get_children():      # a bar at recall 1 lies on the top edge: drawn whole
        artist.set_clip_on(False)
    if (~front).any():      # no "dominated" entry when nothing is dominated
        ax.scatter(t[cost][~front], t["recall"][~front], color="0.55", s=22, label="dominated", zorder=2,
                   clip_on=False)
    f = t[front].sort_values([cost, "recall"], ascending=[True, False])
    ax.plot(f[cost], f["recall"], "-o", color="tab:red", ms=5, drawstyle="steps-post", label="frontier", zorder=3,
            clip_on=False)      # a point at recall 1 sits on the top edge, drawn whole
    ax.set_xlim(left=0, right=max(float(extent(t, cost).max()), 1.0) * 1.08)     # every error bar inside
    ax.set_ylim(*recall_limits(float(extent(t, "recall", "_lo").min())))
    ax.grid(alpha=0.3)
    names, keys = short_labels(t["config"].astype(str).tolist())
    t["name"] = names
    order = np.argsort(~front, kind="stable")            # frontier labels placed first
    label_points(ax, t[cost].to_numpy()[order], t["recall"].to_numpy()[order], t["name"].to_numpy()[order])
    ax.set_xlabel(cost_label + (f"    [labels: {keys}]" if keys else ""))
    ax.set_ylabel("earned recall@k, mean (95% interval)")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.12), ncol=2, fontsize=8, frameon=False)
    ax.set_title(f"Earned recall against {cost_label.split(' (')[0]} ({len(t)} configurations; frontier: "
                 "recall, then pass rate)", fontsize=10)
    return save(fig, path)


def plot_pass_matrix(matrix: pd.DataFrame, path: Path,
                     title: str = "Expectations passed (configuration x scenario)",
                     label: str = "share of expectations passed") -> Path | None:
    """Heatmap of the pass matrix ('p/c' cells; 'failed' cells grey)."""
    if matrix.empty or not len(matrix.columns):
        return None
    share = matrix.apply(lambda col: col.map(_share))
    width = 1.3 * len(matrix.columns) + 0.075 * max(len(str(i)) for i in matrix.index) + 1.5
    fig, ax = plt.subplots(figsize=(width, 0.45 * len(matrix) + 1.8))
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="0.75")
    shares = share.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(shares), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (i, j), text in np.ndenumerate(matrix.to_numpy()):
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color=ink(cmap(shares[i, j])))
    bar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
    bar.set_label(label, fontsize=8)
    bar.ax.tick_params(labelsize=7)
    ax.set_xticks(range(len(matrix.columns)), matrix.columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(matrix)), matrix.index, fontsize=8)
    ax.set_title(title)
    return save(fig, path)


def ink(rgba) -> str:
    """Text colour readable on a cell of colour ``rgba``: white on dark, black on light
    (by relative luminance).

    >>> ink((0.0, 0.4, 0.2, 1.0)), ink((1.0, 1.0, 0.7, 1.0))
    ('white', 'black')
    """
    r, g, b = rgba[:3]
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"


def _share(cell: str) -> float:
    """'3/4' -> 0.75; '' or 'failed' -> nan.

    >>> _share("3/4"), bool(np.isnan(_share("failed")))
    (0.75, True)
    """
    try:
        p, c = cell.split("/")
        return int(p) / int(c) if int(c) else np.nan
    except (ValueError, AttributeError):
        return np.nan
