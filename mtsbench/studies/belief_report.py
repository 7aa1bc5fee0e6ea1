"""The belief study's measurements, from saved runs (``WORK/runs/NAME``), the silver scenario files
(``WORK/data/targets_silver``: which messages are each question's statements) and the cassettes'
line counts and wall times; nothing of the data set's text.

- ``category_rows``: per run, haystack size, scope (all targets; the held-out half) and category
  (the plan's: knowledge update, contradiction resolution): the probes with evidence,
  ``later_above@1024t`` (the updated or second statement ranked above the first, where both are
  within 1,024 tokens; n), ``later_wins@1024t`` (the unconditional view) and earned
  ``recall@1024t`` with 95% bootstrap intervals over probes, ``recall_all@1024t``; where the
  model answered, the answers judged correct (95% interval) and their token F1.
- ``paired_rows``: B - A per probe (same chat, size and question) for each run against its
  ``base`` and the plan's ``pairs``: the mean, a 95% paired bootstrap interval
  (``locomo_report.paired_diff``) and the sign-flip p (``report.paired.sign_flip_p``).
- ``path_rows``: what consolidation did to each question's two statements in a silver run and
  what reached its probe: whether the contradiction was found (a ``contradicted`` trace event
  between the question's facts; their key is ``silver.<chat>.<probe>``), which statement lost,
  its belief before and after and the attention share it kept, and at the probe the loser
  fact's rank, the loser statement's best rank (any memory earning it: its turn, a summary, the
  fact) and the winner's, with consolidation and without (the same probe of the paired run).
- ``extraction_rows``: the real extractor against the oracle on each sample chat: the
  messages the model read (the user messages of the summarized batches holding a statement),
  the oracle's statements it stated a fact from (a model fact whose provenance names the
  message), the oracle's contradictions it found (a ``contradicted`` event between facts from
  the two statements of one question) and the contradictions it found between anything else.
- ``cassette_cost``: per cassette, the model's calls and tokens per task and the seconds per
  call of its recording (wall time over calls; the load average beside it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import ReportError
from ..report.intervals import bootstrap
from ..report.paired import sign_flip_p
from ..scenario.loader import load_scenario
from .beam_report import Saved, paired
from .locomo_report import paired_diff

HEADLINE = 1024
MEASURES = (f"later_above@{HEADLINE}t", f"later_wins@{HEADLINE}t", f"recall@{HEADLINE}t", f"recall_all@{HEADLINE}t",
            "judge", "answer_f1")


def _values(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame:
        return np.zeros(0)
    return pd.to_numeric(frame[column], errors="coerce").dropna().to_numpy(dtype=float)


def _with_ci(prefix: str, values: np.ndarray) -> dict:
    mean, lo, hi = bootstrap([values]) if values.size else (np.nan,) * 3
    return {prefix: mean, f"{prefix}_lo": lo, f"{prefix}_hi": hi, f"{prefix}_n": int(values.size)}


def load_runs(plan: dict, runs: Path) -> dict[str, Saved]:
    """Each planned run that finished (a run left out for want of its cassette is not there)."""
    saved = {}
    for run in plan["runs"]:
        folder = runs / run["name"]
        if (folder / "summary.json").exists():
            saved[run["name"]] = Saved(folder)
    if not saved:
        raise ReportError(f"{runs}: no finished run of the plan (run the study first)")
    return saved


def category_rows(plan: dict, saved: dict[str, Saved]) -> pd.DataFrame:
    """Per run, size, scope and category: the module docstring's figures."""
    rows, tune = [], set(plan["tune"])
    for name, s in saved.items():
        every = set(s.probes["chat"])
        for scope, chats in (("all", every), ("held_out", every - tune)):
            for size in s.sizes:
                at = s.probes[(s.probes["size"] == size) & s.probes["chat"].isin(chats)]
                for category in plan["categories"]:
                    c = at[(at["category"].astype(str) == category) & (at["abstain"].astype(str) != "True")]
                    c = c[pd.to_numeric(c[f"recall@{HEADLINE}t"], errors="coerce").notna()]
                    if c.empty:
                        continue
                    row = {"run": name, "size": size, "scope": scope, "category": category, "probes": len(c)}
                    for column, prefix in ((f"later_above@{HEADLINE}t", "later_above"),
                                           (f"later_wins@{HEADLINE}t", "later_wins"),
                                           (f"recall@{HEADLINE}t", "recall"), ("judge", "judged_correct")):
                        row |= _with_ci(prefix, _values(c, column))
                    row["recall_all"] = float(np.mean(_values(c, f"recall_all@{HEADLINE}t"))) \
                        if _values(c, f"recall_all@{HEADLINE}t").size else np.nan
                    f1 = _values(c, "answer_f1")
                    row["answer_f1"] = float(f1.mean()) if f1.size else np.nan
                    rows.append(row)
    return pd.DataFrame(rows)


def comparisons(plan: dict, saved: dict[str, Saved]) -> list[tuple[str, str]]:
    """(A, B) pairs to compare, B - A: every run against its base, the plan's pairs; the
    ``path`` pair (consolidation on, off) reads on - off, once, whichever way its base runs.

    >>> plan = {"runs": [{"name": "on"}, {"name": "off", "base": "on"}, {"name": "x", "base": "on"}],
    ...         "pairs": [["off", "on"], ["y", "on"]], "path": ["on", "off"]}
    >>> comparisons(plan, {"on": 1, "off": 1, "x": 1})
    [('off', 'on'), ('on', 'x')]
    """
    out = [(r["base"], r["name"]) for r in plan["runs"] if r.get("base")]
    if plan.get("path"):
        on, off = plan["path"]
        out = [(off, on)] + [p for p in out if p != (on, off)]
    out += [p for p in (tuple(p) for p in plan.get("pairs", [])) if p not in out]
    return [(a, b) for a, b in out if a in saved and b in saved]


def paired_rows(plan: dict, saved: dict[str, Saved]) -> pd.DataFrame:
    """B - A per probe for each comparison, size, scope and category (module docstring)."""
    rows, tune = [], set(plan["tune"])
    for a, b in comparisons(plan, saved):
        every = set(saved[a].probes["chat"]) & set(saved[b].probes["chat"])
        for size in sorted(set(saved[a].sizes) & set(saved[b].sizes)):
            for scope, chats in (("all", every), ("held_out", every - tune)):
                for column in MEASURES:
                    if column not in saved[a].probes or column not in saved[b].probes:
                        continue
                    both = paired(saved[a], saved[b], column, chats, size)
                    for category in plan["categories"]:
                        p = both[both["category"].astype(str) == category].dropna(subset=[column, f"{column}_base"])
                        if p.empty:
                            continue
                        mean, lo, hi = paired_diff(p[f"{column}_base"], p[column])
                        rows.append({"a": a, "b": b, "size": size, "scope": scope, "category": category,
                                     "measure": column, "n": len(p), "diff": mean, "lo": lo, "hi": hi,
                                     "p": sign_flip_p((p[column] - p[f"{column}_base"]).to_numpy())})
    return pd.DataFrame(rows)


def statements(targets: Path, categories: list[str]) -> dict[str, dict[str, list[tuple[str, ...]]]]:
    """chat -> probe -> its statements' steps in role order, for the questions of ``categories``
    (read from the silver scenario files)."""
    out: dict[str, dict[str, list[tuple[str, ...]]]] = {}
    for path in sorted(Path(targets).glob("*.yaml")):
        s = load_scenario(path)
        out[s.id] = {x.id: [ids for _, ids in x.expect.recall_roles] for x in s.steps
                     if x.kind == "probe" and x.category in categories and len(x.expect.recall_roles) >= 2}
    return out


def trace_of(folder: Path, scenario: str) -> list[tuple[str, dict]]:
    """(event, fields) of one scenario's trace, in order."""
    t = pd.read_parquet(folder / "trace.parquet", filters=[("scenario", "==", scenario)])
    return [(e, json.loads(f) if isinstance(f, str) else dict(f)) for e, f in zip(t["event"], t["fields"])]


def _facts(trace: list[tuple[str, dict]], key: str | None = None) -> dict[int, dict]:
    """id -> created fields of the facts of a trace (of one key, when given)."""
    return {f["id"]: f for e, f in trace if e == "created" and f.get("kind") == "fact"
            and (key is None or f.get("key") == key)}


def _probe_rankings(folder: Path) -> dict[tuple[str, str], tuple[list, list, list]]:
    """(scenario, probe) -> (ranked ids, what each earns, each one's tokens) of a run's probes."""
    from ..outputs.results import load

    records, _ = load(folder / "results.parquet")
    probes = records[records["record"] == "probe"]
    return {(r.scenario, r.step): (list(r.ranked_ids), [set(e) for e in r.ranked_earned], list(r.ranked_tokens))
            for r in probes.itertuples() if r.ranked_ids is not None and r.ranked_earned is not None}


def _best(ranking: tuple[list, list, list] | None, steps) -> tuple[int | None, bool | None]:
    """(best 1-based rank of a memory earning one of ``steps``, whether it is within HEADLINE tokens)."""
    if ranking is None:
        return None, None
    ids, earned, tokens = ranking
    spent = np.cumsum(tokens) if tokens else np.zeros(0)
    for n, e in enumerate(earned):
        if e & set(steps):
            return n + 1, bool(spent[n] <= HEADLINE)
    return None, False


def path_rows(on: Path, off: Path, told: dict[str, dict[str, list[tuple[str, ...]]]]) -> pd.DataFrame:
    """Per question of each target of run ``on`` (consolidation on) and its pair ``off``: the
    module docstring's path from consolidation to the probe's ranking."""
    rank_on, rank_off = _probe_rankings(on), _probe_rankings(off)
    rows = []
    for sid in sorted({s for s, _ in rank_on}):
        chat = sid.rpartition("_h")[0]
        trace = trace_of(on, sid)
        for probe, roles in told.get(chat, {}).items():
            key = f"silver.{chat}.{probe}"
            facts = _facts(trace, key)
            lost = [f for e, f in trace if e == "contradicted" and f["loser"] in facts and f["winner"] in facts]
            row = {"scenario": sid, "probe": probe, "facts": len(facts), "found": bool(lost)}
            if lost:
                first = lost[0]
                loser_role = int(str(facts[first["loser"]]["value"]).split()[-1])
                loser, winner = roles[loser_role - 1], roles[2 - loser_role]
                row |= {"contradictions": len(lost), "loser_role": loser_role, "belief_before": first["belief"][0],
                        "belief_after": first["belief"][1], "kept_attention": first["keep"]}
                for tag, ranks in (("on", rank_on), ("off", rank_off)):
                    ranking = ranks.get((sid, probe))
                    ids = ranking[0] if ranking else []
                    row[f"loser_fact_rank_{tag}"] = ids.index(first["loser"]) + 1 if first["loser"] in ids else None
                    row[f"loser_rank_{tag}"], row[f"loser_in_budget_{tag}"] = _best(ranking, loser)
                    row[f"winner_rank_{tag}"], row[f"winner_in_budget_{tag}"] = _best(ranking, winner)
            rows.append(row)
    return pd.DataFrame(rows)


def _kinds(targets: Path) -> dict[str, tuple[dict[str, str], set[str]]]:
    """chat -> (step id -> kind, the steps carrying fact hints) of the silver scenario files."""
    out = {}
    for path in sorted(Path(targets).glob("*.yaml")):
        s = load_scenario(path)
        out[s.id] = ({x.id: x.kind for x in s.steps}, {x.id for x in s.steps if x.hints.facts})
    return out


def extraction_rows(folder: Path, targets: Path, told: dict[str, dict[str, list[tuple[str, ...]]]]) -> pd.DataFrame:
    """Per sample chat of the extractor run: the module docstring's agreement with the oracle."""
    kinds = _kinds(targets)
    scenarios = pd.read_parquet(folder / "trace.parquet", columns=["scenario"])["scenario"].unique()
    rows = []
    for sid in sorted(scenarios):
        chat = sid.rpartition("_h")[0]
        kind, hinted = kinds[chat]
        trace = trace_of(folder, sid)
        window = {s for e, f in trace if e == "summarized" and hinted & set(f["steps"])
                  for s in f["steps"] if kind.get(s) == "say"}
        facts = _facts(trace)
        stated = {s for f in facts.values() for s in f["steps"]}
        pairs = [(set(facts[f["loser"]]["steps"]), set(facts[f["winner"]]["steps"])) for e, f in trace
                 if e == "contradicted" and f["loser"] in facts and f["winner"] in facts]

        def meets(a: set, b: set, roles) -> bool:
            return bool((a & set(roles[0]) and b & set(roles[1])) or (a & set(roles[1]) and b & set(roles[0])))

        questions = told.get(chat, {})
        found = [q for q, roles in questions.items() if any(meets(a, b, roles) for a, b in pairs)]
        false = [p for p in pairs if not any(meets(*p, roles) for roles in questions.values())]
        rows.append({"scenario": sid, "window_messages": len(window), "oracle_statements": len(hinted),
                     "statements_extracted": len(hinted & stated), "model_facts": len(facts),
                     "oracle_contradictions": len(questions), "contradictions_found": len(found),
                     "false_contradictions": len(false),
                     "merges": sum(1 for e, _ in trace if e == "merged")})
    return pd.DataFrame(rows)


def cassette_cost(folder: Path, name: str) -> dict | None:
    """The model's calls, failures and tokens per task in run ``name``'s cassette, and the seconds
    per call of its recording (None without a cassette)."""
    path = Path(folder) / f"{name}.jsonl"
    if not path.is_file():
        return None
    tasks: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        t = tasks.setdefault(record["task"], {"calls": 0, "failed": 0, "prompt_tokens": 0, "completion_tokens": 0})
        t["calls"] += 1
        response = record.get("response") or {}
        t["failed"] += int("error" in record)
        t["prompt_tokens"] += int(response.get("prompt_tokens", 0))
        t["completion_tokens"] += int(response.get("completion_tokens", 0))
    wall_file = Path(folder) / f"{name}.wall.json"
    wall = json.loads(wall_file.read_text()) if wall_file.is_file() else {}
    calls = sum(t["calls"] for t in tasks.values())
    return {"tasks": tasks, "calls": calls, "wall_s": wall.get("wall_s"), "model": wall.get("model"),
            "s_per_call": wall["wall_s"] / calls if calls and wall.get("wall_s") else None,
            "load_average": wall.get("load_average")}
