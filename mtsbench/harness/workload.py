"""The retrieval workload (``workload`` config group): which retrievals a scenario asks for
besides its probes.

- ``Probes`` (the default): only the scenario's probes retrieve, as they always did.
- ``Reply``: every user turn (``kinds``, default ``say``) also retrieves the context its
  reply would use, as a real chat agent does before it answers: ``k`` memories at a
  solving motivation derived from the turn's own labelled attention,
  ``motivation = clip(score / 10, 0, 1)`` (the system's depth policy turns it into tiers;
  ``default_motivation`` when the system rates nothing). The system uses those memories
  as it uses a probe's (the seed design recalls them). This is the fair test of the seed's
  claim that tiers keep a search short: every design now searches on every turn.
"""

from __future__ import annotations

from ..core.params import Kinds, Share, Top, declared
from ..systems.base import Outcome, Query


class Probes:
    """No retrieval beyond the scenario's probes.

    >>> Probes().reply(None, None) is None
    True
    """

    def reply(self, step, outcome: Outcome) -> Query | None:
        return None


@declared
class Reply:
    """Each user turn retrieves ``k`` memories for its reply.

    >>> from mtsbench.scenario.model import Step
    >>> q = Reply(k=3).reply(Step(0, "s0", 60.0, "say", "hi"), Outcome(score=8.0))
    >>> (q.step, q.k, q.motivation, q.purpose)
    ('s0', 3, 0.8, 'reply')
    """

    def __init__(self, k: Top = 5, kinds: Kinds = ("say",), default_motivation: Share = 0.5):
        self.k = k
        self.kinds = tuple(kinds)
        self.default_motivation = default_motivation

    def motivation(self, score: float | None) -> float:
        """clip(score / 10, 0, 1), or ``default_motivation`` without a score."""
        return self.default_motivation if score is None else min(max(score / 10.0, 0.0), 1.0)

    def reply(self, step, outcome: Outcome) -> Query | None:
        if step.kind not in self.kinds:
            return None
        return Query(step.id, step.at, step.text, self.k, self.motivation(outcome.score), self.k, purpose="reply")
