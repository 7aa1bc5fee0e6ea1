"""The frontier study's report, from its studies' databases only (``WORK/NAME/study.db``).

``write_report`` writes each system's study report (``mtsbench report WORK/NAME --out
OUT/NAME``'s, without report.html) and ``OUT/report.md`` with ``OUT/fronts.png`` and ``OUT/summary.csv``:

- the budget (trials per system, the sampler and its seed), the halves, the wall time of each step;
- every system's tuning front and the held-out evaluation of each of its points;
- **the question**: on the held-out half, the best recall any flat system's evaluated point
  reaches (R*, at work W*), and the design's held-out points with recall >= 0.95 R* at work
  <= W* (``MATCH``, ``WORK_LIMIT``): the cheapest of them, with the mechanisms it has on, or
  the statement that none exists and the design's held-out front beside it;
- the targets: that point; each system's chosen point (its tuning front's best recall,
  chosen on tuning values) within ``DROP`` of its tuning recall on the held-out half;
- each system's most important parameters for each objective (``importances.csv``).

The objectives are each study's own (``tune.objectives``): the first is read as recall (up),
the second as work (down).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from matplotlib.ticker import FuncFormatter

from ..report.markdown import table
from ..report.plots import plt, save

MATCH = 0.95        # the design's recall at least this share of flat retrieval's best ...
WORK_LIMIT = 1.0    # ... at no more than this multiple of that point's work per turn
DROP = 0.02         # a chosen point's held-out recall within this of its tuning recall (2 points)
TOP = 5             # parameters listed per system and objective
COLOURS = {"design": ["#d62728"], "flat": ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"]}


def _p(x) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * x:.1f}"


def _n(x) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:,.0f}"


def collect(plan: dict, work: Path, out: Path) -> tuple[pd.DataFrame, dict]:
    """Every system's trials (``mtsbench.report.study.trials``, with ``system`` and ``role``), and
    per system its study (``Studied``); each study's report written into ``OUT/NAME``."""
    from ..report.study import load, trials, write

    frames, studies = [], {}
    for system in plan["systems"]:
        folder = work / system["name"]
        if not (folder / "study.json").is_file():
            continue
        write(folder, out / system["name"])
        s = load(folder)
        studies[system["name"]] = s
        frame = trials(s)
        names = s.objectives
        frame = frame.rename(columns={n.rpartition(".")[2]: k for n, k in zip(names, ("recall", "work"))})
        frame = frame.rename(columns={f"held_out {n.rpartition('.')[2]}": f"held_out_{k}"
                                      for n, k in zip(names, ("recall", "work"))})
        frames.append(frame.assign(system=system["name"], role=system.get("role", "flat")))
    if not frames:
        raise SystemExit(f"{work}: no study to report (run the study first)")
    return pd.concat(frames, ignore_index=True), studies


def held_front(frame: pd.DataFrame) -> pd.Series:
    """Mask: the held-out evaluations no other evaluation of the same system beats (recall up, work down)."""
    from ..report.plots import pareto_front

    mask = pd.Series(False, index=frame.index)
    for _, part in frame.groupby("system"):
        ok = part[part["held_out_recall"].notna() & part["held_out_work"].notna()]
        if len(ok):
            on = pareto_front(ok["held_out_work"].to_numpy(float), ok["held_out_recall"].to_numpy(float))
            mask.loc[ok.index[on]] = True
    return mask


def answer(frame: pd.DataFrame, recall: str = "held_out_recall", work: str = "held_out_work",
           against: str = "flat") -> dict:
    """The study's question (module docstring) over the points with both ``recall`` and ``work``:
    the best point of role ``against`` (recall first, then less work; under the key ``against``)
    and the design's points with recall >= ``MATCH`` of its recall at <= ``WORK_LIMIT`` of its
    work; ``ready`` False without points of both roles."""
    evaluated = frame[frame[recall].notna() & frame[work].notna()]
    rivals = evaluated[evaluated["role"] == against]
    design = evaluated[evaluated["role"] == "design"]
    if rivals.empty or design.empty:
        return {"ready": False}
    best = rivals.sort_values([recall, work], ascending=[False, True]).iloc[0]
    target, limit = MATCH * best[recall], WORK_LIMIT * best[work]
    hits = design[(design[recall] >= target) & (design[work] <= limit)]
    within = design[design[work] <= limit]
    top = design.sort_values([recall, work], ascending=[False, True]).iloc[0]
    return {"ready": True, against: best, "target": target, "limit": limit,
            "hit": hits.sort_values(work).iloc[0] if len(hits) else None,
            "best_within": within.sort_values(recall, ascending=False).iloc[0] if len(within) else None,
            "design_best": top}


def switches(row: pd.Series, frame: pd.DataFrame) -> str:
    """The mechanisms the design's search switched, split into those ``row`` has on and off."""
    design = frame[frame["system"] == row["system"]]
    sets = [set(filter(None, (m.strip() for m in str(v).split(",")))) for v in design["mechanisms_all_on"].dropna()]
    if not sets:
        return "no mechanism switched"
    varied = set.union(*sets) - set.intersection(*sets)
    on = set(filter(None, (m.strip() for m in str(row.get("mechanisms_all_on") or "").split(","))))
    return (f"on: {', '.join(sorted(varied & on)) or 'none'}; off: {', '.join(sorted(varied - on)) or 'none'} "
            f"(of the mechanisms the search switched)")


def chosen(frame: pd.DataFrame) -> pd.DataFrame:
    """Each system's chosen point: its tuning front's best recall (ties: less work), on tuning values."""
    rows = []
    for name, part in frame.groupby("system", sort=False):
        front = part[part["front"]]
        if len(front):
            rows.append(front.sort_values(["recall", "work"], ascending=[False, True]).iloc[0])
    return pd.DataFrame(rows)


def system_colours(frame: pd.DataFrame) -> dict[str, str]:
    """A colour per system of ``frame`` (its ``role`` column): the design's red, the others' in turn."""
    flat = iter(COLOURS["flat"])
    return {name: COLOURS["design"][0] if role == "design" else next(flat)
            for name, role in frame.groupby("system", sort=False)["role"].first().items()}


def log_work_axis(ax, label: str, fontsize=None) -> None:
    """A log-scale work axis labelled in whole numbers, with a grid."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.set_xlabel(label, fontsize=fontsize)
    ax.grid(alpha=0.3)


def plot_fronts(frame: pd.DataFrame, path: Path) -> Path:
    """Two panels, recall against work per turn (log): the tuning trials and fronts, and the
    held-out evaluations of the fronts with each system's held-out front."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    colours = system_colours(frame)
    mask = held_front(frame)
    for name, part in frame.groupby("system", sort=False):
        c = colours[name]
        done = part[part["state"] == "complete"]
        axes[0].scatter(done["work"], done["recall"], s=10, color=c, alpha=0.25)
        on = done[done["front"]].sort_values("work")
        axes[0].step(on["work"], on["recall"], where="post", color=c, lw=1.3)
        axes[0].scatter(on["work"], on["recall"], s=26, color=c, label=f"{name} ({len(done)} trials, {len(on)} on the front)")
        held = part[part["held_out_recall"].notna()]
        axes[1].scatter(held["held_out_work"], held["held_out_recall"], s=16, color=c, alpha=0.45)
        hf = part[mask.loc[part.index]].sort_values("held_out_work")
        axes[1].step(hf["held_out_work"], hf["held_out_recall"], where="post", color=c, lw=1.3)
        axes[1].scatter(hf["held_out_work"], hf["held_out_recall"], s=26, color=c,
                        label=f"{name} ({len(held)} point{'s' if len(held) != 1 else ''} held out)")
    a = answer(frame)
    if a.get("ready"):
        axes[1].axhline(a["target"], color="grey", lw=0.8, ls="--")
        axes[1].axvline(a["limit"], color="grey", lw=0.8, ls="--")
        axes[1].text(0.98, a["target"], f"{MATCH:.0%} of the best flat held-out recall; left of the dashed line: "
                     f"at most its work", transform=axes[1].get_yaxis_transform(), ha="right", va="bottom",
                     fontsize=8, color="grey")
    for ax, title in zip(axes, ("Tuning half: every trial, each system's front",
                                "Held-out half: each tuning-front point, each system's held-out front")):
        log_work_axis(ax, "total work per turn (memories scored, every search; log scale)")
        ax.set_title(title)
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_ylabel("earned recall@1024t")
    return save(fig, path)


def _importance_lines(plan: dict, out: Path) -> list[str]:
    lines = []
    for system in plan["systems"]:
        path = out / system["name"] / "importances.csv"
        if not path.is_file():
            continue
        imp = pd.read_csv(path)
        imp = imp[imp["scope"] == "all complete trials"]
        for objective, part in imp.groupby("objective", sort=False):
            top = part.sort_values("importance", ascending=False).head(TOP)
            lines.append(f"- **{system['name']}**, {objective}: " + ", ".join(
                f"`{r.param}` {r.importance:.2f}" for r in top.itertuples()))
    return lines + [""] if lines else []


def _walls(walls: dict) -> list[str]:
    if not walls:
        return []
    rows = [{"step": k, "wall": f"{v / 60:.1f} min"} for k, v in walls.items()]
    total = sum(walls.values())
    return ["| step | wall |", "|---|---|", *(f"| `{r['step']}` | {r['wall']} |" for r in rows),
            f"| **all** | **{total / 3600:.2f} h** |", ""]


def write_report(plan: dict, work: Path, out: Path, trials: int, walls: dict) -> Path:
    """Write the study's report into ``out`` (module docstring); returns report.md's path."""
    out.mkdir(parents=True, exist_ok=True)
    frame, studies = collect(plan, work, out)
    frame["held_out_front"] = held_front(frame)
    keep = ["system", "role", "trial", "state", "recall", "work", "front", "held_out_recall", "held_out_work",
            "held_out_front", "mechanisms_on", "mechanisms_all_on", "failure", "wall_s", "params"]
    frame[[c for c in keep if c in frame]].to_csv(out / "summary.csv", index=False)
    figure = plot_fronts(frame, out / "fronts.png")
    a = answer(frame)
    pick = chosen(frame)
    any_study = next(iter(studies.values()))
    seed = any_study.tuning.user_attrs.get("seed")
    lines = ["# The design's frontier on real dialogue (report)", ""]
    notes = out / "notes.md"
    if notes.is_file():
        lines += [notes.read_text(encoding="utf-8").strip(), ""]
    counts = frame.groupby("system", sort=False)["state"].value_counts().unstack(fill_value=0)
    lines += ["## Budget", "",
              f"Each system: a tuning study of **{trials} trials** ({any_study.info.get('sampler')}, Optuna's "
              f"multi-objective TPE, seed {seed}, each trial's sampler seeded from the seed and its number; the same "
              f"sampler settings for every system), objectives earned recall@1024t (up) and total work per turn "
              f"(down) under `workload=reply`, on the tuning half; each point of its tuning front then run on the "
              f"held-out half.", "",
              table(counts.reset_index(), ["system", *counts.columns]), "", *_walls(walls)]
    lines += ["## The question", ""]
    if a.get("ready"):
        f = a["flat"]
        lines += [f"On the held-out half the best flat retrieval point is `{f['system']}` trial {f['trial']}: "
                  f"recall@1024t **{_p(f['held_out_recall'])}** at **{_n(f['held_out_work'])}** work per turn "
                  f"(`{f['params']}`). The design must reach {_p(a['target'])} ({MATCH:.0%}) at no more than "
                  f"{_n(a['limit'])} work per turn.", ""]
        if a["hit"] is not None:
            h = a["hit"]
            lines += [f"**Yes**: design trial {h['trial']} reaches {_p(h['held_out_recall'])} at {_n(h['held_out_work'])} "
                      f"work per turn ({h['held_out_work'] / f['held_out_work']:.2f}× flat's); mechanisms "
                      f"{switches(h, frame)} (`{h['params']}`).", ""]
        else:
            d = a["design_best"]
            w = a["best_within"]
            lines += [f"**No point of the searched space does.** The design's best held-out point, trial {d['trial']}, "
                      f"reaches {_p(d['held_out_recall'])} ({d['held_out_recall'] / f['held_out_recall']:.2f}× flat's "
                      f"best) at {_n(d['held_out_work'])} work per turn ({d['held_out_work'] / f['held_out_work']:.2f}× "
                      f"flat's); mechanisms {switches(d, frame)}"
                      + (f"; within flat's work its best is trial {w['trial']}, {_p(w['held_out_recall'])} "
                         f"({w['held_out_recall'] / f['held_out_recall']:.2f}×)" if w is not None else
                         "; none of its points works as little as flat's") + ". The fronts below show it.", ""]
    else:
        lines += ["(Not answered: a design study and a flat study with held-out evaluations are both needed.)", ""]
    lines += [f"![fronts]({figure.relative_to(out)})", ""]
    lines += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
    if a.get("ready"):
        h = a["hit"]
        lines.append(f"| a held-out design point with >= {MATCH:.2f}× the best flat recall@1024t at <= {WORK_LIMIT:g}× its "
                     f"work per turn (workload=reply) | "
                     + (f"trial {h['trial']}: {h['held_out_recall'] / a['flat']['held_out_recall']:.2f}× recall, "
                        f"{h['held_out_work'] / a['flat']['held_out_work']:.2f}× work" if h is not None else
                        f"none; best {a['design_best']['held_out_recall'] / a['flat']['held_out_recall']:.2f}× recall at "
                        f"{a['design_best']['held_out_work'] / a['flat']['held_out_work']:.2f}× work")
                     + f" | {'yes' if h is not None else 'no (the front shows none exists in the searched space)'} |")
    for _, r in pick.iterrows():
        if pd.isna(r.get("held_out_recall")):
            continue
        drop = r["recall"] - r["held_out_recall"]
        lines.append(f"| `{r['system']}`'s chosen point (trial {r['trial']}) held out within {100 * DROP:.0f} points of "
                     f"its tuning recall | {_p(r['recall'])} tuning, {_p(r['held_out_recall'])} held out "
                     f"({-100 * drop:+.1f}) | {'yes' if drop <= DROP else 'no: overfitting'} |")
    lines += ["", "## Each system's fronts", ""]
    for name, part in frame.groupby("system", sort=False):
        front = part[part["front"]].sort_values("work")
        shown = front.assign(**{c: front[c].map(_p) for c in ("recall", "held_out_recall")},
                             **{c: front[c].map(_n) for c in ("work", "held_out_work")},
                             held_out_front=front["held_out_front"].map(lambda v: "yes" if v else ""),
                             params=front["params"].map(lambda v: f"`{v}`" if isinstance(v, str) and v else ""))
        columns = ["trial", "recall", "work", "held_out_recall", "held_out_work", "held_out_front"]
        columns += ["mechanisms_on"] if part["role"].iloc[0] == "design" else []
        lines += [f"### `{name}` ({part['role'].iloc[0]}): [its study's report]({name}/report.md)", "",
                  "Recall@1024t in percent, work per turn in memories scored; the tuning front and each point's "
                  "held-out values.", "", table(shown.fillna(""), columns + ["params"]), ""]
    imp = _importance_lines(plan, out)
    if imp:
        lines += ["## The most important parameters", "",
                  "Optuna's mean-decrease-in-impurity importances over each study's complete trials (the "
                  "parameters every trial drew; the conditional ones are in each study's report).", "", *imp]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
