"""The report's building blocks: the seeded bootstrap, the frontier's tie-break,
labels that do not overlap, and the HTML conversion."""

import itertools
import threading

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mtsbench.report import html  # noqa: E402
from mtsbench.report.intervals import bootstrap, config_label  # noqa: E402
from mtsbench.report.labels import label_points, place  # noqa: E402
from mtsbench.report.plots import pareto_front  # noqa: E402


def test_bootstrap_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(7)
    values = rng.binomial(1, 0.6, 200).astype(float)
    first, second = bootstrap([values]), bootstrap([values])
    assert first == second
    mean, lo, hi = first
    assert mean == pytest.approx(values.mean()) and lo < mean < hi
    assert 0.08 < hi - lo < 0.18          # about 2 x 1.96 x sqrt(p(1-p)/n) = 0.136
    assert bootstrap([values], seed=1) != first     # the seed, not chance, makes it repeatable


def test_seeds_widen_the_interval_and_nan_is_left_out():
    same = bootstrap([[0.5, 0.6, 0.7]] * 3)
    apart = bootstrap([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0.9, 1.0, 0.8]])
    assert apart[2] - apart[1] > same[2] - same[1]
    assert bootstrap([[1.0, np.nan, 0.0]])[0] == 0.5
    assert all(np.isnan(bootstrap([[np.nan], []])))


def test_seed_is_not_a_configuration():
    assert config_label("seed=3 preset=mts") == config_label("preset=mts seed=0") == "preset=mts"


def test_frontier_breaks_recall_ties_by_pass_rate():
    cost = np.array([1.0, 2.0, 3.0, 3.0])
    recall = np.array([1.0, 1.0, 1.0, 0.9])
    assert pareto_front(cost, recall).tolist() == [True, False, False, False]
    assert pareto_front(cost, recall, tiebreak=[0.5, 0.8, 0.8, 1.0]).tolist() == [True, True, False, False]


def _boxes(fig, artists):
    renderer = fig.canvas.get_renderer()
    return [a.get_window_extent(renderer) for a in artists]


def test_labels_do_not_overlap_each_other_or_the_axes_edge():
    fig, ax = plt.subplots(figsize=(7, 4))
    xs = np.array([1.0, 1.05, 1.1, 1.1, 1.15, 3.0, 3.02, 5.0])
    ys = np.array([0.5, 0.5, 0.52, 0.52, 0.49, 0.8, 0.8, 0.2])
    ax.scatter(xs, ys)
    ax.set_xlim(0, 6)
    ax.set_ylim(0, 1)
    placed = place(ax, list(zip(xs, ys)), [f"config number {i}" for i in range(len(xs))])
    assert placed is not None
    boxes = _boxes(fig, placed)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    frame = ax.get_window_extent(fig.canvas.get_renderer())
    assert all(frame.contains(b.x0, b.y0) and frame.contains(b.x1, b.y1) for b in boxes)
    plt.close(fig)


def test_labels_with_room_beside_their_points_are_placed_there_without_adjusttext(monkeypatch):
    """Sparse points: each label touches its point, covers no point and no other label, and
    adjustText (up to a second a figure) is not called; crowded ones all go to adjustText."""
    from mtsbench.report import labels

    calls = []
    monkeypatch.setattr(labels, "adjust_text", lambda texts, **kw: calls.append(len(texts)))
    fig, ax = plt.subplots(figsize=(7, 4))
    xs, ys = np.array([1.0, 3.0, 5.0, 5.0]), np.array([1.0, 0.5, 0.2, 0.8])
    ax.set_xlim(0, 6)
    ax.set_ylim(0, 1)
    placed = place(ax, list(zip(xs, ys)), ["at the top edge", "middle", "low", "high"])
    assert placed is not None and calls == []
    renderer = fig.canvas.get_renderer()
    points = ax.transData.transform(np.column_stack([xs, ys]))
    boxes = _boxes(fig, placed)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    assert all(b.count_contains(points) == 0 for b in boxes)
    frame = ax.get_window_extent(renderer)
    assert all(frame.contains(b.x0, b.y0) and frame.contains(b.x1, b.y1) for b in boxes)
    for (px, py), b in zip(points, boxes):       # touching: within a few pixels of its point
        assert b.x0 - 6 <= px <= b.x1 + 6 and b.y0 - 6 <= py <= b.y1 + 6
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xlim(0, 2)
    ax.set_ylim(0, 1)
    place(ax, [(1.0 + i / 100, 0.5) for i in range(6)], [f"crowded label {i}" for i in range(6)], keep=True)
    assert calls and set(calls) == {6}              # every label, from its point, as before
    plt.close(fig)


def test_crowded_points_get_numbers_and_a_legend_table():
    fig, ax = plt.subplots(figsize=(6, 4))
    xs, ys = np.linspace(1, 2, 30), np.full(30, 0.5)
    ax.set_xlim(0, 3)
    ax.set_ylim(0, 1)
    names = [f"ablate=mechanism_{i}" for i in range(30)]
    placed = label_points(ax, xs, ys, names)
    texts = [a.get_text() for a in placed]
    assert all(t.replace(",", "").isdigit() for t in texts)
    legend = "\n".join(t.get_text() for t in ax.texts if "ablate=" in t.get_text())
    assert all(n in legend for n in names)
    plt.close(fig)


def test_label_placement_does_not_depend_on_the_machines_load():
    """Labels that cannot be parted run to a step limit, not a time limit: placed once on an
    idle interpreter and once while another thread competes for it, they land on the same
    spots (adjustText's default, one second, gave 800 to 2,000 steps by load)."""
    def positions():
        fig, ax = plt.subplots(figsize=(3, 2))
        xs, ys = np.linspace(1, 1.2, 9), np.full(9, 0.5)
        ax.set_xlim(0, 2)
        ax.set_ylim(0, 1)
        placed = place(ax, list(zip(xs, ys)), [f"a rather long configuration name {i}" for i in range(9)], keep=True)
        out = [tuple(t.get_position()) for t in placed]
        plt.close(fig)
        return out

    idle = positions()
    done = threading.Event()

    def busy():
        while not done.is_set():
            sum(range(1000))

    competitor = threading.Thread(target=busy)
    competitor.start()
    try:
        loaded = positions()
    finally:
        done.set()
        competitor.join()
    assert loaded == idle


def test_html_conversion_tables_images_and_escaping(tmp_path):
    (tmp_path / "a.png").write_bytes(b"\x89PNG fake")
    body = html.convert("# T\n\nsome `x<y` text\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![fig](a.png)\n\n- one\n- two\n",
                        tmp_path)
    assert "<h1>T</h1>" in body and "<code>x&lt;y</code>" in body
    assert '<table class="sortable">' in body and "<td>2</td>" in body
    assert 'src="data:image/png;base64,iVBORyBmYWtl"' in body and "<li>two</li>" in body
