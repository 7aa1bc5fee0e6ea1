"""Saved results: ``results.parquet``, what the systems returned, one row per record.

Every metric (``metrics.csv``, ``summary.json``, the evidence tables) is computed from this
file and the scenarios alone (``mtsbench.evaluation.evaluate``), so a new metric needs no re-run:
``mtsbench evaluate RUN_DIR``. Records, in the order they were made (``seq``):

- ``observe`` / ``probe`` / ``idle`` / ``tick``: one per step, with the step's own cost;
  an observation's labelled ``score`` (``unsupported`` when the system labels nothing); a probe's ranking — ``ranked_ids``,
  ``ranked_scores``, ``ranked_provenance`` (the steps each memory stands for),
  ``ranked_tokens`` (its text length), ``ranked_earned`` (on a probe: the provenance steps
  each memory's text carries, ``mtsbench.evaluation.credit``; empty when the system shows no texts),
  ``used_relevance`` (the used memories' relevance without the attention term, when the
  system reports it) —
  as deep as the run's evaluation depths, of which the first ``used`` were used; and what
  ``mtsbench show`` lists of it, each where the system tells it: ``ranked_texts`` (each
  memory's text, cut to ``TEXT_CUT`` characters), ``ranked_tiers``, ``ranked_relevance`` and
  ``ranked_attention`` (the terms of each score), ``visible`` (memories the search could see)
  and ``held`` (memories held); ``text``, the probe's question;
- ``reply``: under ``workload=reply``, the retrieval a user turn's reply made (cost and
  ranking as a probe's), right after its turn's ``observe`` record;
- ``check``: the state value a check read (``check_no``: its position in the step's
  checks; ``value``: JSON), or ``unsupported``; made when the check is judged (an
  ``event_count`` check once every step before it has been summarized);
- ``event``: the provenance of the event memory holding an observed step (``value``), made
  once that step has been summarized.

The file's metadata holds the run's config and chosen options, per scenario its file
and totals (LLM use per task, background processes, memories held), and the run's
``status`` (``running`` while it runs, then ``complete``, ``interrupted`` or ``failed``)
with the scenarios planned and done (``mtsbench.harness.finish.RunWriter``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.costs import STEP_COSTS
from ..systems.base import TEXT_CUT, UNSUPPORTED, Outcome, Ranking

FILE = "results.parquet"
COST_COLUMNS = list(STEP_COSTS)
STEP_RECORDS = ("observe", "probe", "idle", "tick", "reply")   # the records that carry a step's own work

SCHEMA = pa.schema([
    ("scenario", pa.string()), ("seq", pa.int64()), ("index", pa.int64()), ("step", pa.string()),
    ("kind", pa.string()), ("record", pa.string()), ("check_no", pa.int64()), ("value", pa.string()),
    ("unsupported", pa.bool_()), ("score", pa.float64()), ("used", pa.int64()),
    ("ranked_ids", pa.list_(pa.int64())), ("ranked_scores", pa.list_(pa.float64())),
    ("ranked_provenance", pa.list_(pa.list_(pa.string()))), ("ranked_tokens", pa.list_(pa.int64())),
    ("ranked_earned", pa.list_(pa.list_(pa.string()))), ("used_relevance", pa.list_(pa.float64())),
    *((c, pa.int64()) for c in COST_COLUMNS), ("latency_ms", pa.float64()),
    # a probe's ranking for inspection (mtsbench show): texts cut, tiers, score terms, memories visible and held
    ("ranked_texts", pa.list_(pa.string())), ("ranked_tiers", pa.list_(pa.int64())),
    ("ranked_relevance", pa.list_(pa.float64())), ("ranked_attention", pa.list_(pa.float64())),
    ("visible", pa.int64()), ("held", pa.int64()), ("text", pa.string()),
    # a probe's answer (mtsbench.evaluation.answer; empty unless answer.enabled and the probe has a gold answer)
    ("answer", pa.string()), ("answer_f1", pa.float64()), ("answer_proxy", pa.float64()), ("judge", pa.float64()),
])


class Recorder:
    """Collects one scenario's records."""

    def __init__(self, scenario: str):
        self.scenario = scenario
        self.rows: list[dict] = []

    def _add(self, step, record: str, outcome: Outcome, **fields) -> None:
        c = outcome.cost
        row = {"scenario": self.scenario, "seq": len(self.rows), "index": step.index, "step": step.id,
               "kind": step.kind, "record": record, "check_no": None, "value": None, "unsupported": False,
               "score": None, "used": None, "ranked_ids": None, "ranked_scores": None,
               "ranked_provenance": None, "ranked_tokens": None, "ranked_earned": None,
               "used_relevance": None, **dict.fromkeys(INSPECT_COLUMNS), "text": None,
               **{k: int(getattr(c, k)) for k in COST_COLUMNS}, "latency_ms": float(c.latency_ms),
               "answer": None, "answer_f1": None, "answer_proxy": None, "judge": None}
        row.update(fields)
        self.rows.append(row)

    def step(self, step, outcome: Outcome, record: str | None = None, labels: bool = True) -> None:
        """The step's own record (observe, probe, idle or tick; ``record`` reply: its turn's
        reply retrieval); ``labels`` False: the system rates nothing, so an observation's
        record is ``unsupported`` (its attention expectation does not apply)."""
        record = record or {"say": "observe", "reply": "observe", "perceive": "observe",
                            "check": "tick"}.get(step.kind, step.kind)
        fields = {}
        if record == "observe" and not labels:
            fields["unsupported"] = True
        if outcome.score is not None:
            fields["score"] = float(outcome.score)
        r = outcome.ranking
        if r is not None:
            fields.update(used=r.used, ranked_ids=[int(i) for i in r.ids], ranked_scores=[float(s) for s in r.scores],
                          ranked_provenance=[list(p) for p in r.provenance], ranked_tokens=[int(t) for t in r.tokens],
                          ranked_earned=None if r.earned is None else [list(p) for p in r.earned],
                          used_relevance=None if r.relevance is None else [float(x) for x in r.relevance],
                          **inspection(r))
        if outcome.answer is not None:
            fields.update(outcome.answer)
        if record == "probe":
            fields["text"] = step.text
        self._add(step, record, outcome, **fields)

    def state(self, step, outcome: Outcome, record: str, value, check_no: int | None = None) -> None:
        """A state value read for a check (``record`` check) or an event (``record`` event)."""
        if value is UNSUPPORTED:
            self._add(step, record, outcome, check_no=check_no, unsupported=True)
        else:
            self._add(step, record, outcome, check_no=check_no, value=json.dumps(value))


INSPECT_COLUMNS = ("ranked_texts", "ranked_tiers", "ranked_relevance", "ranked_attention", "visible", "held")


def inspection(r: Ranking) -> dict:
    """The columns ``mtsbench show`` lists of ranking ``r`` (None where the system gave none).

    >>> inspection(Ranking(ids=[1], texts=["x" * 500], terms={"relevance": [0.5]}, held=3))["ranked_texts"][0][-3:]
    'xx…'
    """
    terms = r.terms or {}
    floats = {f"ranked_{t}": None if terms.get(t) is None else [float(x) for x in terms[t]]
              for t in ("relevance", "attention")}
    return {"ranked_texts": None if r.texts is None else [cut(t) for t in r.texts],
            "ranked_tiers": None if r.tiers is None else [int(t) for t in r.tiers], **floats,
            "visible": r.visible, "held": r.held}


def cut(text: str, most: int = TEXT_CUT) -> str:
    """``text`` on one line, at most ``most`` characters (an ellipsis marks a cut).

    >>> cut("a   b"), cut("abcdef", 4)
    ('a b', 'abc…')
    """
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[: most - 1] + "…"


def save(path: Path, rows: list[dict], meta: dict) -> None:
    """Write the records with ``meta`` (config, choices, scenarios, status) in the file's
    metadata, atomically (``mtsbench.outputs.atomic``: never a truncated file; ``OutputError``)."""
    from .atomic import write_atomic

    for i, row in enumerate(rows):
        row["seq"] = i
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    table = table.replace_schema_metadata({"mtsbench": json.dumps(meta, default=_json)})
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    write_atomic(path, buffer.getvalue().to_pybytes())


def load(path: Path) -> tuple[pd.DataFrame, dict]:
    """The records (a DataFrame, in ``seq`` order) and the metadata of a results file."""
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"mtsbench"])
    records = table.to_pandas().sort_values("seq", kind="stable").reset_index(drop=True)
    for column in COST_COLUMNS:     # a file saved before a counter existed: that work was 0
        if column not in records:
            records[column] = 0
    return records, meta


def _json(x):
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
