"""``system=mts``: the seed design (DESIGN §1) as a ``MemorySystem``.

Its parts are the run's mechanism groups and process nodes, one line each in
``configs/system/mts.yaml`` (``arousal: ${arousal}``, ...), named by the group they come from.
Hydra builds them (each part a plain object whose constructor only stores its parameters;
the runner builds a fresh system for each scenario) and passes them as keyword arguments;
``start`` hands each to ``Memory`` or ``MemoryAgent``, as the parameter of that name
(``PARAMETER`` names the few whose parameter is named otherwise), and pre-loads the store
when ``preload.memories`` > 0; the protocol's steps go to the agent; ``read`` answers every
check from memory's state.

A new mechanism group is therefore: its ``configs/GROUP/`` folder with a default in
``configs/config.yaml``, the line ``GROUP: ${GROUP}`` in ``configs/system/mts.yaml``, its
class, and a parameter ``GROUP`` of the ``Memory`` or ``MemoryAgent`` that uses it (and its
checker, ``mtsbench.evaluation.checks``). The parts ``MtsSystem`` takes are read from those
two signatures (``PARTS``), so a key of the system's config that is no part is refused by
``mtsbench.config.check`` as before.

>>> PARTS["dual"], PARTS["retrieval"], PARTS["attention"], PARTS["arousal"]
(('memory', 'attention'), ('memory', 'retriever'), ('agent', 'labeller'), ('memory', 'arousal'))
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
from omegaconf import OmegaConf

from .agent import MemoryAgent
from ...memory.memory import Memory
from ...memory.store import KIND_CODE
from ...core.params import Count, declared
from .preload import PreloadSpec, preload
from ...processes.events import EventTracker
from ...scenario.model import ArousalCheck, BeliefCheck, ConjectureCheck, EventCountCheck, StepAttentionCheck, TierCheck
from ..base import UNSUPPORTED, Context, EventOf, Idle, Observation, Outcome, Query, Tick, Totals, take_events


@declared(node="agent")
@dataclass(frozen=True)
class Schedule:
    """The ``agent`` node: re-tier every ``rebalance_every`` steps (and on every idle step),
    incrementally (only memories written since or whose decay is due) or all of them."""

    rebalance_every: Count = 20
    incremental_rebalance: bool = True


# The parameters ``MtsSystem.start`` passes itself: every other parameter of the two is a part.
OWN = {"memory": ("index", "incremental_rebalance", "language"),
       "agent": ("memory", "rebalance_every", "language", "day_offset", "context")}
# A part whose parameter is not named as its group: group -> "consumer.parameter".
PARAMETER = {"dual": "memory.attention", "retrieval": "memory.retriever", "attention": "agent.labeller",
             "summarize": "agent.summarizer", "consolidation": "agent.consolidator", "inference": "agent.inferrer"}
CONSUMERS = {"memory": Memory, "agent": MemoryAgent}


def _parts() -> dict[str, tuple[str, str, object]]:
    """group -> (consumer, parameter, default) of every part: the parameters of ``Memory`` and
    ``MemoryAgent`` that ``OWN`` does not name, by group (``PARAMETER``, else the same name)."""
    group = {where: g for g, where in PARAMETER.items()}
    out = {}
    for consumer, cls in CONSUMERS.items():
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
            if p.name not in OWN[consumer]:
                out[group.get(f"{consumer}.{p.name}", p.name)] = (consumer, p.name, p.default)
    return out


_PARTS = _parts()
PARTS = {g: (consumer, name) for g, (consumer, name, _) in _PARTS.items()}
_SIGNATURE = inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    + [inspect.Parameter(g, inspect.Parameter.KEYWORD_ONLY, default=d) for g, (_, _, d) in _PARTS.items()]
    + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in ("index", "agent", "preload")])


def by_consumer(parts: dict) -> dict[str, dict]:
    """The parts by group (``{"dual": DualAttention(...), ...}``) as each consumer's keyword
    arguments: ``{"memory": {"attention": ...}, "agent": {...}}``."""
    out: dict[str, dict] = {c: {} for c in CONSUMERS}
    for group, part in parts.items():
        consumer, name = PARTS[group]
        out[consumer][name] = part
    return out


def required() -> list[str]:
    """The groups whose part its consumer cannot do without (no default)."""
    return [g for g, (_, _, d) in _PARTS.items() if d is inspect.Parameter.empty]


class MtsSystem:
    """The seed design, built per scenario from its parts (one keyword argument per group,
    ``PARTS``) and the ``index``, ``agent`` and ``preload`` nodes (kept as given)."""

    labels = True         # every observed item is labelled (mtsbench.systems.base)

    def __init__(self, **kwargs):
        bound = _SIGNATURE.bind(self, **kwargs)      # an unknown or missing part: TypeError naming it
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            setattr(self, name, value)

    __init__.__signature__ = _SIGNATURE

    def start(self, context: Context) -> None:
        """Build memory and its agent from the parts: once, as the parts then hold this
        scenario's state (the runner builds a system for each scenario)."""
        if hasattr(self, "memory_"):
            raise RuntimeError("an MtsSystem starts once: its parts now serve its scenario; build another")
        schedule = Schedule(**(self.agent or {}))
        given = by_consumer({g: getattr(self, g) for g in PARTS})
        self.memory_ = Memory(**given["memory"], index=_plain(self.index),
                              incremental_rebalance=schedule.incremental_rebalance, language=context.language)
        start = context.start
        self.agent_ = MemoryAgent(self.memory_, **given["agent"], rebalance_every=schedule.rebalance_every,
                                  language=context.language,
                                  day_offset=start.hour * 3600 + start.minute * 60 + start.second,
                                  context=self.memory_.retriever.context)
        self.events_ = self.agent_.events
        preload(self.memory_, PreloadSpec.from_config(self.preload), context.language)
        self.memory_.embedder.warm([t for t in context.texts if t])

    def observe(self, item: Observation) -> Outcome:
        return self.agent_.observe(item)

    def retrieve(self, query: Query) -> Outcome:
        return self.agent_.retrieve(query)

    def idle(self, idle: Idle) -> Outcome:
        return self.agent_.idle(idle)

    def tick(self, tick: Tick) -> Outcome:
        return self.agent_.tick(tick)

    def finish(self) -> Outcome:
        return self.agent_.finish()

    def context_texts(self, ids) -> list[str]:
        """The texts of memories ``ids`` (a probe's context, for ``mtsbench.evaluation.answer``)."""
        return [self.memory_.text(int(i)) for i in ids]

    @property
    def answer_llm(self):
        """The LLM that answers probes (``mtsbench.evaluation.answer``): the agent's, so its calls are metered with the rest."""
        return self.agent_.llm

    def waiting(self) -> frozenset[str]:
        return frozenset(i.step for i in self.agent_.summarizer.waiting())

    def read(self, query) -> object:
        """The state a check reads (see ``mtsbench.evaluation.evaluate`` for how it is judged)."""
        m = self.memory_
        store = m.store
        if isinstance(query, BeliefCheck):
            ids = (derived_from(store, "fact", (query.from_,)) if query.from_ is not None else
                   [i for i in store.by_key.get(query.key, []) if store.alive[i] and store.kind_of(i) == "fact"])
            ids = [i for i in ids if query.value is None or store.value[i] == query.value]
            return max((float(store.belief[i]) for i in ids), default=None)
        if isinstance(query, ConjectureCheck):
            if query.from_:
                return bool(derived_from(store, "conjecture", query.from_))
            return any(store.alive[i] and store.kind_of(i) == "conjecture" for i in store.by_key.get(query.key, []))
        if isinstance(query, StepAttentionCheck) and query.from_ is not None:
            ids = derived_from(store, "fact", (query.from_,))
            return float(m.attention.total(store, np.array(ids), m.now).max()) if ids else None
        if isinstance(query, StepAttentionCheck):
            i = store.by_step.get(query.step)
            return None if i is None else float(m.attention.total(store, np.array([i]), m.now)[0])
        if isinstance(query, TierCheck):
            i = store.by_step.get(query.step)
            return None if i is None else int(store.tier[i])
        if isinstance(query, ArousalCheck):       # all it received since stored: the runner takes the difference
            i = store.by_step.get(query.step)
            return None if i is None else float(store.aroused[i])
        if isinstance(query, EventCountCheck):
            if query.containing:
                return len(events_containing(self.events_, m, query.containing))
            return self.events_.count(m, query.category)
        if isinstance(query, EventOf):
            found = self.events_.containing(m, query.step)
            return list(store.provenance[found[0]]) if found else None
        return UNSUPPORTED

    def sample(self, steps: tuple[str, ...]) -> list[tuple[str, float, float, int]]:
        m = self.memory_
        found = [(s, m.store.by_step.get(s)) for s in steps]
        found = [(s, i) for s, i in found if i is not None]
        if not found:
            return []
        ids = np.array([i for _, i in found], dtype=np.int64)
        long, short = m.attention.parts(m.store, ids, m.now)
        return [(s, float(lo), float(sh), int(m.store.tier[i])) for (s, i), lo, sh in zip(found, long, short)]

    def take_trace(self, at_least: int = 0) -> list[dict]:
        return take_events(self.memory_.trace, at_least)

    def totals(self) -> Totals:
        meter = self.agent_.llm.meter
        return Totals(llm=meter.totals() | {"by_task": meter.by_task}, processes=self.agent_.processes.totals,
                      memories=self.memory_.store.size, trace=self.memory_.trace)


def derived_from(store, kind: str, steps: tuple[str, ...]) -> list[int]:
    """The live memories of ``kind`` derived from every one of ``steps``: those whose provenance
    lists them all. A fact's provenance is the turns its summary says state it (all the
    summarized turns if it names none) plus those of the restatements merged into it; a
    conjecture's, the steps of the impressions it was formed from or later joined by."""
    n = store.size
    ids = np.flatnonzero(store.alive[:n] & (store.kind[:n] == KIND_CODE[kind]))
    wanted = set(steps)
    return [int(i) for i in ids if wanted.issubset(store.provenance[i])]


def events_containing(tracker: EventTracker, memory, steps: tuple[str, ...]) -> set[int]:
    """The live event memories whose provenance lists at least one of ``steps`` (each event once)."""
    return {i for step in steps for i in tracker.containing(memory, step)}


def _plain(node):
    """A config node as plain containers (None stays None)."""
    if node is None or isinstance(node, dict):
        return node
    return OmegaConf.to_container(node, resolve=True)
