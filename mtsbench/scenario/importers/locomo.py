"""LoCoMo (``locomo10.json``) -> one scenario per conversation.

- Sessions: the ``session_<n>`` lists in order of n, each starting at its
  ``session_<n>_date_time`` (``1:56 pm on 8 May, 2023``); date keys without a session
  list are ignored (and counted). A session dated before the previous one is placed
  right after it (counted).
- Turns: ``say`` steps with id = the turn's ``dia_id`` and text ``SPEAKER: TEXT``, plus
  `` [shared an image: CAPTION]`` when the turn has a ``blip_caption``; both speakers
  are ``say`` steps (neither is the agent), the speaker is kept in the text so that a
  memory says who said it. Turns are ``turn_gap`` seconds apart, squeezed if a session
  would run into the next one.
- Questions: ``probe`` steps ``questions_after`` seconds after the last turn, one
  minute apart, with ``category`` by the official codes (1 multi-hop, 2 temporal,
  3 open-domain, 4 single-hop, 5 adversarial) and ``expect.recall`` = the cleaned
  evidence. Adversarial questions are ``abstain: true`` probes with no recall; questions
  left without evidence are probes without recall. The answer is kept as a comment.
- Evidence cleanup (each counted, with examples): entries holding several ids
  (``"D8:6; D9:17"``, space- or comma-separated) are split; ids not of the form
  ``D<session>:<turn>`` are dropped as malformed (``"D"``, ``"D:11:26"``); ids naming no
  turn of the conversation are dropped (``"D30:05"``: no leading-zero guessing);
  repeats within a question are dropped.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, TypeAdapter

from ...units import DAY
from .common import DataError, Tally, brief, each_item, fresh_id, iso, parse, scenario_id, spaced, step_id_ok
from .registry import Importer, duration, register
from .writer import Draft

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
SESSION = re.compile(r"session_(\d+)")
SESSION_DATE = re.compile(r"session_(\d+)_date_time")
EVIDENCE_ID = re.compile(r"D(\d+):(\d+)")


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Turn(_Loose):
    speaker: StrictStr
    dia_id: StrictStr
    text: StrictStr
    blip_caption: StrictStr | None = None


class QA(_Loose):
    question: StrictStr
    answer: Union[StrictStr, StrictInt, StrictFloat, None] = None
    adversarial_answer: Union[StrictStr, StrictInt, StrictFloat, None] = None
    evidence: list[Any] = []
    category: Literal[1, 2, 3, 4, 5]


class Conversation(_Loose):
    sample_id: StrictStr
    conversation: dict[str, Any]
    qa: list[QA]


class Speakers(_Loose):
    speaker_a: StrictStr
    speaker_b: StrictStr


_CONVERSATION = TypeAdapter(Conversation)
_SPEAKERS = TypeAdapter(Speakers)
_TURNS = TypeAdapter(list[Turn])


def convert(path: Path, turn_gap: float = 60.0, questions_after: float = DAY, k: int | None = None,
            motivation: float | None = None, limit: int | None = None) -> tuple[list[Draft], Tally]:
    """Drafts of every conversation of a LoCoMo file, and the tally of what was repaired."""
    tally = Tally()
    drafts = each_item(path, "conversation", "sample_id", limit, lambda item, where: _conversation(
        parse(_CONVERSATION, item, where), where, path, tally, turn_gap, questions_after, k, motivation))
    return drafts, tally


def _arguments(parser) -> None:
    parser.add_argument("--questions-after", type=duration, default=DAY, metavar="DURATION",
                        help="time from the last turn to the first question (default 1d); questions are 1m apart")


register(Importer("locomo", "LoCoMo (locomo10.json)", "conversation", convert, _arguments, ("questions_after",)))


def parse_date(value, where: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` as a datetime.

    >>> parse_date("1:56 pm on 8 May, 2023", "x")
    datetime.datetime(2023, 5, 8, 13, 56)
    """
    try:
        return datetime.strptime(str(value).strip(), DATE_FORMAT)
    except ValueError:
        raise DataError(f"{where}: expected a time such as '1:56 pm on 8 May, 2023', got {brief(value)}") from None


def _sessions(conv: dict, where: str, tally: Tally, sample: str) -> list[tuple[int, datetime, list[Turn]]]:
    numbers = sorted(int(m.group(1)) for key in conv if (m := SESSION.fullmatch(key)))
    dated = {int(m.group(1)) for key in conv if (m := SESSION_DATE.fullmatch(key))}
    if not numbers:
        raise DataError(f"{where}: conversation: expected session_1, session_2, ... lists of turns, found none")
    extra = sorted(dated - set(numbers))
    if extra:
        tally.repair("date keys without a session (ignored)", len(extra), f"{sample} session_{extra[0]}_date_time")
    out = []
    for n in numbers:
        turns = parse(_TURNS, conv[f"session_{n}"], where, f"conversation.session_{n}")
        key = f"session_{n}_date_time"
        if key not in conv:
            raise DataError(f"{where}: conversation.{key}: missing (required for session_{n})")
        if not turns:
            tally.repair("empty sessions skipped", 1, f"{sample} session_{n}")
            continue
        out.append((n, parse_date(conv[key], f"{where}: conversation.{key}"), turns))
    return out


def _conversation(c: Conversation, where: str, path: Path, tally: Tally, turn_gap: float, questions_after: float,
                  k: int | None, motivation: float | None) -> Draft:
    speakers = parse(_SPEAKERS, c.conversation, where, "conversation")
    sessions = _sessions(c.conversation, where, tally, c.sample_id)
    draft = Draft(scenario_id("locomo", c.sample_id), f"LoCoMo {c.sample_id}: {speakers.speaker_a} and "
                  f"{speakers.speaker_b}", iso(sessions[0][1]), ["locomo"],
                  f"LoCoMo conversation {c.sample_id}, imported from {path.name} by `mtsbench import locomo`.\n"
                  "Turns are say steps (id = dia_id, text = 'SPEAKER: TEXT'); questions are probes after the "
                  "last session.")
    turn_ids: set[str] = set()
    last = None
    for j, (n, start, turns) in enumerate(sessions):
        if last is not None and start <= last:
            tally.repair("sessions dated before the previous one (placed right after it)", 1, f"{c.sample_id} session_{n}")
            start = last + timedelta(seconds=turn_gap)
        nxt = sessions[j + 1][1] if j + 1 < len(sessions) else None
        times = spaced(start, len(turns), turn_gap, nxt if nxt is not None and nxt > start else None)
        for t, (turn, at) in enumerate(zip(turns, times)):
            sid = turn.dia_id.strip()
            if not step_id_ok(sid):
                raise DataError(f"{where}: conversation.session_{n}[{t}].dia_id: expected an id such as 'D1:3', "
                                f"got {brief(turn.dia_id)}")
            sid = fresh_id(sid, turn_ids, tally, "turn")
            parts = [turn.text.strip()]
            if turn.blip_caption and turn.blip_caption.strip():
                parts.append(f"[shared an image: {turn.blip_caption.strip()}]")
                tally.add("image captions appended")
            draft.steps.append({"id": sid, "at": iso(at), "say": f"{turn.speaker}: " + " ".join(p for p in parts if p)})
            last = at
        tally.add("sessions")
        tally.add("turns", len(turns))
    asked = last + timedelta(seconds=questions_after)
    for q, qa in enumerate(c.qa):
        _question(draft, qa, q, asked + timedelta(minutes=q), turn_ids, tally, k, motivation)
    return draft


def clean_evidence(entries: list, turn_ids: set[str], tally: Tally) -> list[str]:
    """The evidence ids that name turns, in order, each once (drops and splits are tallied).

    >>> t = Tally()
    >>> clean_evidence(["D1:1; D1:2", "D", "D:11:26", "D30:05", "D1:1", 7, "D1:3 D1:2"], {"D1:1", "D1:2", "D1:3"}, t)
    ['D1:1', 'D1:2', 'D1:3']
    >>> t.repairs["malformed evidence ids dropped"], t.repairs["evidence ids naming no turn dropped"]
    (3, 1)
    >>> t.repairs["evidence entries split into several ids"], t.repairs["repeated evidence ids dropped"]
    (2, 2)
    """
    out: list[str] = []
    for entry in entries:
        if not isinstance(entry, str):
            tally.repair("malformed evidence ids dropped", 1, brief(entry))
            continue
        parts = [p for p in re.split(r"[;,\s]+", entry) if p]
        if len(parts) > 1:
            tally.repair("evidence entries split into several ids", 1, brief(entry))
        if not parts:
            tally.repair("malformed evidence ids dropped", 1, brief(entry))
        for part in parts:
            if not EVIDENCE_ID.fullmatch(part):
                tally.repair("malformed evidence ids dropped", 1, brief(part))
            elif part not in turn_ids:
                tally.repair("evidence ids naming no turn dropped", 1, brief(part))
            elif part in out:
                tally.repair("repeated evidence ids dropped", 1, brief(part))
            else:
                out.append(part)
    return out


def _question(draft: Draft, qa: QA, q: int, at: datetime, turn_ids: set[str], tally: Tally, k: int | None,
              motivation: float | None) -> None:
    category = CATEGORIES[qa.category]
    tally.add(f"questions: {category}")
    step: dict = {"id": f"q{q + 1}", "at": iso(at), "probe": qa.question.strip() or "(empty question)",
                  "category": category}
    answer = qa.answer if qa.answer is not None else qa.adversarial_answer
    evidence = clean_evidence(qa.evidence, turn_ids, tally)
    expect: dict = {}
    if qa.category == 5:
        step["abstain"] = True
        if evidence:
            tally.repair("adversarial evidence ids not used as recall", len(evidence))
        note = f"adversarial: the right answer is 'not mentioned'; trap answer: {answer}"
    else:
        if evidence:
            expect["recall"] = evidence
        elif qa.evidence:
            tally.repair("questions whose every evidence id was dropped (no recall)", 1, f"{draft.id} q{q + 1}")
        else:
            tally.repair("questions without evidence (no recall)", 1, f"{draft.id} q{q + 1}")
        note = f"answer: {answer}"
    draft.add_probe(step, expect, k, motivation, f"q{q + 1} ({category}) {note}")
