"""The options of a run the runner reads itself (config nodes without a ``_target_``),
declared once as ``mtsbench.core.params`` options classes: the top-level values
(``RunOptions``), ``probes``, ``evaluation`` and ``sweep``. Kept apart from ``mtsbench.harness.runner`` so
checking a config before a sweep launches imports neither the runner nor pandas.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..core.params import Count, Natural, Number, Seed, Share, Text, declared
from ..errors import ConfigError

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
    """The ``evaluation`` node (read by ``mtsbench.evaluation.evidence`` and ``mtsbench.evaluation.credit``
    through ``Evaluation.of``; the defaults, defined here only, are what they read when a key is
    missing, ``configs/config.yaml`` sets each)."""

    recall_at: list[Count] = ()
    recall_at_tokens: list[Count] = ()
    rank_to: Natural = 0                 # 0: as deep as the largest recall_at
    abstain_threshold: Number = 0.5      # on the system's own score scale
    earned_share: Share = 0.5            # of a step's content words a memory's text holds

    @classmethod
    def of(cls, config) -> "Evaluation":
        """The ``evaluation`` node of a whole config (a DictConfig, a plain dict as a run's
        ``results`` saved it, or None); a key missing or null takes its default.

        >>> Evaluation.of({"evaluation": {"recall_at": [50, 5, 5], "rank_to": None}}).depths
        (5, 50)
        >>> e = Evaluation.of(None); (e.depths, e.rank_depth, e.abstain_threshold, e.earned_share)
        ((), 0, 0.5, 0.5)
        """
        node = (config.get("evaluation") or {}) if config is not None else {}
        values = {f.name: node.get(f.name) for f in fields(cls) if node.get(f.name) is not None}
        for key in ("recall_at", "recall_at_tokens"):
            if key in values:
                values[key] = tuple(int(d) for d in values[key])
        for key in ("abstain_threshold", "earned_share"):
            if key in values:
                values[key] = float(values[key])
        if "rank_to" in values:
            values["rank_to"] = int(values["rank_to"] or 0)
        return cls(**values)

    @property
    def depths(self) -> tuple[int, ...]:
        """The evaluation depths (``recall_at``), sorted, without repeats."""
        return tuple(sorted({int(d) for d in self.recall_at}))

    @property
    def budgets(self) -> tuple[int, ...]:
        """The token budgets of recall@Bt (``recall_at_tokens``), sorted, without repeats."""
        return tuple(sorted({int(b) for b in self.recall_at_tokens}))

    @property
    def rank_depth(self) -> int:
        """How deep probes report their ranking: ``rank_to``, at least the largest depth."""
        return max(int(self.rank_to), max(self.depths, default=0))


DEFAULT_MAX_JOBS = 10000      # sweep.max_jobs when the config has none (a --config-dir config.yaml of its own)


@declared(node="sweep")
@dataclass(frozen=True)
class SweepOptions:
    """The ``sweep`` node: a sweep of more jobs than ``max_jobs`` is refused before it starts
    (``mtsbench.harness.preflight``)."""

    max_jobs: Count = DEFAULT_MAX_JOBS
