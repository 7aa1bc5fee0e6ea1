"""``mtsbench calibrate --fit A B -o PROFILE.yaml``: fit an error profile of B's LLM against A's
mock, from the two runs' saved files (results, trace, summary), nothing re-run.

A is a clean-mock run (``llm=mock``: its answers are the scenarios' hints), B a real model's
run of the same scenarios (``llm=local``, ``llm=openai`` or a cassette replayed). Items are
matched on the scenario's step ids, facts as ``mtsbench.calibration.calibrate`` matches them (same key,
or a shared source step and text cosine >= ``same_text``). ``--scenarios`` fits on a subset
(the held-out evaluation fits on one half of the scenarios and measures on the other).
The fitted quantities and their estimators (``mtsbench.llm.profiled`` says how each is applied):

- ``attention.draw``: ``random`` (fitted profiles: on each half of the recorded scenarios it
  agreed better with the model in-sample than ``position``; ``mtsbench.llm.profiled``).
- ``attention.quantiles[b]``: the 21-point quantile table (probabilities 0, 0.05 .. 1) of B's
  scores of the observed items whose A score falls in bin b of ``attention.bins`` (0, 2, 4,
  6, 8, 10): the model's score distribution conditional on the mock's binned score. A bin
  with fewer than ``min_bin`` (5) items takes the table of all of B's scores.
- ``facts.recall``: matched A facts / A facts (the share of hinted facts the model states);
  ``facts.key_kept``: of the matched A facts, the share some matching B fact names with the
  same key; ``facts.extra_per_turn[kind]``: B facts matching no A fact, counted by the kind
  of their newest source step, / B's summarized turns of that kind (the Poisson mean);
  ``facts.belief``: the quantile table of those extra facts' beliefs.
- ``events.recall``: steps A tagged that B tagged too / steps A tagged; ``category_kept``:
  of those, the share with the same category; ``extra_per_turn[kind]``: steps B tagged and A
  did not / B's summarized turns of that kind; ``join.same`` / ``join.new``: of the steps both
  tagged, the share B joined to an event among those A joined / A started new (no such step:
  1 / 0, the mock's answer).
- ``relation[l]``: the model's labels on pairs the mock's rule (``heuristics.fact_relation``
  of the two facts as B stored them) labels l. B's ``merged`` pairs are its ``same`` answers,
  its ``contradicted`` pairs its ``contradicts``; its other judge_relation calls (calls -
  failures - those) are counted as ``unrelated`` answers on pairs the rule calls unrelated
  (most candidate pairs are; the trace does not name them). One pseudo-count on the
  diagonal, so a label never seen keeps the mock's answer.
- ``impressions.recall``: per step min(A's, B's impressions) summed / A's impressions;
  ``key_kept``: of A's impressions at steps B also gave some, the share whose key B used
  there; ``extra_per_call``: per step max(0, B's - A's) summed / B's infer calls;
  ``belief``, ``ttl_days``: quantile tables of all of B's impressions' beliefs and lifetimes.
- ``conjectures`` (measured, not applied: they follow from the impressions): conjectures
  formed per observed item in A and in B.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from .calibrate import _events, _steps, event_decisions, fact_matches, facts
from ..llm.profile import KINDS, LABELS, check, quantiles

BINS = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
MIN_BIN = 5


def _only(frame: pd.DataFrame, scenarios) -> pd.DataFrame:
    return frame if scenarios is None or "scenario" not in frame else frame[frame["scenario"].isin(scenarios)]


def _kinds(run) -> dict:
    r = run.results
    return {(s, st): k for s, st, k in zip(r["scenario"], r["step"], r["kind"])}


def _observed(run, scenarios) -> pd.DataFrame:
    r = _only(run.results, scenarios)
    r = r[(r["record"] == "observe") & r["score"].notna()]
    return r[["scenario", "step", "kind", "score"]].drop_duplicates(["scenario", "step"])


def _turns_by_kind(run, trace, kinds) -> dict:
    counts = dict.fromkeys(KINDS, 0)
    summ = _events(trace, "summarized")
    for s, steps in zip(summ["scenario"], summ["steps"]):
        for st in _steps(steps):
            k = kinds.get((s, st))
            if k in counts:
                counts[k] += 1
    return counts


def _llm_calls(run, scenarios, task: str) -> tuple[int, int]:
    summary = json.loads((run.path / "summary.json").read_text(encoding="utf-8"))
    calls = fails = 0
    for sid, s in summary.get("scenarios", {}).items():
        if scenarios is None or sid in scenarios:
            t = (s.get("llm") or {}).get("by_task", {}).get(task, {})
            calls, fails = calls + int(t.get("calls", 0)), fails + int(t.get("failures", 0))
    return calls, fails


def _share(n: float, d: float, default: float) -> float:
    return round(float(n) / d, 4) if d else default


def fit_attention(a: pd.DataFrame, b: pd.DataFrame) -> dict:
    """The attention part: bins, per-bin quantile tables of B's scores, and their sizes."""
    m = a.merge(b, on=["scenario", "step"], suffixes=("_a", "_b"))
    pooled = quantiles(m["score_b"]) or [5.0]
    tables, sizes = [], []
    bins = np.searchsorted(np.asarray(BINS), m["score_a"].to_numpy(float), side="right") - 1
    bins = np.clip(bins, 0, len(BINS) - 2)
    for i in range(len(BINS) - 1):
        scores = m["score_b"][bins == i]
        sizes.append(int(len(scores)))
        tables.append(quantiles(scores) if len(scores) >= MIN_BIN else pooled)
    return {"draw": "random", "bins": BINS, "quantiles": tables, "items": sizes, "pairs": int(len(m))}


def _created_facts(trace) -> pd.DataFrame:
    c = _events(trace, "created")
    if c.empty:
        return pd.DataFrame(columns=["scenario", "id", "key", "value", "text", "belief", "steps"])
    c = c[c["kind"] == "fact"].copy()
    c["steps"] = [tuple(_steps(s)) for s in c["steps"]]
    c["key"] = c["key"].fillna("").astype(str)
    return c


def fit_facts(run_a, run_b, ta, tb, kinds, turns_b, same_text) -> dict:
    fa, fb = facts(ta), facts(tb)
    matched_a = kept = 0
    for x in fa.itertuples():
        hits = [y for y in fb.itertuples() if y.scenario == x.scenario
                and fact_matches(fa.loc[[x.Index]], fb.loc[[y.Index]], same_text)[0]]
        if hits:
            matched_a += 1
            kept += any(y.key == x.key for y in hits)
    cb = _created_facts(tb).reset_index(drop=True)
    extra = dict.fromkeys(KINDS, 0)
    beliefs = []
    for i, y in cb.iterrows():
        if fact_matches(fa, fb.loc[[i]], same_text)[1]:
            continue
        k = kinds.get((y["scenario"], (y["steps"] or (None,))[-1]))
        if k in extra:
            extra[k] += 1
        beliefs.append(float(y["belief"]))
    return {"recall": _share(matched_a, len(fa), 1.0), "key_kept": _share(kept, matched_a, 1.0),
            "extra_per_turn": {k: _share(extra[k], turns_b[k], 0.0) for k in KINDS},
            "belief": quantiles(beliefs) or [0.7],
            "n": {"a": int(len(fa)), "b": int(len(fb)), "matched_a": matched_a, "extra": int(sum(extra.values()))}}


def _event_rows(trace) -> pd.DataFrame:
    ev = _events(trace, "event")
    if ev.empty:
        return pd.DataFrame(columns=["scenario", "step", "joined", "category"])
    ev = ev.copy()
    ev["step"] = [(_steps(s) or [None])[-1] for s in ev["steps"]]
    return ev[["scenario", "step", "joined", "category"]].drop_duplicates(["scenario", "step"], keep="last")


def fit_events(ta, tb, kinds, turns_b) -> dict:
    ea, eb = _event_rows(ta), _event_rows(tb)
    both = ea.merge(eb, on=["scenario", "step"], suffixes=("_a", "_b"))
    steps_a = set(zip(ea["scenario"], ea["step"]))
    extra = dict.fromkeys(KINDS, 0)
    for s, st in zip(eb["scenario"], eb["step"]):
        if (s, st) not in steps_a and kinds.get((s, st)) in extra:
            extra[kinds[(s, st)]] += 1
    ja, jb = both["joined_a"].astype(bool), both["joined_b"].astype(bool)
    return {"recall": _share(len(both), len(ea), 1.0),
            "category_kept": _share(int((both["category_a"] == both["category_b"]).sum()), len(both), 1.0),
            "extra_per_turn": {k: _share(extra[k], turns_b[k], 0.0) for k in KINDS},
            "join": {"same": _share(int((ja & jb).sum()), int(ja.sum()), 1.0),
                     "new": _share(int((~ja & jb).sum()), int((~ja).sum()), 0.0)},
            "n": {"a": int(len(ea)), "b": int(len(eb)), "both": int(len(both))}}


def fit_relation(run_b, tb, scenarios, same_text) -> dict:
    from ..llm.base import Fact
    from ..llm.heuristics import fact_relation

    cb = _created_facts(tb)
    by = {(s, int(i)): Fact(k, v, str(t), float(b)) for s, i, k, v, t, b in
          zip(cb["scenario"], cb["id"], cb["key"], cb["value"], cb["text"], cb["belief"])}
    counts = {h: {m: (1.0 if m == h else 0.0) for m in LABELS} for h in LABELS}   # the pseudo-count
    answered = 0

    def count(s, i, j, said):
        nonlocal answered
        x, y = by.get((s, int(i))), by.get((s, int(j)))
        if x is not None and y is not None:
            counts[fact_relation(x, y, same_text)][said] += 1
            answered += 1

    for row in _events(tb, "merged").itertuples():
        for gone in _steps(row.merged):
            count(row.scenario, row.id, gone, "same")
    for row in _events(tb, "contradicted").itertuples():
        count(row.scenario, row.loser, row.winner, "contradicts")
    calls, fails = _llm_calls(run_b, scenarios, "judge_relation")
    unrelated = max(0, calls - fails - answered)
    counts["unrelated"]["unrelated"] += unrelated
    probs = {h: {m: round(c / sum(row.values()), 4) for m, c in row.items()} for h, row in counts.items()}
    return probs | {"n": {"calls": calls, "same_or_contradicts": answered, "unrelated": unrelated}}


def _impressions(trace) -> pd.DataFrame:
    imp = _events(trace, "impression")
    if imp.empty:
        return pd.DataFrame(columns=["scenario", "step", "key", "belief", "ttl"])
    return imp[["scenario", "step", "key", "belief", "ttl"]].copy()


def fit_impressions(run_b, ta, tb, scenarios) -> dict:
    ia, ib = _impressions(ta), _impressions(tb)
    na, nb = ia.groupby(["scenario", "step"]).size(), ib.groupby(["scenario", "step"]).size()
    joined = pd.concat([na.rename("a"), nb.rename("b")], axis=1).fillna(0)
    matched = float(np.minimum(joined["a"], joined["b"]).sum())
    extra = float(np.maximum(joined["b"] - joined["a"], 0).sum())
    keys_b = ib.groupby(["scenario", "step"])["key"].apply(set).to_dict()
    at_both = [(s, st, k) for s, st, k in zip(ia["scenario"], ia["step"], ia["key"]) if (s, st) in keys_b]
    kept = sum(k in keys_b[(s, st)] for s, st, k in at_both)
    calls, _ = _llm_calls(run_b, scenarios, "infer")
    return {"recall": _share(matched, len(ia), 1.0), "key_kept": _share(kept, len(at_both), 1.0),
            "extra_per_call": _share(extra, calls, 0.0),
            "belief": quantiles(ib["belief"].astype(float)) or [0.5],
            "ttl_days": [max(x, 1e-6) for x in quantiles(ib["ttl"].astype(float) / 86400.0)] or [7.0],
            "n": {"a": int(len(ia)), "b": int(len(ib)), "infer_calls_b": calls}}


def _conjectures(trace, observed: int) -> float:
    c = _events(trace, "conjecture")
    formed = int(c["belief"].notna().sum()) if "belief" in c else 0
    return _share(formed, observed, 0.0)


def fit(run_a, run_b, scenarios=None, same_text: float = 0.75) -> dict:
    """The profile of ``run_b``'s LLM against ``run_a``'s mock (``mtsbench.api.Run``), on
    ``scenarios`` (None: all of them): a dict as the profile file holds it."""
    ta, tb = _only(run_a.trace, scenarios), _only(run_b.trace, scenarios)
    kinds = _kinds(run_b)
    turns_b = _turns_by_kind(run_b, tb, kinds)
    oa, ob = _observed(run_a, scenarios), _observed(run_b, scenarios)
    used = sorted(set(ob["scenario"]))
    return {
        "fitted_from": {"a": str(run_a.path), "b": str(run_b.path), "scenarios": used,
                        "summarized_turns_b": turns_b},
        "attention": fit_attention(oa[["scenario", "step", "score"]], ob[["scenario", "step", "score"]]),
        "facts": fit_facts(run_a, run_b, ta, tb, kinds, turns_b, same_text),
        "events": fit_events(ta, tb, kinds, turns_b),
        "relation": fit_relation(run_b, tb, scenarios, same_text),
        "impressions": fit_impressions(run_b, ta, tb, scenarios),
        "conjectures": {"per_item_a": _conjectures(ta, len(oa)), "per_item_b": _conjectures(tb, len(ob))},
    }


COMMENTS = {
    "fitted_from": "the runs this profile was fitted on (A: the clean mock, B: the model) and their scenarios",
    "attention": "rate_attention: the model's score distribution given the mock's score s.\n"
                 "draw: random (u uniform: the model's spread) or position (u = s's place in its bin: monotone);\n"
                 "bins: edges of the mock-score bins; quantiles: per bin, the model's scores at probabilities\n"
                 "0, 0.05 .. 1 (a draw interpolates them at a uniform u); items: pairs per bin (a bin\n"
                 "with fewer than 5 takes the table of all pairs)",
    "facts": "summarize, facts. recall: P(a hinted fact is stated); key_kept: P(its hinted key is kept,\n"
             "else a key of its own text); extra_per_turn: mean extra facts per summarized turn by the\n"
             "turn's kind (Poisson; each states a sentence of the turn); belief: quantiles of their beliefs",
    "events": "summarize, event tags, and same_event. recall: P(a hinted tag is given); category_kept: P(its\n"
              "category is kept); extra_per_turn: mean extra tags per turn by kind; join.same / join.new:\n"
              "P(the model joins | the mock joins) / P(the model joins | the mock starts a new event)",
    "relation": "judge_relation: P(the model's label | the mock's label), one row per mock label",
    "impressions": "infer. recall: P(a hinted impression is given); key_kept: P(its key is kept); extra_per_call:\n"
                   "mean extra impressions per call (Poisson; each states a sentence of the item); belief,\n"
                   "ttl_days: quantiles of every impression's belief and lifetime (drawn on log days)",
    "conjectures": "measured, not applied (conjectures follow from the impressions): formed per observed item",
}


def dump(profile: dict, model: str | None = None) -> str:
    """The profile as commented YAML (a block per task, each with what its numbers mean)."""
    lines = ["# An mtsbench error profile (mtsbench calibrate --fit A B): how a model's answers differ from the",
             "# mock's, applied by llm=mock llm.profile=THIS_FILE. Plain numbers: edit them to ask what-if",
             "# questions. The estimators: python -c 'import mtsbench.calibration.profile_fit as m; help(m)'.",
             *([f"model: {model}"] if model else []), ""]
    for key, value in profile.items():
        lines += [f"# {c}" for c in COMMENTS.get(key, "").split("\n") if COMMENTS.get(key)]
        lines.append(yaml.safe_dump({key: value}, allow_unicode=True, sort_keys=False, width=100,
                                    default_flow_style=None).rstrip())
        lines.append("")
    return "\n".join(lines)


def fit_main(a: Path, b: Path, out: Path, scenarios=None, same_text: float = 0.75, model: str | None = None) -> dict:
    """Fit, check (the profile loads as ``llm.profile`` would) and write ``out``; returns the profile."""
    from .calibrate import load_runs
    from ..errors import ReportError

    p = fit(*load_runs(a, b), scenarios=scenarios, same_text=same_text)
    if not p["fitted_from"]["scenarios"]:
        raise ReportError(f"{a}, {b}: no scenario in common to fit on" + (f" among {', '.join(scenarios)}"
                                                                           if scenarios else ""))
    text = dump(p, model)
    check(yaml.safe_load(text), str(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return p
