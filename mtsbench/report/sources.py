"""Several runs or sweeps in one report: ``mtsbench report A B [C...] --out OUT``.

Each source (a run or a sweep directory) is named by ``--label SOURCE=NAME,...``
(``parse_labels``) or else by its folder's name; equal names get ``#1``, ``#2``, ... in the
order given (``source_names``). Its jobs join one list
(``combined_jobs``), numbered on from the previous source's, each labelled
``source=NAME`` followed by the overrides that differ between all the jobs of all the
sources (a single run without such overrides: ``source=NAME`` alone). The sweep report
then reads them as one sweep: configurations are (source, overrides), and two of them that
ran the same probes (same seed, scenario, step) are compared by the paired tests of
``paired``; those that share no probe are said not to be compared.

The report adds a Sources table (each source's folder, kind and job numbers) and a
leaderboard across every configuration of every source (``leaderboard_lines``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd

from ..errors import ReportError
from .jobs import Job, find_jobs, is_run
from .markdown import table, with_intervals

PREFIX = "source="
BOARD_COLUMNS = ["rank", "source", "config", "recall", "pass_rate", "scored", "cost_per_turn", "tokens", "seeds"]


def source_names(paths: list[Path]) -> list[str]:
    """Each source's name: its folder's name (spaces as ``_``), with ``#1``, ``#2``, ... when
    several have the same one.

    >>> source_names([Path("a/run"), Path("b/run"), Path("x/ablation"), Path("my sweep/")])
    ['run#1', 'run#2', 'ablation', 'my_sweep']
    """
    names = [re.sub(r"\s+", "_", Path(p).resolve().name or str(p)) for p in paths]
    counts: dict[str, int] = {}
    seen: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    out = []
    for n in names:
        if counts[n] > 1:
            seen[n] = seen.get(n, 0) + 1
            n = f"{n}#{seen[n]}"
        out.append(n)
    return out


def parse_labels(text: str | None, paths: list[str]) -> dict[str, str]:
    """``--label A=NAME,B=NAME`` as {path as given: NAME}: each key is a source as given on the
    command line or its folder's name (``source_names``); ``ReportError`` in one line for a key
    that names no source, a source named twice, or a name that is empty, repeated or holds a
    space, ``=`` or ``,``.

    >>> parse_labels("a/run=design, b/run=flat", ["a/run", "b/run"])
    {'a/run': 'design', 'b/run': 'flat'}
    >>> parse_labels("ablation=abl", ["x/ablation", "y/presets"])
    {'x/ablation': 'abl'}
    """
    if not text:
        return {}
    known = dict(zip(source_names([Path(p) for p in paths]), paths)) | {p: p for p in paths} | \
        {str(Path(p)): p for p in paths}
    out: dict[str, str] = {}
    for part in (x.strip() for x in text.split(",") if x.strip()):
        key, sep, name = part.partition("=")
        key, name = key.strip(), name.strip()
        if not sep or not name or any(c.isspace() or c in "=," for c in name):
            raise ReportError(f"--label {part}: expected SOURCE=NAME, NAME without spaces, '=' or ','")
        if key not in known:
            raise ReportError(f"--label {part}: no source '{key}'; the sources are {', '.join(paths)} "
                              f"(or their folder names: {', '.join(source_names([Path(p) for p in paths]))})")
        source = str(Path(known[key]))           # as combined_jobs sees it: a trailing / dropped
        if source in out:
            raise ReportError(f"--label: source {known[key]} is labelled twice")
        out[source] = name
    if len(set(out.values())) < len(out):
        raise ReportError(f"--label {text}: two sources share a name; give each its own")
    return out


def combined_jobs(paths: list[Path], labels: dict[str, str] | None = None) -> tuple[list[Job], list[dict]]:
    """The jobs of every source in one list (numbered 0, 1, ... across them, labelled
    ``source=NAME`` + their distinguishing overrides) and a description of each source:
    name, path, kind, the job numbers it got and its own. ``labels`` (path as given -> name,
    ``parse_labels``) names a source instead of its folder."""
    names = [(labels or {}).get(str(p), n) for p, n in zip(paths, source_names(paths))]
    if len(set(names)) < len(names):
        raise ReportError(f"sources named alike ({', '.join(names)}): give each its own --label")
    per_source = [find_jobs(Path(p)) for p in paths]
    everyone = [j for jobs in per_source for j in jobs]
    common = set.intersection(*(set(j.overrides) for j in everyone)) if everyone else set()
    jobs, sources, num = [], [], 0
    for name, path, own in zip(names, paths, per_source):
        first = num
        for job in own:
            label = " ".join([f"{PREFIX}{name}", *(o for o in job.overrides if o not in common)])
            jobs.append(dataclasses.replace(job, num=num, label=label))
            num += 1
        sources.append({"source": name, "path": str(path), "kind": "run" if is_run(Path(path)) else "sweep",
                        "jobs": _span(first, num - 1), "its jobs": _span(own[0].num, own[-1].num) if own else "",
                        "ran": sum(j.ok for j in own), "failed": sum(not j.ok for j in own)})
    return jobs, sources


def _span(first: int, last: int) -> str:
    """'3' or '3–7'.

    >>> _span(3, 3), _span(0, 15)
    ('3', '0–15')
    """
    return str(first) if first == last else f"{first}–{last}"


def split_label(label: str) -> tuple[str, str]:
    """(source, the rest of the configuration) of a combined job's label.

    >>> split_label("source=ablation ablate=tiers"), split_label("source=run#2")
    (('ablation', 'ablate=tiers'), ('run#2', ''))
    """
    head, _, rest = str(label).partition(" ")
    return head[len(PREFIX):] if head.startswith(PREFIX) else "", rest


def source_lines(sources: list[dict]) -> list[str]:
    """The report's Sources section."""
    frame = pd.DataFrame(sources)
    return ["## Sources", "",
            "Each source is labelled by `--label` or else by its folder's name (`#1`, `#2`: folders of the same "
            "name, in the order given); its configurations are `source=NAME` and the overrides that differ between "
            "the jobs of all "
            "the sources. Job numbers run on across the sources (`jobs`); `its jobs`: the same jobs' own numbers "
            "(their folders) in the source.", "",
            table(frame, ["source", "kind", "path", "jobs", "its jobs", "ran", "failed"]), ""]


def leaderboard(summary: pd.DataFrame) -> pd.DataFrame:
    """Every finished configuration, best first: by mean earned recall@k, then pass rate (higher
    first), then total cost per turn (lower first); equal recall and pass rate share a rank."""
    t = summary[summary["status"] == "ok"].copy()
    if t.empty:
        return t
    for c in ("recall", "pass_rate", "cost_per_turn"):
        t[f"_{c}"] = pd.to_numeric(t[c], errors="coerce").round(4) if c in t else float("nan")
    t = t.sort_values(["_recall", "_pass_rate", "_cost_per_turn"], ascending=[False, False, True],
                      na_position="last", kind="stable")
    key = list(zip(t["_recall"].fillna(-1), t["_pass_rate"].fillna(-1)))
    t["rank"] = [1 + key.index(k) for k in key]      # the first row with the same key: shared rank
    parts = t["config"].map(split_label)
    t["source"], t["config"] = parts.map(lambda p: p[0]), parts.map(lambda p: p[1] or "(as run)")
    return t.drop(columns=[c for c in t.columns if c.startswith("_")])


def leaderboard_lines(summary: pd.DataFrame) -> list[str]:
    """The report's Leaderboard section ([] when no configuration finished)."""
    board = leaderboard(summary)
    if board.empty:
        return []
    columns = [c for c in BOARD_COLUMNS if c in board]
    return ["## Leaderboard (every source)", "",
            "Every configuration of every source, ranked by mean earned recall@k, then pass rate, then total cost per "
            "turn (lower first); the same rank means the same recall and pass rate. A rank orders means only: "
            "whether two configurations differ is the paired tests' call (below).", "",
            table(with_intervals(board, ["recall", "pass_rate", "scored", "cost_per_turn", "tokens"]), columns), ""]
