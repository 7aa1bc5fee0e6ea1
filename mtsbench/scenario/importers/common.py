"""What the importers share: one-line data errors, the tally of repairs, times and ids.

A structurally bad input file is a ``DataError`` whose text is one line naming the file,
the place and what was expected, e.g.
``locomo10.json: conversation 3 (conv-26): qa[12].category: expected 1, 2, 3, 4 or 5, got 7``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

from pydantic import TypeAdapter, ValidationError

from ...errors import DataError
from ..loader import STEP_ID, brief, read_text


def read_json(path: Path):
    """The parsed JSON of ``path``, or a one-line DataError."""
    text = read_text(path, str(path), DataError, "a JSON file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None


def place(loc) -> str:
    """A pydantic error location as a field path.

    >>> place(("qa", 12, "evidence", 0))
    'qa[12].evidence[0]'
    """
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse(adapter: TypeAdapter, value, where: str, prefix: str = ""):
    """``adapter.validate_python(value)``, its first error as a one-line DataError at ``where``."""
    try:
        return adapter.validate_python(value)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        field_ = place((*([prefix] if prefix else []), *err["loc"]))
        got = "" if err["type"] == "missing" else f", got {brief(err.get('input'))}"
        message = "missing (required)" if err["type"] == "missing" else err["msg"][0].lower() + err["msg"][1:]
        raise DataError(f"{where}: {field_ + ': ' if field_ else ''}{message}{got}") from None


@dataclass
class Tally:
    """Ordered counts of what an import kept, and of what it dropped or repaired (with a few
    examples each)."""

    counts: dict[str, int] = field(default_factory=dict)
    repairs: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, label: str, n: int = 1) -> None:
        """Count something imported."""
        self.counts[label] = self.counts.get(label, 0) + n

    def note(self, line: str) -> None:
        """A line of its own, printed after the counts (several numbers that belong together)."""
        self.notes.append(line)

    def repair(self, label: str, n: int = 1, example: str | None = None) -> None:
        """Count something dropped or repaired."""
        self.repairs[label] = self.repairs.get(label, 0) + n
        seen = self.examples.setdefault(label, [])
        if example is not None and len(seen) < 3 and example not in seen:
            seen.append(example)

    def merge(self, other: "Tally") -> None:
        """Add ``other``'s counts, repairs (with their examples, up to three) and notes.

        >>> a, b = Tally(), Tally(); a.add("turns", 2); b.add("turns", 3); b.repair("dropped", 1, "x")
        >>> a.merge(b); a.counts, a.repairs, a.examples
        ({'turns': 5}, {'dropped': 1}, {'dropped': ['x']})
        """
        for label, n in other.counts.items():
            self.add(label, n)
        for label, n in other.repairs.items():
            self.repair(label, n)
            seen = self.examples[label]
            seen += [e for e in other.examples.get(label, []) if e not in seen][: 3 - len(seen)]
        self.notes += other.notes

    def lines(self) -> list[str]:
        """``label: count``, imported first, then the notes, then ``dropped or repaired:`` with examples.

        >>> t = Tally(); t.add("turns", 3); t.repair("malformed evidence ids dropped", 1, "'D'")
        >>> print("\\n".join(t.lines()))
        turns: 3
        dropped or repaired:
          malformed evidence ids dropped: 1 (e.g. 'D')
        >>> t.note("hints written: 2 facts, 1 event"); t.lines()[1]
        'hints written: 2 facts, 1 event'
        """
        out = [f"{label}: {n}" for label, n in self.counts.items()] + self.notes
        out += ["dropped or repaired:" + ("" if self.repairs else " nothing")]
        out += [f"  {label}: {n}" + (f" (e.g. {', '.join(self.examples[label])})" if self.examples[label] else "")
                for label, n in self.repairs.items()]
        return out


def scenario_id(prefix: str, raw: str) -> str:
    """A scenario id (``[a-z0-9_]+``) from a data set's own id.

    >>> scenario_id("locomo", "conv-26"), scenario_id("lme", "gpt4_2655b836_abs")
    ('locomo_conv_26', 'lme_gpt4_2655b836_abs')
    """
    return prefix + "_" + re.sub(r"[^a-z0-9]+", "_", raw.lower()).strip("_")


def each_item(path: Path, what: str, id_key: str, limit: int | None, convert: Callable) -> list:
    """``convert(item, where)`` for each item of the JSON list in ``path`` (the first ``limit``),
    ``where`` naming the file and the item (``FILE: conversation 3 (conv-26)``); refuses two
    items that become one scenario id (they would overwrite each other's file)."""
    raw = read_json(path)
    if not isinstance(raw, list):
        raise DataError(f"{path}: expected a JSON list of {what}s, got {type(raw).__name__}")
    drafts, seen = [], {}
    for i, item in enumerate(raw[:limit]):
        own = item.get(id_key) if isinstance(item, dict) else None
        draft = convert(item, f"{path}: {what} {i}" + (f" ({own})" if isinstance(own, str) else ""))
        if draft.id in seen:
            raise DataError(f"{path}: {brief(own)} and {brief(seen[draft.id])} both become scenario '{draft.id}'; "
                            "expected distinct ids")
        seen[draft.id] = own
        drafts.append(draft)
    return drafts


def step_id_ok(text: str) -> bool:
    """Whether ``text`` is usable as a step id by the scenario loader."""
    return bool(STEP_ID.fullmatch(text))


def fresh_id(sid: str, used: set[str], tally: Tally, what: str) -> str:
    """``sid``, or ``sid.2``, ``sid.3``, ... if already used (the renaming is tallied); marks it used.

    >>> t = Tally(); used = {"D1:3"}; fresh_id("D1:3", used, t, "turn"), sorted(used), t.repairs
    ('D1:3.2', ['D1:3', 'D1:3.2'], {'repeated turn ids renamed': 1})
    """
    if sid in used:
        renamed = next(f"{sid}.{r}" for r in range(2, len(used) + 3) if f"{sid}.{r}" not in used)
        tally.repair(f"repeated {what} ids renamed", 1, f"{sid} -> {renamed}")
        sid = renamed
    used.add(sid)
    return sid


def iso(moment: datetime) -> str:
    """``2023-05-08T13:56:00``: the form the scenario files use for ``at`` and ``start``."""
    return moment.replace(microsecond=0).isoformat()


NIGHT = 8 * 3600.0                # an idle night lasts 8 hours ...
NIGHT_AFTER = 3600.0              # ... and starts one hour after a session's last step


def night(steps: list[dict], step_id: str, last: datetime, nxt: datetime) -> bool:
    """Append an ``idle: 8h`` step ``step_id`` one hour after ``last`` (a session's last step)
    when it ends by ``nxt`` (the next step); True when it was added (consolidation then runs
    between the sessions: LoCoMo's ``--annotations``, BEAM's ``--hints silver``).

    >>> steps = []; night(steps, "night_1", datetime(2024, 3, 4, 21, 0), datetime(2024, 3, 5, 8, 0)), steps
    (True, [{'id': 'night_1', 'at': '2024-03-04T22:00:00', 'idle': '8h'}])
    >>> night(steps, "night_2", datetime(2024, 3, 4, 21, 0), datetime(2024, 3, 5, 5, 0))     # under 9 h: no night
    False
    """
    at = last + timedelta(seconds=NIGHT_AFTER)
    if at + timedelta(seconds=NIGHT) > nxt:
        return False
    steps.append({"id": step_id, "at": iso(at), "idle": "8h"})
    return True


def spaced(start: datetime, n: int, gap: float, until: datetime | None) -> list[datetime]:
    """n moments from ``start``, ``gap`` seconds apart, squeezed to end before ``until``
    (the next session's start) when they would run past it; whole seconds.

    >>> [m.strftime("%H:%M:%S") for m in spaced(datetime(2023, 5, 8, 13, 0), 3, 60, None)]
    ['13:00:00', '13:01:00', '13:02:00']
    >>> [m.strftime("%H:%M:%S") for m in spaced(datetime(2023, 5, 8, 13, 0), 3, 60, datetime(2023, 5, 8, 13, 1))]
    ['13:00:00', '13:00:20', '13:00:40']
    """
    if until is not None and n and start + timedelta(seconds=gap * n) > until:
        gap = max(0.0, (until - start).total_seconds() / n)
    return [start + timedelta(seconds=int(gap * i)) for i in range(n)]
