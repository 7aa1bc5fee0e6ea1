"""Attention timelines of the memories a scenario's expectations name (``timelines.parquet``).

The named steps are those of ``recall``, ``absent`` and ``order`` on probes and of the
``attention``, ``tier`` and ``arousal`` checks (and their ``above``). After every step the runner samples, for each named step whose
memory exists, its long and short attention and its tier at the simulated time: the cost
is the number of named memories, never the store's size. Plots read only that file. A
system without attention samples nothing (``MemorySystem.sample`` returns []).
"""

from __future__ import annotations

from ..scenario.model import ArousalCheck, Scenario, StepAttentionCheck, TierCheck

COLUMNS = ["scenario", "index", "step", "memory", "t", "long", "short", "tier"]


def named_steps(scenario: Scenario) -> tuple[str, ...]:
    """Step ids that expectations name, in first-mention order.

    >>> from datetime import datetime
    >>> from mtsbench.scenario.model import Expect, Step
    >>> steps = (Step(0, "a", 0.0, "say", "x"), Step(1, "q", 9.0, "probe", "y", expect=Expect(recall=("a",))))
    >>> named_steps(Scenario("s", "t", "en", datetime(2026, 1, 1), (), steps))
    ('a',)
    """
    names: dict[str, None] = {}
    for step in scenario.steps:
        for s in (*step.expect.recall, *step.expect.absent, *step.expect.order):
            names.setdefault(s)
        for c in step.checks:
            if isinstance(c, (StepAttentionCheck, TierCheck, ArousalCheck)):
                names.setdefault(c.step)
                if getattr(c, "above", None):
                    names.setdefault(c.above)
    return tuple(names)


class Timeline:
    """Samples the named memories of one scenario after each step."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario.id
        self.names = named_steps(scenario)
        self.rows: list[dict] = []

    def sample(self, system, step) -> None:
        """Record the named memories' attention parts and tiers after ``step`` (at its end)."""
        if not self.names:
            return
        for name, long, short, tier in system.sample(self.names):
            self.rows.append({"scenario": self.scenario, "index": step.index, "step": step.id, "memory": name,
                              "t": round(float(step.end), 3), "long": round(long, 6),
                              "short": round(short, 6), "tier": tier})
