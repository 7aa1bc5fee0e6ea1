"""The frontier study at scale's report, from its studies' databases and saved runs only.

For every system of the plan (``WORK/NAME``: its tuning study, ``WORK/NAME/held_out``: the runs of its
tuning front on the held-out chats) this reads each held-out run's saved files
(``beam_report.Saved``) and measures every front point at every haystack size: earned recall@1024t
with its 95% bootstrap interval over probes, work per target turn two ways — index work (distances of
every query, measured, plus graph inserts' estimate) and memories scored by every search — and per
BEAM category. ``write_report`` writes ``OUT/report.md``, ``OUT/summary.csv`` (one row per system,
point and size), ``OUT/fronts_<size>.png`` (each system's held-out points and front at that size),
``OUT/slopes.png`` (each point's recall and work as the haystack grows) and each study's own report
into ``OUT/NAME``. The report answers, at the largest haystack:

- **the question** (``answer``): the rival's (the HNSW index's) best held-out point R*, W* (recall
  first, then less work) and the design's points with recall >= ``MATCH`` R* at index work <= W*:
  the cheapest of them with the mechanisms it has on, or by how much the design misses and where its
  front crosses the rival's (``crossing``);
- which mechanisms are on at the design's held-out front points, per category the best points of
  each system, and each system's chosen point (its tuning front's best recall) with its drop from
  the tuning chats to the held-out ones at the tuning size, with an interval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from ..report.markdown import table
from ..report.plots import pareto_front, plt, save
from .beam_report import HEADLINE, Saved, by_category, measure
from .frontier_report import COLOURS, MATCH, WORK_LIMIT, _importance_lines, _n, _p, _walls, chosen, collect

RECALL = f"recall@{HEADLINE}t"
WORK_LABEL = {"distances": "index work per turn (distances: queries measured + graph inserts estimated)",
              "scored": "memories scored per turn (every search)"}


def _measured(folder: Path, chats: set[str] | None = None) -> dict[int, dict]:
    """size -> ``measure`` of the saved run in ``folder`` over ``chats`` (all its chats when None)."""
    if not (folder / "summary.json").is_file():
        return {}
    saved = Saved(folder)
    every = set(saved.probes["chat"]) if chats is None else chats
    return {size: {**measure(saved, size, every), "categories": by_category(saved, size, every)} for size in saved.sizes}


def sized(frame: pd.DataFrame, studies: dict, work: Path) -> pd.DataFrame:
    """One row per system, held-out front point and haystack size (module docstring)."""
    rows = []
    for name, s in studies.items():
        if s.held is None:
            continue
        info = frame[frame["system"] == name].set_index("trial")
        for t in s.held.get_trials(deepcopy=False):
            trial, job = t.user_attrs.get("tuning_trial"), t.user_attrs.get("job")
            for size, m in _measured(work / name / "held_out" / str(job)).items():
                rows.append({"system": name, "role": info["role"].iloc[0], "trial": trial, "job": job, "size": size,
                             "recall": m[RECALL], "ci_lo": m["ci_lo"], "ci_hi": m["ci_hi"], "probes": m["probes"],
                             "distances": m["distances_per_turn"], "scored": m["work_per_turn"],
                             "memories_before": m["memories_before"], "categories": m["categories"],
                             "mechanisms_all_on": info.loc[trial, "mechanisms_all_on"] if trial in info.index else None,
                             "params": info.loc[trial, "params"] if trial in info.index else ""})
    return pd.DataFrame(rows)


def front_mask(points: pd.DataFrame, work: str = "distances") -> pd.Series:
    """Mask: the points no other point of the same system and size beats (recall up, ``work`` down)."""
    mask = pd.Series(False, index=points.index)
    for _, part in points.groupby(["system", "size"]):
        ok = part[part["recall"].notna() & part[work].notna()]
        if len(ok):
            mask.loc[ok.index[pareto_front(ok[work].to_numpy(float), ok["recall"].to_numpy(float))]] = True
    return mask


def answer(points: pd.DataFrame, size: int) -> dict:
    """The question at haystack ``size`` (module docstring); ``ready`` False without both systems.

    >>> p = pd.DataFrame({"system": ["h", "h", "d", "d"], "role": ["rival", "rival", "design", "design"],
    ...                   "trial": [0, 1, 2, 3], "size": 9, "recall": [0.5, 0.4, 0.48, 0.3],
    ...                   "distances": [100.0, 50.0, 90.0, 10.0]})
    >>> a = answer(p, 9); (int(a["rival"]["trial"]), int(a["hit"]["trial"]), round(float(a["target"]), 3), float(a["limit"]))
    (0, 2, 0.475, 100.0)
    """
    at = points[(points["size"] == size) & points["recall"].notna()]
    rival, design = at[at["role"] == "rival"], at[at["role"] == "design"]
    if rival.empty or design.empty:
        return {"ready": False}
    best = rival.sort_values(["recall", "distances"], ascending=[False, True]).iloc[0]
    target, limit = MATCH * best["recall"], WORK_LIMIT * best["distances"]
    hits = design[(design["recall"] >= target) & (design["distances"] <= limit)]
    within = design[design["distances"] <= limit]
    return {"ready": True, "rival": best, "target": target, "limit": limit,
            "hit": hits.sort_values("distances").iloc[0] if len(hits) else None,
            "best_within": within.sort_values("recall", ascending=False).iloc[0] if len(within) else None,
            "design_best": design.sort_values(["recall", "distances"], ascending=[False, True]).iloc[0]}


def crossing(design: pd.DataFrame, rival: pd.DataFrame) -> list[float]:
    """The works (distances per turn) of the design's points that recall more than every rival
    point of no more work: where the design's front lies above the rival's.

    >>> d = pd.DataFrame({"distances": [10.0, 200.0], "recall": [0.3, 0.5]})
    >>> r = pd.DataFrame({"distances": [50.0, 100.0], "recall": [0.2, 0.6]})
    >>> crossing(d, r)
    [10.0]
    """
    out = []
    for w, r in zip(design["distances"], design["recall"]):
        cheaper = rival.loc[rival["distances"] <= w, "recall"]
        if not len(cheaper) or r > cheaper.max():
            out.append(float(w))
    return sorted(out)


def _axis(ax, work: str) -> None:
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xlabel(WORK_LABEL[work] + "; log scale", fontsize=8)
    ax.grid(alpha=0.3)


def _colours(points: pd.DataFrame) -> dict[str, str]:
    flat = iter(COLOURS["flat"])
    return {name: COLOURS["design"][0] if role == "design" else next(flat)
            for name, role in points.groupby("system", sort=False)["role"].first().items()}


def plot_size(points: pd.DataFrame, size: int, path: Path) -> Path:
    """Recall against index work (left) and memories scored (right) at one haystack size: every
    held-out point, each system's front, the question's box."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    colours, at = _colours(points), points[points["size"] == size]
    for ax, work in zip(axes, ("distances", "scored")):
        on = front_mask(at, work)
        for name, part in at.groupby("system", sort=False):
            ax.scatter(part[work], part["recall"], s=14, color=colours[name], alpha=0.4)
            f = part[on.loc[part.index]].sort_values(work)
            ax.step(f[work], f["recall"], where="post", color=colours[name], lw=1.3)
            ax.scatter(f[work], f["recall"], s=26, color=colours[name], label=f"{name} ({len(part)} points)")
        _axis(ax, work)
        ax.legend(fontsize=8, loc="lower right")
    a = answer(points, size)
    if a["ready"]:
        axes[0].axhline(a["target"], color="grey", lw=0.8, ls="--")
        axes[0].axvline(a["limit"], color="grey", lw=0.8, ls="--")
    axes[0].set_ylabel(f"earned recall@{HEADLINE}t (held-out chats)")
    fig.suptitle(f"Held-out fronts after a haystack of {size:,} messages (workload=reply); dashed: "
                 f"{MATCH:.0%} of the rival's best recall and its work", fontsize=10)
    return save(fig, path)


def plot_slopes(points: pd.DataFrame, path: Path) -> Path:
    """Each held-out point's recall (left) and index work (right) against haystack size."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    colours = _colours(points)
    for (name, trial), part in points.groupby(["system", "trial"], sort=False):
        part = part.sort_values("size")
        for ax, col in zip(axes, ("recall", "distances")):
            ax.plot(part["size"], part[col], marker="o", ms=3, lw=1, color=colours[name], alpha=0.6)
    for name, c in colours.items():
        axes[0].plot([], [], color=c, label=name)
    axes[0].set_ylabel(f"earned recall@{HEADLINE}t")
    axes[1].set_ylabel("index work per turn (log)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("haystack: messages taken in before the held-out chats")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Each tuning-front point on the held-out chats as the haystack grows (the claim is the slope)",
                 fontsize=10)
    return save(fig, path)


def drops(frame: pd.DataFrame, points: pd.DataFrame, plan: dict, work: Path) -> list[str]:
    """Each system's chosen point: recall on the tuning chats (its tuning run) and on the held-out
    ones at the tuning size, with the held-out interval (rows of a markdown table)."""
    size, rows = int(plan["tune_size"]), []
    for _, c in chosen(frame).iterrows():
        tuned = _measured(work / c["system"] / str(c["trial"])).get(size)
        held = points[(points["system"] == c["system"]) & (points["trial"] == c["trial"]) & (points["size"] == size)]
        if tuned is None or held.empty:
            continue
        h = held.iloc[0]
        d, lo, hi = tuned[RECALL] - h["recall"], tuned[RECALL] - h["ci_hi"], tuned[RECALL] - h["ci_lo"]
        rows.append(f"| `{c['system']}` | {c['trial']} | {_p(tuned[RECALL])} | {_p(h['recall'])} "
                    f"[{_p(h['ci_lo'])}, {_p(h['ci_hi'])}] | {100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] |")
    return ["| system | chosen trial | tuning chats | held-out chats [95% CI] | drop, points [95% CI] |",
            "|---|---|---|---|---|", *rows] if rows else ["(no chosen point has both runs yet)"]


def _mechanisms(points: pd.DataFrame, size: int) -> list[str]:
    """The mechanisms on at the design's held-out front points at ``size``, and how often."""
    at = points[(points["size"] == size) & (points["role"] == "design")]
    front = at[front_mask(at)]
    if front.empty:
        return ["(no design point evaluated at this size)"]
    sets = [set(filter(None, (m.strip() for m in str(v or "").split(",")))) for v in front["mechanisms_all_on"]]
    every = sorted(set.union(*sets) | {"tiers", "depth", "short_decay", "long_decay"})
    return [f"- `{m}`: on in {sum(m in s for s in sets)} of the {len(sets)} front points" for m in every]


def _categories(points: pd.DataFrame, size: int) -> list[str]:
    """Per BEAM category at ``size``: each system's best held-out point (by overall recall)."""
    at = points[(points["size"] == size) & points["recall"].notna()]
    best = {name: part.sort_values(["recall", "distances"], ascending=[False, True]).iloc[0]
            for name, part in at.groupby("system", sort=False)}
    if not best:
        return []
    cats = sorted(set().union(*(b["categories"] for b in best.values())))
    head = ["category", *(f"{n} (trial {b['trial']})" for n, b in best.items())]
    rows = [[c, *(_p(b["categories"].get(c, {}).get(RECALL)) for b in best.values())] for c in cats]
    return [table(pd.DataFrame(rows, columns=head), head), ""]


def _question(a: dict, points: pd.DataFrame, size: int) -> list[str]:
    if not a["ready"]:
        return ["(Not answered yet: the design's and the rival's held-out runs at this size are both needed.)", ""]
    r = a["rival"]
    lines = [f"At a haystack of {size:,} messages the rival's best held-out point is `{r['system']}` trial "
             f"{r['trial']}: recall@{HEADLINE}t **{_p(r['recall'])}** at **{_n(r['distances'])}** distances per turn "
             f"({_n(r['scored'])} memories scored; `{r['params']}`). The design must reach {_p(a['target'])} "
             f"({MATCH:.0%}) at no more than {_n(a['limit'])} distances per turn.", ""]
    if a["hit"] is not None:
        h = a["hit"]
        return lines + [f"**Yes**: design trial {h['trial']} reaches {_p(h['recall'])} at {_n(h['distances'])} distances "
                        f"per turn ({h['distances'] / r['distances']:.2f}× the rival's); mechanisms on: "
                        f"{h['mechanisms_all_on']} (`{h['params']}`).", ""]
    d, w = a["design_best"], a["best_within"]
    at = points[points["size"] == size]
    above = crossing(at[at["role"] == "design"], at[at["role"] == "rival"])
    return lines + [
        f"**No.** The design's best held-out point, trial {d['trial']}, reaches {_p(d['recall'])} "
        f"({d['recall'] / r['recall']:.2f}× the rival's best) at {_n(d['distances'])} distances per turn "
        f"({d['distances'] / r['distances']:.2f}×)"
        + (f"; within the rival's work its best is trial {w['trial']}, {_p(w['recall'])} "
           f"({w['recall'] / r['recall']:.2f}×)" if w is not None else "; none of its points works as little")
        + ". " + (f"The design's front lies above the rival's at {', '.join(_n(x) for x in above)} distances per "
                  "turn (a point recalling more than every rival point of no more work)." if above else
                  "Its front lies nowhere above the rival's: at every work some rival point recalls as much."), ""]


def _slopes(points: pd.DataFrame) -> list[str]:
    """One row per point: recall and distances per turn at each size."""
    sizes = sorted(points["size"].unique())
    head = ["system", "trial", *(f"R@{HEADLINE}t at {s:,}" for s in sizes), *(f"distances at {s:,}" for s in sizes)]
    rows = []
    for (name, trial), part in points.groupby(["system", "trial"], sort=False):
        by = part.set_index("size")
        rows.append([f"`{name}`", trial, *(_p(by["recall"].get(s)) for s in sizes),
                     *(_n(by["distances"].get(s)) for s in sizes)])
    return [table(pd.DataFrame(rows, columns=head), head), ""]


def write_report(plan: dict, work: Path, out: Path, trials: int, walls: dict) -> Path:
    """Write the study's report into ``out`` (module docstring); returns report.md's path."""
    out.mkdir(parents=True, exist_ok=True)
    frame, studies = collect(plan, work, out)
    points = sized(frame, studies, work)
    if points.empty:
        from ..errors import ReportError
        raise ReportError(f"{work}: no held-out run to report (run the study first)")
    points["front"] = front_mask(points)
    points.drop(columns=["categories"]).to_csv(out / "summary.csv", index=False)
    sizes = sorted(points["size"].unique())
    largest = sizes[-1]
    objectives = {name: s.objectives[1] if len(s.objectives) > 1 else "?" for name, s in studies.items()}
    seed = next(iter(studies.values())).tuning.user_attrs.get("seed")
    lines = ["# The design's frontier after a lifetime of dialogue, against an HNSW index (report)", ""]
    notes = out / "notes.md"
    if notes.is_file():
        lines += [notes.read_text(encoding="utf-8").strip(), ""]
    counts = frame.groupby("system", sort=False)["state"].value_counts().unstack(fill_value=0).reset_index()
    lines += ["## Budget", "",
              f"Each system: a tuning study of **{trials} trials** (Optuna's multi-objective TPE, seed {seed}, the same "
              f"sampler settings for every system) on the tuning chats ({', '.join(plan['tune'])}) after a haystack "
              f"of {int(plan['tune_size']):,} messages, objectives earned recall@{HEADLINE}t (up) and work per turn "
              f"(down) under `workload=reply`; each point of its tuning front then run on the other targets after "
              f"{', '.join(f'{s:,}' for s in sizes)} messages. The work each search minimised: "
              + "; ".join(f"`{n}` `{o}`" for n, o in objectives.items()) + ".", "",
              table(counts, list(counts.columns)), "", *_walls(walls)]
    lines += [f"## The question, at the full haystack ({largest:,} messages)", "", *_question(answer(points, largest), points, largest)]
    for s in sizes[:-1]:
        a = answer(points, s)
        if a["ready"]:
            best = a["design_best"]
            lines.append(f"- at {s:,}: the design's best {_p(best['recall'])} ({best['recall'] / a['rival']['recall']:.2f}× "
                         f"the rival's best) at {best['distances'] / a['rival']['distances']:.2f}× its distances; "
                         + ("a match" if a["hit"] is not None else "no match"))
    lines += ["", "## Fronts per haystack size", ""]
    for s in sizes:
        figure = plot_size(points, s, out / f"fronts_{s}.png")
        lines += [f"![fronts at {s:,}]({figure.relative_to(out)})", ""]
    lines += ["## How each point moves as the haystack grows", "",
              f"![slopes]({plot_slopes(points, out / 'slopes.png').relative_to(out)})", "", *_slopes(points)]
    lines += [f"## The design's mechanisms at its held-out front ({largest:,} messages)", "",
              "The LoCoMo frontier's search turned tiers, depth and decay off; whether they are on here:", "",
              *_mechanisms(points, largest), ""]
    lines += [f"## Per BEAM category at {largest:,} messages (each system's best held-out point)", "",
              *_categories(points, largest)]
    lines += ["## From tuning to held-out chats", "",
              f"Each system's chosen point (its tuning front's best recall), at the tuning haystack "
              f"({int(plan['tune_size']):,}); a drop whose interval lies above zero is overfitting.", "",
              *drops(frame, points, plan, work), ""]
    imp = _importance_lines(plan, out)
    if imp:
        lines += ["## The most important parameters", "", *imp]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
