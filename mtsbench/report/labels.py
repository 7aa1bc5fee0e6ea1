"""Point labels that do not overlap: each label tries positions around its point, nearest
first, and takes the first that overlaps no label placed before it, no point and stays
inside the axes. When the names do not all fit (or there are more than ``INLINE`` of
them) the points get numbers instead, placed the same way, and a legend table beside the
axes gives each number's configuration. Coincident points share one label.
"""

from __future__ import annotations

import numpy as np
from matplotlib.transforms import Bbox

INLINE = 10
# (x sign, y sign, ha, va) around a point, nearest first; tried at growing distances
_SIDES = [(1, 0, "left", "center"), (1, 1, "left", "bottom"), (1, -1, "left", "top"), (-1, 0, "right", "center"),
          (-1, 1, "right", "bottom"), (-1, -1, "right", "top"), (0, 1, "center", "bottom"), (0, -1, "center", "top")]
_RADII = (5, 11, 18, 28, 40)


def _groups(xs, ys) -> list[list[int]]:
    """Indexes of coincident points, in first-seen order."""
    seen: dict[tuple[float, float], list[int]] = {}
    for i, (x, y) in enumerate(zip(xs, ys)):
        seen.setdefault((round(float(x), 9), round(float(y), 9)), []).append(i)
    return list(seen.values())


def place(ax, points, texts, fontsize: float = 7) -> tuple[list, bool]:
    """Annotate each (x, y) of ``points`` with its text where it overlaps nothing placed;
    (the annotations, whether every one found a free place)."""
    renderer = ax.figure.canvas.get_renderer()
    display = ax.transData.transform(np.asarray(points, dtype=float).reshape(-1, 2))
    taken = [Bbox.from_bounds(px - 3, py - 3, 6, 6) for px, py in display]
    frame = ax.get_window_extent(renderer)
    placed, all_fit = [], True
    for (x, y), anchor, text in zip(points, display, texts):
        size = _size(ax, text, fontsize, renderer)
        spot = next((c for c in _candidates(anchor, size, ax.figure.dpi / 72) if _free(c[-1], taken, frame)), None)
        all_fit &= spot is not None
        sx, sy, ha, va, radius, box = spot or (5, 5, "left", "bottom", 1, None)
        arrow = dict(arrowstyle="-", lw=0.4, color="0.5", shrinkA=0, shrinkB=2) if radius > 5 else None
        ann = ax.annotate(text, (x, y), xytext=(sx * radius, sy * radius), textcoords="offset points", ha=ha, va=va,
                          fontsize=fontsize, arrowprops=arrow)
        taken.append(box if box is not None else ann.get_window_extent(renderer))
        placed.append(ann)
    return placed, all_fit


def _size(ax, text: str, fontsize: float, renderer) -> tuple[float, float]:
    """Width and height in pixels of ``text`` drawn at ``fontsize``."""
    probe = ax.annotate(text, (0, 0), fontsize=fontsize)
    box = probe.get_window_extent(renderer)
    probe.remove()
    return box.width, box.height


def _candidates(anchor, size, px_per_pt: float):
    """(x sign, y sign, ha, va, radius, box) of each position around ``anchor``, nearest first."""
    w, h = size
    for radius in _RADII:
        for sx, sy, ha, va in _SIDES:
            x = anchor[0] + sx * radius * px_per_pt - {"left": 0, "right": w, "center": w / 2}[ha]
            y = anchor[1] + sy * radius * px_per_pt - {"bottom": 0, "top": h, "center": h / 2}[va]
            yield sx, sy, ha, va, radius, Bbox.from_bounds(x - 2, y - 2, w + 4, h + 4)


def _free(box, taken, frame) -> bool:
    return frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1) and not any(box.overlaps(b) for b in taken)


def label_points(ax, xs, ys, names, fontsize: float = 7) -> list:
    """Label the points (x, y) by name, or by number with a legend table beside the axes
    when the names are many or do not fit; returns the annotations."""
    groups = _groups(xs, ys)
    points = [(xs[g[0]], ys[g[0]]) for g in groups]
    if len(groups) <= INLINE:
        texts = [_join([names[i] for i in g]) for g in groups]
        placed, fit = place(ax, points, texts, fontsize)
        if fit:
            return placed
        for ann in placed:
            ann.remove()
    numbers = {i: n + 1 for n, i in enumerate(sorted(range(len(names)), key=lambda i: (xs[i], -ys[i])))}
    texts = [_join([str(numbers[i]) for i in sorted(g, key=numbers.get)], sep=",") for g in groups]
    placed, _ = place(ax, points, texts, fontsize)
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
