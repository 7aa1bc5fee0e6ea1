"""What a tuning trial is scored on: values of its job's ``summary.json`` (``tune.objectives``).

An objective is a dotted path into ``summary.json``: the defaults,
``overall.evidence.recall@1024t`` (earned evidence recall within a context of 1,024 tokens,
``mtsbench.evaluation.evidence``) and ``cost.overall.per_turn`` (total work per dialogue turn: memories
scored by every kind of search, ``mtsbench.harness.finish``), pair with ``hydra.sweeper.direction``
``[maximize, minimize]``, in order.

``values(job_dir, objectives)`` reads them, or raises ``TrialFailed`` with the reason the
job has none: it failed (its ``failure.json``), it stopped (its ``status``), more of its LLM
calls failed than ``llm.max_failure_rate`` allows, or the value is missing or not a finite
number. A failed trial is marked failed with that reason, never scored.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import ConfigError
from ..core.params import Text, declared

DEFAULT = ("overall.evidence.recall@1024t", "cost.overall.per_turn")
_BUDGET = re.compile(r"^overall\.evidence\.(?:by_category\.[^.]+\.)?(?:[a-z_]*recall)@(\d+)(t?)$")


class TrialFailed(Exception):
    """A trial's job has no objective values; the message is the reason (one line)."""


@declared(node="tune")
@dataclass(frozen=True)
class TuneOptions:
    """The ``tune`` node: ``objectives``, the summary.json values a tuning trial is scored on."""

    objectives: list[Text] = DEFAULT

    def __post_init__(self):
        if not self.objectives:
            raise ConfigError("objectives: expected at least one summary.json path, e.g. "
                              "[overall.evidence.recall@1024t, cost.overall.per_turn]")


def missing_cuts(objectives: Sequence[str], depths: Sequence[int], budgets: Sequence[int]) -> str | None:
    """Why an evidence objective cannot be in a run evaluated at ``depths`` and ``budgets``
    (``evaluation.recall_at``, ``recall_at_tokens``), else None.

    >>> missing_cuts(["overall.evidence.recall@1024t"], [5, 10], [512])
    'overall.evidence.recall@1024t: the runs are not evaluated at 1024 tokens (evaluation.recall_at_tokens: [512])'
    >>> missing_cuts(["overall.evidence.recall@10", "cost.overall.per_turn"], [5, 10], []) is None
    True
    """
    for name in objectives:
        m = _BUDGET.match(name)
        if m and m.group(2) and int(m.group(1)) not in budgets:
            return (f"{name}: the runs are not evaluated at {m.group(1)} tokens "
                    f"(evaluation.recall_at_tokens: {list(budgets)})")
        if m and not m.group(2) and int(m.group(1)) not in depths:
            return f"{name}: the runs are not evaluated at depth {m.group(1)} (evaluation.recall_at: {list(depths)})"
    return None


def lookup(summary: dict, path: str):
    """The value at dotted ``path`` of ``summary`` (keys may hold ``@``), or None.

    >>> lookup({"overall": {"evidence": {"recall@10": 0.5}}}, "overall.evidence.recall@10")
    0.5
    >>> lookup({"cost": {}}, "cost.overall.per_turn") is None
    True
    """
    node = summary
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def values(job_dir: Path, objectives: Sequence[str]) -> list[float]:
    """The objective values of the finished job in ``job_dir``; ``TrialFailed`` (the reason)
    when it has none (module docstring)."""
    job_dir = Path(job_dir)
    failure = job_dir / "failure.json"
    if failure.is_file():
        try:
            body = json.loads(failure.read_text(encoding="utf-8"))
            reason = f"{body.get('type', 'Error')}: {body.get('error', '')}".strip()
        except (OSError, ValueError, AttributeError):
            reason = "failed (failure.json unreadable)"
        raise TrialFailed(reason)
    try:
        summary = json.loads((job_dir / "summary.json").read_text(encoding="utf-8"))
    except OSError:
        raise TrialFailed(f"the job wrote no summary.json in {job_dir}") from None
    except ValueError:
        raise TrialFailed(f"{job_dir / 'summary.json'} is not JSON") from None
    status = summary.get("status", "complete")
    if status == "unreliable":
        raise TrialFailed("more LLM calls failed than llm.max_failure_rate allows (summary.json: status unreliable)")
    if status != "complete":
        why = summary.get("stopped")
        raise TrialFailed(f"the job did not complete (status {status}{': ' + str(why) if why else ''})")
    out = []
    for path in objectives:
        value = lookup(summary, path)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            shown = "missing" if value is None else f"{value!r}, not a finite number"
            raise TrialFailed(f"objective {path} is {shown} in summary.json")
        out.append(float(value))
    return out
