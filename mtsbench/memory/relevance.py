"""How a search measures relevance: the ``retrieval`` group (``retrieval.relevance``).

``TieredSearch`` scores a candidate ``relevance_weight * relevance + attention_weight *
attention / 10`` (or a preset's formula over the same relevance). What ``relevance`` is,
and which memories a tier search considers, is this component's:

- ``Cosine`` (``retrieval=dense``, the default): the cosine of query and memory
  embeddings; a tier search considers what the vector index returns (all members of an
  exact-scanned tier, the ``candidates`` nearest of a graph tier).
- ``Bm25`` (``retrieval=bm25``): relevance = bm25(q, d) / bound(q), the Lucene BM25 of
  ``memory.lexical`` divided by bound(q) = sum over the query's terms of qtf * idf, which no
  memory reaches (each term's tf part is below 1): a share in [0, 1), comparable to a cosine
  in the weighted sum and independent of which candidates are scored together. A tier
  search considers what the dense search would in an exact-scanned tier (every member;
  BM25 0 for those sharing no term with the query) and, in a graph tier, the
  ``candidates`` best BM25 matches; BM25 comes from the postings of the memories marked
  with the tier (``LexicalTiers.lexical``).
- ``Hybrid`` (``retrieval=hybrid``): reciprocal-rank fusion (Cormack et al., SIGIR 2009) of
  the two rankings over the candidates scored together::

      rrf(d)       = w_dense / (k_rrf + rank_dense(d)) + w_bm25 / (k_rrf + rank_bm25(d))
      relevance(d) = rrf(d) / ((w_dense + w_bm25) / (k_rrf + 1))

  ranks count from 1 (ties share the best rank: 1 + the number of candidates strictly
  better); a candidate with BM25 0 has no BM25 rank and no BM25 term. The division makes a
  candidate first in both rankings 1, so relevance lies in (0, 1] like a cosine. A tier
  search considers the union of the dense and the BM25 candidates of the tier; a BM25
  candidate the vector index did not return gets its cosine computed directly (one
  distance each, counted in ``index.work_.distances``).

The lexical parts apply to searches that carry a query text (probes and replies:
``Memory.search(..., text=)``); a search by a memory's vector alone (association at
labelling, consolidation, identity) has no text and stays dense. With ``retrieval=hybrid``
the score inside the tier walk (what ``depth=escalate`` compares with its confidence)
fuses the ranks of the candidates found so far, and the final ranking those of all the
tiers searched.

Cost (``SearchCost.scored``, memories scored) of a tier search = the candidates it scores
(as for dense: every member of an exact tier, the candidates returned by a graph tier, and
under hybrid the BM25-only candidates whose cosine it computed) + every BM25 posting read
(one (query term, memory) pair looked at, valid or stale), each read once per search, at
its first tier, whatever tier its memory is in: a posting read is the lexical counterpart
of a distance computation, and there is no separate column for it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..core.params import NonNegative, Share, declared
from .lexical import LexicalTiers, QueryTerms

MIN_BOUND = 1e-12


class Relevance(Protocol):
    """What ``TieredSearch`` asks of ``retrieval.relevance``."""

    lexical: bool                      # needs the query text and a ``LexicalTiers`` index

    def relevance(self, dense: np.ndarray, lexical: np.ndarray, bound: float) -> np.ndarray: ...


class LexicalRelevance(Relevance, Protocol):
    """A relevance with ``lexical = True``: it keeps BM25 postings beside the tier index and
    proposes each tier's candidates itself."""

    def wrap(self, store, index) -> LexicalTiers: ...

    def candidates(self, store, index: LexicalTiers, tier: int, q: np.ndarray, terms: QueryTerms,
                   n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]: ...


def competition_rank(x: np.ndarray) -> np.ndarray:
    """1 + the number of entries strictly greater (ties share the best rank).

    >>> competition_rank(np.array([0.2, 0.9, 0.2, 0.5])).tolist()
    [3, 1, 3, 2]
    """
    x = np.asarray(x, dtype=float)
    return np.searchsorted(np.sort(-x), -x, side="left") + 1


def rrf(dense: np.ndarray, lexical: np.ndarray, w_dense: float, w_bm25: float, k_rrf: float,
        scale: float = 1.0) -> np.ndarray:
    """w_dense / (k_rrf + rank_dense) + w_bm25 / (k_rrf + rank_bm25), no BM25 term where lexical is 0.

    >>> rrf(np.array([0.9, 0.1, 0.5]), np.array([0.0, 2.0, 1.0]), 1.0, 1.0, 60).round(6).tolist()
    [0.016393, 0.032266, 0.032258]

    (1/61; 1/63 + 1/61; 1/62 + 1/62: dense ranks 1, 3, 2; BM25 ranks -, 1, 2.) ``scale``
    multiplies each term (``Hybrid`` uses k_rrf + 1: a first rank then gives its weight exactly).
    """
    lexical = np.asarray(lexical, dtype=float)
    out = w_dense * scale / (k_rrf + competition_rank(dense))
    has = lexical > 0
    if has.any():
        out[has] += w_bm25 * scale / (k_rrf + competition_rank(lexical[has]))
    return out


def lookup(sorted_ids: np.ndarray, values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """values[j] where sorted_ids[j] == id, 0 where ``ids`` holds an id not in ``sorted_ids``.

    >>> lookup(np.array([2, 5]), np.array([0.5, 0.7]), np.array([5, 3, 2])).tolist()
    [0.7, 0.0, 0.5]
    """
    ids = np.asarray(ids, dtype=np.int64)
    if not len(sorted_ids):
        return np.zeros(len(ids))
    pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == ids, values[pos], 0.0)


class Cosine:
    """Dense relevance: the cosine the vector index returns (``retrieval=dense``)."""

    lexical = False

    def relevance(self, dense, lexical, bound):
        return dense


@declared
class Bm25:
    """Lexical relevance: bm25 / bound (see the module). ``k1``: tf saturation; ``b``:
    length normalisation (0 none, 1 full).

    >>> Bm25().relevance(np.zeros(2), np.array([1.0, 3.0]), 4.0).tolist()
    [0.25, 0.75]
    """

    lexical = True

    def __init__(self, k1: NonNegative = 1.5, b: Share = 0.75):
        self.k1 = k1
        self.b = b

    def wrap(self, store, index) -> LexicalTiers:
        """The memory's tier index with BM25 postings kept beside it."""
        return LexicalTiers(index, store, k1=self.k1, b=self.b)

    def relevance(self, dense, lexical, bound):
        lexical = np.asarray(lexical, dtype=float)
        return lexical / bound if bound > MIN_BOUND else np.zeros_like(lexical)

    def candidates(self, store, index: LexicalTiers, tier: int, q: np.ndarray, terms: QueryTerms, n: int):
        """(ids, dense, lexical, scored) of one tier: every member of an exact-scanned tier (BM25
        0 for those sharing no term), the n best BM25 matches of a graph tier; scored = the
        candidates + the postings read. ``dense`` is not computed (zeros)."""
        from .topk import rank

        l_ids, l_sc, read = index.lexical(tier, terms)
        if index.tiers[tier].kind == "exact":
            ids = index.tiers[tier].members()
            lex = lookup(l_ids, l_sc, ids)
        else:
            keep = np.sort(rank(l_sc, n)) if len(l_ids) > n else np.arange(len(l_ids))
            ids, lex = l_ids[keep], l_sc[keep]
        return ids, np.zeros(len(ids)), lex, len(ids) + read


@declared
class Hybrid(Bm25):
    """Reciprocal-rank fusion of cosine and BM25 (formula in the module docstring).

    >>> h = Hybrid(w_dense=1.0, w_bm25=1.0, k_rrf=60)
    >>> h.relevance(np.array([0.9, 0.1]), np.array([0.5, 2.0]), 3.0).round(4).tolist()   # (1/61 + 1/62) / (2/61)
    [0.9919, 0.9919]
    """

    def __init__(self, w_dense: NonNegative = 1.0, w_bm25: NonNegative = 1.0, k_rrf: NonNegative = 60.0,
                 k1: NonNegative = 1.5, b: Share = 0.75):
        super().__init__(k1, b)
        self.w_dense = w_dense
        self.w_bm25 = w_bm25
        self.k_rrf = k_rrf

    def relevance(self, dense, lexical, bound):
        total = self.w_dense + self.w_bm25
        if len(dense) == 0 or total <= 0:
            return np.zeros(len(dense))
        return rrf(dense, lexical, self.w_dense, self.w_bm25, self.k_rrf, scale=self.k_rrf + 1.0) / total

    def candidates(self, store, index: LexicalTiers, tier: int, q: np.ndarray, terms: QueryTerms, n: int):
        """The tier's dense candidates and its BM25 ones (see ``Bm25.candidates``), united;
        scored = dense scored + postings read + cosines computed for BM25-only candidates."""
        from .graph_index import unit
        from .topk import rank

        d_ids, d_sims, d_scored = index.query(tier, q, n)
        l_ids, l_sc, read = index.lexical(tier, terms)
        top = l_ids if index.tiers[tier].kind == "exact" or len(l_ids) <= n else l_ids[np.sort(rank(l_sc, n))]
        extra = np.setdiff1d(top, d_ids)
        if len(extra):
            sims = (unit(store.vectors[extra]) @ unit(np.asarray(q)[None, :])[0]).astype(float)
            index.work_.add(distances=len(extra))
        else:
            sims = np.zeros(0)
        ids = np.concatenate([np.asarray(d_ids, dtype=np.int64), extra])
        dense = np.concatenate([np.asarray(d_sims, dtype=float), sims])
        return ids, dense, lookup(l_ids, l_sc, ids), d_scored + read + len(extra)


__all__ = ["Relevance", "LexicalRelevance", "lookup", "Cosine", "Bm25", "Hybrid", "rrf", "competition_rank"]
