"""Attention measured against what is later asked (issue 25, item 2).

A scenario with evidence (probes with ``expect.recall``, e.g. imported LoCoMo) says which
observed turns some later question needs. A turn's labelled attention (its ``observe``
record's ``score``) is a prediction of that, scored by the ROC AUC::

    label(s)      = 1 if s is an evidence step of some probe after s, else 0
    attention_auc = P(score(s+) > score(s-)) + 0.5 * P(score(s+) = score(s-))

over pairs of an evidence turn s+ and another turn s- (the Mann-Whitney statistic from
average ranks, ties counting half): 0.5 = no information, 1 = every evidence turn rated
above every other. Pooled over the run's scenarios. Beside it, ``share_ge_8`` (the share
of turns rated 8 or more) and a histogram of the scores in whole-point bins [0,1), ...,
[9,10] for evidence turns and the rest. Turns without a score (a system that rates
nothing, a failed call) are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..scenario.model import OBSERVED_KINDS

BINS = 10


def roc_auc(scores, labels) -> float | None:
    """ROC AUC of ``scores`` for boolean ``labels`` (None without both classes).

    >>> roc_auc([1, 2, 3, 4], [0, 0, 1, 1]), roc_auc([5, 5, 5], [1, 0, 0]), roc_auc([3, 1, 2], [1, 0, 1])
    (1.0, 0.5, 1.0)
    >>> roc_auc([1, 2], [1, 1]) is None, roc_auc([2, 1, 1], [0, 1, 0])
    (True, 0.25)
    """
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    pos, neg = int(labels.sum()), int((~labels).sum())
    if pos == 0 or neg == 0:
        return None
    ranks = pd.Series(scores).rank(method="average").to_numpy()
    return float((ranks[labels].sum() - pos * (pos + 1) / 2) / (pos * neg))


def later_evidence(scenario) -> dict[str, bool]:
    """Observed step id -> whether a probe after it lists it as evidence."""
    asked: set[str] = set()
    out: dict[str, bool] = {}
    for step in reversed(scenario.steps):
        if step.kind == "probe":
            asked.update(step.expect.recall)
        elif step.kind in OBSERVED_KINDS:
            out[step.id] = step.id in asked
    return out


def histogram(scores: np.ndarray) -> list[int]:
    """Counts of scores in whole-point bins [0,1), ..., [9,10] (10 falls in the last).

    >>> histogram(np.array([0.0, 0.5, 9.99, 10.0, 4.0]))
    [2, 0, 0, 0, 1, 0, 0, 0, 0, 2]
    """
    return np.bincount(np.clip(np.floor(scores), 0, BINS - 1).astype(int), minlength=BINS).tolist()


def attention_block(records: pd.DataFrame, scenarios: dict) -> dict | None:
    """``attention_auc`` and the score histograms of the run's labelled turns (module
    docstring); None when no scenario has evidence or no turn has a score."""
    scores, labels = [], []
    for sid, scenario in scenarios.items():
        wanted = later_evidence(scenario)
        if not any(wanted.values()):
            continue
        mine = records[(records["scenario"] == sid) & (records["record"] == "observe")]
        score = pd.to_numeric(mine["score"], errors="coerce")
        keep = score.notna() & mine["step"].isin(list(wanted))
        scores += score[keep].tolist()
        labels += [wanted[s] for s in mine.loc[keep, "step"]]
    if not scores:
        return None
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    auc = roc_auc(s, y)
    return {"attention_auc": None if auc is None else round(auc, 4), "turns": int(len(s)),
            "evidence_turns": int(y.sum()), "share_ge_8": round(float(np.mean(s >= 8)), 4),
            "median": round(float(np.median(s)), 4),
            "histogram": {"evidence": histogram(s[y]), "other": histogram(s[~y])}}


def markdown(block: dict | None) -> list[str]:
    """The report.md section (empty without a block)."""
    if not block:
        return []
    auc = "-" if block["attention_auc"] is None else f"{block['attention_auc']:.3f}"
    bins = [f"{i}" for i in range(BINS)]
    return ["## Attention against what is later asked", "",
            f"ROC AUC of a turn's labelled attention for \"this turn is evidence for a later question\": "
            f"**{auc}** over {block['turns']} turns ({block['evidence_turns']} evidence; 0.5 = no information). "
            f"Share of turns rated >= 8: {block['share_ge_8']:.3f}; median score {block['median']:g}.", "",
            "| score bin | " + " | ".join(bins) + " |", "|" + "---|" * (BINS + 1),
            "| evidence turns | " + " | ".join(map(str, block["histogram"]["evidence"])) + " |",
            "| other turns | " + " | ".join(map(str, block["histogram"]["other"])) + " |", ""]


def console(block: dict | None) -> str:
    """One line for the terminal (empty without a block)."""
    if not block or block["attention_auc"] is None:
        return ""
    return (f"attention AUC for later-asked evidence: {block['attention_auc']:.3f} over {block['turns']} turns "
            f"({block['evidence_turns']} evidence); share rated >= 8: {block['share_ge_8']:.3f}")
