"""report.md for a run directory, made from its metrics table and summary only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..evaluation import attention_auc
from ..evaluation import evidence
from ..evaluation.evaluate import PROVENANCE
from ..scenario.datasets import imported, scored_by_recall
from .intervals import bootstrap, fmt
from .seeds import passed

WHOLE = ("tokens", "llm_calls")


def interval_rows(depths, budgets) -> list[tuple[str, str | None]]:
    """(measure, column) of the 'Intervals' section: the pass rate (no column: counted over
    expectations), earned recall@k, each configured cut-off's (earned) recall, recall@k by
    provenance alone, memories scored.

    >>> interval_rows((3,), (100,))[1:]
    [('earned recall@k', 'recall'), ('recall@3', 'recall@3'), ('recall@100t', 'recall@100t'), ('recall_provenance@k', 'recall_provenance@k'), ('memories scored per probe', 'scored')]
    """
    return [("pass rate", None), ("earned recall@k", "recall"),
            *((c, c) for c in evidence.cut_columns(depths, budgets)), (PROVENANCE, PROVENANCE),
            ("memories scored per probe", "scored")]


def recall_line(overall: dict) -> str:
    """The headline recall of a run in words: earned recall@k with the provenance-only figure
    beside it, labelled; or why there is no earned figure.

    >>> recall_line({"recall": 0.25, "recall_provenance@k": 0.5})
    'mean earned recall@k 0.25 (by provenance alone: 0.5)'
    >>> recall_line({"recall": None, "recall_provenance@k": 0.5, "no_earned_credit": "no texts"})
    'no earned recall@k: no texts (by provenance alone: 0.5)'
    """
    if PROVENANCE not in overall and overall.get("recall") is not None:      # evaluated by an earlier mtsbench
        return (f"recall@k by provenance alone {overall['recall']} (evaluated before recall meant earned credit: "
                "`mtsbench evaluate RUN_DIR` gives it)")
    provenance = overall.get(PROVENANCE)
    tail = f" (by provenance alone: {provenance})" if provenance is not None else ""
    if overall.get("recall") is None and overall.get("no_earned_credit"):
        return f"no earned recall@k: {overall['no_earned_credit']}{tail}"
    return f"mean earned recall@k {overall.get('recall')}{tail}"


def table(frame: pd.DataFrame, columns: list[str]) -> str:
    """A GitHub markdown table of ``columns`` (empty cells for missing values).

    >>> print(table(pd.DataFrame({"a": [1], "b": [None]}), ["a", "b"]))
    | a | b |
    |---|---|
    | 1 |  |
    """
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)
    body = ["| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |"
            for row in frame[columns].itertuples(index=False)]
    return "\n".join([head, *body])


def failures(frame: pd.DataFrame) -> pd.DataFrame:
    """The expectation rows that failed (an unsupported one, ``passed`` empty, did not)."""
    checks = frame[(frame["check"] != "probe") & frame["passed"].notna()]
    return checks[~checks["passed"].astype(bool)]


def passed_line(frame: pd.DataFrame) -> str:
    """'P of N expectations passed' (N: those the system could be judged on), how many it has no
    state for, and the probes of imported benchmark data or generated dialogue, which are scored
    by recall, never counted as passed or failed checks (``mtsbench.scenario.datasets``).

    >>> passed_line(pd.DataFrame({"check": ["probe", "belief", "recall", "tier"],
    ...                           "passed": [None, True, False, None]}))
    '1 of 2 expectations passed (1 unsupported)'
    >>> passed_line(pd.DataFrame({"check": ["probe", "probe"], "passed": [None, None], "dataset": ["locomo", "beam"]}))
    'no expectations to pass: 2 probes of imported data (beam, locomo), scored by recall'
    """
    expectations = frame[~frame["check"].isin(["probe", "llm"])]
    judged = expectations[expectations["passed"].notna()]
    unsupported = len(expectations) - len(judged)
    probes = frame[frame["check"] == "probe"]
    names = probes["dataset"].dropna().astype(str) if "dataset" in probes else pd.Series(dtype=str)
    names = names[names.map(scored_by_recall)]
    kinds = " or ".join(k for k, on in (("imported", names.map(imported).any()),
                                         ("generated", (names == "generated").any())) if on)
    benchmark = (f"{len(names)} probes of {kinds} data ({', '.join(sorted(set(names)))}), scored by recall"
                 if len(names) else "")
    if not len(judged) and benchmark:
        return f"no expectations to pass: {benchmark}"
    text = f"{int(judged['passed'].astype(bool).sum())} of {len(judged)} expectations passed"
    return text + (f" ({unsupported} unsupported)" if unsupported else "") + (f"; {benchmark}" if benchmark else "")


def write_report(out_dir: Path, frame: pd.DataFrame, summary: dict, extra: list[str] | None = None,
                 sections: list[str] | None = None) -> Path:
    """report.md of one run; ``sections`` (its recall per data set: ``report.datasets.lines``)
    go after the evidence recall, ``extra`` lines (e.g. its figures) at the end."""
    overall = summary["overall"]
    rows = [{"scenario": sid, **{k: v for k, v in agg.items() if k not in ("llm", "processes")}}
            for sid, agg in summary["scenarios"].items()]
    per = pd.DataFrame(rows)
    cols = ["scenario", "checks", "passed", "recall", PROVENANCE, "hit_rate", "probes", "scored", "llm_calls",
            "tokens"]
    failed = failures(frame)
    choices = summary.get("configuration") or summary.get("choices") or {}     # what the system was made of
    lines = ["# mtsbench run report", ""]
    if summary.get("status") == "unreliable":
        lines += [f"**Unreliable run**: {summary.get('unreliable')}. The numbers below are not to be trusted.", ""]
    lines += [
        f"{passed_line(frame)}; {recall_line(overall)}; {overall['scored']} memories scored per probe; "
        f"{overall['llm_calls']} LLM calls, {overall['tokens']} tokens.", "",
    ]
    if choices:
        lines += ["Configuration: " + ", ".join(f"`{g}={c}`" for g, c in sorted(choices.items())), ""]
    lines += evidence.markdown(overall.get("evidence"))
    lines += sections or []
    lines += attention_auc.markdown(overall.get("attention"))
    lines += ["## Scenarios", "", table(per, cols) if len(per) else "(none)", "",
              "## Failed expectations", ""]
    lines += [table(failed, ["scenario", "step", "check", "value", "expected"]) if len(failed) else "None.", ""]
    processes = overall.get("processes") or {}
    if processes:
        per_process = pd.DataFrame([{"process": name, **totals} for name, totals in sorted(processes.items())])
        lines += ["## Background processes", "",
                  "Summarization, consolidation and inference, metered apart from the steps' own cost.", "",
                  table(per_process, ["process", "runs", "calls", "tokens", "failures", "scored", "arousal_scored"]),
                  ""]
    probes = frame[frame["check"] == "probe"]
    if len(probes):
        lines += ["## Probes", "", "`recall`: earned recall at the probe's own k; `recall_provenance@k`: by "
                  "provenance alone. What each probe ranked (texts, tiers, scores, credit, memories the search could "
                  "see): report.html's *Probes*, or `mtsbench show RUN_DIR --probe STEP`.", "", table(probes, ["scenario", "step", "k", "recall", PROVENANCE, "scored",
                                                          "tiers_searched", "llm_calls", "tokens"]), ""]
    lines += interval_lines(frame, *evidence.cuts_of_summary(summary))
    lines += extra or []
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def interval_lines(frame: pd.DataFrame, depths=(), budgets=()) -> list[str]:
    """A run's 'Intervals' section: each headline mean (at the run's ``depths`` and
    ``budgets``) with its 95% bootstrap interval over probes (over expectations for the pass
    rate); empty when there is nothing to count."""
    probes = frame[frame["check"] == "probe"]
    rows = []
    for name, column in interval_rows(depths, budgets):
        if column is not None and column not in probes:
            continue
        values = pd.Series(passed(frame)) if column is None else pd.to_numeric(probes[column], errors="coerce")
        if values.dropna().empty:
            continue
        mean, lo, hi = bootstrap([values.to_numpy(dtype=float)])
        rows.append({"measure": name, "n": int(values.notna().sum()), "mean [95% interval]": fmt(mean, lo, hi)})
    if not rows:
        return []
    return ["## Intervals", "", "Means with 95% bootstrap intervals over probes (over expectations for the pass "
            "rate); `n` = how many were counted. How they are computed: docs/experiments.md, *Seeds and intervals*.", "",
            table(pd.DataFrame(rows), ["measure", "n", "mean [95% interval]"]), ""]


def with_intervals(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with each of ``columns`` that has ``_lo``/``_hi`` shown as 'mean [lo, hi]'.

    >>> frame = pd.DataFrame({"recall": [0.5], "recall_lo": [0.4], "recall_hi": [0.6]})
    >>> with_intervals(frame, ["recall"])["recall"].tolist()
    ['0.500 [0.400, 0.600]']
    """
    shown = frame.copy()
    for c in columns:
        if c in shown and f"{c}_lo" in shown:
            digits = 3 if c in ("recall", "pass_rate") or c.startswith("recall") else 0 if c in WHOLE else 1
            shown[c] = [fmt(m, lo, hi, digits) if pd.notna(m) else "" for m, lo, hi in
                        zip(pd.to_numeric(shown[c], errors="coerce"), shown[f"{c}_lo"], shown[f"{c}_hi"])]
    return shown
