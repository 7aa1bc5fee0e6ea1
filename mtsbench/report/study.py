"""``mtsbench report DIR`` of a tuning study's folder (or of its held-out evaluation's).

Everything comes from the study's database (``study.json`` says where it is) and the trials'
job folders: ``trials.csv`` (one row per trial: state, objective values, failure reason,
parameters, wall time, whether it is on the tuning front, its held-out values, the
mechanisms it has on) and ``report.md`` with

- the study: objectives and directions, sampler and seed, budget, trials by state, wall time;
- the search space (each parameter's domain and conditions);
- the tuning front (Optuna's ``best_trials``) with each point's mechanisms on
  (``mechanisms``) and parameters;
- the held-out evaluation of that front, when there is one: each point's held-out values
  beside its tuning ones, the held-out front, and the chosen point (the front's best on the
  first objective, on tuning values only) with its drop;
- parameter importances for each objective: Optuna's mean-decrease-in-impurity evaluator
  (``MeanDecreaseImpurityImportanceEvaluator``, seeded) over the complete trials and the
  parameters every one of them has, and for each conditional parameter over the trials that
  drew it (Optuna 2.10's fANOVA evaluator fails on current scikit-learn and numpy);
- every trial, failed ones with their reason; the figures (``front.png``, ``history.png``,
  ``importance.png``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ReportError
from ..tune import mechanisms
from ..tune.info import HELD_OUT, read_info, storage_url

IMPORTANCE_SEED = 0
MIN_TRIALS_FOR_IMPORTANCE = 4


def is_study(folder: Path) -> bool:
    """Is ``folder`` a tuning study's folder or its held-out evaluation's (a ``study.json``)?"""
    return read_info(Path(folder)) is not None


@dataclass
class Studied:
    """A tuning study read back: its folder, ``study.json``, the study and its held-out one."""

    folder: Path
    info: dict
    tuning: object
    held: object | None

    @property
    def objectives(self) -> list[str]:
        return list(self.info.get("objectives") or self.tuning.user_attrs.get("objectives") or [])

    @property
    def directions(self) -> list[str]:
        return [d.name.lower() for d in self.tuning.directions]


def load(folder: Path) -> Studied:
    """The study of a tuning folder (or of a held-out folder: the tuning study it evaluated)."""
    try:
        import optuna
    except ImportError:
        raise ReportError(f"{folder}: a tuning study's report needs Optuna: pip install \"mtsbench[tune]\"") from None
    folder = Path(folder)
    info = read_info(folder)
    if info is None:
        raise ReportError(f"{folder}: not a tuning study's folder (no study.json)")
    if info.get("role") == "held_out":
        folder = (folder / info.get("tuning", "..")).resolve()
        info = read_info(folder) or {}
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = storage_url(folder, info)
    try:
        tuning = optuna.load_study(study_name=info["study"], storage=url)
    except Exception as e:  # noqa: BLE001 - a missing or foreign database: one line
        raise ReportError(f"{folder}: cannot read study '{info.get('study')}' from {url} ({type(e).__name__}: {e})") \
            from None
    names = [s.study_name for s in optuna.study.get_all_study_summaries(url)]
    held = optuna.load_study(study_name=info["study"] + HELD_OUT, storage=url) \
        if info["study"] + HELD_OUT in names else None
    return Studied(folder, info, tuning, held)


def short(objective: str) -> str:
    """An objective's column name: its path's last part.

    >>> short("overall.evidence.recall@1024t"), short("cost.overall.per_turn")
    ('recall@1024t', 'per_turn')
    """
    return objective.rpartition(".")[2]


def _seconds(t) -> float | None:
    if t.datetime_start is None or t.datetime_complete is None:
        return None
    return (t.datetime_complete - t.datetime_start).total_seconds()


def trials(s: Studied) -> pd.DataFrame:
    """One row per tuning trial (module docstring)."""
    names = [short(o) for o in s.objectives]
    front = {t.number for t in s.tuning.best_trials} if _complete(s.tuning) else set()
    held = {t.user_attrs.get("tuning_trial"): t for t in (s.held.get_trials(deepcopy=False) if s.held else [])}
    every = s.tuning.get_trials(deepcopy=False)
    ons = {t.number: mechanisms.of_job(s.folder / str(t.user_attrs.get("job", t.number))) for t in every}
    varied = switched_by_search(ons)
    rows = []
    for t in every:
        on = ons[t.number]
        row = {"trial": t.number, "state": t.state.name.lower(),
               **{n: (t.values[i] if t.values else None) for i, n in enumerate(names)},
               "front": t.number in front, "failure": t.user_attrs.get("failure"),
               "wall_s": _seconds(t), "params": " ".join(t.user_attrs.get("params", [])),
               "mechanisms_on": None if on is None else ", ".join(k for k in varied if on[k]),
               "mechanisms_all_on": None if on is None else ", ".join(k for k, v in on.items() if v)}
        h = held.get(t.number)
        for i, n in enumerate(names):
            row[f"held_out {n}"] = h.values[i] if h is not None and h.values else None
        row["held_out failure"] = h.user_attrs.get("failure") if h is not None else None
        rows.append(row)
    return pd.DataFrame(rows)


def switched_by_search(ons: dict) -> list[str]:
    """The mechanisms on in some trials and off in others (``ons``: trial -> mechanism -> on,
    or None for a system that is not the design's): the ones the search switched.

    >>> switched_by_search({0: {"arousal": True, "tiers": True}, 1: {"arousal": False, "tiers": True}, 2: None})
    ['arousal']
    """
    seen: dict[str, set] = {}
    for on in ons.values():
        for k, v in (on or {}).items():
            seen.setdefault(k, set()).add(bool(v))
    return [k for k, v in seen.items() if len(v) == 2]


def _constant_lines(frame: pd.DataFrame) -> list[str]:
    """One line naming the design's mechanisms the search never switched (on in every trial, off in every one)."""
    known = frame["mechanisms_all_on"].dropna() if "mechanisms_all_on" in frame else pd.Series(dtype=object)
    if known.empty:
        return []
    sets = [set(filter(None, (m.strip() for m in str(v).split(",")))) for v in known]
    always = set.intersection(*sets)
    varied = set.union(*sets) - always
    never = set(mechanisms.ablations()) - set.union(*sets)
    return [f"Mechanisms of the seed design (its ablations, `configs/ablate/`): switched by the search: "
            f"{', '.join(sorted(varied)) or 'none'}; on in every trial: {', '.join(sorted(always)) or 'none'}; "
            f"off in every trial: {', '.join(sorted(never)) or 'none'}. `mechanisms_on` lists the switched ones.", ""]


def _complete(study) -> list:
    return [t for t in study.get_trials(deepcopy=False) if t.state.name == "COMPLETE"]


def importances(study, objectives: list[str]) -> pd.DataFrame:
    """Parameter importances per objective (module docstring): objective, scope, trials, param, importance."""
    import optuna

    complete = _complete(study)
    if len(complete) < MIN_TRIALS_FOR_IMPORTANCE:
        return pd.DataFrame(columns=["objective", "scope", "trials", "param", "importance"])
    every = set.intersection(*(set(t.params) for t in complete))
    scopes = [("all complete trials", sorted(every))]
    for name in sorted(set().union(*(set(t.params) for t in complete)) - every):
        having = [t for t in complete if name in t.params]
        shared = sorted(set.intersection(*(set(t.params) for t in having)))
        scopes.append((f"trials that drew {name}", shared))
    rows, seen = [], set()
    for scope, params in scopes:
        key = tuple(params)
        having = [t for t in complete if set(params) <= set(t.params)]
        if key in seen or len(having) < MIN_TRIALS_FOR_IMPORTANCE or not params:
            continue
        seen.add(key)
        for i, objective in enumerate(objectives):
            values = np.array([t.values[i] for t in having])
            if np.ptp(values) == 0:
                continue
            evaluator = optuna.importance.MeanDecreaseImpurityImportanceEvaluator(seed=IMPORTANCE_SEED)
            found = optuna.importance.get_param_importances(study, evaluator=evaluator, params=params,
                                                            target=lambda t, i=i: t.values[i])
            rows += [{"objective": short(objective), "scope": scope, "trials": len(having), "param": p,
                      "importance": round(float(v), 4)} for p, v in found.items()]
    return pd.DataFrame(rows, columns=["objective", "scope", "trials", "param", "importance"])


def chosen(frame: pd.DataFrame, objectives: list[str], directions: list[str]) -> pd.Series | None:
    """The tuning front's point best on the first objective (ties: the second), on tuning values."""
    front = frame[frame["front"]]
    if front.empty:
        return None
    names = [short(o) for o in objectives]
    ascending = [d == "minimize" for d in directions]
    return front.sort_values(names[:2], ascending=ascending[:2]).iloc[0]


def _fmt(value) -> str:
    """A table cell.

    >>> [_fmt(v) for v in (None, True, 3, 0.71234, 1234.56, 98.76, float("nan"))]
    ['', 'yes', '3', '0.7123', '1,235', '98.8', '']
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else ""
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}" if abs(value) < 10 else f"{value:,.1f}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def _table(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    from .markdown import table

    shown = frame[columns].copy()
    for c in columns:
        shown[c] = [(_fmt(v) if c != "params" else f"`{v}`" if v else "") for v in shown[c]]
    return [table(shown, columns), ""]


def _space_lines(study) -> list[str]:
    raw = study.user_attrs.get("space")
    if not raw:
        return []
    from ..tune.space import Param

    rows = []
    for name, kind, choices, low, high, step, log, when in json.loads(raw):
        p = Param(name, kind, tuple(choices), low, high, step, log, tuple((k, tuple(v)) for k, v in when))
        rows.append({"parameter": f"`{name}`", "domain": p.describe()})
    return ["## Search space", "", *_table(pd.DataFrame(rows), ["parameter", "domain"])]


def _when(t) -> datetime | None:
    return t.datetime_complete or t.datetime_start


def markdown(s: Studied, frame: pd.DataFrame, imp: pd.DataFrame, drawn: list[tuple[str, Path]], out: Path) -> str:
    """report.md (module docstring)."""
    names = [short(o) for o in s.objectives]
    all_trials = s.tuning.get_trials(deepcopy=False)
    counts = frame["state"].value_counts().to_dict() if len(frame) else {}
    starts = [t.datetime_start for t in all_trials if t.datetime_start]
    ends = [_when(t) for t in all_trials if _when(t)]
    span = (max(ends) - min(starts)).total_seconds() if starts and ends else None
    busy = float(pd.to_numeric(frame.get("wall_s"), errors="coerce").sum()) if len(frame) else 0.0
    notes = out / "notes.md"
    lines = [f"# Tuning study `{s.info.get('study')}`", ""]
    if notes.is_file():
        lines += [notes.read_text(encoding="utf-8").strip(), ""]
    lines += ["## The study", "",
              f"- objectives: " + ", ".join(f"`{o}` ({d})" for o, d in zip(s.objectives, s.directions)),
              f"- sampler: {s.info.get('sampler', '?')}, seed {s.tuning.user_attrs.get('seed')} (each trial's sampler "
              f"seeded from it and the trial's number)",
              f"- budget: {s.tuning.user_attrs.get('n_trials', s.info.get('n_trials'))} trials; "
              + ", ".join(f"{n} {state}" for state, n in sorted(counts.items())),
              f"- wall time: {span / 3600:.2f} h from the first trial's start to the last one's end; "
              f"{busy / 3600:.2f} h of trial time in all" if span is not None else "- wall time: -",
              f"- database: `{s.info.get('storage')}` (study `{s.info.get('study')}`"
              + (f", held-out evaluation `{s.info.get('study')}{HELD_OUT}`)" if s.held else ")"), ""]
    lines += _space_lines(s.tuning)
    front = frame[frame["front"]].sort_values(names[1:2] or names[:1]) if len(frame) else frame
    lines += ["## Tuning front", "",
              "Trials no other trial beats on every objective (Optuna's `best_trials`), with the mechanisms of "
              "the seed design each has on (an ablation's settings not all holding: `mechanisms`) and its "
              "parameters.", ""]
    lines += _constant_lines(frame) if len(frame) else []
    lines += _table(front, ["trial", *names, "mechanisms_on", "params"]) if len(front) else ["(no complete trial)", ""]
    if s.held is not None and len(frame):
        evaluated = frame[frame[[f"held_out {n}" for n in names]].notna().any(axis=1) | frame["held_out failure"].notna()]
        held_front = {t.user_attrs.get("tuning_trial") for t in s.held.best_trials} if _complete(s.held) else set()
        evaluated = evaluated.assign(held_out_front=evaluated["trial"].isin(held_front))
        lines += ["## Held-out evaluation of the tuning front", "",
                  "Each point of the tuning front run again on the held-out scenarios; `held_out_front`: on the front "
                  "of these held-out values.", "",
                  *_table(evaluated.sort_values(f"held_out {names[1]}" if len(names) > 1 else "trial"),
                          ["trial", *names, *(f"held_out {n}" for n in names), "held_out_front", "held_out failure"])]
        pick = chosen(frame, s.objectives, s.directions)
        if pick is not None and pick.get(f"held_out {names[0]}") is not None and not pd.isna(pick[f"held_out {names[0]}"]):
            drop = pick[names[0]] - pick[f"held_out {names[0]}"]
            lines += [f"**Chosen point** (the tuning front's best `{names[0]}`, chosen on tuning values): trial "
                      f"{pick['trial']}, {names[0]} {_fmt(pick[names[0]])} tuning, "
                      f"{_fmt(pick[f'held_out {names[0]}'])} held out (drop {drop:+.4f}).", ""]
    if len(imp):
        lines += ["## Parameter importances", "",
                  "Optuna's mean-decrease-in-impurity evaluator (a random forest on the trials' parameters, seeded), "
                  "per objective: over the complete trials and the parameters all of them drew, then for each "
                  "conditional parameter over the trials that drew it. Importances of one scope sum to 1.", ""]
        wide = imp.pivot_table(index=["scope", "trials", "param"], columns="objective", values="importance").reset_index()
        wide.columns = [str(c) for c in wide.columns]
        order = [c for c in names if c in wide.columns]
        wide = wide.sort_values(["trials", "scope", order[0] if order else "param"], ascending=[False, True, False])
        lines += _table(wide, ["scope", "trials", "param", *order])
    lines += ["## Trials", "", "Every trial in order; a failed one with its reason (never scored).", ""]
    lines += _table(frame, ["trial", "state", *names, "wall_s", "failure", "params"]) if len(frame) else []
    lines += ["## Figures", ""]
    for title, path in drawn:
        lines += [f"### {title}", "", f"![{title}]({path.relative_to(out)})", ""]
    return "\n".join(lines)


def write(folder: Path, out: Path | None = None) -> Path:
    """Write trials.csv, importances.csv, the figures and report.md of the study in ``folder``
    into ``out`` (default ``folder``); returns the report's path."""
    from . import studyplots as figures

    out = Path(out) if out is not None else Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    s = load(folder)
    frame = trials(s)
    imp = importances(s.tuning, s.objectives)
    frame.to_csv(out / "trials.csv", index=False)
    imp.to_csv(out / "importances.csv", index=False)
    names = [short(o) for o in s.objectives]
    drawn = [(title, path) for title, path in (
        ("Recall against work: every trial, the tuning front and its held-out evaluation",
         figures.front(frame, names, s.directions, out / "front.png")),
        ("Objectives by trial", figures.history(frame, names, out / "history.png")),
        ("Parameter importances", figures.importance(imp, out / "importance.png"))) if path is not None]
    path = out / "report.md"
    path.write_text(markdown(s, frame, imp, drawn, out), encoding="utf-8")
    return path
