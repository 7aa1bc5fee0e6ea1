"""Figures of a run or sweep, drawn from result tables only (matplotlib, Agg backend).

- ``plot_pareto``: recall against a cost, one point per configuration, the Pareto
  frontier (configurations no other beats on both: higher recall and lower cost) joined
  and marked, as ann-benchmarks draws its recall/queries-per-second plots.
- ``plot_pass_matrix``: configuration x scenario, the share of expectations passed.
- ``plot_timelines``: the attention (long + short) of the memories a scenario's
  expectations name, over simulated days, one line per configuration.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..units import DAY  # noqa: E402


def pareto_front(cost: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """Mask of the points no other point dominates: none has cost <= and recall >= with
    one of them strict. Equal points are all on the frontier.

    >>> pareto_front(np.array([1.0, 2.0, 3.0, 2.0]), np.array([0.5, 0.9, 0.9, 0.4])).tolist()
    [True, True, False, False]
    """
    cost, recall = np.asarray(cost, dtype=float), np.asarray(recall, dtype=float)
    le = cost[None, :] <= cost[:, None]          # [i, j]: j costs no more than i
    ge = recall[None, :] >= recall[:, None]      # [i, j]: j recalls at least as much as i
    strict = (cost[None, :] < cost[:, None]) | (recall[None, :] > recall[:, None])
    return ~(le & ge & strict).any(axis=1)


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


def _names(names: pd.Series, most: int = 4) -> str:
    """Labels of coincident points, one a line, at most ``most`` of them."""
    names = list(names)
    return "\n".join(names[:most] + ([f"(+{len(names) - most} more)"] if len(names) > most else []))


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_pareto(table: pd.DataFrame, cost: str, cost_label: str, path: Path) -> Path | None:
    """Recall against ``cost`` for the configurations with both numbers; None if none has."""
    t = table[table["status"] == "ok"].copy()
    t["recall"] = pd.to_numeric(t["recall"], errors="coerce")
    t[cost] = pd.to_numeric(t[cost], errors="coerce")
    t = t.dropna(subset=["recall", cost])
    if t.empty:
        return None
    front = pareto_front(t[cost].to_numpy(), t["recall"].to_numpy())
    fig, ax = plt.subplots(figsize=(7.5, 5))
    ax.scatter(t[cost][~front], t["recall"][~front], color="0.6", label="dominated", zorder=2)
    f = t[front].sort_values([cost, "recall"], ascending=[True, False])
    ax.plot(f[cost], f["recall"], "-o", color="tab:red", drawstyle="steps-post", label="Pareto frontier", zorder=3)
    t["name"], keys = short_labels(t["config"].astype(str).tolist())
    for (x, y), same in t.groupby([cost, "recall"], sort=False):   # coincident points share one label
        ax.annotate(_names(same["name"]), (x, y), textcoords="offset points", xytext=(5, -3), fontsize=7,
                    va="top")
    ax.set_xlabel(cost_label + (f"    [points: {keys}]" if keys else ""))
    ax.set_ylabel("mean recall@k")
    ax.set_ylim(-0.05, 1.08)
    ax.grid(alpha=0.3)
    ax.margins(x=0.2)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.13), ncol=2, fontsize=8, frameon=False)
    ax.set_title(f"Recall against {cost_label.split(' (')[0]} ({len(t)} configurations)", fontsize=10)
    return _save(fig, path)


def plot_pass_matrix(matrix: pd.DataFrame, path: Path) -> Path | None:
    """Heatmap of the pass matrix ('p/c' cells; 'failed' cells grey)."""
    if matrix.empty or not len(matrix.columns):
        return None
    share = matrix.apply(lambda col: col.map(_share))
    width = 1.3 * len(matrix.columns) + 0.075 * max(len(str(i)) for i in matrix.index) + 1.5
    fig, ax = plt.subplots(figsize=(width, 0.45 * len(matrix) + 1.8))
    cmap = matplotlib.colormaps["RdYlGn"].copy()
    cmap.set_bad("0.75")
    ax.imshow(np.ma.masked_invalid(share.to_numpy(dtype=float)), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (i, j), text in np.ndenumerate(matrix.to_numpy()):
        ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(matrix.columns)), matrix.columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(matrix)), matrix.index, fontsize=8)
    ax.set_title("Expectations passed (configuration x scenario)")
    return _save(fig, path)


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


def plot_timelines(timelines: dict[str, pd.DataFrame], scenario: str, path: Path) -> Path | None:
    """Attention of each named memory of ``scenario`` over days; a line per configuration
    (``timelines``: config label -> its timelines.csv rows)."""
    parts = {name: t[t["scenario"] == scenario] for name, t in timelines.items()}
    parts = {name: t for name, t in parts.items() if len(t)}
    if not parts:
        return None
    memories = list(dict.fromkeys(m for t in parts.values() for m in t["memory"]))
    fig, axes = plt.subplots(len(memories), 1, figsize=(10, 2.3 * len(memories) + 0.6), sharex=True, squeeze=False)
    for ax, memory in zip(axes[:, 0], memories):
        for name, t in parts.items():
            m = t[t["memory"] == memory]
            ax.plot(m["t"] / DAY, m["long"] + m["short"], label=name, lw=1.2)
        ax.set_ylabel("attention")
        ax.set_title(f"memory of step '{memory}'", fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("simulated day")
    axes[0, 0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(f"{scenario}: attention of the memories its expectations name", fontsize=10)
    return _save(fig, path)
