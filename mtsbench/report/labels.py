"""Point labels that do not overlap, placed inside the axes: each beside its point when all
find room there, else by adjustText.

First each label goes, in turn, to the first of the spots touching its point (``SPOTS``:
below, above, right, left, then the corners) where, with its margin, it covers no point and
no label placed before it and lies inside the axes (``beside``: a few box comparisons). When
every label finds such a spot, that is their place: a sparse figure never pays adjustText's
iterations (up to a second a figure). Otherwise every label starts on its point again and
``adjustText.adjust_text`` (a force-directed placer that pushes labels off each other and off
the points) moves them apart, keeps them inside the axes and joins a moved label to its point
with a thin line. It stops when the labels no longer overlap or after ``ITERATIONS`` steps: a
count, so the same data give the same figure (adjustText's default is a one-second time
limit: 800 to 2,000 steps, depending on the machine's load). In the committed experiments'
reports every placement that settled did so within 180 steps, and each placement fits or not
alike with either limit. The result is then checked with the renderer's text extents: when
two labels still overlap or one leaves the axes (names too long or too many, more than
``INLINE``), the points get numbers instead, placed the same way, and a table beside the axes
gives each number's configuration. Coincident points share one label.
"""

from __future__ import annotations

import itertools

import numpy as np
from adjustText import adjust_text
from matplotlib.transforms import Bbox

INLINE = 10
ITERATIONS = 300
EXPAND = [(1.2, 1.4), (1.4, 1.8), (1.8, 2.4)]     # margins around a label (x, y factors), tried in turn
LINK = dict(arrowstyle="-", color="0.5", lw=0.4, shrinkA=0, shrinkB=2)
# a label's centre beside its point, in half-widths and half-heights of its box with margin
SPOTS = [(0, -1), (0, 1), (1, 0), (-1, 0), (1, -1), (-1, -1), (1, 1), (-1, 1)]
GAP = 2.0       # pixels between a label's margin and its point


def _groups(xs, ys) -> list[list[int]]:
    """Indexes of coincident points, in first-seen order.

    >>> _groups([1.0, 2.0, 1.0], [0.5, 0.5, 0.5])
    [[0, 2], [1]]
    """
    seen: dict[tuple[float, float], list[int]] = {}
    for i, (x, y) in enumerate(zip(xs, ys)):
        seen.setdefault((round(float(x), 9), round(float(y), 9)), []).append(i)
    return list(seen.values())


def place(ax, points, texts, fontsize: float = 7, keep: bool = False) -> list | None:
    """Label each (x, y) of ``points`` with its text, beside it or moved apart by adjustText
    inside the axes (``beside``), with a wider margin around each label (``EXPAND``) for as long as some overlap;
    the labels (Text artists), or None (and nothing left drawn) when they never fit, unless
    ``keep`` (then the last try stays). Call it once the axes' limits are final."""
    xy = np.asarray(points, dtype=float).reshape(-1, 2)
    for n, expand in enumerate(EXPAND):
        before = set(map(id, [*ax.texts, *ax.patches]))
        labels = [ax.text(x, y, text, fontsize=fontsize, ha="center", va="center", zorder=4) for (x, y), text
                  in zip(xy, texts)]
        if not beside(ax, labels, xy, expand):
            for label, start in zip(labels, xy):
                label.set_position(start)
            # prevent_crossings off: its swaps of two labels' places (experimental) can make labels of
            # different widths overlap again after the forces have parted them
            adjust_text(labels, x=xy[:, 0], y=xy[:, 1], ax=ax, ensure_inside_axes=True, expand=expand,
                        prevent_crossings=False, iter_lim=ITERATIONS, arrowprops=LINK)
        if fits(ax, labels) or (keep and n == len(EXPAND) - 1):
            return labels
        for artist in [a for a in [*ax.patches, *ax.texts] if id(a) not in before]:    # the links, the labels
            artist.remove()
    return None


def beside(ax, labels, xy: np.ndarray, expand: tuple[float, float]) -> bool:
    """Move each label (Text on its point ``xy[i]``), in order, to the first of ``SPOTS`` where
    its box grown by ``expand`` holds no point and meets no label moved before it, and its box
    lies inside the axes; False as soon as one has no such spot (the labels before it moved)."""
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    points = ax.transData.transform(xy)
    taken = []
    for label, point in zip(labels, points):
        box = label.get_window_extent(renderer)
        size = np.array([box.width, box.height])
        half = size * expand / 2
        for spot in np.array(SPOTS):
            centre = point + spot * (half + GAP)
            grown, shown = Bbox([centre - half, centre + half]), Bbox([centre - size / 2, centre + size / 2])
            if (frame.x0 <= shown.x0 and shown.x1 <= frame.x1 and frame.y0 <= shown.y0 and shown.y1 <= frame.y1
                    and not grown.count_contains(points) and not any(grown.overlaps(t) for t in taken)):
                label.set_position(ax.transData.inverted().transform(centre))
                taken.append(grown)
                break
        else:
            return False
    return True


def fits(ax, labels) -> bool:
    """Whether no two labels overlap and each lies inside the axes (by the renderer's extents)."""
    renderer = ax.figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    boxes = [t.get_window_extent(renderer) for t in labels]
    inside = all(frame.x0 - 0.5 <= b.x0 and b.x1 <= frame.x1 + 0.5 and frame.y0 - 0.5 <= b.y0 and
                 b.y1 <= frame.y1 + 0.5 for b in boxes)
    return inside and not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def label_points(ax, xs, ys, names, fontsize: float = 7) -> list:
    """Label the points (x, y) by name, or by number with a table beside the axes when the
    names are many or do not fit; returns the labels."""
    groups = _groups(xs, ys)
    points = [(xs[g[0]], ys[g[0]]) for g in groups]
    if len(groups) <= INLINE:
        placed = place(ax, points, [_join([names[i] for i in g]) for g in groups], fontsize)
        if placed is not None:
            return placed
    numbers = {i: n + 1 for n, i in enumerate(sorted(range(len(names)), key=lambda i: (xs[i], -ys[i])))}
    texts = [_join([str(numbers[i]) for i in sorted(g, key=numbers.get)], most=8, sep=",") for g in groups]
    placed = place(ax, points, texts, fontsize, keep=True)
    legend_table(ax, [f"{numbers[i]:>2}  {names[i]}" for i in sorted(numbers, key=numbers.get)])
    return placed


def legend_table(ax, lines: list[str]) -> None:
    """A numbered list beside the axes (two columns when long)."""
    size = 7 if len(lines) <= 30 else 6
    half = (len(lines) + 1) // 2 if len(lines) > 40 else len(lines)
    for column, start in enumerate(range(0, len(lines), half)):
        ax.text(1.02 + 0.5 * column, 1.0, "\n".join(lines[start:start + half]), transform=ax.transAxes, va="top",
                ha="left", fontsize=size, family="monospace")


def _join(texts: list[str], most: int = 4, sep: str = "\n") -> str:
    """Labels of coincident points, at most ``most`` of them.

    >>> _join(["a", "b"]), _join(list("abcdef"), sep=",")
    ('a\\nb', 'a,b,c,d,+2')
    """
    more = [f"+{len(texts) - most}" if sep == "," else f"(+{len(texts) - most} more)"] if len(texts) > most else []
    return sep.join(texts[:most] + more)
