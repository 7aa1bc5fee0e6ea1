"""Identity without exact strings: the stored memories of one kind most similar to a vector.

A fact, an event or an impression without a key (``llm.tasks.keyless``: imported data, an
LLM that names none) is matched by memory search: ``similar`` finds the candidates — the
live memories of the same kind nearest to its embedding — and the caller asks the LLM to
judge each pair (``judge_relation`` for facts and impressions, ``same_event`` for events).

``Memory.search`` ranks every kind together by relevance and attention, so ``similar``
over-fetches ``k * overfetch`` hits, keeps those of ``kind`` with relevance (cosine) of at
least ``min_relevance`` and returns the best ``k`` by relevance (ties: older first)::

    candidates = top_k { i in search(v, k * overfetch) : kind(i) = kind, alive(i), r_i >= min_relevance }

A kind that is rare among the hits may be missed; the over-fetch factor trades that against
the memories scored (metered like every process search). ``similar_by_kind`` applies the
same rule to several kinds at once from one search (``k * overfetch * len(kinds)`` hits):
the summarizer's known fact keys and event categories cost one search, not two.
"""

from __future__ import annotations

import numpy as np

OVERFETCH = 4


def similar(memory, vector: np.ndarray, kind: str, k: int, motivation: float, min_relevance: float,
            overfetch: int = OVERFETCH) -> list[int]:
    """Ids of the live memories of ``kind`` most similar to ``vector``, best first (see module docstring).

    >>> from types import SimpleNamespace as NS
    >>> found = NS(ids=np.array([4, 2, 7, 9]), relevance=np.array([0.9, 0.5, 0.7, 0.05]))
    >>> m = NS(search=lambda v, k, mot: found, kind=lambda i: "fact" if i != 4 else "turn", alive=lambda i: True)
    >>> similar(m, None, "fact", 5, 1.0, 0.1)
    [7, 2]
    """
    return similar_by_kind(memory, vector, (kind,), k, motivation, min_relevance, overfetch)[kind]


def similar_by_kind(memory, vector: np.ndarray, kinds: tuple[str, ...], k: int, motivation: float,
                    min_relevance: float, overfetch: int = OVERFETCH) -> dict[str, list[int]]:
    """Per kind, the ids ``similar`` would give, from one search (see the module docstring).

    >>> from types import SimpleNamespace as NS
    >>> found = NS(ids=np.array([4, 2, 7, 9]), relevance=np.array([0.9, 0.5, 0.7, 0.3]))
    >>> m = NS(search=lambda v, k, mot: found, kind=lambda i: "fact" if i != 4 else "event", alive=lambda i: True)
    >>> similar_by_kind(m, None, ("fact", "event"), 2, 1.0, 0.1)
    {'fact': [7, 2], 'event': [4]}
    """
    if k <= 0 or not kinds:
        return {kind: [] for kind in kinds}
    found = memory.search(vector, k * overfetch * len(kinds), motivation)
    ids, rel = np.asarray(found.ids, dtype=np.int64), np.asarray(found.relevance, dtype=float)
    alive = np.array([memory.alive(int(i)) for i in ids], dtype=bool) & (rel >= min_relevance)
    of = np.array([memory.kind(int(i)) for i in ids], dtype=object)
    out = {}
    for kind in kinds:
        keep = alive & (of == kind)
        order = np.lexsort((ids[keep], -rel[keep]))[:k]
        out[kind] = [int(i) for i in ids[keep][order]]
    return out
