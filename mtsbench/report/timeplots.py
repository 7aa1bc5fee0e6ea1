"""Figures over simulated time, from saved results only (matplotlib, Agg backend).

- ``plot_timeline``: one configuration's memories that a scenario's expectations name, a
  panel each titled by the memory's text: long and short attention as steps (their values
  at each step, held until the next), the tier (right axis, dotted green),
  the tier policy's cut-offs (dotted), probes (vertical lines), recalls (a rise of the long
  part: red triangles) and arousal (a rise of the short part alone: purple).
- ``plot_timeline_configs``: the same memories' attention (long + short) per configuration;
  configurations with identical curves share one line.
- ``plot_tiers``: tier occupancy (members per tier), stacked; the title says which
  scenario is shown and which are not.
- ``plot_beliefs``: the belief of each checked fact at its checks, per configuration, mean
  over seeds with its 95% interval.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..core.units import DAY  # noqa: E402
from . import data  # noqa: E402
from .intervals import bootstrap  # noqa: E402
from .plots import color, save, short_labels  # noqa: E402
from .seeds import Config  # noqa: E402

MAX_PANELS = 8
TIER_STYLE = ":"      # dotted: the tier line never reads as one of the attention lines


BUNDLED_CJK = Path(__file__).with_name("fonts") / "mtsbench-cjk-sc.otf"
INSTALLED_CJK = re.compile(r"CJK|WenQuanYi|Droid Sans Fallback|Source Han|Noto Sans (SC|TC|JP)")
_CJK_TEXT = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


@lru_cache(maxsize=1)
def cjk_font() -> tuple[str, frozenset[int] | None]:
    """(name, the code points it draws, None for all) of the font that draws CJK text,
    added to matplotlib's fallback list after DejaVu Sans: a CJK font installed on the
    machine, else the one bundled with mtsbench (``fonts/``: Noto Sans CJK SC cut to GB2312's
    characters, SIL Open Font License), registered with ``font_manager.fontManager.addfont``."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    installed = sorted({f.name for f in font_manager.fontManager.ttflist
                        if INSTALLED_CJK.search(f.name) and Path(f.fname) != BUNDLED_CJK})
    if installed:
        name, covers = installed[0], None
    else:
        font_manager.fontManager.addfont(str(BUNDLED_CJK))
        name = font_manager.FontProperties(fname=str(BUNDLED_CJK)).get_name()
        covers = frozenset(FT2Font(str(BUNDLED_CJK)).get_charmap())
    plt.rcParams["font.family"] = ["DejaVu Sans", name]
    return name, covers


def _drawable(text: str) -> bool:
    """Whether the fonts at hand draw ``text``: every CJK character in it is one the CJK
    font has (the bundled font has GB2312's; an installed one is taken to have all).

    >>> _drawable("milk"), _drawable("我对牛奶过敏。")
    (True, True)
    """
    cjk = _CJK_TEXT.findall(text)
    if not cjk:
        return True
    covers = cjk_font()[1]
    return covers is None or all(ord(c) in covers for c in cjk)


def _title(info: dict | None, memory: str, width: int = 70) -> str:
    """A panel's title: the memory's text (shortened), then its step id; the id alone when
    there is no text or no font to draw it.

    >>> _title({"text": "I am allergic to milk."}, "allergy"), _title(None, "s3")
    ('"I am allergic to milk."  (step allergy)', 'step s3')
    """
    text = (info or {}).get("text")
    if not text or not _drawable(str(text)):
        return f"step {memory}" + ("" if not text else " (its text has characters no font here draws: install a "
                                   "CJK font such as Noto Sans CJK)")
    text = " ".join(str(text).split())
    return f'"{text if len(text) <= width else text[:width - 1] + "…"}"  (step {memory})'


def _probe_days(job, scenario: str, t: pd.DataFrame) -> list[float]:
    """Days of the scenario's probes (their step index placed by the timeline's clock)."""
    frame = data.metrics(job)
    if frame is None:
        return []
    probes = frame[(frame["scenario"] == scenario) & (frame["check"] == "probe")]
    clock = t.drop_duplicates("index").set_index("index")["t"]
    return sorted({float(clock[i]) / DAY for i in probes["index"] if i in clock.index})


def _memories(t: pd.DataFrame) -> tuple[list[str], str]:
    """The memories to draw (at most MAX_PANELS) and a note when some are left out."""
    memories = list(dict.fromkeys(t["memory"]))
    note = f" (first {MAX_PANELS} of {len(memories)} memories)" if len(memories) > MAX_PANELS else ""
    return memories[:MAX_PANELS], note


def _panels(n: int, height: float = 2.4):
    """A figure of ``n`` stacked panels sharing the time axis (the CJK font made the fallback
    first: a text takes its fonts when it is made, an axes' title with the axes)."""
    cjk_font()
    fig, axes = plt.subplots(n, 1, figsize=(10, height * n + 0.8), sharex=True, squeeze=False)
    return fig, axes[:, 0]


def plot_timeline(config: Config, scenario: str, path: Path) -> Path | None:
    """Long, short and tier of the memories ``scenario``'s expectations name, for the
    first job of ``config``; None without timelines."""
    job = config.first
    t = data.timelines(job)
    t = t[t["scenario"] == scenario] if t is not None else None
    if t is None or t.empty:
        return None
    memories, note = _memories(t)
    info, probes, cuts = data.steps(job, scenario), _probe_days(job, scenario, t), data.cutoffs(job)
    fig, axes = _panels(len(memories))
    for ax, memory in zip(axes, memories):
        _draw_memory(ax, t[t["memory"] == memory].sort_values(["t", "index"]), probes, cuts)
        ax.set_title(_title(info.get(memory), memory), fontsize=9, loc="left")
    axes[-1].set_xlabel("simulated day")
    handles = axes[0].get_legend_handles_labels()
    axes[0].legend(*handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.07, 1.0), frameon=False)
    fig.suptitle(f"{scenario}: attention and tier of the memories its expectations name{note}, "
                 f"at each step (held until the next)\n[{config.label}]", fontsize=10, y=1.0, va="bottom")
    return save(fig, path)


def _draw_memory(ax, m: pd.DataFrame, probes: list[float], cuts: list[float]) -> None:
    """One memory's panel: long, short, total, recall and arousal marks, probes, cut-offs, tier."""
    days = m["t"].to_numpy() / DAY
    long, short = m["long"].to_numpy(), m["short"].to_numpy()
    # values are known at the steps only: drawn held until the next step, never joined by a
    # straight line that would make any decay between them look linear
    ax.plot(days, long, color="tab:blue", lw=1.3, drawstyle="steps-post", label="long-term (at each step)")
    ax.plot(days, short, color="tab:orange", lw=1.1, ls="--", drawstyle="steps-post", label="short-term")
    ax.plot(days, long + short, color="0.25", lw=0.8, alpha=0.6, drawstyle="steps-post",
            label="attention (long + short)")
    rise_long = np.r_[False, np.diff(long) > 1e-6]
    rise_short = np.r_[False, np.diff(short) > 1e-6] & ~rise_long
    ax.scatter(days[rise_long], (long + short)[rise_long], marker="^", color="tab:red", s=22, zorder=4,
               label="recalled (long part rises)")
    ax.scatter(days[rise_short], (long + short)[rise_short], marker="v", color="tab:purple", s=14, zorder=4,
               label="aroused (short part rises)")
    for i, day in enumerate(probes):
        ax.axvline(day, color="0.2", lw=0.8, ls="-.", alpha=0.5, label="probe" if i == 0 else None)
    for i, cut in enumerate(cuts):
        ax.axhline(cut, color="0.5", lw=0.7, ls=":", label="tier cut-off" if i == 0 else None)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("attention")
    ax.grid(alpha=0.25)
    tier = ax.twinx()
    tier.step(days, m["tier"], where="post", color="tab:green", lw=1.6, ls=TIER_STYLE, alpha=0.9)
    tier.set_ylabel("tier (0 = top; dotted green)", color="tab:green", fontsize=8)
    top = int(max(m["tier"].max(), len(cuts), 1))
    tier.set_ylim(top + 0.3, -0.3)
    tier.set_yticks(range(top + 1))
    tier.tick_params(labelsize=7, colors="tab:green")
    ax.plot([], [], color="tab:green", lw=1.6, ls=TIER_STYLE, label="tier (right axis, 0 = top; not attention)")


def distinct(curves: dict[str, tuple]) -> dict[str, list[str]]:
    """Labels grouped by identical curve, first-seen order."""
    same: dict[tuple, list[str]] = {}
    for label, curve in curves.items():
        same.setdefault(curve, []).append(label)
    return {labels[0]: labels for labels in same.values()}


def legend_name(names: list[str], most: int = 3) -> str:
    """One legend entry for configurations sharing a curve.

    >>> legend_name(["a", "b", "c", "d"])
    'a, b, c (+1 more)'
    """
    return ", ".join(names[:most]) + (f" (+{len(names) - most} more)" if len(names) > most else "")


def plot_timeline_configs(configs: list[Config], scenario: str, path: Path) -> Path | None:
    """Attention (long + short) of the named memories per configuration; None unless at
    least two configurations' curves differ."""
    frames = {c.label: t[t["scenario"] == scenario] for c in configs if (t := data.timelines(c.first)) is not None}
    frames = {label: t for label, t in frames.items() if len(t)}
    if len(frames) < 2:
        return None
    names = dict(zip(frames, short_labels(list(frames))[0]))
    memories, note = _memories(next(iter(frames.values())))
    info = data.steps(configs[0].first, scenario)
    curves = {label: tuple(np.round((t["long"] + t["short"]).to_numpy(), 4)) for label, t in frames.items()}
    groups = distinct(curves)
    if len(groups) < 2:
        return None
    fig, axes = _panels(len(memories), 2.1)
    for ax, memory in zip(axes, memories):
        for n, (label, members) in enumerate(groups.items()):
            m = frames[label][frames[label]["memory"] == memory]
            ax.plot(m["t"] / DAY, m["long"] + m["short"], lw=1.2, color=color(n, len(groups)),
                    drawstyle="steps-post", label=legend_name([names[x] for x in members]))
        ax.set_title(_title(info.get(memory), memory), fontsize=9, loc="left")
        ax.set_ylabel("attention")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.25)
    axes[-1].set_xlabel("simulated day")
    axes[0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(f"{scenario}: attention per configuration{note} ({len(groups)} distinct curves of "
                 f"{len(frames)} configurations)", fontsize=10, y=1.0, va="bottom")
    return save(fig, path)


def _occupancy(config: Config, scenario: str) -> pd.DataFrame | None:
    """Members per tier (columns) by day (index) of ``scenario`` in the configuration's first job."""
    sizes = data.tier_sizes(config.first)
    sizes = sizes[sizes["scenario"] == scenario]
    if sizes.empty:
        return None
    wide = by_tier(sizes["sizes"].tolist(), sizes["t"].to_numpy() / DAY)
    return wide.loc[~wide.index.duplicated(keep="last")]


def by_tier(sizes: list, days) -> pd.DataFrame:
    """Members per tier (columns) by day (index); a tier a row does not reach (the store had
    not filled it yet) counts 0. The rows are padded before the frame is built: pandas
    deprecates building one from rows of unequal length.

    >>> by_tier([[3, 1], [3, 2, 4]], [0.5, 1.0]).to_numpy().tolist()
    [[3.0, 1.0, 0.0], [3.0, 2.0, 4.0]]
    """
    width = max(map(len, sizes), default=0)
    rows = [[*r, *[np.nan] * (width - len(r))] for r in sizes]
    return pd.DataFrame(rows, index=days).fillna(0)


def _largest_scenario(config: Config) -> str | None:
    """The scenario whose store grows largest in the configuration's first job."""
    sizes = data.tier_sizes(config.first)
    if sizes.empty:
        return None
    return str(sizes.assign(n=sizes["sizes"].map(sum)).sort_values("n", kind="stable")["scenario"].iloc[-1])


def plot_tiers(configs: list[Config], path: Path) -> Path | None:
    """Tier occupancy over time: a panel per configuration with a distinct occupancy (on
    the scenario that grows the largest store), or per scenario for a single run."""
    if not configs or (scenario := _largest_scenario(configs[0])) is None:
        return None
    if len(configs) > 1:
        panels = {c.label: _occupancy(c, scenario) for c in configs}
        panels = {k: v for k, v in panels.items() if v is not None}
        groups = distinct({k: (tuple(v.index), tuple(v.to_numpy().ravel())) for k, v in panels.items()})
        names = dict(zip(panels, short_labels(list(panels))[0]))
        items = [(legend_name([names[x] for x in members]), panels[k]) for k, members in groups.items()]
        others = [s for s in dict.fromkeys(data.tier_sizes(configs[0].first)["scenario"]) if s != scenario]
        title = (f"Tier occupancy over time, scenario {scenario} only (members per tier; the scenario with the "
                 f"largest store" + (f"; not shown: {', '.join(others)})" if others else ")"))
    else:
        scenarios = list(dict.fromkeys(data.tier_sizes(configs[0].first)["scenario"]))
        items = [(s, _occupancy(configs[0], s)) for s in scenarios]
        title = "Tier occupancy over time (members per tier), a panel per scenario"
    items = [(name, w) for name, w in items if w is not None][:MAX_PANELS]
    return _draw_tiers(items, title, path) if items else None


def _draw_tiers(items: list[tuple[str, pd.DataFrame]], title: str, path: Path) -> Path:
    """Stacked tier occupancy, a panel per (name, table)."""
    cols = 2 if len(items) > 1 else 1
    rows = (len(items) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 2.3 * rows + 0.7), squeeze=False)
    for ax, (name, wide) in zip(axes.ravel(), items):
        colors = [plt.cm.viridis(min(int(c), 5) / 5 * 0.9) for c in wide.columns]     # a tier keeps its colour
        ax.stackplot(wide.index, *(wide[c] for c in wide.columns), labels=[f"tier {c}" for c in wide.columns],
                     colors=colors, step="post", alpha=0.85)
        ax.set_title(name, fontsize=8, loc="left")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.25)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(items):]:
        ax.set_visible(False)
    axes[0, 0].legend(fontsize=7, loc="upper left", frameon=False)
    for ax in axes[-1]:
        ax.set_xlabel("simulated day", fontsize=8)
    fig.subplots_adjust(hspace=0.5)
    fig.suptitle(title, fontsize=10, y=1.0, va="bottom")
    return save(fig, path)


def belief_subject(expected: str) -> str:
    """What a belief check's expected text is about: its key, or ``from STEP`` (the belief of
    the memory of that step), so checks on different memories get their own panels.

    >>> belief_subject("from veg1 >= 0.84"), belief_subject("user.diet=vegan in [0.2, 0.5]")
    ('from veg1', 'user.diet=vegan')
    """
    parts = expected.split()
    return " ".join(parts[:2]) if parts[:1] == ["from"] and len(parts) > 1 else (parts[0] if parts else "")


def belief_points(configs: list[Config]) -> pd.DataFrame:
    """config, scenario, fact, day, mean, lo, hi: each belief check's value, over seeds."""
    rows = []
    for config in configs:
        frames = [(job, f[f["check"] == "belief"]) for job in config.jobs if (f := data.metrics(job)) is not None]
        values = pd.concat([f.assign(seed=n) for n, (_, f) in enumerate(frames)]) if frames else pd.DataFrame()
        if values.empty:
            continue
        values = values.assign(value=pd.to_numeric(values["value"], errors="coerce"),
                               fact=values["expected"].astype(str).map(belief_subject)).dropna(subset=["value"])
        for (scenario, fact, index, step), g in values.groupby(["scenario", "fact", "index", "step"], sort=False):
            mean, lo, hi = bootstrap([[v] for v in g["value"]])
            at = data.steps(config.first, scenario).get(step, {}).get("at")
            rows.append({"config": config.label, "scenario": scenario, "fact": fact,
                         "day": (at / DAY) if at is not None else float(index), "mean": mean, "lo": lo, "hi": hi})
    return pd.DataFrame(rows, columns=["config", "scenario", "fact", "day", "mean", "lo", "hi"])


def single_window(day: float) -> tuple[float, float]:
    """The time axis for a single point: from the start (day 0) to a day past it.

    >>> single_window(4.0), single_window(0.0)
    ((0.0, 5.0), (0.0, 1.0))
    """
    return 0.0, day + max(1.0, 0.1 * day)


def plot_beliefs(configs: list[Config], path: Path) -> Path | None:
    """Belief over time of each checked fact, a line per configuration (identical lines
    shared) with its interval; None when no belief is checked."""
    points = belief_points(configs)
    if points.empty:
        return None
    panels = list(points.groupby(["scenario", "fact"], sort=False))[:MAX_PANELS]
    names = dict(zip([c.label for c in configs], short_labels([c.label for c in configs])[0]))
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 2.3 * len(panels) + 0.8), squeeze=False)
    for ax, ((scenario, fact), p) in zip(axes[:, 0], panels):
        curves = {c: tuple(np.round(g[["day", "mean"]].to_numpy().ravel(), 4))
                  for c, g in p.groupby("config", sort=False)}
        for n, (label, members) in enumerate(distinct(curves).items()):
            g = p[p["config"] == label].sort_values("day")
            shade = color(n, len(curves))
            ax.plot(g["day"], g["mean"], "-o", ms=3, lw=1.2, color=shade,
                    label=legend_name([names[m] for m in members]))
            if len(g) > 1:
                ax.fill_between(g["day"], g["lo"], g["hi"], color=shade, alpha=0.15, lw=0)
            else:       # one point: its interval as an error bar (a band of one point is invisible)
                ax.errorbar(g["day"], g["mean"], yerr=[g["mean"] - g["lo"], g["hi"] - g["mean"]], fmt="none",
                            ecolor=shade, elinewidth=1, capsize=3)
        ax.set_ylim(-0.03, 1.03)
        ax.set_ylabel("belief")
        ax.grid(alpha=0.25)
        days = p["day"].unique()
        if len(days) == 1:      # one check: a window around it from the start, not a 0.4-day axis
            ax.set_xlim(*single_window(float(days[0])))
        ax.set_title(f"{scenario}: {fact}" + (f" (one check, day {days[0]:.3g})" if len(days) == 1 else ""),
                     fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    axes[-1, 0].set_xlabel("simulated day (of the check)")
    fig.subplots_adjust(hspace=0.55)
    fig.suptitle("Belief over time at the scenarios' belief checks (mean over seeds, 95% interval)", fontsize=10,
                 y=1.0, va="bottom")
    return save(fig, path)
