"""The options of a run the runner reads itself (config nodes without a ``_target_``),
declared once as ``mtsbench.core.params`` options classes: the top-level values
(``RunOptions``), ``probes``, ``evaluation`` and ``sweep``. Kept apart from ``mtsbench.harness.runner`` so
checking a config before a sweep launches imports neither the runner nor pandas.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.params import Count, Natural, Number, Seed, Share, Text, declared
from ..errors import ConfigError

EARNED_SHARE = 0.5   # evaluation.earned_share's default (mtsbench.evaluation.credit)


@declared
@dataclass(frozen=True)
class RunOptions:
    """The config's top-level values: the scenarios (each named once: a run counts every
    scenario it runs) and the seed."""

    scenarios: list[Text] = ()
    seed: Seed = 0

    def __post_init__(self):
        seen: set[str] = set()
        for name in map(str, self.scenarios):
            if name in seen:
                raise ConfigError(f"scenarios: '{name}' is listed twice; expected each scenario once "
                                  f"(a run counts every scenario it runs)")
            seen.add(name)


@declared(node="probes")
@dataclass(frozen=True)
class ProbeOptions:
    """The ``probes`` node: ``motivation`` asks every probe at it (None: each probe's own)."""

    motivation: Share | None = None


@declared(node="evaluation")
@dataclass(frozen=True)
class Evaluation:
    """The ``evaluation`` node (read by ``mtsbench.evaluation.evidence`` and ``mtsbench.evaluation.credit``; the
    defaults are what they read when a key is missing, ``configs/config.yaml`` sets each)."""

    recall_at: list[Count] = ()
    recall_at_tokens: list[Count] = ()
    rank_to: Natural = 0                 # 0: as deep as the largest recall_at
    abstain_threshold: Number = 0.5      # on the system's own score scale (evidence.ABSTAIN_THRESHOLD)
    earned_share: Share = EARNED_SHARE   # of a step's content words a memory's text holds


DEFAULT_MAX_JOBS = 10000      # sweep.max_jobs when the config has none (a --config-dir config.yaml of its own)


@declared(node="sweep")
@dataclass(frozen=True)
class SweepOptions:
    """The ``sweep`` node: a sweep of more jobs than ``max_jobs`` is refused before it starts
    (``mtsbench.harness.preflight``)."""

    max_jobs: Count = DEFAULT_MAX_JOBS
