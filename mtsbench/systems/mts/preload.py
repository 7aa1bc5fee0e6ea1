"""Pre-loaded stores: start each scenario's agent with ``preload.memories`` synthetic memories.

The ``preload`` config node (``memories: 0``, the default, loads nothing)::

    mtsbench run preload.memories=100000 preload.days=365 embedder.dim=256

fills the fresh agent's store before the scenario's first step with memories made as in
``mtsbench.systems.mts.synthetic``: chatter sentences on ``fields`` topic fields in the scenario's
language, embedded by the run's embedder, created over the ``days`` days before the
scenario starts, labelled 1-4 (or 6-9 for a share ``important``) and recalled
Poisson(``recall_rate``) times; their attention is replayed through the run's dual
attention, tiers are assigned by the run's tier policy at the start, each tier's index is
built in one go and the incremental rebalance is scheduled. A ``preloaded`` trace event
records the count and the tier sizes. Pre-loaded memories are turns with provenance
``("preload",)``, so they never satisfy a scenario's ``recall`` expectation: they are
the haystack.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ConfigError
from ...core.params import Count, Natural, NonNegative, Seed, Share, declared
from ...scenario.vocab import FIELDS
from ...core.seeding import generator
from .synthetic import CHUNK, draw_history, field_texts, fill, place


@declared(node="preload")
@dataclass(frozen=True)
class PreloadSpec:
    """The ``preload`` config node; a bad value is a one-line ``ConfigError`` naming ``preload.KEY``."""

    memories: Natural = 0
    days: NonNegative = 365.0
    fields: Count = 12
    important: Share = 0.05
    recall_rate: NonNegative = 0.5
    seed: Seed = 0

    def __post_init__(self):
        if self.fields > len(FIELDS["en"]):
            raise ConfigError(f"preload.fields: expected at most {len(FIELDS['en'])}, got {self.fields}")

    @classmethod
    def from_config(cls, node) -> "PreloadSpec":
        """The spec of a ``preload`` config node (None or missing: nothing to load)."""
        return cls() if node is None else cls(**{k: node[k] for k in node})


def preload(agent, spec: PreloadSpec, language: str = "en") -> np.ndarray:
    """Fill ``agent``'s empty store with ``spec.memories`` memories ending at its clock; returns their ids."""
    if spec.memories == 0:
        return np.zeros(0, dtype=np.int64)
    if agent.store.size:
        raise ValueError("preload needs an empty store")
    rng = generator(spec.seed, "preload", language, str(spec.memories))
    history = draw_history(rng, spec.memories, spec.days, agent.now, spec.important, spec.recall_rate)
    texts, _ = field_texts(rng, spec.memories, language, spec.fields)
    vectors = np.concatenate([agent.embedder.embed(texts[i:i + CHUNK]) for i in range(0, len(texts), CHUNK)])
    ids = fill(agent.store, agent.attention, history, vectors, texts)
    del vectors
    place(agent.store, agent.index, agent.tiering, ids, agent.now)
    agent.trace.append({"t": round(agent.now, 3), "event": "preloaded", "memories": spec.memories,
                        "sizes": agent.index.sizes()})
    return ids
