"""report.md for a run directory, made from its metrics table and summary only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import evidence


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
    """'P of N expectations passed' (N: those the system could be judged on), and how many
    it has no state for.

    >>> passed_line(pd.DataFrame({"check": ["probe", "belief", "recall", "tier"],
    ...                           "passed": [None, True, False, None]}))
    '1 of 2 expectations passed (1 unsupported)'
    """
    expectations = frame[frame["check"] != "probe"]
    judged = expectations[expectations["passed"].notna()]
    unsupported = len(expectations) - len(judged)
    text = f"{int(judged['passed'].astype(bool).sum())} of {len(judged)} expectations passed"
    return text + (f" ({unsupported} unsupported)" if unsupported else "")


def write_report(out_dir: Path, frame: pd.DataFrame, summary: dict, extra: list[str] | None = None) -> Path:
    """report.md of one run; ``extra`` lines (e.g. its figures) go at the end."""
    overall = summary["overall"]
    rows = [{"scenario": sid, **{k: v for k, v in agg.items() if k not in ("llm", "processes")}}
            for sid, agg in summary["scenarios"].items()]
    per = pd.DataFrame(rows)
    cols = ["scenario", "checks", "passed", "recall", "hit_rate", "probes", "scored", "llm_calls", "tokens"]
    failed = failures(frame)
    choices = summary.get("choices") or {}
    lines = [
        "# mtsbench run report", "",
        f"{overall['passed']} of {overall['checks']} expectations passed"
        + (f" ({overall['unsupported']} unsupported: the system has no such state)" if overall.get("unsupported") else "")
        + f"; mean recall@k "
        f"{overall['recall']}; {overall['scored']} memories scored per probe; "
        f"{overall['llm_calls']} LLM calls, {overall['tokens']} tokens.", "",
    ]
    if choices:
        lines += ["Configuration: " + ", ".join(f"`{g}={c}`" for g, c in sorted(choices.items())), ""]
    lines += evidence.markdown(overall.get("evidence"))
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
        lines += ["## Probes", "", table(probes, ["scenario", "step", "k", "recall", "scored",
                                                  "tiers_searched", "llm_calls", "tokens"]), ""]
    lines += extra or []
    path = out_dir / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
