"""Retrieval through the tiers: score = relevance_weight * relevance + attention_weight * attention / 10
(relevance: the cosine by default; BM25 or their fusion with ``retrieval=bm25``, ``hybrid``).

A cosine is scored relative to the embedder's chance level (issue 36), as the mock reads
relevance and arousal its neighbours: given the chance level (m, sd) of the memory's
embedder (the mean and spread of its cosines of unrelated texts, ``mtsbench.embed.chance``;
``Memory.search`` passes it), the weighted sum scores a cosine r as
``relevance_sd * (r - m) / sd``: the cosine re-read on a reference scale whose chance level
is 0 ± ``relevance_sd`` (0.05; hashing's is 0.026 ± 0.047, so its scores barely move), so
that ``relevance_weight`` and ``attention_weight`` weigh relevance against attention alike
for every embedder. Without it an embedder whose cosines all lie within a few hundredths
(multilingual-e5-small: 0.794 ± 0.026) was ranked by attention alone, and one with widely
spread cosines by relevance alone. The shift changes no ranking; only the stretch does.
``relevance_sd: null`` scores the raw cosine. BM25 shares and hybrid fusions are not
cosines and are scored as they are; a ``Retrieval`` reports the raw relevance either way.

``TieredSearch.search`` walks the tiers from the top, as deep as the depth policy allows
for the task's solving motivation, scoring each tier's candidates (all members of an
exact tier; the ``candidates`` nearest of an HNSW tier) and returns the global top k with
an exact ``SearchCost``: memories scored, tiers searched, index queries.

Query-time scoring is the ``score`` method: a subclass (``memory.scoring``) may replace
the weighted sum, normalise over the candidates, or exclude a candidate by scoring it
``-inf`` (a forgotten memory). The final ranking scores all candidates of the tiers
searched together. ``context`` is how many memories a probe retrieves into the agent's
working context (and so recalls); the probe is judged on the first k of them.

``rank_to`` (evaluation only) also ranks the memories already scored down to that depth
(``Retrieval.ranked``); the tier walk, the cost and the top k do not change with it.

``relevance`` (the ``retrieval`` group: ``retrieval=dense``, ``bm25``, ``hybrid``; see
``memory.relevance``) says what relevance is and which memories a tier search considers.
None or ``Cosine`` (the default) is the dense search above, unchanged; ``Bm25`` and
``Hybrid`` need the query text (``search(..., text=)``) and the memory's tier index
wrapped by ``tier_index`` (BM25 postings with a tier mark per memory, ``memory.lexical``); a search without
text stays dense.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..mechanisms.depth import DepthPolicy
from ..core.params import Count, NonNegative, Positive, declared
from .attention import DualAttention
from .index import TierIndexes
from .store import MemoryStore
from .topk import kth_largest, rank


@dataclass
class SearchCost:
    """What searching cost; ``+=`` adds another search's cost (tiers: the deepest)."""

    scored: int = 0
    tiers_searched: int = 0
    index_queries: int = 0

    def __iadd__(self, other: "SearchCost") -> "SearchCost":
        self.scored += other.scored
        self.tiers_searched = max(self.tiers_searched, other.tiers_searched)
        self.index_queries += other.index_queries
        return self


@dataclass
class Retrieval:
    """Ranked result of one search (best first): the top k, and ``ranked``, the ids of a
    possibly deeper ranking of the same scored memories (top max(k, rank_to)) for evaluation,
    with their scores, relevance and attention (NaN where attention was not evaluated)."""

    ids: np.ndarray
    scores: np.ndarray
    relevance: np.ndarray
    attention: np.ndarray
    cost: SearchCost = field(default_factory=SearchCost)
    ranked: np.ndarray | None = None
    ranked_scores: np.ndarray | None = None
    ranked_relevance: np.ndarray | None = None
    ranked_attention: np.ndarray | None = None

    def __post_init__(self):
        if self.ranked is None:
            self.ranked, self.ranked_scores = self.ids, self.scores
        if self.ranked_relevance is None:
            self.ranked_relevance, self.ranked_attention = self.relevance, self.attention


@declared
class TieredSearch:
    """Search tier by tier down to the depth the motivation affords."""

    def __init__(self, relevance_weight: NonNegative = 1.0, attention_weight: NonNegative = 0.3, candidates: Count = 50,
                 context: Count | None = None, relevance=None, relevance_sd: Positive | None = 0.05):
        self.relevance_weight = relevance_weight
        self.attention_weight = attention_weight
        self.candidates = candidates
        self.context = context
        self.relevance = relevance
        self.relevance_sd = relevance_sd

    def scored_cosine(self, cosine: np.ndarray, chance: tuple[float, float] | None) -> np.ndarray:
        """The cosine as the weighted sum scores it: ``relevance_sd * (cosine - m) / sd`` at
        the embedder's chance level (m, sd); as it is without one or with ``relevance_sd`` null.

        >>> TieredSearch().scored_cosine(np.array([0.794, 0.846]), (0.794, 0.026)).round(3).tolist()
        [0.0, 0.1]
        """
        if chance is None or self.relevance_sd is None:
            return cosine
        return self.relevance_sd * (np.asarray(cosine, dtype=float) - chance[0]) / chance[1]

    def lexical(self) -> bool:
        """Does the relevance need the query text (BM25 or hybrid)?"""
        return bool(getattr(self.relevance, "lexical", False))

    def tier_index(self, store: MemoryStore, index):
        """The tier index a memory keeps: ``index`` itself for dense relevance; wrapped with
        BM25 postings and a tier mark per memory (``memory.lexical.LexicalTiers``) for a lexical one."""
        return self.relevance.wrap(store, index) if self.lexical() else index

    def combine(self, relevance: np.ndarray, attention: np.ndarray) -> np.ndarray:
        """relevance_weight * relevance + attention_weight * attention / 10."""
        return self.relevance_weight * relevance + self.attention_weight * attention / 10.0

    def score(self, store: MemoryStore, ids: np.ndarray, relevance: np.ndarray, attention: np.ndarray,
              now: float) -> np.ndarray:
        """Scores of the candidates ``ids`` (``-inf`` excludes one); here ``combine``."""
        return self.combine(relevance, attention)

    def bounded(self, store: MemoryStore, attention: DualAttention, ids: np.ndarray, relevance: np.ndarray,
                now: float, top: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, attention) of the weighted sum, attention evaluated only where it can matter.

        Attention lies in [0, cap], so a candidate's score lies in [lo, hi] with lo =
        relevance_weight * relevance and hi = lo + attention_weight * cap / 10. Only the
        candidates with hi >= the ``top``-th largest lo can be among the ``top`` best; they get
        their exact score and attention, the others their lower bound lo (strictly below
        ``top`` exact scores, so they never enter the top) and NaN attention.

        >>> from mtsbench.mechanisms.decay import NoDecay
        >>> s = MemoryStore(dim=2)
        >>> ids = s.add_many(["a", "b", "c"], "turn", created=0.0, vectors=np.eye(2)[[0, 1, 1]], provenance=[(), (), ()])
        >>> att = DualAttention(NoDecay(), NoDecay()); att.label(s, ids, np.array([10.0, 0.0, 0.0]), 0.0)
        >>> scores, a = TieredSearch(attention_weight=0.3).bounded(s, att, ids, np.array([0.5, 0.9, 0.1]), 0.0, 2)
        >>> scores.round(2).tolist(), a.tolist()           # top 2: c (0.1 + at most 0.3 < 0.5) is not evaluated
        ([0.8, 0.9, 0.1], [10.0, 0.0, nan])
        """
        lo = self.relevance_weight * relevance
        hi = lo + self.attention_weight * attention.cap / 10.0
        threshold = kth_largest(lo, top) if len(lo) > top else -np.inf
        need = (hi >= threshold).nonzero()[0]
        att = np.full(len(ids), np.nan)
        att[need] = attention.total(store, ids[need], now)
        scores = lo.copy()
        scores[need] = self.combine(relevance[need], att[need])
        return scores, att

    def search(self, store: MemoryStore, attention: DualAttention, index: TierIndexes, depth: DepthPolicy,
               query: np.ndarray, k: int, motivation: float, now: float, rank_to: int = 0,
               text: str | None = None, chance: tuple[float, float] | None = None) -> Retrieval:
        """Walk the tiers; the weighted sum (``score`` not overridden) evaluates attention
        only for the candidates that can reach the ranking (``bounded``): same ranking.
        ``chance``: the embedder's chance level, against which cosines are scored
        (``scored_cosine``). With a lexical ``relevance`` and a ``text``: ``search_lexical``."""
        if text is not None and self.lexical():
            return self.search_lexical(store, attention, index, depth, query, text, k, motivation, now, rank_to)
        q = query.astype(np.float32)
        limit = depth.limit(motivation, index.n_tiers)
        lazy = type(self).score is TieredSearch.score
        depth_k = max(k, rank_to)
        cost = SearchCost()
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        best, found = -np.inf, 0
        for tier in range(limit):
            ids, rel, scored = index.query(tier, q, max(self.candidates, k))
            cost.scored += scored
            cost.tiers_searched = tier + 1
            cost.index_queries += 1
            if len(ids):
                srel = self.scored_cosine(rel, chance)
                if lazy:
                    scores, att = self.bounded(store, attention, ids, srel, now, 1)
                else:
                    att = attention.total(store, ids, now)
                    scores = self.score(store, ids, srel, att, now)
                parts.append((ids, rel, srel, att))
                best, found = max(best, float(scores.max())), found + int(np.isfinite(scores).sum())
            if tier + 1 < limit and not depth.go_deeper(tier + 1, best, found, k):
                break
        if not parts:
            return _ranked(*(np.zeros(0),) * 4, k, depth_k, cost)
        ids, rel, srel, att = (np.concatenate(x) for x in zip(*parts))
        if lazy:
            scores, att = self.bounded(store, attention, ids, srel, now, depth_k)
        else:
            scores = self.score(store, ids, srel, att, now)
        return _ranked(ids, rel, att, scores, k, depth_k, cost)

    def search_lexical(self, store: MemoryStore, attention: DualAttention, index, depth: DepthPolicy,
                       query: np.ndarray, text: str, k: int, motivation: float, now: float,
                       rank_to: int = 0) -> Retrieval:
        """The tier walk of ``search`` with BM25 or hybrid relevance: each tier's candidates
        come from ``relevance.candidates``; relevance is computed over all the candidates
        found so far (ranks fuse over them), so the walk's best score and the final ranking
        score every candidate of the tiers searched together."""
        q = query.astype(np.float32)
        terms = index.terms(text)
        limit = depth.limit(motivation, index.n_tiers)
        lazy = type(self).score is TieredSearch.score
        depth_k = max(k, rank_to)
        cost = SearchCost()
        parts: list[tuple[np.ndarray, ...]] = []
        best, found = -np.inf, 0
        ids = rel = att = scores = np.zeros(0)
        for tier in range(limit):
            t_ids, dense, lex, scored = self.relevance.candidates(store, index, tier, q, terms,
                                                                  max(self.candidates, k))
            cost.scored += scored
            cost.tiers_searched = tier + 1
            cost.index_queries += 1
            if len(t_ids):
                t_att = np.full(len(t_ids), np.nan) if lazy else attention.total(store, t_ids, now)
                parts.append((t_ids, dense, lex, t_att))
                ids, dense_all, lex_all, att = (np.concatenate(x) for x in zip(*parts))
                rel = self.relevance.relevance(dense_all, lex_all, terms.bound)
                if lazy:
                    scores, att = self.bounded(store, attention, ids, rel, now, 1)
                else:
                    scores = self.score(store, ids, rel, att, now)
                best, found = float(scores.max()), int(np.isfinite(scores).sum())
            if tier + 1 < limit and not depth.go_deeper(tier + 1, best, found, k):
                break
        if parts and lazy:
            scores, att = self.bounded(store, attention, ids, rel, now, depth_k)
        return _ranked(ids, rel, att, scores, k, depth_k, cost)


def _ranked(ids: np.ndarray, rel: np.ndarray, att: np.ndarray, scores: np.ndarray, k: int, depth_k: int,
            cost: SearchCost) -> Retrieval:
    """The candidates with a finite score, best first: the top ``k`` used, the ranking
    ``depth_k`` deep (an empty ``Retrieval`` when none is left)."""
    keep = np.isfinite(scores)
    if not keep.any():
        empty = np.zeros(0)
        return Retrieval(np.zeros(0, dtype=np.int64), empty, empty, empty, cost)
    ids, rel, att, scores = ids[keep], rel[keep], att[keep], scores[keep]
    deep = rank(scores, depth_k)
    top = deep[:k]
    return Retrieval(ids[top], scores[top], rel[top], att[top], cost, ranked=ids[deep], ranked_scores=scores[deep],
                     ranked_relevance=rel[deep], ranked_attention=att[deep])
