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
  evidence, ``expect.recall_sessions`` = every session holding evidence with all of its
  turns (a hit anywhere in the right session counts for session recall). Adversarial
  questions are ``abstain: true`` probes with no recall; questions
  left without evidence are probes without recall. The answer is kept as the probe's ``answer``
  (scored with ``answer.enabled``, ``mtsbench.evaluation.answer``) and as a comment.
- Evidence cleanup (each counted, with examples): entries holding several ids
  (``"D8:6; D9:17"``, space- or comma-separated) are split; ids not of the form
  ``D<session>:<turn>`` are dropped as malformed (``"D"``, ``"D:11:26"``); ids naming no
  turn of the conversation are dropped (``"D30:05"``: no leading-zero guessing);
  repeats within a question are dropped.
- ``--corrections ERRORS`` (the locomo-audit project's ``errors.json``, ``Corrections``):
  each ``WRONG_CITATION`` finding replaces its question's evidence by ``correct_evidence``
  (cleaned as above) when the question exists and its text is the file's (otherwise the
  finding is skipped, counted); the corrected probes say so in their comment. Answer errors
  are counted, never applied.

With ``--annotations`` the data set's own per-session annotations (LLM-generated and
human-checked by its authors, not ours) become the hints a perfect LLM would give (the
mock LLM reads them), so that summarization, major events and consolidation act on real
dialogue. Without the flag the annotations are not read and the output is unchanged.

- Facts: each ``observation`` entry ``session_<n>_observation: {SPEAKER: [[TEXT, DIA_ID],
  ...]}`` is a fact hint on the turn DIA_ID names (cleaned like evidence ids, counted apart
  as observation ids; an entry naming several turns goes on the first; one naming no turn
  is dropped): no key, ``value: true``, ``text: TEXT``, ``belief: 0.9``
  (``OBSERVATION_BELIEF``). The data set names no keys, and a made-up one would be a false
  identity (an earlier version wrote ``obs.<speaker>.<crc32 of the text>``, so only a
  word-for-word restatement was "the same fact"): keyless, a fact's identity is found at
  consolidation by memory search and the LLM's ``judge_relation`` (the mock: text
  similarity, ``llm.mock``), as for any LLM that names no key. Since every value is
  ``true``, no observation ever contradicts another. 0.9: the annotations are checked by
  people, so more than the 0.7 a scenario fact gets by default, short of 1 because they
  are still one model's extraction. The same observation twice on one turn (same speaker
  and text up to case, spacing and trailing punctuation, ``fact_key``) is kept once (counted).
- Events: each event TEXT of speaker S in ``event_summary.events_session_<n>`` (the
  ``date`` key is not an event) is an event hint ``{category, text: TEXT}`` on the first
  turn of S in session n that carries no event hint yet; if S has none free, the first
  free turn of the session; if every turn of the session has one, or the session has no
  turns, the event is dropped (counted). ``valid`` is not given: the category's default
  validity of the ``events`` policy applies. The category (``event_category``) is
  ``<speaker>.<word>``, word = the first content word of TEXT: the words are TEXT's runs
  of letters, lower case, without one-letter words and both speakers' names; the first of
  them is dropped when it looks like a verb (not in ``STOP_WORDS`` and ending in ``s`` but
  not ``ss``, or in ``ed``); word = the first remaining word not in ``STOP_WORDS``
  (function words and a few light verbs: go, make, start, ...), ``event`` if none
  ("Goes to a support group." -> ``caroline.support``, "Caroline attends an LGBTQ support
  group." -> ``caroline.lgbtq``, "The dance studio opens." -> ``jon.dance``). Crude on
  purpose (no parser, no LLM): the category decides which tags join one event (the
  latest of its category, unless stale), and a first word is a poor name for a storyline
  -- the same storyline worded another way splits, two unrelated events sharing a first
  word within the validity join, an adjective or a plural noun can lead or be skipped.
- Nights: after each session, when the next step (the next session's first turn, or the
  first question after the last session) comes at least 9 hours after its last turn, an
  ``idle: 8h`` step ``night_<n>`` one hour after that last turn, so consolidation runs
  between sessions; shorter gaps get no night (counted). Times stay in order and the
  night ends before the next step.
- ``session_summary`` is not a hint (the mock writes its own summary text); it is kept as
  a comment above the session's first turn. No ``salience`` hints are written: attention
  is left to the mock's cue-word heuristic.

The command prints one line with the numbers of fact hints, event hints and nights written.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, TypeAdapter

from ...core.units import DAY
from .common import (DataError, Tally, brief, each_item, fresh_id, iso, night, parse, read_json, scenario_id, spaced,
                     step_id_ok)
from .registry import Importer, duration, register
from .writer import Draft

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
SESSION = re.compile(r"session_(\d+)")
SESSION_DATE = re.compile(r"session_(\d+)_date_time")
EVIDENCE_ID = re.compile(r"D(\d+):(\d+)")
OBSERVATION = re.compile(r"session_(\d+)_observation")
EVENTS = re.compile(r"events_session_(\d+)")
SUMMARY = re.compile(r"session_(\d+)_summary")
OBSERVATION_BELIEF = 0.9          # human-checked annotations: above a scenario fact's default 0.7, short of 1
WORD = re.compile(r"[^\W\d_]+")
STOP_WORDS = frozenset(
    "a an the this that these those some any another other each every all both no not "
    "my your his her its our their me him them us it he she they we you i "
    "to for of in on at with from by about into onto over under after before during up down out off as "
    "and or but so then than also again just very more most first new own "
    "is are was were be been being am has have had do does did will would can could should may might "
    "go goes went going gets get got getting make makes made take takes took give gives gave "
    "start starts started begin begins began plan plans planned decide decides decided try tries tried".split())


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Turn(_Loose):
    speaker: StrictStr
    dia_id: StrictStr
    text: StrictStr
    blip_caption: StrictStr | None = None


class QA(_Loose):
    corrected: bool = False            # its evidence is the locomo-audit project's correction (--corrections)
    question: StrictStr
    answer: Union[StrictStr, StrictInt, StrictFloat, None] = None
    adversarial_answer: Union[StrictStr, StrictInt, StrictFloat, None] = None
    evidence: list[Any] = []
    category: Literal[1, 2, 3, 4, 5]


class Conversation(_Loose):
    sample_id: StrictStr
    conversation: dict[str, Any]
    qa: list[QA]
    observation: Any = None            # the annotations: read (and checked) only with --annotations
    event_summary: Any = None
    session_summary: Any = None


class Speakers(_Loose):
    speaker_a: StrictStr
    speaker_b: StrictStr


_CONVERSATION = TypeAdapter(Conversation)
_SPEAKERS = TypeAdapter(Speakers)
_TURNS = TypeAdapter(list[Turn])


def convert(path: Path, turn_gap: float = 60.0, questions_after: float = DAY, k: int | None = None,
            motivation: float | None = None, limit: int | None = None,
            annotations: bool = False, salience: str = "none", corrections: Path | None = None) -> tuple[list[Draft], Tally]:
    """Drafts of every conversation of a LoCoMo file, and the tally of what was repaired;
    ``annotations``: the data set's observations and events become hints; ``salience``:
    none, observations or oracle salience hints; ``corrections``: the locomo-audit
    project's findings, whose corrected evidence citations replace the file's (module docstring)."""
    if salience not in SALIENCE_MODES:
        raise DataError(f"--salience {salience}: expected one of {', '.join(SALIENCE_MODES)}")
    tally = Tally()
    written = _Written() if annotations else None
    fixes = Corrections.read(corrections) if corrections is not None else None
    index = iter(range(1 << 30))

    def one(item, where: str) -> Draft:
        c = parse(_CONVERSATION, item, where)
        if fixes is not None:
            c = fixes.apply(next(index), c, tally)
        draft = _conversation(c, where, path, tally, turn_gap, questions_after, k, motivation, written)
        return _salient(draft, c, salience, tally)

    drafts = each_item(path, "conversation", "sample_id", limit, one)
    if written is not None:
        tally.note(f"annotation hints written: {written.facts} fact hints, {written.events} event hints, "
                   f"{written.nights} idle nights")
    if fixes is not None:
        fixes.report(tally, limit)
    return drafts, tally


class Corrections:
    """The locomo-audit project's findings (``errors.json``): a JSON list of ``{question_id,
    question, error_type, correct_evidence, ...}``, ``question_id`` = ``locomo_<conversation
    index>_qa<question number>``. Only ``WRONG_CITATION`` findings change anything: their
    ``correct_evidence`` replaces the question's evidence (cleaned as the file's is) when the
    question is found with the finding's text (``locate``); other findings (answer errors)
    are counted."""

    ID = re.compile(r"locomo_(\d+)_qa(\d+)")

    def __init__(self, path: Path, citations: dict, others: int):
        self.path, self.citations, self.others = path, citations, others
        self.applied, self.skipped, self.seen = 0, [], set()

    @classmethod
    def read(cls, path: Path) -> "Corrections":
        raw = read_json(path)
        if not isinstance(raw, list):
            raise DataError(f"{path}: expected a JSON list of findings, got {brief(raw)}")
        citations, others = {}, 0
        for i, item in enumerate(raw):
            if not isinstance(item, dict) or not isinstance(item.get("error_type"), str):
                raise DataError(f"{path}: finding {i}: expected a mapping with an error_type, got {brief(item)}")
            if item["error_type"] != "WRONG_CITATION":
                others += 1
                continue
            m = cls.ID.fullmatch(str(item.get("question_id", "")))
            evidence = item.get("correct_evidence")
            if m is None or not isinstance(evidence, list) or not isinstance(item.get("question"), str):
                raise DataError(f"{path}: finding {i}: expected question_id 'locomo_<conversation>_qa<n>', a text "
                                f"question and a list correct_evidence, got {brief(item)}")
            citations[(int(m.group(1)), int(m.group(2)))] = (item["question"], evidence, item["question_id"])
        return cls(path, citations, others)

    def apply(self, conversation: int, c: "Conversation", tally: Tally) -> "Conversation":
        """``c`` (the file's conversation number ``conversation``, 0-based) with its cited
        evidence corrected."""
        self.seen.add(conversation)
        qa = list(c.qa)
        texts = [" ".join(x.question.split()) for x in qa]
        for (n, q), (question, evidence, qid) in self.citations.items():
            if n != conversation:
                continue
            found = self.locate(texts, q, " ".join(question.split()))
            if found is None:
                self.skipped.append(qid)
                tally.repair("corrections naming no question of the file, or another question (skipped)", 1, qid)
                continue
            qa[found] = qa[found].model_copy(update={"evidence": list(evidence), "corrected": True})
            self.applied += 1
        return c.model_copy(update={"qa": qa})

    @staticmethod
    def locate(texts: list[str], n: int, question: str) -> int | None:
        """The index of the question a finding numbered ``n`` names: ``n`` itself (the published
        file counts from 0: every finding's text is that of ``qa[n]``), else ``n - 1`` (counting
        from 1), else the one question of that text; None when the text matches none of them.

        >>> Corrections.locate(["a", "b", "c"], 1, "b"), Corrections.locate(["a", "b", "c"], 3, "c")
        (1, 2)
        >>> Corrections.locate(["a", "b", "b"], 0, "b"), Corrections.locate(["a"], 0, "z")
        (None, None)
        """
        for i in (n, n - 1):
            if 0 <= i < len(texts) and texts[i] == question:
                return i
        same = [i for i, t in enumerate(texts) if t == question]
        return same[0] if len(same) == 1 else None

    def report(self, tally: Tally, limit: int | None) -> None:
        total = len(self.citations)
        for (n, _), (_, _, qid) in self.citations.items():
            if n not in self.seen and not limit:
                tally.repair("corrections naming no question of the file, or another question (skipped)", 1, qid)
        tally.note(f"citation corrections ({self.path.name}): {self.applied} of {total} WRONG_CITATION findings "
                   f"applied{' (--limit: the rest name conversations not imported)' if limit else ''}; "
                   f"{self.others} other findings (answer errors) not applied")


def _arguments(parser) -> None:
    parser.add_argument("--questions-after", type=duration, default=DAY, metavar="DURATION",
                        help="time from the last turn to the first question (default 1d); questions are 1m apart")
    parser.add_argument("--annotations", action="store_true",
                        help="turn the data set's own observations into fact hints and its event summaries into "
                             "event hints, and add an 8h idle night after each session (for the mock LLM)")
    parser.add_argument("--salience", choices=SALIENCE_MODES, default="none",
                        help="reference attention conditions: salience hints from the data set's observations "
                             "(a turn an observation cites is salient) or an oracle (evidence turns salient); "
                             "default none: the mock's own heuristic")
    parser.add_argument("--corrections", type=Path, metavar="ERRORS_JSON",
                        help="the locomo-audit project's errors.json: its WRONG_CITATION findings replace the "
                             "questions' evidence (answer errors are counted, not applied)")


register(Importer("locomo", "LoCoMo (locomo10.json)", "conversation", convert, _arguments,
                  ("questions_after", "annotations", "salience", "corrections")))

SALIENCE_MODES = ("none", "observations", "oracle")
SALIENT, PLAIN = 9, 3


def _salient(draft: Draft, c: Conversation, mode: str, tally: Tally) -> Draft:
    """Write ``salience`` hints on every turn: SALIENT on the turns ``mode`` picks (observations:
    those an observation cites; oracle: the evidence of a question of categories 1-4), PLAIN
    on the rest. A reference condition for attention, never a headline: the oracle reads the
    answers' evidence by construction."""
    if mode == "none":
        return draft
    turns = {step["id"]: step for step in draft.steps if "say" in step}
    quiet = Tally()                   # the ids were already checked (and counted) by the import proper
    picked: set[str] = set()
    if mode == "oracle":
        for qa in c.qa:
            if qa.category != 5:
                picked.update(clean_evidence(qa.evidence, set(turns), quiet))
    else:
        for entries in _annotation(c.observation, draft.id, "observation", OBSERVATION, "entries", quiet).values():
            for per_speaker in (entries.values() if isinstance(entries, dict) else ()):
                for entry in per_speaker if isinstance(per_speaker, list) else []:
                    if isinstance(entry, list) and len(entry) == 2:
                        ids = entry[1] if isinstance(entry[1], list) else [entry[1]]
                        picked.update(clean_evidence(ids, set(turns), quiet, "observation"))
    for sid, step in turns.items():
        step.setdefault("hints", {})["salience"] = SALIENT if sid in picked else PLAIN
    draft.header += (f"\nWith --salience {mode}: salience hint {SALIENT} on the turns "
                     + ("a question's evidence names (an oracle: a reference ceiling, never a headline)"
                        if mode == "oracle" else "an observation of the data set cites")
                     + f", {PLAIN} on the others.")
    tally.add(f"turns marked salient ({mode})", len(picked))
    return draft


@dataclass
class _Written:
    """How many annotation hints and nights were written (all conversations)."""

    facts: int = 0
    events: int = 0
    nights: int = 0


def fact_key(speaker: str, text: str) -> str:
    """An observation's identity on one turn (repeats are dropped): ``obs.<speaker>.<crc32 of the
    normalised text>``; not written (the facts are keyless).

    >>> a = fact_key("Caroline", "Caroline went to a  support group.")
    >>> a, a == fact_key("Caroline", "caroline went to a support group")
    ('obs.caroline.ae3b8d25', True)
    >>> fact_key("Mary Ann", "She likes tea!") == fact_key("Mary Ann", "she likes tea"), fact_key("Mary Ann", "x")[:13]
    (True, 'obs.mary_ann.')
    >>> fact_key("Mary Ann", "She likes tea") == fact_key("Mary Ann", "She likes coffee")
    False
    """
    norm = " ".join(text.lower().split())
    while norm and (unicodedata.category(norm[-1]).startswith("P") or norm[-1].isspace()):
        norm = norm[:-1]
    return f"obs.{_slug(speaker)}.{zlib.crc32(norm.encode('utf-8')) & 0xFFFFFFFF:08x}"


def _slug(name: str) -> str:
    return re.sub(r"\W+", "_", name.casefold()).strip("_") or "speaker"


def event_category(speaker: str, text: str, names: tuple[str, ...] = ()) -> str:
    """``<speaker>.<first content word>`` (module docstring: crude, no parser).

    >>> event_category("Caroline", "Goes to a support group.")
    'caroline.support'
    >>> event_category("Caroline", "Caroline attends an LGBTQ support group.", ("Caroline", "Melanie"))
    'caroline.lgbtq'
    >>> event_category("Jon", "The dance studio opens next month."), event_category("Jon", "Is it?")
    ('jon.dance', 'jon.event')
    """
    skip = {n.casefold() for n in names} | {speaker.casefold()}
    words = [w for w in WORD.findall(text.casefold()) if len(w) > 1 and w not in skip]
    if words and words[0] not in STOP_WORDS and (words[0].endswith("ed") or (
            words[0].endswith("s") and not words[0].endswith("ss"))):
        words = words[1:]
    word = next((w for w in words if w not in STOP_WORDS), "event")
    return f"{_slug(speaker)}.{word}"


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
                  k: int | None, motivation: float | None, written: _Written | None = None) -> Draft:
    speakers = parse(_SPEAKERS, c.conversation, where, "conversation")
    sessions = _sessions(c.conversation, where, tally, c.sample_id)
    header = (f"LoCoMo conversation {c.sample_id}, imported from {path.name} by `mtsbench import locomo`.\n"
              "Turns are say steps (id = dia_id, text = 'SPEAKER: TEXT'); questions are probes after the "
              "last session.")
    if written is not None:
        header += ("\nWith --annotations: the data set's observations are fact hints (no key, "
                   f"value true, belief {OBSERVATION_BELIEF:g}), its event summaries event hints (category "
                   "SPEAKER.FIRST_CONTENT_WORD), night_N steps idle 8h after a session; its session summaries "
                   "are comments, not hints.")
    draft = Draft(scenario_id("locomo", c.sample_id), f"LoCoMo {c.sample_id}: {speakers.speaker_a} and "
                  f"{speakers.speaker_b}", iso(sessions[0][1]), ["locomo"], header)
    summaries = _session_summaries(c.session_summary, where, tally) if written is not None else {}
    by_session: dict[int, list[tuple[str, dict]]] = {}      # session -> (speaker, step) of its turns
    turn_ids: set[str] = set()
    last = None
    for j, (n, start, turns) in enumerate(sessions):
        if last is not None and start <= last:
            tally.repair("sessions dated before the previous one (placed right after it)", 1, f"{c.sample_id} session_{n}")
            start = last + timedelta(seconds=turn_gap)
        if written is not None and last is not None:
            _night(draft, sessions[j - 1][0], last, start, tally, written, c.sample_id)
        if n in summaries:
            draft.comments[len(draft.steps)] = f"session {n} summary (LoCoMo, not a hint): {summaries[n]}"
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
            by_session.setdefault(n, []).append((turn.speaker, draft.steps[-1]))
            last = at
        tally.add("sessions")
        tally.add("turns", len(turns))
    asked = last + timedelta(seconds=questions_after)
    if written is not None:
        if c.qa:
            _night(draft, sessions[-1][0], last, asked, tally, written, c.sample_id)
        names = (speakers.speaker_a, speakers.speaker_b)
        _facts(c.observation, where, by_session, tally, written, c.sample_id)
        _events(c.event_summary, where, by_session, names, tally, written, c.sample_id)
    sessions = {f"session_{n}": [step["id"] for _, step in steps] for n, steps in by_session.items()}
    for q, qa in enumerate(c.qa):
        _question(draft, qa, q, asked + timedelta(minutes=q), turn_ids, tally, k, motivation, sessions)
    return draft


def _night(draft: Draft, n: int, last: datetime, nxt: datetime, tally: Tally, written: _Written, sample: str) -> None:
    """An 8h idle step one hour after session n's last turn, if it ends by ``nxt`` (the next step)."""
    if night(draft.steps, f"night_{n}", last, nxt):
        written.nights += 1
    else:
        tally.repair("session gaps under 9h (no idle night)", 1, f"{sample} after session_{n}")


def _annotation(value, where: str, field: str, pattern: re.Pattern, what: str, tally: Tally) -> dict[int, object]:
    """An annotation mapping ``{<pattern with the session number>: VALUE}`` by session number
    (None or absent: none); keys that do not match are ignored (counted)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(f"{where}: {field}: expected a mapping of {what}, got {brief(value)}")
    out = {}
    for key, v in value.items():
        if (m := pattern.fullmatch(str(key))):
            out[int(m.group(1))] = v
        else:
            tally.repair("annotation keys not understood (ignored)", 1, f"{field}.{key}")
    return out


def _session_summaries(value, where: str, tally: Tally) -> dict[int, str]:
    texts = _annotation(value, where, "session_summary", SUMMARY, "session_<n>_summary texts", tally)
    return {n: " ".join(v.split()) for n, v in texts.items() if isinstance(v, str) and v.strip()}


def _facts(value, where: str, by_session: dict[int, list[tuple[str, dict]]], tally: Tally, written: _Written,
           sample: str) -> None:
    """Each observation [TEXT, DIA_ID] as a fact hint on the turn DIA_ID names (module docstring)."""
    steps = {step["id"]: step for turns in by_session.values() for _, step in turns}
    for n, speakers in sorted(_annotation(value, where, "observation", OBSERVATION,
                                          "session_<n>_observation entries", tally).items()):
        if not isinstance(speakers, dict):
            raise DataError(f"{where}: observation.session_{n}_observation: expected a mapping "
                            f"{{SPEAKER: [[TEXT, DIA_ID], ...]}}, got {brief(speakers)}")
        for speaker, entries in speakers.items():
            for entry in entries if isinstance(entries, list) else [entries]:
                if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                        and entry[0].strip()):
                    tally.repair("malformed observations dropped (expected [TEXT, DIA_ID])", 1, brief(entry))
                    continue
                text, ids = " ".join(entry[0].split()), entry[1]
                found = clean_evidence(ids if isinstance(ids, list) else [ids], set(steps), tally, "observation")
                if not found:
                    tally.repair("observations naming no turn dropped", 1, f"{sample} session_{n}: {brief(text)}")
                    continue
                if len(found) > 1:
                    tally.repair("observations naming several turns (fact on the first)", 1, f"{sample} {brief(ids)}")
                facts = steps[found[0]].setdefault("hints", {}).setdefault("facts", [])
                key = fact_key(str(speaker), text)       # only to drop a repeat on one turn: not written
                if any(fact_key(str(speaker), f["text"]) == key for f in facts):
                    tally.repair("repeated observations on one turn dropped", 1, f"{sample} {found[0]}")
                    continue
                facts.append({"text": text, "value": True, "belief": OBSERVATION_BELIEF})
                written.facts += 1


def _events(value, where: str, by_session: dict[int, list[tuple[str, dict]]], names: tuple[str, ...], tally: Tally,
            written: _Written, sample: str) -> None:
    """Each event of speaker S in session n as an event hint on a free turn of S in n (module docstring)."""
    for n, speakers in sorted(_annotation(value, where, "event_summary", EVENTS,
                                          "events_session_<n> entries", tally).items()):
        if not isinstance(speakers, dict):
            raise DataError(f"{where}: event_summary.events_session_{n}: expected a mapping "
                            f"{{SPEAKER: [EVENT, ...], date: DATE}}, got {brief(speakers)}")
        turns = by_session.get(n, [])
        for speaker, texts in speakers.items():
            if speaker == "date":
                continue
            for text in texts if isinstance(texts, list) else [texts]:
                if not isinstance(text, str) or not text.strip():
                    tally.repair("malformed events dropped (expected text)", 1, brief(text))
                    continue
                free = [(who, step) for who, step in turns if "event" not in step.get("hints", {})]
                own = [step for who, step in free if who.strip().casefold() == str(speaker).strip().casefold()]
                if not free:
                    tally.repair("events without a free turn in their session dropped", 1, f"{sample} session_{n}")
                    continue
                if not own:
                    tally.repair("events placed on another speaker's turn (no free turn of theirs)", 1,
                                 f"{sample} session_{n}")
                step = own[0] if own else free[0][1]
                text = " ".join(text.split())
                step.setdefault("hints", {})["event"] = {"category": event_category(str(speaker), text, names),
                                                         "text": text}
                written.events += 1


def clean_evidence(entries: list, turn_ids: set[str], tally: Tally, what: str = "evidence") -> list[str]:
    """The evidence ids that name turns, in order, each once (drops and splits are tallied,
    labelled with ``what``).

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
            tally.repair(f"malformed {what} ids dropped", 1, brief(entry))
            continue
        parts = [p for p in re.split(r"[;,\s]+", entry) if p]
        if len(parts) > 1:
            tally.repair(f"{what} entries split into several ids", 1, brief(entry))
        if not parts:
            tally.repair(f"malformed {what} ids dropped", 1, brief(entry))
        for part in parts:
            if not EVIDENCE_ID.fullmatch(part):
                tally.repair(f"malformed {what} ids dropped", 1, brief(part))
            elif part not in turn_ids:
                tally.repair(f"{what} ids naming no turn dropped", 1, brief(part))
            elif part in out:
                tally.repair(f"repeated {what} ids dropped", 1, brief(part))
            else:
                out.append(part)
    return out


def _question(draft: Draft, qa: QA, q: int, at: datetime, turn_ids: set[str], tally: Tally, k: int | None,
              motivation: float | None, sessions: dict[str, list[str]]) -> None:
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
            expect["recall"] = evidence      # and every turn of each session holding evidence: session recall
            expect["recall_sessions"] = {n: ids for n, ids in sessions.items() if set(ids) & set(evidence)}
        elif qa.evidence:
            tally.repair("questions whose every evidence id was dropped (no recall)", 1, f"{draft.id} q{q + 1}")
        else:
            tally.repair("questions without evidence (no recall)", 1, f"{draft.id} q{q + 1}")
        note = f"answer: {answer}" + (" (evidence corrected by the locomo-audit project)" if qa.corrected else "")
        if qa.corrected:
            tally.add("questions with corrected evidence")
        if answer is not None and str(answer).strip():
            step["answer"] = str(answer).strip()     # the gold answer, scored with answer.enabled
    draft.add_probe(step, expect, k, motivation, f"q{q + 1} ({category}) {note}")
