"""What a probe ranked, from a finished run's files: ``mtsbench show RUN [--probe STEP]``.

``listing`` gives a run's probes, one line each: earned recall at k, recall by provenance
alone, the memories the search scored, could see (the members of the tiers it searched) and
the memories held — a probe that passed because the search saw two memories stands out.
``ranking`` gives one probe: its question, evidence and expectations, then one line per
ranked memory — rank, whether the probe used it, score and its terms (the seed design's
relevance and attention), tier, the evidence steps it earns (its text carries them) and those
its provenance names, and its text, cut. ``html_section`` is the same for every probe of a
run as the HTML report's *Probes* section (one foldable block per probe).

Only ``results.parquet`` and ``metrics.csv`` are read, with pyarrow and the csv module (no
pandas, no scenario file): a probe of a finished run shows in well under two seconds. A value
the system did not report (a plug-in without tiers, a run saved before these columns) shows
as ``-``.
"""

from __future__ import annotations

import csv
import difflib
import html
import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import ReportError

RESULTS, METRICS = "results.parquet", "metrics.csv"
COLUMNS = ["scenario", "index", "step", "used", "ranked_ids", "ranked_scores", "ranked_provenance",
           "ranked_earned", "ranked_texts", "ranked_tiers", "ranked_relevance", "ranked_attention", "ranked_tokens",
           "visible", "held", "text", "scored", "tiers_searched"]
TOP = 10


@dataclass
class Probe:
    """One probe's saved record (``results.parquet``) and metric rows (``metrics.csv``)."""

    record: dict
    rows: list[dict]

    @property
    def head(self) -> dict:
        return next((r for r in self.rows if r["check"] == "probe"), {})

    @property
    def evidence(self) -> list[str]:
        return (self.head.get("expected") or "").split()

    @property
    def k(self) -> int:
        return int(float(self.head.get("k") or len(self.record.get("ranked_ids") or ())))


def _run_dir(run: Path) -> Path:
    run = Path(run)
    if (run / RESULTS).is_file():
        return run
    jobs = sorted(p.name for p in run.iterdir() if (p / RESULTS).is_file()) if run.is_dir() else []
    if jobs:
        raise ReportError(f"{run}: not one run but a folder of {len(jobs)} ({', '.join(jobs[:8])}"
                          f"{', ...' if len(jobs) > 8 else ''}): name one, e.g. mtsbench show {run / jobs[0]}")
    raise ReportError(f"{run}: no {RESULTS} here; expected a finished run folder (outputs/DATE/TIME)")


def _records(run: Path, step: str | None = None) -> list[dict]:
    """The probe records of the run (of ``step`` only when given), as dicts. pyarrow's parquet
    file reader and zero-copy slices only: its dataset reader and compute kernels import pandas,
    which would take most of the command's time."""
    import pyarrow.parquet as pq

    file = pq.ParquetFile(run / RESULTS)
    names = set(file.schema_arrow.names)
    keys = file.read(columns=["record", "step"])
    rows = [i for i, (record, s) in enumerate(zip(keys.column("record").to_pylist(), keys.column("step").to_pylist()))
            if record == "probe" and (step is None or s == step)]
    table = file.read(columns=[c for c in COLUMNS if c in names])
    return [table.slice(i, 1).to_pylist()[0] for i in rows]


def _metrics(run: Path, step: str | None = None) -> list[dict]:
    """metrics.csv's probe rows and expectation rows (of ``step`` only when given)."""
    path = run / METRICS
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["check"] != "llm" and (step is None or r["step"] == step)]


def find(run: Path, step: str, scenario: str | None = None) -> Probe:
    """Probe ``step`` of run folder ``run`` (``scenario`` when several have such a step);
    ``ReportError`` in one line naming what there is instead."""
    run = _run_dir(run)
    found = [r for r in _records(run, step) if scenario is None or r["scenario"] == scenario]
    if not found:
        steps = sorted({r["step"] for r in _records(run)})
        close = difflib.get_close_matches(step, steps, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f" (its probes: {', '.join(steps[:10])}" \
            + (", ...)" if len(steps) > 10 else ")")
        raise ReportError(f"{run}: no probe '{step}'" + (f" in scenario {scenario}" if scenario else "") + hint)
    scenarios = sorted({r["scenario"] for r in found})
    if len(scenarios) > 1:
        raise ReportError(f"{run}: probe '{step}' is in {len(scenarios)} scenarios ({', '.join(scenarios)}); "
                          f"add --scenario NAME")
    rows = [r for r in _metrics(run, step) if r["scenario"] == scenarios[0]]
    return Probe(found[0], rows)


def _num(value, digits: int = 3) -> str:
    if value is None or value == "" or value != value:     # None, empty cell, NaN
        return "-"
    return f"{float(value):.{digits}f}"


def _count(value) -> str:
    return "-" if value is None else f"{int(value):,}"


def summary_lines(p: Probe) -> list[str]:
    """The probe's question, search and evidence, in words."""
    r, head = p.record, p.head
    lines = [f"probe {r['step']} of {r['scenario']} (step {r['index']}): {json.dumps(r.get('text') or '')}",
             f"search: scored {_count(r.get('scored'))} memories in {_count(r.get('tiers_searched'))} tier(s); it "
             f"could see {_count(r.get('visible'))} of the {_count(r.get('held'))} memories held; k = {p.k}, "
             f"{len(r.get('ranked_ids') or ())} ranked"]
    if p.evidence:
        lines.append(f"evidence: {' '.join(p.evidence)}; earned recall@k {_num(head.get('recall'))}, by provenance "
                     f"alone {_num(head.get('recall_provenance@k'))}")
    checks = [f"{row['check']} {'passed' if row['passed'] == 'True' else 'failed'}"
              for row in p.rows if row["check"] in ("recall", "absent") and row.get("passed") in ("True", "False")]
    if checks:
        lines.append("expectations (by provenance): " + ", ".join(checks))
    return lines


def table_rows(p: Probe, top: int) -> list[dict]:
    """One dict per ranked memory (the first ``top``, at least k): what ``ranking`` prints."""
    r, wanted = p.record, set(p.evidence)
    ids = r.get("ranked_ids") or []
    used = len(ids) if r.get("used") is None else int(r["used"])

    def at(column, i):
        values = r.get(column)
        return None if values is None or i >= len(values) else values[i]

    rows = []
    for i in range(min(len(ids), max(top, p.k))):
        earned = at("ranked_earned", i)
        rows.append({"rank": i + 1, "used": "*" if i < used else "", "id": ids[i],
                     "score": _num(at("ranked_scores", i)), "relevance": _num(at("ranked_relevance", i)),
                     "attention": _num(at("ranked_attention", i), 2),
                     "tier": "-" if at("ranked_tiers", i) is None else str(at("ranked_tiers", i)),
                     "earns": "-" if earned is None else " ".join(s for s in earned if s in wanted) or "",
                     "names": " ".join(s for s in at("ranked_provenance", i) or () if s in wanted),
                     "tokens": _count(at("ranked_tokens", i)), "text": at("ranked_texts", i) or "-"})
    return rows


HEAD = ["rank", "used", "id", "score", "relevance", "attention", "tier", "earns", "names", "tokens", "text"]


def ranking(run: Path, step: str, scenario: str | None = None, top: int = TOP) -> str:
    """``mtsbench show RUN --probe STEP``: the probe in words, then its ranking as a table."""
    p = find(run, step, scenario)
    rows = table_rows(p, top)
    widths = {c: max([len(c), *(len(str(row[c])) for row in rows)]) for c in HEAD[:-1]}
    lines = [*summary_lines(p), "",
             "earns: the evidence steps the memory's text carries (earned credit); names: those its provenance names; "
             "used *: among the k the probe used", "",
             "  ".join(c.rjust(widths[c]) for c in HEAD[:-1]) + "  text"]
    lines += ["  ".join(str(row[c]).rjust(widths[c]) for c in HEAD[:-1]) + "  " + row["text"] for row in rows]
    more = len(p.record.get("ranked_ids") or ()) - len(rows)
    if more > 0:
        lines.append(f"... {more} more ranked (--top N shows more)")
    return "\n".join(lines)


def listing(run: Path) -> str:
    """``mtsbench show RUN``: one line per probe of the run."""
    run = _run_dir(run)
    seen = {(r["scenario"], r["step"]): r for r in _records(run)}
    heads = [m for m in _metrics(run) if m["check"] == "probe"]
    head = ["scenario", "step", "k", "recall", "recall_provenance@k", "scored", "visible", "held"]
    rows = []
    for m in heads:
        rec = seen.get((m["scenario"], m["step"]), {})
        rows.append([m["scenario"], m["step"], m.get("k") or "-", _num(m.get("recall")),
                     _num(m.get("recall_provenance@k")), _count(rec.get("scored")), _count(rec.get("visible")),
                     _count(rec.get("held"))])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = ["  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in [head, *rows]]
    return "\n".join([f"{len(rows)} probes of {run} (recall: earned, at each probe's k; visible: memories the search "
                      "could see; mtsbench show RUN --probe STEP lists what one ranked):", *lines])


def html_section(run: Path, top: int = TOP, most: int = 2000) -> str:
    """The HTML report's Probes section: per probe (at most ``most``), a foldable block with its
    summary and its ranking; '' for a run without saved probes."""
    run = _run_dir(run)
    metrics = _metrics(run)
    blocks = []
    for rec in _records(run)[:most]:
        p = Probe(rec, [m for m in metrics if m["scenario"] == rec["scenario"] and m["step"] == rec["step"]])
        rows = table_rows(p, top)
        th = "".join(f"<th>{c}</th>" for c in HEAD)
        trs = "".join("<tr>" + "".join(f"<td>{html.escape(str(row[c]))}</td>" for c in HEAD) + "</tr>" for row in rows)
        title = f"{rec['scenario']} / {rec['step']}: earned recall@k {_num(p.head.get('recall'))}, scored " \
                f"{_count(rec.get('scored'))}, could see {_count(rec.get('visible'))} of {_count(rec.get('held'))}"
        text = "<br>".join(html.escape(line) for line in summary_lines(p))
        blocks.append(f"<details><summary>{html.escape(title)}</summary><p>{text}</p><div class=\"wrap\">"
                      f"<table class=\"sortable\"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table></div>"
                      "</details>")
    if not blocks:
        return ""
    return ("<h2>Probes</h2><p>What each probe ranked (as <code>mtsbench show RUN --probe STEP</code>): earns = the "
            "evidence steps a memory's text carries, names = those its provenance names, used * = among the k the "
            "probe used.</p>" + "\n".join(blocks))
