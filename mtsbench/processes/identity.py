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
the memories scored (metered like every process search).
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
    if k <= 0:
        return []
    found = memory.search(vector, k * overfetch, motivation)
    ids, rel = np.asarray(found.ids, dtype=np.int64), np.asarray(found.relevance, dtype=float)
    keep = np.array([memory.kind(int(i)) == kind and memory.alive(int(i)) for i in ids], dtype=bool)
    keep &= rel >= min_relevance
    ids, rel = ids[keep], rel[keep]
    order = np.lexsort((ids, -rel))[:k]
    return [int(i) for i in ids[order]]
