"""Answers that copy a prompt's example (issue 27): the output-side check of ``mtsbench calibrate``.

A small model copies what a prompt shows as an example: Qwen2.5-Coder-1.5B made "muddy boots
by the door" an impression in 6 of 20 infer answers, and gave event categories the
``course.`` prefix of the summarize example. ``tests/test_prompt_leaks.py`` keeps examples
from naming what a scenario expects (input side); this module finds the copies in a run's
answers (output side), so a recording can be judged before it is fitted.

The examples checked are each task's ``Task.examples``: the phrases its prompts show as
examples now, and those they showed before (a recording made with an older prompt is still
checked). An answer (a fact's key or text, an event's category, an impression's or
conjecture's key or text, read from the run's trace) copies an example when it holds what
the example says and the scenario's own text does not:

- a phrase of words: at least ``min(2, n)`` of its ``n`` content words (three letters or
  more, not a function word), whole words, case-insensitive, that no step of the scenario
  contains;
- a dotted name (``course.sailing``): the answer's name starts with the example's first part
  (``course.``, unless it is ``user``) or holds two of its parts, when the scenario's text
  has not that part;
- Chinese: the phrase itself.

``copies(run)`` is one row per copying answer (scenario, task, what, answer, example);
``count(rows, answers)`` the count per task.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from ..llm.heuristics import FUNCTION_WORDS

_WORD = re.compile(r"[a-z]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
GENERIC_PARTS = frozenset({"user"})       # a dotted name's first part that copies nothing


def _words(text: str) -> set[str]:
    return set(_WORD.findall(str(text).lower()))


def _content(phrase: str) -> list[str]:
    return [w for w in _WORD.findall(phrase.lower()) if len(w) >= 3 and w not in FUNCTION_WORDS]


def copied(answer: str, example: str, source: str = "") -> bool:
    """Whether ``answer`` copies ``example`` (module docstring), given the scenario's text ``source``.

    >>> copied("user.walk.rain", "muddy boots by the door"), copied("Muddy boots suggest a hike", "muddy boots by the door")
    (False, True)
    >>> copied("course.flight", "course.sailing"), copied("course.flight", "course.sailing", "a cooking course")
    (True, False)
    >>> copied("user.skill.cooking", "user.skill.chess"), copied("门口沾泥的靴子说明他去过花园", "门口沾泥的靴子")
    (False, True)
    """
    answer, example, source = str(answer), str(example), str(source)
    if _CJK.search(example):
        return example in answer and example not in source
    have, known = _words(answer), _words(source)
    if "." in example and " " not in example:
        parts = [p for p in example.lower().split(".") if p]
        first = parts[0] if parts else ""
        mine = [p for p in answer.lower().split(".") if p]
        if first and first not in GENERIC_PARTS and mine and mine[0] == first and first not in known:
            return True
        return len([p for p in parts if p in have and p not in known and p not in GENERIC_PARTS]) >= 2
    marks = _content(example)
    need = min(2, len(marks))
    return need > 0 and len([w for w in marks if w in have and w not in known]) >= need


def scenario_texts(run) -> dict[str, str]:
    """Every step text of each scenario of ``run`` (a ``mtsbench.api.Run``), by scenario id,
    from the scenarios its saved config names (an empty dict when they cannot be loaded)."""
    import yaml

    from ..scenario.catalog import resolve
    from ..scenario.loader import load_scenario

    config = Path(run.path) / ".hydra" / "config.yaml"
    try:
        items = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("scenarios") or []
        paths = resolve(list(items))
    except Exception:  # noqa: BLE001 - no config, or scenarios moved since: checked without their text
        return {}
    out = {}
    for path in paths:
        try:
            s = load_scenario(path)
        except Exception:  # noqa: BLE001 - one that does not load is checked without its text
            continue
        out[s.id] = "\n".join(str(step.text) for step in s.steps if step.text)
    return out


def answers(trace: pd.DataFrame) -> pd.DataFrame:
    """scenario, task, what, answer: every name and text a task answered, as the trace has them."""
    rows = []
    if "event" not in trace:
        return pd.DataFrame(columns=["scenario", "task", "what", "answer"])
    for r in trace.itertuples(index=False):
        d = r._asdict()
        event, kind = d.get("event"), d.get("kind")
        if event == "created" and kind in ("fact", "conjecture"):
            task = "summarize" if kind == "fact" else "infer"
            rows += [(d["scenario"], task, f"{kind} {f}", d.get(f)) for f in ("key", "text")]
        elif event == "event":
            rows.append((d["scenario"], "summarize", "event category", d.get("category")))
        elif event == "impression":
            rows += [(d["scenario"], "infer", f"impression {f}", d.get(f)) for f in ("key", "text")]
    frame = pd.DataFrame(rows, columns=["scenario", "task", "what", "answer"])
    keep = [isinstance(v, str) and bool(v.strip()) for v in frame["answer"]]
    return frame.loc[keep].reset_index(drop=True)       # a list: an empty one selects no row, not no column


def copies(run, examples: dict[str, tuple[str, ...]] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the run's answers, the rows of those that copy an example of their task: scenario,
    task, what, answer, example). ``examples``: per task (default: each task's ``examples``)."""
    if examples is None:
        from ..llm.tasks import REGISTRY

        examples = {name: t.examples for name, t in REGISTRY.items() if t.examples}
    said = answers(run.trace)
    texts = scenario_texts(run)
    rows = []
    for a in said.itertuples(index=False):
        ex = next((ex for ex in examples.get(a.task, ()) if copied(a.answer, ex, texts.get(a.scenario, ""))), None)
        if ex is not None:                       # one row per copying answer: the first example it copies
            rows.append((a.scenario, a.task, a.what, a.answer, ex))
    return said, pd.DataFrame(rows, columns=["scenario", "task", "what", "answer", "example"])


def count(said: pd.DataFrame, rows: pd.DataFrame) -> dict:
    """Per task: the answers checked, those copying an example, and the count per example.

    >>> said = pd.DataFrame({"task": ["infer", "infer", "summarize"]})
    >>> rows = pd.DataFrame({"task": ["infer"], "answer": ["x"], "example": ["muddy boots"]})
    >>> count(said, rows)
    {'infer': {'answers': 2, 'copies': 1, 'examples': {'muddy boots': 1}}, 'summarize': {'answers': 1, 'copies': 0, 'examples': {}}}
    """
    out = {}
    for task in sorted(set(said["task"]) | set(rows["task"])):
        mine = rows[rows["task"] == task]
        out[task] = {"answers": int((said["task"] == task).sum()), "copies": int(len(mine)),
                     "examples": {str(k): int(v) for k, v in mine["example"].value_counts().items()}}
    return out
