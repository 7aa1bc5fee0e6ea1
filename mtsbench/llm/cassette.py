"""Record/replay cassettes: one JSON object per line, appended atomically by any process.

A line records one request of a real backend and what came back::

    {"key": sha256, "backend": "openai", "model": "...", "params": {"temperature": 0.0, ...},
     "task": "rate_attention", "messages": [...], "mode": "json_schema", "scenario": "milk_allergy",
     "response": {"text": "...", "prompt_tokens": 120, "completion_tokens": 8, "retries": 0}}

or, for a request that failed after the client's retries, ``"error": "<one line>"`` and
``"retries"`` in place of ``response``. ``key`` is ``request_key(backend, model, task,
messages, params)``: the sha256 of their canonical JSON. ``scenario`` is the id of the scenario
running when the request was sent (absent outside one, and in cassettes recorded before it
was kept): the same request in two scenarios is two records, since a real model's answers to
one request differ a little from one server session to the next (its log-probabilities do),
and a replay serves each scenario its own (``Cassette.next``). Nothing else is stored — no
headers, no API key: every text of a record goes through ``errors.redact`` as it is
appended, so a server echoing the key in an answer (and the later prompts quoting that
answer) leaves ``<redacted>`` in the cassette, not the key.

Concurrent writers (a sweep's jobs on the joblib launcher) lose no line and tear none:
``append`` opens the file with O_APPEND and writes each line with one ``os.write`` while
holding an exclusive ``fcntl.flock`` on it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections import defaultdict
from pathlib import Path


def request_key(backend: str, model: str, task: str, messages: list[dict], params: dict) -> str:
    """sha256 (hex) of the canonical JSON of a request's identity.

    >>> k = request_key("openai", "m", "infer", [{"role": "user", "content": "hi"}], {"temperature": 0.0})
    >>> len(k), k == request_key("openai", "m", "infer", [{"role": "user", "content": "hi"}], {"temperature": 0.0})
    (64, True)
    >>> k == request_key("openai", "m", "infer", [{"role": "user", "content": "hi"}], {"temperature": 0.5})
    False
    """
    blob = json.dumps({"backend": backend, "model": model, "task": task, "messages": messages, "params": params},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _redacted(value):
    """``value`` with every string in it through ``errors.redact`` (the key read from the
    environment, and text shaped like a key).

    >>> _redacted({"a": ["Bearer sk-abcdef123456", 3], "b": None})
    {'a': ['Bearer <redacted>', 3], 'b': None}
    """
    from ..errors import redact

    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v) for v in value]
    return value


def running_scenario() -> str | None:
    """The id of the scenario running now (``scenario.model.RUNNING``), None outside one."""
    from ..scenario.model import RUNNING

    scenario = RUNNING.get()
    return scenario.id if scenario is not None else None


def append(path: str | os.PathLike, record: dict) -> None:
    """Append ``record`` (its texts redacted) as one JSON line: O_APPEND, one os.write, under
    an exclusive flock."""
    record = {k: v if k == "key" else _redacted(v) for k, v in record.items()}
    data = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            written = os.write(fd, data)
            while written < len(data):  # a short write on a regular file is rare; finish under the lock
                written += os.write(fd, data[written:])
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def read(path: str | os.PathLike) -> list[dict]:
    """Every record of a cassette, in file order (ValueError naming the line if one is not JSON)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: line {n} is not JSON ({e.msg})") from None
    return out


class Cassette:
    """The records of a cassette indexed by key; ``next(key, scenario)`` serves them in recorded order.

    The n-th request with a key in a scenario gets the n-th record of that key recorded in that
    scenario, and the last one once they run out (a prompt asked more often than when recording
    gets the latest answer). A key the scenario has no record of (a request outside any
    scenario, or a cassette recorded before records named their scenario) is served from all
    the key's records in file order, counted apart. So what a scenario is answered does not
    depend on which other scenarios run in the same process, nor in which order.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.jsonl")
    >>> for who, text in [("a", "1"), ("b", "2"), (None, "3")]:
    ...     append(path, {"key": "k", "response": {"text": text}} | ({"scenario": who} if who else {}))
    >>> c = Cassette(path)
    >>> [c.next("k", s)["response"]["text"] for s in ["b", "a", "a", None, "z"]]
    ['2', '1', '1', '1', '2']
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.records = read(self.path)
        self._by_key: dict[str, list[dict]] = defaultdict(list)
        for r in self.records:
            self._by_key[r["key"]].append(r)
        self._served: dict[tuple[str | None, str], int] = defaultdict(int)

    def profiles(self) -> list[dict]:
        """The distinct (backend, model, params) the cassette was recorded with."""
        seen = {}
        for r in self.records:
            p = {"backend": r["backend"], "model": r["model"], "params": r["params"]}
            seen.setdefault(json.dumps(p, sort_keys=True), p)
        return list(seen.values())

    def next(self, key: str, scenario: str | None = None) -> dict | None:
        records = self._by_key.get(key)
        if not records:
            return None
        own = [r for r in records if scenario is not None and r.get("scenario") == scenario]
        pool, slot = (own, (scenario, key)) if own else (records, (None, key))
        n = self._served[slot]
        self._served[slot] = n + 1
        return pool[min(n, len(pool) - 1)]
