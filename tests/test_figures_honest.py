"""Figures that cannot mislead, tested on what they draw: the recall axis ends at 1, the pass
matrix has a colour bar and readable cell text, a single belief check gets a window, the
tier figure says which scenario it shows, timelines draw steps (not straight lines) and a
dotted tier line, titles fit their plots, no "dominated" entry when nothing is."""

from types import SimpleNamespace as NS

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mtsbench.report import plots, timeplots  # noqa: E402
from mtsbench.report.seeds import Config  # noqa: E402


def _summary(recall, scored, lo=None, hi=None, configs=None):
    n = len(recall)
    return pd.DataFrame({"config": configs or [f"x={i}" for i in range(n)], "status": "ok", "recall": recall,
                         "recall_lo": lo or recall, "recall_hi": hi or recall, "scored": scored,
                         "pass_rate": [0.5] * n})


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_pareto_recall_axis_ends_at_one_and_no_empty_dominated_entry(tmp_path, drawn):
    table = _summary([1.0, 1.0, 0.96], [10.0, 20.0, 5.0], lo=[0.94, 0.95, 0.92], hi=[1.0, 1.0, 1.0])
    plots.plot_pareto(table, "scored", "memories scored per probe", tmp_path / "p.png")
    ax = drawn[-1].axes[0]
    bottom, top = ax.get_ylim()
    assert top == 1.0 and 0.85 <= bottom < 0.92
    assert max(float(t) for t in ax.get_yticks() if bottom <= t <= top) <= 1.0
    assert _legend(ax) == ["dominated", "frontier"]            # x=1 is dominated by x=0
    plots.plot_pareto(_summary([0.9, 1.0], [5.0, 10.0]), "scored", "memories scored", tmp_path / "q.png")
    assert _legend(drawn[-1].axes[0]) == ["frontier"]          # nothing dominated: no such entry


def test_pass_matrix_has_a_colour_bar_and_white_text_on_dark_cells(tmp_path, drawn):
    matrix = pd.DataFrame({"a": ["4/4", "2/4"], "b": ["0/4", "failed"]}, index=["x=1", "x=2"])
    plots.plot_pass_matrix(matrix, tmp_path / "m.png")
    fig = drawn[-1]
    assert len(fig.axes) == 2                                   # the matrix and its colour bar
    cells = {t.get_text(): matplotlib.colors.to_hex(t.get_color()) for t in fig.axes[0].texts}
    assert cells["4/4"] == "#ffffff" and cells["2/4"] == "#000000" and cells["failed"] == "#000000"
    assert cells["0/4"] == "#ffffff"                            # dark red as well


def _belief_config(monkeypatch, points):
    monkeypatch.setattr(timeplots, "belief_points", lambda configs: points)
    return [Config("belief=ema", [])]


def test_a_single_belief_check_gets_a_window_and_says_so(tmp_path, drawn, monkeypatch):
    points = pd.DataFrame([{"config": "belief=ema", "scenario": "s", "fact": "user.diet", "day": 4.0, "mean": 0.7,
                            "lo": 0.6, "hi": 0.8}])
    timeplots.plot_beliefs(_belief_config(monkeypatch, points), tmp_path / "b.png")
    ax = drawn[-1].axes[0]
    left, right = ax.get_xlim()
    assert left == 0.0 and right >= 5.0
    assert "one check, day 4" in ax.get_title(loc="left")


def test_belief_checks_on_different_memories_get_their_own_panels():
    assert timeplots.belief_subject("from veg1 >= 0.84") != timeplots.belief_subject("from chicken <= 0.35")


def _tier_job(scenarios):
    return NS(ok=True, dir=None, sizes=pd.DataFrame(
        [{"scenario": s, "t": t * 86400.0, "sizes": [n * (t + 1), t]} for s, n in scenarios for t in range(3)]))


def test_tier_occupancy_names_the_scenario_shown_and_those_not(tmp_path, drawn, monkeypatch):
    monkeypatch.setattr(timeplots.data, "tier_sizes", lambda job: job.sizes)
    jobs = [_tier_job([("small", 1), ("large", 5), ("mid", 2)]), _tier_job([("small", 1), ("large", 3), ("mid", 2)])]
    timeplots.plot_tiers([Config("x=1", [jobs[0]]), Config("x=2", [jobs[1]])], tmp_path / "t.png")
    title = " ".join(drawn[-1]._suptitle.get_text().split())
    assert "scenario large only" in title and "not shown: small, mid" in title


def test_timeline_draws_steps_and_a_dotted_tier_line(tmp_path, drawn, monkeypatch):
    t = pd.DataFrame({"scenario": "s", "memory": "m1", "t": np.array([0.0, 1.0, 3.0]) * 86400, "index": [0, 1, 2],
                      "long": [5.0, 4.0, 2.0], "short": [1.0, 0.5, 0.0], "tier": [0, 0, 1]})
    monkeypatch.setattr(timeplots.data, "timelines", lambda job: t)
    monkeypatch.setattr(timeplots.data, "steps", lambda job, s: {"m1": {"text": "I am allergic to milk " * 12}})
    monkeypatch.setattr(timeplots.data, "cutoffs", lambda job: [3.0])
    monkeypatch.setattr(timeplots.data, "metrics", lambda job: None)
    timeplots.plot_timeline(Config("system=mts", [NS(ok=True)]), "s", tmp_path / "tl.png")
    fig = drawn[-1]
    ax, tier = fig.axes[0], fig.axes[1]
    attention = [line for line in ax.get_lines() if line.get_label().startswith(("long", "short", "attention"))]
    assert len(attention) == 3 and all(line.get_drawstyle() == "steps-post" for line in attention)
    tier_line, = [line for line in tier.get_lines() if len(line.get_xdata())]
    assert tier_line.get_linestyle() == ":" and "tier" in tier.get_ylabel()
    assert any("not attention" in text for text in _legend(ax))
    renderer = fig.canvas.get_renderer()
    width = ax.get_window_extent(renderer).width
    assert ax._left_title.get_window_extent(renderer).width <= width
    span = tier.get_window_extent(renderer).x1 - ax.get_window_extent(renderer).x0
    assert fig._suptitle.get_window_extent(renderer).width <= span            # the long title wrapped


def test_titles_are_no_wider_than_their_plots(tmp_path, drawn):
    table = _summary([0.9, 1.0], [5.0, 10.0])
    label = "total cost: memories scored per dialogue turn, every kind of search, " * 3
    plots.plot_pareto(table, "scored", label, tmp_path / "w.png")
    fig = drawn[-1]
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert ax.title.get_window_extent(renderer).width <= ax.get_window_extent(renderer).width
    assert "\n" in ax.title.get_text()
