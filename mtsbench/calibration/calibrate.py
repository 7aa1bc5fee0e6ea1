"""``mtsbench calibrate A B``: how far the conclusions of one LLM carry to another.

A and B are two finished runs of the same scenarios (``mtsbench run`` or ``check`` output
folders), typically ``llm=mock`` and ``llm=local`` — or two cassettes, each replayed first
with ``llm=replay``. Everything is read from the runs' saved files (trace, metrics); nothing
re-runs. A is the reference: "recall" is the share of A's conclusions B also reached.

Compared task by task, matched on the scenario's own step ids (memory ids differ between
runs, since each run derives its own summaries and facts):

- ``attention`` (rate_attention): the score of every observed item (turn, perception),
  matched by step — Spearman's rank correlation (Pearson of the ranks, ties averaged) and
  the mean absolute difference;
- ``facts`` (summarize): a fact of B matches a fact of A of the same scenario when their keys
  are equal, or when they share a source step and their texts have a content-token cosine
  of at least ``same_text`` (the mock's keyless rule, ``mtsbench.llm.mock.text_similarity``)
  — precision (matched B / all B) and recall (matched A / all A);
- ``events`` (same_event / per-category joining): for each tagged step both runs filed,
  whether it joined an existing event or started a new one — agreement;
- ``impressions`` (infer): steps that gave an impression in A, B or both — agreement, and
  for steps in both the mean absolute difference of belief and of TTL (days);
- ``conjectures`` and ``consolidation`` (judge_relation, reassess_belief): counts per run
  (conjectures formed, facts merged, contradictions settled);
- ``expectations``: each check passed in both, in A only, in B only, in neither;
- ``copies`` (output side): per run and task, the answers checked and those that copy an
  example the task's prompt shows or showed (``mtsbench.evaluation.copies``: "muddy boots by the door"
  as an impression, a ``course.`` category on a trip), with the count per example.

Writes ``calibration.md``, ``calibration.json`` and ``attention.png`` to ``--out``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ReportError

OBSERVED = ("turn", "perception")


def spearman(a: pd.Series, b: pd.Series) -> float | None:
    """Pearson correlation of the average ranks; None with fewer than 3 pairs or a constant side.

    >>> spearman(pd.Series([1, 2, 3, 4]), pd.Series([10, 20, 30, 35])), spearman(pd.Series([1, 2]), pd.Series([2, 1]))
    (1.0, None)
    >>> spearman(pd.Series([1, 2, 3]), pd.Series([3, 2, 1]))
    -1.0
    """
    ra, rb = a.rank().to_numpy(float), b.rank().to_numpy(float)
    if len(ra) < 3 or ra.std() == 0 or rb.std() == 0:
        return None
    return round(float(np.corrcoef(ra, rb)[0, 1]), 4)


def _events(trace: pd.DataFrame, name: str) -> pd.DataFrame:
    if "event" not in trace:
        return pd.DataFrame()
    return trace[trace["event"] == name].reset_index(drop=True)


def _steps(value) -> list[str]:
    if isinstance(value, str):          # a trace stored with nested lists as JSON text
        value = json.loads(value)
    return [] if value is None or (isinstance(value, float) and np.isnan(value)) else [str(s) for s in value]


def attention_scores(trace: pd.DataFrame) -> pd.DataFrame:
    """scenario, step, score of every observed item's labelling."""
    created, scored = _events(trace, "created"), _events(trace, "scored")
    if created.empty or scored.empty:
        return pd.DataFrame(columns=["scenario", "step", "score"])
    created = created[created["kind"].isin(OBSERVED)].copy()
    created["step"] = [(_steps(s) or [None])[-1] for s in created["steps"]]
    joined = created[["scenario", "id", "step"]].merge(scored[["scenario", "id", "score"]], on=["scenario", "id"])
    return joined.dropna(subset=["score"])[["scenario", "step", "score"]].drop_duplicates(["scenario", "step"])


def facts(trace: pd.DataFrame) -> pd.DataFrame:
    """scenario, steps, key, text of every fact memory created."""
    created = _events(trace, "created")
    if created.empty or "text" not in created:
        return pd.DataFrame(columns=["scenario", "steps", "key", "text"])
    f = created[created["kind"] == "fact"].copy()
    f["steps"] = [tuple(_steps(s)) for s in f["steps"]]
    f["key"] = f["key"].fillna("").astype(str)
    return f[["scenario", "steps", "key", "text"]].reset_index(drop=True)


def fact_matches(a: pd.DataFrame, b: pd.DataFrame, same_text: float) -> tuple[int, int]:
    """(facts of A matched by some fact of B, facts of B matching some fact of A)."""
    from ..llm.heuristics import text_similarity

    def match(x, y) -> bool:
        if x.scenario != y.scenario:
            return False
        if x.key and x.key == y.key:
            return True
        return bool(set(x.steps) & set(y.steps)) and text_similarity(str(x.text), str(y.text)) >= same_text

    rows_a, rows_b = list(a.itertuples()), list(b.itertuples())
    in_a = sum(any(match(x, y) for y in rows_b) for x in rows_a)
    in_b = sum(any(match(x, y) for x in rows_a) for y in rows_b)
    return in_a, in_b


def event_decisions(trace: pd.DataFrame) -> pd.DataFrame:
    """scenario, step (the newest step filed), joined (True: joined an event; False: a new one)."""
    ev = _events(trace, "event")
    if ev.empty:
        return pd.DataFrame(columns=["scenario", "step", "joined"])
    ev = ev.copy()
    ev["step"] = [(_steps(s) or [None])[-1] for s in ev["steps"]]
    return ev[["scenario", "step", "joined"]].drop_duplicates(["scenario", "step"], keep="last")


def impressions(trace: pd.DataFrame) -> pd.DataFrame:
    """scenario, step, belief, ttl_days of each step's (strongest) impression."""
    imp = _events(trace, "impression")
    if imp.empty:
        return pd.DataFrame(columns=["scenario", "step", "belief", "ttl_days"])
    imp = imp.copy()
    imp["ttl_days"] = imp["ttl"].astype(float) / 86400.0
    return (imp.sort_values("belief", ascending=False).drop_duplicates(["scenario", "step"])
            [["scenario", "step", "belief", "ttl_days"]])


def _mad(x: pd.Series, y: pd.Series) -> float | None:
    return round(float((x.astype(float) - y.astype(float)).abs().mean()), 4) if len(x) else None


def _share(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def compare(run_a, run_b, same_text: float = 0.75) -> dict:
    """The calibration of B against A (``mtsbench.api.Run`` objects); see the module docstring."""
    ta, tb = run_a.trace, run_b.trace
    att = attention_scores(ta).merge(attention_scores(tb), on=["scenario", "step"], suffixes=("_a", "_b"))
    fa, fb = facts(ta), facts(tb)
    in_a, in_b = fact_matches(fa, fb, same_text)
    ev = event_decisions(ta).merge(event_decisions(tb), on=["scenario", "step"], suffixes=("_a", "_b"))
    ia, ib = impressions(ta), impressions(tb)
    both = ia.merge(ib, on=["scenario", "step"], suffixes=("_a", "_b"))
    steps_a, steps_b = set(zip(ia["scenario"], ia["step"])), set(zip(ib["scenario"], ib["step"]))
    ea, eb = run_a.expectations, run_b.expectations
    checks = ea.merge(eb, on=["scenario", "index", "step", "check"], suffixes=("_a", "_b"))
    pa, pb = checks["passed_a"].fillna(False).astype(bool), checks["passed_b"].fillna(False).astype(bool)

    def count(trace, name):
        return int(len(_events(trace, name)))

    from ..evaluation.copies import copies, count as count_copies

    return {
        "a": str(run_a.path), "b": str(run_b.path),
        "attention": {"pairs": int(len(att)), "spearman": spearman(att["score_a"], att["score_b"]),
                      "mean_abs_diff": _mad(att["score_a"], att["score_b"]),
                      "mean_a": _mad(att["score_a"], 0 * att["score_a"]), "mean_b": _mad(att["score_b"], 0 * att["score_b"])},
        "facts": {"a": int(len(fa)), "b": int(len(fb)), "matched_a": in_a, "matched_b": in_b,
                  "precision": _share(in_b, len(fb)), "recall": _share(in_a, len(fa)), "same_text": same_text},
        "events": {"steps_a": int(len(event_decisions(ta))), "steps_b": int(len(event_decisions(tb))),
                   "both": int(len(ev)),
                   "agreement": _share(int((ev["joined_a"].astype(bool) == ev["joined_b"].astype(bool)).sum()), len(ev))},
        "impressions": {"steps_a": len(steps_a), "steps_b": len(steps_b), "both": len(steps_a & steps_b),
                        "agreement": _share(len(steps_a & steps_b), len(steps_a | steps_b)),
                        "belief_mean_abs_diff": _mad(both["belief_a"], both["belief_b"]),
                        "ttl_days_mean_abs_diff": _mad(both["ttl_days_a"], both["ttl_days_b"])},
        "counts": {name: {"a": count(ta, name), "b": count(tb, name)}
                   for name in ("conjecture", "merged", "contradicted", "summarized")},
        "expectations": {"compared": int(len(checks)), "both": int((pa & pb).sum()), "a_only": int((pa & ~pb).sum()),
                         "b_only": int((~pa & pb).sum()), "neither": int((~pa & ~pb).sum())},
        "copies": {"a": count_copies(*copies(run_a)), "b": count_copies(*copies(run_b))},
        "attention_pairs": att,
    }


def cell(text) -> str:
    """A markdown table cell: ``|`` escaped (``mean |A-B|`` would split the cell).

    >>> cell("mean |A-B| 0.5")
    'mean \\\\|A-B\\\\| 0.5'
    """
    return str(text).replace("|", "\\|")


def shown(value, reason: str) -> str:
    """A figure of the comparison, or ``n/a`` and why there is none (never ``None``).

    >>> shown(0.25, "no pairs"), shown(None, "no pairs")
    ('0.25', 'n/a (no pairs)')
    """
    return f"n/a ({reason})" if value is None else str(value)


def markdown(c: dict) -> str:
    at, f, ev, im, ex = c["attention"], c["facts"], c["events"], c["impressions"], c["expectations"]
    no_pairs = "no item rated in both"
    no_both = "no step with an impression in both"
    rows = [
        ("attention (rate_attention)", f"{at['pairs']} items",
         f"Spearman {shown(at['spearman'], 'fewer than 3 pairs or one side constant')}, "
         f"mean |A-B| {shown(at['mean_abs_diff'], no_pairs)} "
         f"(mean A {shown(at['mean_a'], no_pairs)}, B {shown(at['mean_b'], no_pairs)})"),
        ("facts (summarize)", f"A {f['a']}, B {f['b']}",
         f"precision {shown(f['precision'], 'B summarized no fact')}, recall {shown(f['recall'], 'A summarized no fact')} "
         f"(key, or shared step and text cosine >= {f['same_text']})"),
        ("events (join or new)", f"{ev['both']} steps in both (A {ev['steps_a']}, B {ev['steps_b']})",
         f"agreement {shown(ev['agreement'], 'no step decided in both')}"),
        ("impressions (infer)", f"A {im['steps_a']}, B {im['steps_b']}, both {im['both']}",
         f"agreement {shown(im['agreement'], 'no impression in A or B')}, "
         f"mean |belief A-B| {shown(im['belief_mean_abs_diff'], no_both)}, "
         f"mean |TTL A-B| {shown(im['ttl_days_mean_abs_diff'], no_both)}"
         + (" days" if im["ttl_days_mean_abs_diff"] is not None else "")),
        ("expectations", f"{ex['compared']} checks", f"both {ex['both']}, A only {ex['a_only']}, B only {ex['b_only']}, "
                                                      f"neither {ex['neither']}"),
    ]
    lines = [f"# Calibration: B = `{c['b']}` against A = `{c['a']}`", "",
             "| task | compared | agreement |", "|---|---|---|",
             *(f"| {cell(a)} | {cell(b)} | {cell(d)} |" for a, b, d in rows), "",
             "| count | A | B |", "|---|---|---|",
             *(f"| {cell(k)} | {v['a']} | {v['b']} |" for k, v in c["counts"].items()), "",
             *(_copies_table(c["copies"]) if "copies" in c else []),
             "![attention A vs B](attention.png)", ""]
    return "\n".join(lines)


def _copies_table(copies: dict) -> list[str]:
    """The copy check's table: per task, the answers copying a prompt example in A and in B."""
    tasks = sorted(set(copies["a"]) | set(copies["b"]))

    def shown_for(side: str, task: str) -> str:
        c = copies[side].get(task)
        if not c:
            return "no answer"
        top = ", ".join(f"'{k}' {v}" for k, v in list(c["examples"].items())[:3])
        return f"{c['copies']} of {c['answers']}" + (f" ({top})" if top else "")

    return ["| copies a prompt example | A | B |", "|---|---|---|",
            *(f"| {cell(t)} | {cell(shown_for('a', t))} | {cell(shown_for('b', t))} |" for t in tasks), ""] \
        if tasks else ["No answer to check for copied prompt examples.", ""]


def _figure(att: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.scatter(att["score_a"], att["score_b"], s=14, alpha=0.6)
    ax.plot([0, 10], [0, 10], color="grey", lw=0.8)
    ax.set(xlim=(-0.3, 10.3), ylim=(-0.3, 10.3), xlabel="attention in A", ylabel="attention in B",
           title="rate_attention, item by item")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def load_runs(*paths: Path) -> list:
    """The runs (``mtsbench.api.Run``) in these folders; ReportError for a sweep folder."""
    from ..api import Run, load

    runs = []
    for path in paths:
        run = load(path)
        if not isinstance(run, Run):
            raise ReportError(f"{path}: expected a run folder (with summary.json), got a sweep: give one of its jobs")
        runs.append(run)
    return runs


def write(a: Path, b: Path, out: Path, same_text: float = 0.75) -> dict:
    """Compare the runs in folders ``a`` and ``b``; write the report to ``out``; returns the numbers."""
    c = compare(*load_runs(a, b), same_text=same_text)
    att = c.pop("attention_pairs")
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.json").write_text(json.dumps(c, indent=2), encoding="utf-8")
    (out / "calibration.md").write_text(markdown(c), encoding="utf-8")
    _figure(att, out / "attention.png")
    return c
