"""BEAM ("Beyond a Million Tokens") chats -> one scenario per chat.

Input: a folder in the authors' layout, ``<scale>/<chat>/chat.json`` and
``<scale>/<chat>/probing_questions/probing_questions.json`` (or one scale's folder, or one
chat's). The scenario id is ``beam_<scale>_<chat>`` (``beam_100k_10``).

- Messages: every message is a step, in order, with id ``m<message id>``: user messages
  ``say``, assistant messages ``reply`` (``turns="all"``, the default: the agent remembers
  both sides, and some evidence is in assistant messages) or user messages only
  (``turns="user"``; evidence in assistant messages is then dropped, counted). BEAM's
  trailing position marker (``->-> 3,12``; also ``->-> 3,N/A`` and ``->-> 3,`` in 178
  messages of the public chats) is stripped.
- Clock: a batch is a session, ``batch_<n>``, on its date (the ``time_anchor`` of its
  first anchored message, ``%B-%d-%Y``). Its exchanges are spread evenly from 08:00 to
  22:00 of that day, in order; the messages of one exchange ``turn_gap`` apart (squeezed
  to fit before the next exchange). A batch without a date, or dated before the previous
  one, is put on the day after the previous batch (counted).
- Questions: one probe per question, a day after the last message and a minute apart, in
  the file's order; ``category`` is BEAM's category name; ``expect.recall`` the steps of
  ``source_chat_ids`` (a list, nested lists flattened, or a dict whose keys are kept as
  ``expect.recall_roles`` in the file's order: ``original_info`` then ``updated_info``, ...);
  ``expect.recall_sessions`` each batch holding evidence with all of its steps (a hit
  anywhere in the right batch). ``abstention`` questions are ``abstain: true`` probes
  without evidence. The category's gold answer (``answer``, ``ideal_answer``,
  ``ideal_response``, ``ideal_summary`` or ``expected_compliance``) is the probe's
  ``answer`` and a comment. The real files hold ``source_chat_ids`` as a Python literal in
  a string (``"[6, 82]"``): it is parsed with ``ast.literal_eval``, never evaluated.
- Dirty input is per chat: a chat whose files are missing or malformed is skipped with one
  line naming it and what was wrong; an evidence id that does not parse or names no
  message of the chat is dropped (counted), and a question left without evidence stays a
  probe without recall (counted).

With ``hints="silver"`` (``--hints silver``; off by default, and without it the output is
byte for byte what it was) the data set's own question annotations become the hints a
perfect extractor would give, so that the design's facts, consolidation and belief rules
run on BEAM (the mock reads hints; a flat system never does):

- Facts: for each ``knowledge_update`` and ``contradiction_resolution`` question (``SILVER``),
  every message its roles name (``original_info`` / ``updated_info``, ``first_statement`` /
  ``second_statement``) gets one fact hint: key ``silver.<scenario id>.<probe id>`` (one key
  per question, so the two statements are one subject), value ``statement <n>`` (n: the
  role's place in the question's roles, so the two statements contradict and the messages
  of one role restate each other), text the message's own words (marker stripped), and the
  hint's default belief: nothing else -- no salience, no attention, no event, and never the
  question or its answer. A message named twice by one question keeps its first statement
  (counted); a question left with one statement (the other's evidence dropped, or the same
  messages in both roles) gets none (counted).
- Nights: after each batch, when the next step (the next batch's first message, or the
  first question) comes at least 9 hours after its last message, an ``idle: 8h`` step
  ``night_<batch number>`` one hour after that last message (``common.night``), so that
  consolidation runs between sessions (LoCoMo's ``--annotations`` does the same).

An upper bound, not a headline: only the evidence messages carry facts, so a comparison
that matters pairs configurations of the design on the same silver hints (consolidation on
against off, one belief rule against another). The command prints the numbers of fact
hints, hinted messages, questions and nights written.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from .common import DataError, Tally, brief, fresh_id, iso, night, read_json, spaced
from .registry import Importer, register
from .writer import Draft

TURNS = ("all", "user")
HINTS = ("none", "silver")
SILVER = ("knowledge_update", "contradiction_resolution")    # categories whose roles name the statements
ANSWER_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary", "expected_compliance")
MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*(?:\d+|N/A)?\s*\)?\s*$")
DAY_START, DAY_HOURS = 8, 14.0           # a batch's exchanges from 08:00 to 22:00


class ChatError(DataError):
    """One chat cannot be imported (the others can)."""


def strip_marker(text: str) -> tuple[str, int]:
    """``text`` without BEAM's trailing position marker, and 1 if there was one.

    >>> strip_marker("I run 5 km. ->-> 2,14"), strip_marker("ok ->-> 4,N/A"), strip_marker("a -> b")
    (('I run 5 km.', 1), ('ok', 1), ('a -> b', 0))
    """
    return MARKER.subn("", text.strip())


def chats(root: Path) -> list[tuple[str, Path]]:
    """(scale, chat folder) of every chat under ``root``, by scale then chat number."""
    root = Path(root)
    if (root / "chat.json").is_file():
        found = [root]
    elif any(root.glob("*/chat.json")):
        found = sorted(p.parent for p in root.glob("*/chat.json"))
    else:
        found = sorted(p.parent for p in root.glob("*/*/chat.json"))
    if not found:
        what = "no such folder" if not root.exists() else "no <scale>/<chat>/chat.json under it"
        raise DataError(f"{root}: {what}; expected BEAM's chats in the authors' layout "
                        "(<scale>/<chat>/chat.json and probing_questions/probing_questions.json)")

    def key(p: Path):
        return (p.parent.name, int(p.name) if p.name.isdigit() else 1 << 30, p.name)
    return [(p.parent.name, p) for p in sorted(found, key=key)]


def convert(path: Path, turns: str = "all", turn_gap: float = 60.0, k: int | None = None,
            motivation: float | None = None, limit: int | None = None,
            hints: str = "none") -> tuple[list[Draft], Tally]:
    """Drafts of every chat under ``path`` (the first ``limit``), and the tally of what was
    repaired; a chat that cannot be imported is skipped with a note. ``hints``: none, or
    silver (the module docstring)."""
    if turns not in TURNS:
        raise DataError(f"--turns: expected one of {', '.join(TURNS)}, got {brief(turns)}")
    if hints not in HINTS:
        raise DataError(f"--hints: expected one of {', '.join(HINTS)}, got {brief(hints)}")
    tally = Tally()
    drafts = []
    for scale, folder in chats(path)[:limit]:
        sid = "beam_" + re.sub(r"[^a-z0-9]+", "_", f"{scale}_{folder.name}".lower()).strip("_")
        own = Tally()
        try:
            drafts.append(_chat(sid, scale, folder, own, turns, turn_gap, k, motivation, hints))
        except ChatError as e:
            tally.repair("chats skipped", 1, sid)
            tally.note(f"skipped {sid}: {e}")
            continue
        tally.add("chats")
        tally.merge(own)
    if not drafts:
        raise DataError(f"{path}: no chat could be imported" + (f" ({tally.notes[0]})" if tally.notes else ""))
    return drafts, tally


def _arguments(parser) -> None:
    parser.add_argument("--turns", choices=TURNS, default="all",
                        help="all: user messages as say and assistant messages as reply steps (default); user: user "
                             "messages only")
    parser.add_argument("--hints", choices=HINTS, default="none",
                        help="silver: fact hints on the statements that knowledge-update and contradiction questions "
                             "name (one key per question) and an 8h idle night after each batch, for the mock LLM: "
                             "an upper bound (docs/datasets.md); default none")


register(Importer("beam", "BEAM chats (a folder in the authors' layout)", "chat", convert, _arguments,
                  ("turns", "hints")))


def _fail(where: Path, what: str) -> ChatError:
    return ChatError(f"{where}: {what}")


def _batches(folder: Path) -> list:
    try:
        raw = read_json(folder / "chat.json")
    except DataError as e:
        raise ChatError(str(e)) from None
    if not isinstance(raw, list) or not raw:
        raise _fail(folder / "chat.json", f"expected a non-empty list of batches, got {brief(raw)}")
    for b, batch in enumerate(raw):
        exchanges = batch.get("turns") if isinstance(batch, dict) else None
        if not isinstance(exchanges, list):
            raise _fail(folder / "chat.json", f"batch {b}: turns: expected a list of exchanges, got {brief(exchanges)}")
        for e, exchange in enumerate(exchanges):
            if not isinstance(exchange, list):
                raise _fail(folder / "chat.json", f"batch {b}: turns[{e}]: expected a list of messages, "
                                                  f"got {brief(exchange)}")
            for m, msg in enumerate(exchange):
                if not (isinstance(msg, dict) and msg.get("role") in ("user", "assistant")
                        and isinstance(msg.get("content"), str) and str(msg.get("id", "")).strip().isdigit()):
                    raise _fail(folder / "chat.json", f"batch {b}: turns[{e}][{m}]: expected a message with role "
                                                      f"user or assistant, an integer id and a text content, "
                                                      f"got {brief(msg)}")
    return raw


def _date(batch: dict, where: str) -> datetime | None:
    for exchange in batch["turns"]:
        for msg in exchange:
            anchor = msg.get("time_anchor")
            if anchor:
                try:
                    return datetime.strptime(str(anchor).strip(), "%B-%d-%Y")
                except ValueError:
                    raise ChatError(f"{where}: time_anchor: expected a date such as 'January-05-2024', "
                                    f"got {brief(anchor)}") from None
    return None


@dataclass
class _Layout:
    """A chat's messages as steps: the steps in order, each message id's step, each step's
    session (batch) and each session's steps, and when the first message came."""

    steps: list[dict] = field(default_factory=list)
    step_of: dict[int, str] = field(default_factory=dict)        # message id -> step id
    batch_of: dict[str, str] = field(default_factory=dict)       # step id -> session
    sessions: dict[str, list[str]] = field(default_factory=dict)
    start: datetime | None = None


def _chat(sid: str, scale: str, folder: Path, tally: Tally, turns: str, turn_gap: float, k: int | None,
          motivation: float | None, hints: str = "none") -> Draft:
    batches = _batches(folder)
    questions = _questions(folder / "probing_questions" / "probing_questions.json")
    layout = _messages(sid, folder, batches, tally, turns, turn_gap)
    header = (f"BEAM chat {scale}/{folder.name}, imported by `mtsbench import beam` (turns: {turns}).\n"
              "Step ids are m<message id>; a batch is a session; the questions are the last steps.")
    if hints == "silver":
        header += ("\nWith --hints silver: fact hints (key silver.<chat>.<question>, value statement <n>, the "
                   "message's own words) on the statements that knowledge-update and contradiction questions name, "
                   "night_N steps idle 8h after a batch: an upper bound, for the mock LLM.")
    draft = Draft(sid, f"BEAM {scale} chat {folder.name}", iso(layout.start), ["beam", scale.lower()], header)
    asked = datetime.fromisoformat(layout.steps[-1]["at"]) + timedelta(days=1)
    draft.steps = _with_nights(layout, asked, tally, sid) if hints == "silver" else layout.steps
    statements: list[tuple[str, str, dict]] = []        # (probe id, category, its evidence by role)
    n = 0
    for category, items in questions.items():
        if not isinstance(items, list):
            raise _fail(folder / "probing_questions" / "probing_questions.json",
                        f"{category}: expected a list of questions, got {brief(items)}")
        for j, q in enumerate(items):
            if not isinstance(q, dict) or not isinstance(q.get("question"), str):
                raise _fail(folder / "probing_questions" / "probing_questions.json",
                            f"{category}[{j}]: expected a question with a text 'question', got {brief(q)}")
            step_id = f"q_{re.sub(r'[^a-z0-9]+', '_', str(category).lower())}_{j + 1}"
            found = _question(draft, q, str(category), step_id, asked + timedelta(minutes=n), layout, tally, k,
                              motivation, sid)
            statements.append((step_id, str(category), found))
            n += 1
    if hints == "silver":
        _silver_facts(draft, statements, tally)
    return draft


def _questions(qfile: Path) -> dict:
    if not qfile.is_file():
        raise _fail(qfile, "no such file (the chat's questions)")
    try:
        questions = read_json(qfile)
    except DataError as e:
        raise ChatError(str(e)) from None
    if not isinstance(questions, dict):
        raise _fail(qfile, f"expected a mapping of category -> list of questions, got {brief(questions)}")
    return questions


def _messages(sid: str, folder: Path, batches: list, tally: Tally, turns: str, turn_gap: float) -> _Layout:
    """Every kept message as a step on its batch's day (module docstring: clock)."""
    out = _Layout()
    used: set[str] = set()
    day: datetime | None = None
    for b, batch in enumerate(batches):
        found = _date(batch, f"{folder / 'chat.json'}: batch {b}")
        if found is None or (day is not None and found <= day):
            tally.repair("batches without a date or dated before the previous one (the day after it)", 1,
                         f"{sid} batch {b}")
            found = (day or datetime(2024, 1, 1)) + timedelta(days=1)
        day = found
        session = f"batch_{batch.get('batch_number', b + 1)}"
        exchanges = batch["turns"]
        first = day.replace(hour=DAY_START)
        slot = DAY_HOURS * 3600 / max(1, len(exchanges))
        for e, exchange in enumerate(exchanges):
            begin = first + timedelta(seconds=int(slot * e))
            kept = [m for m in exchange if _keep(m, turns, tally, sid)]
            for msg, at in zip(kept, spaced(begin, len(kept), turn_gap, begin + timedelta(seconds=int(slot)))):
                mid = int(str(msg["id"]).strip())
                step_id = fresh_id(f"m{mid}", used, tally, "message")
                text, n = strip_marker(msg["content"])
                if n:
                    tally.add("position markers stripped", 1)
                out.steps.append({"id": step_id, "at": iso(at), "say" if msg["role"] == "user" else "reply": text})
                out.step_of.setdefault(mid, step_id)
                out.batch_of[step_id] = session
                out.sessions.setdefault(session, []).append(step_id)
                out.start = out.start or at
                tally.add("messages")
    if not out.steps:
        raise _fail(folder / "chat.json", "no message to import")
    return out


def _with_nights(layout: _Layout, asked: datetime, tally: Tally, sid: str) -> list[dict]:
    """The steps with an 8h idle night after each batch that the next step leaves room for
    (``common.night``); the last batch's next step is the first question, at ``asked``."""
    steps = layout.steps
    out: list[dict] = []
    used = {s["id"] for s in steps}
    for i, step in enumerate(steps):
        out.append(step)
        session = layout.batch_of[step["id"]]
        if i + 1 < len(steps) and layout.batch_of[steps[i + 1]["id"]] == session:
            continue
        nxt = datetime.fromisoformat(steps[i + 1]["at"]) if i + 1 < len(steps) else asked
        name = fresh_id("night_" + session.removeprefix("batch_"), used, tally, "night")
        if night(out, name, datetime.fromisoformat(step["at"]), nxt):
            tally.add("silver: idle nights")
        else:
            tally.repair("batch gaps under 9h (no idle night)", 1, f"{sid} after {session}")
    return out


def _silver_facts(draft: Draft, statements: list[tuple[str, str, dict]], tally: Tally) -> None:
    """A fact hint on every message a knowledge-update or contradiction question's roles name
    (module docstring): key per question, value per role, the message's own words."""
    by_id = {step["id"]: step for step in draft.steps}
    for probe, category, found in statements:
        roles = [(role, ids) for role, ids in found.items() if role]
        if category not in SILVER or not roles:
            continue
        if len(roles) < 2:
            tally.repair("silver questions with one statement left (no hints: no rival to contradict)", 1,
                         f"{draft.id} {probe}")
            continue
        key = f"silver.{draft.id}.{probe}"
        tally.add("silver: questions")
        for n, (_, ids) in enumerate(roles, 1):
            for step_id in ids:
                step = by_id[step_id]
                facts = step.setdefault("hints", {}).setdefault("facts", [])
                if any(f["key"] == key for f in facts):
                    tally.repair("messages named twice by one question (first statement kept)", 1,
                                 f"{draft.id} {probe} {step_id}")
                    continue
                tally.add("silver: messages hinted", int(not facts))
                facts.append({"key": key, "text": step.get("say", step.get("reply")), "value": f"statement {n}"})
                tally.add("silver: fact hints")


def _keep(msg: dict, turns: str, tally: Tally, sid: str) -> bool:
    if turns == "user" and msg["role"] != "user":
        tally.repair("assistant messages not imported (--turns user)", 1)
        return False
    if not MARKER.sub("", msg["content"]).strip():
        tally.repair("empty messages dropped", 1, f"{sid} m{msg['id']}")
        return False
    return True


def evidence_of(value, where: str) -> tuple[list[tuple[str, list]], bool]:
    """(roles, ok) of a ``source_chat_ids``: a list (nested lists flattened) is one role
    ``""``; a dict keeps its keys as roles in order; a string holding either is parsed as a
    Python literal (never evaluated). ok is False when nothing usable was found.

    >>> evidence_of("{'original_info': [22], 'updated_info': [64, 66]}", "x")
    ([('original_info', [22]), ('updated_info', [64, 66])], True)
    >>> evidence_of("[6, [82, 84]]", "x"), evidence_of([3], "x"), evidence_of("see chat", "x")
    (([('', [6, 82, 84])], True), ([('', [3])], True), ([], False))
    """
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return [], False
    if isinstance(value, dict):
        return [(str(role), _flat(ids)) for role, ids in value.items()], True
    if isinstance(value, (list, tuple, int)):
        return [("", _flat(value))], True
    return [], False


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def _answer(q: dict) -> str | None:
    for name in ANSWER_FIELDS:
        if isinstance(q.get(name), str) and q[name].strip():
            return q[name].strip()
    return None


def _question(draft: Draft, q: dict, category: str, step_id: str, at: datetime, layout: _Layout, tally: Tally,
              k: int | None, motivation: float | None, sid: str) -> dict[str, list[str]]:
    """Append the question's probe; returns its evidence steps by role (role "" for a list)."""
    step_of, batch_of, sessions = layout.step_of, layout.batch_of, layout.sessions
    step: dict = {"id": step_id, "at": iso(at), "probe": q["question"].strip() or "(empty question)",
                  "category": category}
    expect: dict = {}
    found: dict[str, list[str]] = {}
    tally.add(f"questions: {category}")
    answer = _answer(q)
    if category == "abstention":
        step["abstain"] = True
        if q.get("source_chat_ids"):
            tally.repair("evidence of abstention questions ignored", 1, f"{sid} {step_id}")
    else:
        roles, ok = evidence_of(q.get("source_chat_ids"), step_id) if "source_chat_ids" in q else ([], True)
        if not ok:
            tally.repair("evidence that does not parse dropped", 1, f"{sid} {step_id}")
        for role, ids in roles:
            for raw in ids:
                try:
                    mid = int(str(raw).strip())
                except ValueError:
                    mid = None
                if mid is None or mid not in step_of:
                    tally.repair("evidence ids naming no imported message dropped", 1, f"{sid} {step_id}: {brief(raw)}")
                    continue
                found.setdefault(role, [])
                if step_of[mid] not in found[role]:
                    found[role].append(step_of[mid])
        recall = list(dict.fromkeys(s for ids in found.values() for s in ids))
        if recall:
            expect["recall"] = recall
            named = [r for r in found if r]
            if len(named) >= 2:
                expect["recall_roles"] = {r: found[r] for r in named}
            expect["recall_sessions"] = {b: sessions[b] for b in dict.fromkeys(batch_of[s] for s in recall)}
        else:
            tally.repair("questions without evidence (no recall)", 1, f"{sid} {step_id}")
    if answer is not None and category != "abstention":
        step["answer"] = answer
    draft.add_probe(step, expect, k, motivation, f"{category}{' (abstention)' if category == 'abstention' else ''} "
                                                 f"answer: {answer if answer is not None else '-'}")
    return found
