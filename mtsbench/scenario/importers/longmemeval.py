"""LongMemEval (oracle, S or M file) -> one scenario per question.

- Sessions: the haystack sessions sorted by ``haystack_dates`` (``2023/05/20 (Sat) 02:21``;
  stable, so sessions of one date keep their order; the oracle file is unsorted, counted),
  turns ``turn_gap`` seconds apart, squeezed if a session would run into the next one.
- Turns: the official turn ids ``<session_id>_<index+1>``, the index counted over all
  turns of the session. ``turns="all"`` (default) imports user turns as ``say`` and
  assistant turns as ``reply`` steps: the agent remembers both sides, and the
  single-session-assistant questions have their evidence in assistant turns.
  ``turns="user"`` imports user turns only, as the official retrieval scoring indexes
  them (evidence in assistant turns is then dropped, counted).
- The question: a ``probe`` at ``question_date`` (never before the last turn: moved and
  counted if it is), ``category`` = ``question_type``, ``expect.recall`` = the imported
  turns with ``has_answer``, ``expect.recall_sessions`` = each answer session (from
  ``answer_session_ids``) with its imported turns, for session-level recall.
  Abstention questions (``question_id`` ending in ``_abs``) are ``abstain: true`` probes
  with neither. The answer of the others is kept as the probe's ``answer`` (scored with
  ``answer.enabled``, ``mtsbench.evaluation.answer``); every answer is kept as a comment.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, TypeAdapter

from .common import DataError, Tally, brief, each_item, fresh_id, iso, parse, scenario_id, spaced, step_id_ok
from .registry import Importer, register
from .writer import Draft

DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})\s*\(\w+\)\s*(\d{1,2}):(\d{2})")
TURNS = ("all", "user")


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Turn(_Loose):
    role: Literal["user", "assistant"]
    content: StrictStr
    has_answer: StrictBool = False


class Question(_Loose):
    question_id: StrictStr
    question_type: StrictStr
    question: StrictStr
    answer: Union[StrictStr, StrictInt, StrictFloat]
    question_date: StrictStr
    haystack_session_ids: list[StrictStr]
    haystack_dates: list[StrictStr]
    haystack_sessions: list[list[Turn]]
    answer_session_ids: list[StrictStr] = []


_QUESTION = TypeAdapter(Question)


def parse_date(value: str, where: str) -> datetime:
    """``2023/05/20 (Sat) 02:21`` as a datetime (the weekday is not checked).

    >>> parse_date("2023/05/20 (Sat) 02:21", "x")
    datetime.datetime(2023, 5, 20, 2, 21)
    """
    m = DATE.fullmatch(value.strip())
    try:
        if m:
            return datetime(*map(int, m.groups()))
    except ValueError:   # a day or hour out of range
        pass
    raise DataError(f"{where}: expected a date such as '2023/05/20 (Sat) 02:21', got {brief(value)}")


def convert(path: Path, turns: str = "all", turn_gap: float = 60.0, k: int | None = None,
            motivation: float | None = None, limit: int | None = None) -> tuple[list[Draft], Tally]:
    """Drafts of every question of a LongMemEval file, and the tally of what was repaired."""
    if turns not in TURNS:
        raise DataError(f"--turns: expected one of {', '.join(TURNS)}, got {brief(turns)}")
    tally = Tally()
    drafts = each_item(path, "question", "question_id", limit, lambda item, where: _question(
        parse(_QUESTION, item, where), where, path, tally, turns, turn_gap, k, motivation))
    return drafts, tally


def _arguments(parser) -> None:
    parser.add_argument("--turns", choices=TURNS, default="all",
                        help="all: user turns as say and assistant turns as reply steps (default); user: user turns "
                             "only, as the official retrieval scoring indexes them")


register(Importer("longmemeval", "LongMemEval (oracle, S or M file)", "question", convert, _arguments, ("turns",)))


def _question(q: Question, where: str, path: Path, tally: Tally, turns: str, turn_gap: float, k: int | None,
              motivation: float | None) -> Draft:
    n = len(q.haystack_sessions)
    if not (len(q.haystack_session_ids) == len(q.haystack_dates) == n):
        raise DataError(f"{where}: haystack_session_ids, haystack_dates and haystack_sessions: expected one entry "
                        f"per session in each, got {len(q.haystack_session_ids)}, {len(q.haystack_dates)} and {n}")
    if n == 0:
        raise DataError(f"{where}: haystack_sessions: expected at least one session, got []")
    dates = [parse_date(d, f"{where}: haystack_dates[{i}]") for i, d in enumerate(q.haystack_dates)]
    order = sorted(range(n), key=lambda i: dates[i])
    if order != list(range(n)):
        tally.repair("haystacks not in date order (sorted)", 1, q.question_id)
    abstain = q.question_id.endswith("_abs")
    draft = Draft(scenario_id("lme", q.question_id), f"LongMemEval {q.question_id} ({q.question_type})",
                  iso(dates[order[0]]), ["longmemeval", q.question_type],
                  f"LongMemEval question {q.question_id}, imported from {path.name} by `mtsbench import "
                  f"longmemeval` (turns: {turns}).\nTurn ids are <session_id>_<turn index + 1>; the question is "
                  "the last step.")
    evidence: list[str] = []
    by_session: dict[str, list[str]] = {}
    used: set[str] = set()
    last = dates[order[0]]
    for j, i in enumerate(order):
        sid = q.haystack_session_ids[i]
        if not step_id_ok(sid):
            raise DataError(f"{where}: haystack_session_ids[{i}]: expected letters, digits, '_', '.', ':' or '-', "
                            f"got {brief(sid)}")
        sid = fresh_id(sid, used, tally, "session")
        kept = [(t, turn) for t, turn in enumerate(q.haystack_sessions[i])
                if _keep(turn, turns, tally, f"{sid}_{t + 1}")]
        nxt = dates[order[j + 1]] if j + 1 < n else None
        start = max(dates[i], last)
        for (t, turn), at in zip(kept, spaced(start, len(kept), turn_gap, nxt if nxt and nxt > start else None)):
            step_id = f"{sid}_{t + 1}"
            draft.steps.append({"id": step_id, "at": iso(at), "say" if turn.role == "user" else "reply":
                                turn.content.strip()})
            by_session.setdefault(sid, []).append(step_id)
            if turn.has_answer:
                evidence.append(step_id)
            last = at
        tally.add("sessions")
        tally.add("turns", len(kept))
    asked = parse_date(q.question_date, f"{where}: question_date")
    if asked < last:
        tally.repair("questions dated before their last turn (asked right after it)", 1, q.question_id)
        asked = last
    step: dict = {"id": "question", "at": iso(asked), "probe": q.question.strip() or "(empty question)",
                  "category": q.question_type}
    expect: dict = {}
    tally.add(f"questions: {q.question_type}")
    if abstain:
        step["abstain"] = True
        tally.add("abstention questions (_abs: abstaining probes, no recall)")
    else:
        if evidence:
            expect["recall"] = evidence
        else:
            tally.repair("questions without evidence turns (no turn recall)", 1, q.question_id)
        sessions = {s: by_session[s] for s in dict.fromkeys(q.answer_session_ids) if s in by_session}
        missing = [s for s in q.answer_session_ids if s not in by_session]
        if missing:
            tally.repair("answer session ids naming no imported session dropped", len(missing), brief(missing[0]))
        if sessions:
            expect["recall_sessions"] = sessions
    if not abstain and str(q.answer).strip():
        step["answer"] = str(q.answer).strip()       # the gold answer, scored with answer.enabled
    draft.add_probe(step, expect, k, motivation, f"{q.question_type}{' (abstention)' if abstain else ''} "
                                                f"answer: {q.answer}")
    return draft


def _keep(turn: Turn, turns: str, tally: Tally, turn_id: str) -> bool:
    if turns == "user" and turn.role != "user":
        if turn.has_answer:
            tally.repair("evidence turns of the assistant not imported (--turns user)", 1, turn_id)
        return False
    if not turn.content.strip():
        tally.repair("empty turns dropped" + (" (evidence lost)" if turn.has_answer else ""), 1, turn_id)
        return False
    return True
