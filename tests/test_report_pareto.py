"""The Pareto figures drawn from the committed ablation's own numbers
(experiments/ablation/summary.csv: 16 configurations, several at the same recall and cost): labels placed by adjustText stay inside the axes and never overlap (by the
renderer's text extents), and the axes hold every error bar whole."""

from __future__ import annotations

import itertools
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mtsbench.report import plots  # noqa: E402
from mtsbench.report.aggregate import COSTS  # noqa: E402

ABLATION = Path(__file__).resolve().parent.parent / "experiments" / "ablation" / "summary.csv"


def _labels(ax):
    """The point labels: texts placed in data coordinates (not the numbered table beside the axes)."""
    return [t for t in ax.texts if t.get_transform() == ax.transData and t.get_text()]


@pytest.mark.parametrize("cost,label,name", COSTS)
def test_ablation_labels_are_inside_the_axes_and_do_not_overlap(tmp_path, drawn, cost, label, name):
    table = pd.read_csv(ABLATION)
    assert plots.plot_pareto(table, cost, label, tmp_path / name) is not None
    fig = drawn[-1]
    ax = fig.axes[0]
    labels = _labels(ax)
    assert labels, "no point labels drawn"
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for t in labels:
        x, y = t.get_position()
        assert x0 <= x <= x1 and y0 <= y <= y1, (t.get_text(), (x, y), (x0, x1), (y0, y1))
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in labels}
    for text, b in boxes.items():
        assert frame.x0 - 0.5 <= b.x0 and b.x1 <= frame.x1 + 0.5 and frame.y0 - 0.5 <= b.y0 and \
            b.y1 <= frame.y1 + 0.5, (text, b.bounds, frame.bounds)
    overlapping = [(a, b) for (a, p), (b, q) in itertools.combinations(boxes.items(), 2) if p.overlaps(q)]
    assert not overlapping, overlapping
    shown = ",".join(t.get_text() for t in labels).replace("\n", ",").split(",")
    if all(x.isdigit() for x in shown):                         # numbered, with a table beside the axes
        assert sorted(map(int, shown)) == list(range(1, 17))   # 16 configurations, each numbered once
    else:      # named in place: each configuration once, or counted in its group's "(+N more)"
        names = plots.short_labels(table["config"].astype(str).tolist())[0]
        more = sum(int(x[2:-6]) for x in shown if x.startswith("(+") and x.endswith(" more)"))
        named = [x for x in shown if not x.startswith("(+")]
        assert len(set(named)) == len(named) and set(named) <= set(names) and len(named) + more == len(names)


@pytest.mark.parametrize("cost,label,name", COSTS)
def test_the_axes_hold_every_error_bar(tmp_path, drawn, cost, label, name):
    table = pd.read_csv(ABLATION)
    plots.plot_pareto(table, cost, label, tmp_path / name)
    ax = drawn[-1].axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    for column, low, high in ((cost, x0, x1), ("recall", y0, y1)):
        values = pd.to_numeric(table[column], errors="coerce")
        lo = pd.to_numeric(table.get(f"{column}_lo", values), errors="coerce").fillna(values)
        hi = pd.to_numeric(table.get(f"{column}_hi", values), errors="coerce").fillna(values)
        assert low <= lo.min() and hi.max() <= high, (column, (low, high), (lo.min(), hi.max()))
    bars = [c for c in ax.collections if isinstance(c, matplotlib.collections.LineCollection)]
    assert bars and not any(c.get_clip_on() for c in bars)      # a bar on the edge (recall 1) is drawn whole


def test_the_scored_error_bar_of_the_ablation_reaches_past_its_largest_mean():
    """The case the committed pareto_scored.png cut: tiers/depth score 16.5 memories per probe,
    their intervals reach 20.0, beyond the 1.08 x 16.5 = 17.9 the axis used to end at."""
    table = pd.read_csv(ABLATION)
    assert table["scored_hi"].max() > table["scored"].max() * 1.08
