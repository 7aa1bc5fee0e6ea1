"""The frontier study at scale's report, from its studies' databases and saved runs only.

For every system of the plan (``WORK/NAME``: its tuning study, ``WORK/NAME/held_out``: the runs of its
tuning front on the held-out chats) this reads each held-out run's saved files
(``beam_report.Saved``) and measures every point of the current tuning front at every haystack size:
earned recall@1024t with its 95% bootstrap interval over probes, work per target turn two ways —
``index_work`` (distances of every index query, measured, plus graph inserts' estimated distances:
``cost.*.index_work_per_turn``) and ``scored`` (memories scored by every search) — and ``work``, the
one the system's own search minimised (its second objective), and per BEAM category. A held-out run
that failed is listed, not measured. ``write_report`` writes ``OUT/report.md``, ``OUT/summary.csv``
(one row per system, point and size), ``OUT/fronts_<size>.png`` (every point and each system's front at
that size, on index work and on memories scored), ``OUT/slopes.png`` (each point's recall and work as
the haystack grows) and each study's own report into ``OUT/NAME`` (whose held-out values pool the
sizes: a held-out run's summary.json covers them all). The report answers, at the largest haystack:

- **the question** (``answer``): the rival's (the HNSW index's) best held-out point R*, W* (recall
  first, then less index work) and the design's points with recall >= ``MATCH`` R* at index work
  <= W*: the cheapest with the mechanisms it has on, or by how much the design misses and where its
  front lies above the rival's (``crossing``);
- each point's slope (recall and index work per 10,000 messages, least squares over the sizes);
- which mechanisms are on at the design's held-out front, per category each system's best point,
  and each system's chosen point (its tuning front's best recall) with its drop from the tuning chats
  to the held-out ones at the tuning size, the interval resampling chats in both halves (``drop``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ReportError
from ..report.markdown import table
from ..report.plots import pareto_front, plt, save
from .beam_report import HEADLINE, Saved, answerable_probes, by_category, measure
from .frontier_report import MATCH, _importance_lines, _n, _p, _walls, chosen, collect, log_work_axis, system_colours
from .frontier_report import answer as match

RECALL = f"recall@{HEADLINE}t"
INDEX_WORK = "index_work_per_turn"
LABEL = {"index_work": "index work per turn (distances measured + graph inserts estimated)",
         "scored": "memories scored per turn (every search)"}
RESAMPLES = 2000


def _saved(folder: Path) -> Saved | str:
    """The saved run in ``folder``, or why there is none to measure (one line)."""
    try:
        return Saved(folder)
    except (ReportError, OSError) as e:
        return str(e)


def _measured(saved: Saved) -> dict[int, dict]:
    """size -> ``measure`` (and ``categories``) of a saved run over all its chats."""
    every = set(saved.probes["chat"])
    return {size: {**measure(saved, size, every), "categories": by_category(saved, size, every)} for size in saved.sizes}


def sized(frame: pd.DataFrame, studies: dict, work: Path) -> tuple[pd.DataFrame, list[str], dict[Path, Saved | str]]:
    """One row per system, point of its current tuning front and haystack size (module docstring),
    a line for each held-out run that could not be measured, and the held-out runs read (by folder;
    the reason, for one that could not be read)."""
    rows, failed, loaded, measured = [], [], {}, {}
    for name, s in studies.items():
        if s.held is None:
            continue
        info = frame[frame["system"] == name].set_index("trial")
        own = "index_work" if len(s.objectives) > 1 and s.objectives[1].endswith(INDEX_WORK) else "scored"
        on_front = {t.number for t in s.tuning.best_trials}
        for t in s.held.get_trials(deepcopy=False):
            trial, job = t.user_attrs.get("tuning_trial"), t.user_attrs.get("job")
            if trial not in on_front:
                continue
            folder = work / name / "held_out" / str(job)        # trials of equal parameters share a job
            if folder not in loaded:
                loaded[folder] = _saved(folder)
                measured[folder] = {} if isinstance(loaded[folder], str) else _measured(loaded[folder])
            if isinstance(loaded[folder], str):
                failed.append(f"`{name}` trial {trial} (held-out job {job}): {loaded[folder]}")
                continue
            for size, m in measured[folder].items():
                kinds = {"index_work": m["distances_per_turn"], "scored": m["work_per_turn"]}
                rows.append({"system": name, "role": info["role"].iloc[0], "trial": trial, "job": job, "size": size,
                             "recall": m[RECALL], "ci_lo": m["ci_lo"], "ci_hi": m["ci_hi"], "probes": m["probes"],
                             **kinds, "work": kinds[own], "work_measure": own,
                             "memories_before": m["memories_before"], "categories": m["categories"],
                             "mechanisms_all_on": info.loc[trial, "mechanisms_all_on"] if trial in info.index else None,
                             "params": info.loc[trial, "params"] if trial in info.index else ""})
    return pd.DataFrame(rows), failed, loaded


def front_mask(points: pd.DataFrame, work: str = "work") -> pd.Series:
    """Mask: the points no other point of the same system and size beats (recall up, ``work`` down)."""
    mask = pd.Series(False, index=points.index)
    for _, part in points.groupby(["system", "size"]):
        ok = part[part["recall"].notna() & part[work].notna()]
        if len(ok):
            mask.loc[ok.index[pareto_front(ok[work].to_numpy(float), ok["recall"].to_numpy(float))]] = True
    return mask


def answer(points: pd.DataFrame, size: int) -> dict:
    """The question at haystack ``size`` on index work (module docstring); ``ready`` False without
    both the design's and the rival's points.

    >>> p = pd.DataFrame({"system": ["h", "h", "d", "d"], "role": ["rival", "rival", "design", "design"],
    ...                   "trial": [0, 1, 2, 3], "size": 9, "recall": [0.5, 0.4, 0.48, 0.3],
    ...                   "index_work": [100.0, 50.0, 90.0, 10.0]})
    >>> a = answer(p, 9); (int(a["rival"]["trial"]), int(a["hit"]["trial"]), round(float(a["target"]), 3), float(a["limit"]))
    (0, 2, 0.475, 100.0)
    """
    return match(points[points["size"] == size], "recall", "index_work", "rival")


def crossing(design: pd.DataFrame, rival: pd.DataFrame) -> tuple[list[float], list[float]]:
    """(above, cheaper): the index works of the design's points that recall more than every rival
    point of no more work (where the design's front lies above the rival's), and of those cheaper
    than any rival point (nothing of the rival's to compare with). Points without values are left out.

    >>> d = pd.DataFrame({"index_work": [5.0, 60.0, 200.0, np.nan], "recall": [0.1, 0.3, 0.5, 0.9]})
    >>> r = pd.DataFrame({"index_work": [50.0, 100.0], "recall": [0.2, 0.6]})
    >>> crossing(d, r)
    ([60.0], [5.0])
    """
    design = design[design["index_work"].notna() & design["recall"].notna()]
    rival = rival[rival["index_work"].notna() & rival["recall"].notna()]
    above, cheaper = [], []
    for w, r in zip(design["index_work"], design["recall"]):
        less = rival.loc[rival["index_work"] <= w, "recall"]
        if not len(less):
            cheaper.append(float(w))
        elif r > less.max():
            above.append(float(w))
    return sorted(above), sorted(cheaper)


def slope(sizes, values) -> float:
    """Least-squares change of ``values`` per 10,000 haystack messages (NaN with fewer than two).

    >>> round(slope([10000, 30000, 50000], [0.30, 0.25, 0.20]), 4)
    -0.025
    """
    x, y = np.asarray(sizes, dtype=float), np.asarray(values, dtype=float)
    ok = ~np.isnan(y)
    if ok.sum() < 2 or np.ptp(x[ok]) == 0:
        return float("nan")
    return float(np.polyfit(x[ok] / 10000.0, y[ok], 1)[0])


def drop(tuned: pd.DataFrame, held: pd.DataFrame, seed: int = 0) -> tuple[float, float, float]:
    """(drop, lo, hi): probe recall on the tuning chats minus on the held-out chats, with a 95%
    percentile bootstrap interval that resamples chats (with their probes) in each half.
    ``tuned``, ``held``: one row per probe, columns ``chat`` and ``recall``.

    >>> t = pd.DataFrame({"chat": ["a", "a", "b"], "recall": [1.0, 1.0, 1.0]})
    >>> h = pd.DataFrame({"chat": ["c", "d"], "recall": [0.5, 0.5]})
    >>> drop(t, h)
    (0.5, 0.5, 0.5)
    """
    rng = np.random.default_rng(seed)

    def draws(frame: pd.DataFrame) -> np.ndarray:
        sums = frame.groupby("chat")["recall"].agg(["sum", "count"]).to_numpy(float)
        pick = rng.integers(0, len(sums), size=(RESAMPLES, len(sums)))
        return sums[pick, 0].sum(axis=1) / sums[pick, 1].sum(axis=1)

    d = tuned["recall"].mean() - held["recall"].mean()
    diffs = draws(tuned) - draws(held)
    return float(d), float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))


def _probes(saved: Saved, size: int) -> pd.DataFrame:
    """The answerable probes of a saved run at ``size``: chat and earned recall@1024t."""
    _, ok = answerable_probes(saved.probes[saved.probes["size"] == size])
    return pd.DataFrame({"chat": ok["chat"], "recall": pd.to_numeric(ok[RECALL], errors="coerce")}).dropna()


def plot_size(points: pd.DataFrame, size: int, path: Path) -> Path:
    """Recall against index work (left: the systems with an index) and memories scored (right) at
    one haystack size: every held-out point, each system's front on that panel's measure, and the
    question's lines."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    colours, at = system_colours(points), points[points["size"] == size]
    for ax, work in zip(axes, ("index_work", "scored")):
        shown = at[at[work] > 0]
        on = front_mask(shown, work)
        for name, part in shown.groupby("system", sort=False):
            ax.scatter(part[work], part["recall"], s=14, color=colours[name], alpha=0.4)
            f = part[on.loc[part.index]].sort_values(work)
            ax.step(f[work], f["recall"], where="post", color=colours[name], lw=1.3)
            ax.scatter(f[work], f["recall"], s=26, color=colours[name], label=f"{name} ({len(part)} points)")
        log_work_axis(ax, LABEL[work] + "; log scale", fontsize=8)
        ax.legend(fontsize=8, loc="lower right")
    a = answer(points, size)
    if a["ready"]:
        axes[0].axhline(a["target"], color="grey", lw=0.8, ls="--")
        axes[0].axvline(a["limit"], color="grey", lw=0.8, ls="--")
    axes[0].set_ylabel(f"earned recall@{HEADLINE}t (held-out chats)")
    fig.suptitle(f"Held-out fronts after a haystack of {size:,} messages (workload=reply); dashed: {MATCH:.0%} of "
                 f"the rival's best recall and its index work; left: systems with an index only", fontsize=10)
    return save(fig, path)


def plot_slopes(points: pd.DataFrame, path: Path) -> Path:
    """Each held-out point's recall, index work and memories scored against haystack size."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    colours = system_colours(points)
    for (name, _), part in points.groupby(["system", "trial"], sort=False):
        part = part.sort_values("size")
        for ax, col in zip(axes, ("recall", "index_work", "scored")):
            ok = part[part[col] > 0] if col != "recall" else part
            ax.plot(ok["size"], ok[col], marker="o", ms=3, lw=1, color=colours[name], alpha=0.6)
    for name, c in colours.items():
        axes[0].plot([], [], color=c, label=name)
    for ax, label in zip(axes, (f"earned recall@{HEADLINE}t", LABEL["index_work"], LABEL["scored"])):
        ax.set_ylabel(label, fontsize=8)
        ax.set_xlabel("haystack: messages taken in before the held-out chats", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes[1:]:
        ax.set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle("Each tuning-front point on the held-out chats as the haystack grows (the claim is the slope)",
                 fontsize=10)
    return save(fig, path)


def _slopes(points: pd.DataFrame) -> list[str]:
    """One row per point: recall and index work at each size, memories scored at the largest, and
    the slopes per 10,000 messages."""
    sizes = sorted(points["size"].unique())
    head = ["system", "trial", *(f"R@{HEADLINE}t at {s:,}" for s in sizes), "recall / 10k msgs",
            *(f"index work at {s:,}" for s in sizes), "index work / 10k msgs", f"scored at {sizes[-1]:,}"]
    rows = []
    for (name, trial), part in points.groupby(["system", "trial"], sort=False):
        by = part.set_index("size").sort_index()
        s_r, s_w = slope(by.index, by["recall"]), slope(by.index, by["index_work"])
        rows.append([f"`{name}`", trial, *(_p(by["recall"].get(s)) for s in sizes),
                     "-" if np.isnan(s_r) else f"{100 * s_r:+.2f}", *(_n(by["index_work"].get(s)) for s in sizes),
                     "-" if np.isnan(s_w) else f"{s_w:+,.0f}", _n(by["scored"].get(sizes[-1]))])
    return [table(pd.DataFrame(rows, columns=head), head), ""]


def drops(frame: pd.DataFrame, points: pd.DataFrame, plan: dict, work: Path,
          loaded: dict[Path, Saved | str]) -> list[str]:
    """Each system's chosen point (its tuning front's best recall, on tuning values): recall on the
    tuning chats and on the held-out ones at the tuning size (``loaded``: the held-out runs ``sized``
    read), and the drop with its interval."""
    size, rows = int(plan["tune_size"]), []
    for _, c in chosen(frame).iterrows():
        held = points[(points["system"] == c["system"]) & (points["trial"] == c["trial"]) & (points["size"] == size)]
        tuned = _saved(work / c["system"] / str(c["trial"]))
        if held.empty or isinstance(tuned, str):
            continue
        t, h = _probes(tuned, size), _probes(loaded[work / c["system"] / "held_out" / str(held["job"].iloc[0])], size)
        if t.empty or h.empty:
            continue
        d, lo, hi = drop(t, h)
        rows.append(f"| `{c['system']}` | {c['trial']} | {_p(t['recall'].mean())} ({t['chat'].nunique()} chats) | "
                    f"{_p(h['recall'].mean())} ({h['chat'].nunique()} chats) | {100 * d:+.1f} [{100 * lo:+.1f}, "
                    f"{100 * hi:+.1f}] | {'**yes**' if lo > 0 else 'no'} |")
    head = ["| system | chosen trial | R@1024t, tuning chats | held-out chats | drop, points [95% CI] | "
            "overfitting (interval above 0) |", "|---|---|---|---|---|---|"]
    return [*head, *rows] if rows else ["(no chosen point has both runs yet)"]


def _mechanisms(points: pd.DataFrame, size: int) -> list[str]:
    """The mechanisms on at the design's held-out front points at ``size`` (index work), and how often."""
    at = points[(points["size"] == size) & (points["role"] == "design")]
    front = at[front_mask(at, "index_work")]
    if front.empty:
        return ["(no design point evaluated at this size)"]
    sets = [set(filter(None, (m.strip() for m in str(v or "").split(",")))) for v in front["mechanisms_all_on"]]
    every = sorted(set.union(*sets) | {"tiers", "depth", "short_decay", "long_decay"})
    return [f"- `{m}`: on in {sum(m in s for s in sets)} of the {len(sets)} front points" for m in every]


def _categories(points: pd.DataFrame, size: int) -> list[str]:
    """Per BEAM category at ``size``: each system's best held-out point (by overall recall)."""
    at = points[(points["size"] == size) & points["recall"].notna()]
    best = {name: part.sort_values(["recall", "work"], ascending=[False, True]).iloc[0]
            for name, part in at.groupby("system", sort=False)}
    if not best:
        return []
    cats = sorted(set().union(*(b["categories"] for b in best.values())))
    head = ["category", *(f"{n} (trial {b['trial']})" for n, b in best.items())]
    rows = [[c, *(_p(b["categories"].get(c, {}).get(RECALL)) for b in best.values())] for c in cats]
    return [table(pd.DataFrame(rows, columns=head), head), ""]


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b and np.isfinite(a / b) else "-"


def _question(a: dict, points: pd.DataFrame, size: int) -> list[str]:
    if not a["ready"]:
        return ["(Not answered yet: the design's and the rival's held-out runs at this size are both needed.)", ""]
    r = a["rival"]
    lines = [f"At a haystack of {size:,} messages the rival's best held-out point is `{r['system']}` trial "
             f"{r['trial']}: recall@{HEADLINE}t **{_p(r['recall'])}** at **{_n(r['index_work'])}** index work per turn "
             f"(distances of its queries, measured, plus its graph inserts' estimate; {_n(r['scored'])} memories "
             f"scored; `{r['params']}`). The design must reach {_p(a['target'])} ({MATCH:.0%}) at no more than "
             f"{_n(a['limit'])} index work per turn.", ""]
    if a["hit"] is not None:
        h = a["hit"]
        return lines + [f"**Yes**: design trial {h['trial']} reaches {_p(h['recall'])} at {_n(h['index_work'])} index "
                        f"work per turn ({_ratio(h['index_work'], r['index_work'])} the rival's); mechanisms on: "
                        f"{h['mechanisms_all_on']} (`{h['params']}`).", ""]
    d, w = a["design_best"], a["best_within"]
    at = points[points["size"] == size]
    above, cheaper = crossing(at[at["role"] == "design"], at[at["role"] == "rival"])
    return lines + [
        f"**No.** The design's best held-out point, trial {d['trial']}, reaches {_p(d['recall'])} "
        f"({_ratio(d['recall'], r['recall'])} the rival's best) at {_n(d['index_work'])} index work per turn "
        f"({_ratio(d['index_work'], r['index_work'])})"
        + (f"; within the rival's work its best is trial {w['trial']}, {_p(w['recall'])} "
           f"({_ratio(w['recall'], r['recall'])})" if w is not None else "; none of its points works as little")
        + ". " + (f"Its front lies above the rival's at {', '.join(_n(x) for x in above)} index work per turn (a "
                  "point recalling more than every rival point of no more work)." if above else
                  "Its front lies nowhere above the rival's: at every work some rival point of no more work "
                  "recalls as much.")
        + (f" At {', '.join(_n(x) for x in cheaper)} it works less than any rival point (nothing to compare)."
           if cheaper else ""), ""]


def write_report(plan: dict, work: Path, out: Path, trials: int, walls: dict) -> Path:
    """Write the study's report into ``out`` (module docstring); returns report.md's path."""
    out.mkdir(parents=True, exist_ok=True)
    frame, studies = collect(plan, work, out)
    points, failed, loaded = sized(frame, studies, work)
    if points.empty:
        raise ReportError(f"{work}: no held-out run to report (run the study first)"
                          + (f"; failed: {'; '.join(failed)}" if failed else ""))
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
              f"Each system: a tuning study of **{trials} trials** (Optuna's multi-objective TPE, seed {seed}, its first "
              f"10 trials random draws; the same sampler settings for every system) on the tuning chats "
              f"({', '.join(plan['tune'])}) after a haystack of {int(plan['tune_size']):,} messages, objectives earned "
              f"recall@{HEADLINE}t (up) and work per turn (down) under `workload=reply`; each point of its tuning front "
              f"then run on the other targets after {', '.join(f'{s:,}' for s in sizes)} messages. The work each "
              f"search minimised: " + "; ".join(f"`{n}` `{o}`" for n, o in objectives.items()) + ". Each system's own "
              "report (linked below) pools its held-out values over the sizes; this page gives them per size.", "",
              table(counts, list(counts.columns)), "", *_walls(walls)]
    if failed:
        lines += ["Held-out runs that could not be measured (left out below):", "", *(f"- {f}" for f in failed), ""]
    lines += [f"## The question, at the full haystack ({largest:,} messages)", "", *_question(answer(points, largest), points, largest)]
    for s in sizes[:-1]:
        a = answer(points, s)
        if a["ready"]:
            best = a["design_best"]
            lines.append(f"- at {s:,}: the design's best {_p(best['recall'])} ({_ratio(best['recall'], a['rival']['recall'])} "
                         f"the rival's best) at {_ratio(best['index_work'], a['rival']['index_work'])} its index work; "
                         + ("a match" if a["hit"] is not None else "no match"))
    lines += ["", "## Fronts per haystack size", ""]
    for s in sizes:
        lines += [f"![fronts at {s:,}]({plot_size(points, s, out / f'fronts_{s}.png').relative_to(out)})", ""]
    lines += ["## How each point moves as the haystack grows", "",
              f"![slopes]({plot_slopes(points, out / 'slopes.png').relative_to(out)})", "",
              "Recall in percent; slopes per 10,000 messages (least squares over the sizes).", "", *_slopes(points)]
    lines += [f"## The design's mechanisms at its held-out front ({largest:,} messages)", "",
              "The LoCoMo frontier's search turned tiers, depth and decay off; whether they are on here:", "",
              *_mechanisms(points, largest), ""]
    lines += [f"## Per BEAM category at {largest:,} messages (each system's best held-out point)", "",
              *_categories(points, largest)]
    lines += ["## From tuning to held-out chats", "",
              f"Each system's chosen point (its tuning front's best recall, chosen on tuning values), at the tuning "
              f"haystack ({int(plan['tune_size']):,}); the interval resamples chats in both halves.", "",
              *drops(frame, points, plan, work, loaded), ""]
    lines += ["## Each system's study", "", *(f"- [`{n}`]({n}/report.md)" for n in studies), ""]
    imp = _importance_lines(plan, out)
    if imp:
        lines += ["## The most important parameters", "", *imp]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
