"""``system=bm25``: a plain lexical memory ranked by BM25, the seam's second system.

Every observed item (say, reply, perceive) is one memory, whose provenance is its step;
there is no attention, no tiering, no LLM and no background process. A probe scores its
text against every memory with BM25 (the Lucene variant by default, as computed by the
library ``bm25s``)::

    score(q, d) = sum over the tokens t of q (with repetition) of
                  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with N the number of memories, df(t) the number holding token t, |d| a memory's length
in tokens and avgdl the mean length (Lucene drops the classic ``(k1 + 1)`` factor of the
numerator, which changes no ranking). ``method`` picks another variant of ``bm25s``
(robertson, atire, bm25l, bm25+).

Why ``bm25s`` (https://github.com/xhluca/bm25s) and not ``rank-bm25``: rank-bm25's last
release was in 2022 and it rescores from the raw corpus; bm25s is maintained and
precomputes every (token, document) score into a sparse CSC matrix (numpy, or scipy when
installed), so a query is a few vectorised column sums. Either way an index is built from
a whole corpus; here it is rebuilt lazily, at a probe, only if memories were added since
the last one (``rebuilds_`` counts the builds). The seed design's tiers use the same
formula through an incremental index instead (``memory.lexical``, ``retrieval=bm25``):
see there why.

Tokens (:func:`mtsbench.memory.lexical.tokenize`) suit English and Chinese alike, as the
hashing embedder's do (``mtsbench.embed.hashing``): lower-cased words of Latin letters and
digits, less its stop words; in a run of CJK characters each character (less the stop
characters) and each pair of adjacent characters.

**Context and stemming for real dialogue** (off by default; the LoCoMo study's choice,
tuned on five of its conversations: ``context: 2, self_weight: 2, stemmer: english``). A
turn alone often lacks the words its question uses, which its neighbours hold. With
``context`` = w > 0 a memory is *indexed* as its own tokens repeated ``self_weight`` times
plus the tokens of the w items before and after it in its session (consecutive items at
most ``context_gap`` seconds apart); it is *stored*, shown and charged (tokens, earned
credit) as its own text only. The index is rebuilt at a probe, so a turn's later
neighbours count once they were said (nothing after the probe is seen). ``stemmer``
names a Snowball stemmer of PyStemmer (``english``, ...) applied to memories' and
queries' tokens; null: none.

This system reads no ``retrieval`` node: ``retrieval=dense`` (the default) and
``retrieval=bm25`` change nothing here, and ``retrieval=hybrid`` with ``system=bm25`` is
refused at composition (one line; ``config_rules``).
"""

from __future__ import annotations

import logging
import time
from typing import Literal

import bm25s
import numpy as np

from ..llm.base import estimate_tokens
from ..memory.lexical import tokenize
from ..core.params import Count, Natural, NonNegative, Share, Text, declared
from .base import UNSUPPORTED, Context, Cost, Observation, Outcome, PlainSystem, Query, Ranking

logging.getLogger("bm25s").setLevel(logging.WARNING)   # its index build logs at DEBUG into every run's log

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


@declared
class Bm25System(PlainSystem):
    """A lexical memory: one memory per observed item, ranked by BM25 (see the module).

    ``retrieve`` scores every memory (``cost.scored`` = the store size, one index query,
    one tier) and ranks those with a positive score, best first, ties by memory id (older
    first), ``query.depth`` deep. Memories scoring 0 (with the default method: sharing no
    token with the query) are left out rather than ranked by age, so that a chance hit is
    never counted as recall; a query sharing nothing returns an empty ranking. An empty
    store returns an empty ranking at no cost. ``read`` answers ``UNSUPPORTED`` to every
    state check.

    >>> from mtsbench.systems.base import Context, Observation, Query
    >>> s = Bm25System()
    >>> s.start(Context("demo"))
    >>> texts = ["I drink milk every morning", "The cat sleeps", "Milk makes me sick"]
    >>> [s.observe(Observation(f"s{i}", 60.0 * i, "say", t)).memory for i, t in enumerate(texts)]
    [0, 1, 2]
    >>> out = s.retrieve(Query("p", 600.0, "milk?", k=1, depth=5))
    >>> out.ranking.ids, out.ranking.provenance, out.ranking.tokens
    ([2, 0], [('s2',), ('s0',)], [5, 7])
    >>> out.cost.scored, out.cost.index_queries, out.cost.tiers_searched
    (3, 1, 1)
    >>> s.retrieve(Query("q", 660.0, "weather")).ranking.ids
    []

    With context, a turn is found through its neighbour's words (and stems):

    >>> c = Bm25System(context=1, self_weight=2, stemmer="english")
    >>> c.start(Context("demo"))
    >>> texts = ["Did you see the new puppies?", "Yes, so cute!", "Traffic was bad today", "Next day: rain"]
    >>> [c.observe(Observation(f"s{i}", t, "say", x)).memory for i, (t, x) in enumerate(zip([0, 60, 120, 90000], texts))]
    [0, 1, 2, 3]
    >>> c.retrieve(Query("p", 99999.0, "puppy", k=1, depth=5)).ranking.ids
    [0, 1]
    >>> sorted(c._documents()[3])            # alone in its session: its own tokens twice
    ['day', 'day', 'next', 'next', 'rain', 'rain']
    """

    def __init__(self, k1: NonNegative = 1.5, b: Share = 0.75,
                 method: Literal[METHODS] = "lucene", context: Natural = 0,
                 self_weight: Count = 1, context_gap: NonNegative = 1800.0, stemmer: Text | None = None):
        self.k1 = k1
        self.b = b
        self.method = method
        self.context = context
        self.self_weight = self_weight
        self.context_gap = context_gap
        self.stemmer = stemmer

    def __getstate__(self) -> dict:
        """A copy (a lifetime haystack forks the store per target) leaves the stemmer out: PyStemmer's
        ``Stemmer`` cannot be pickled or deep-copied; ``__setstate__`` makes a new one."""
        return {k: v for k, v in self.__dict__.items() if k != "stem_"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "context_" in state:
            self.stem_ = self._stemmer()

    def _stemmer(self):
        if not self.stemmer:
            return None
        import Stemmer
        if self.stemmer not in Stemmer.algorithms():
            raise ValueError(f"bm25 stemmer {self.stemmer!r} is not one of {', '.join(Stemmer.algorithms())}")
        return Stemmer.Stemmer(self.stemmer)

    # -- the protocol ----------------------------------------------------------------
    def start(self, context: Context) -> None:
        """Empty the store for a new scenario (and check the stemmer's language)."""
        self.stem_ = self._stemmer()
        self.context_ = context
        self.at_: list[float] = []
        self.texts_: list[str] = []
        self.tokens_: list[list[str]] = []
        self.steps_: list[tuple[str, ...]] = []
        self.sizes_: list[int] = []            # each memory's text length in tokens (estimate_tokens)
        self.trace_: list[dict] = []
        self.index_: bm25s.BM25 | None = None
        self.indexed_ = 0                      # memories in the index (the index is stale if fewer)
        self.rebuilds_ = 0

    def observe(self, item: Observation) -> Outcome:
        """Store the item as a new memory (ids 0, 1, ... in order); no score, no cost."""
        started = time.perf_counter()
        i = len(self.texts_)
        self.texts_.append(item.text)
        self.at_.append(float(item.at))
        self.tokens_.append(self._tokens(item.text))
        self.steps_.append((item.step,))
        self.sizes_.append(estimate_tokens(item.text))
        self.trace_.append({"t": round(item.at, 3), "event": "created", "id": i, "kind": "turn",
                            "steps": [item.step]})
        return Outcome(cost=Cost(latency_ms=_ms(started)), memory=i)

    def retrieve(self, query: Query) -> Outcome:
        """Rank the memories for ``query.text`` (see the class docstring). Using the first
        ``k`` changes nothing here, so ``k`` and ``motivation`` are ignored."""
        started = time.perf_counter()
        n = len(self.texts_)
        if n == 0:
            return Outcome(cost=Cost(latency_ms=_ms(started)), ranking=Ranking())
        scores = self._scores(self._tokens(query.text))
        order = np.argsort(-scores, kind="stable")          # stable: ties keep id order
        ids = [int(i) for i in order[: max(query.depth, 0)] if scores[i] > 0]
        ranking = Ranking(ids=ids, scores=[float(scores[i]) for i in ids],
                          provenance=[self.steps_[i] for i in ids], tokens=[self.sizes_[i] for i in ids])
        self.trace_.append({"t": round(query.at, 3), "event": "retrieval", "step": query.step, "ids": ids,
                            "scores": [round(s, 6) for s in ranking.scores], "scored": n})
        cost = Cost(scored=n, tiers_searched=1, index_queries=1, latency_ms=_ms(started))
        return Outcome(cost=cost, ranking=ranking)

    def context_texts(self, ids) -> list[str]:
        """The texts of memories ``ids`` (a probe's context, for ``mtsbench.evaluation.answer``)."""
        return [self.texts_[int(i)] for i in ids]

    def read(self, query) -> object:
        """No belief, conjecture, attention, tier or event state: always ``UNSUPPORTED``."""
        return UNSUPPORTED

    def memories_count(self) -> int:
        return len(self.texts_)

    # -- the index -------------------------------------------------------------------
    def _tokens(self, text: str) -> list[str]:
        words = tokenize(text)
        return self.stem_.stemWords(words) if self.stem_ is not None and words else words

    def _documents(self) -> list[list[str]]:
        """What each memory is indexed as: its tokens, or with ``context`` its tokens
        ``self_weight`` times and its session neighbours' (class docstring)."""
        if self.context <= 0:
            return self.tokens_
        at = np.asarray(self.at_)
        session = np.concatenate([[0], np.cumsum(np.diff(at) > self.context_gap)]) if len(at) else at
        docs = []
        for i, own in enumerate(self.tokens_):
            doc = own * self.self_weight
            for j in range(max(0, i - self.context), min(len(self.tokens_), i + self.context + 1)):
                if j != i and session[j] == session[i]:
                    doc = doc + self.tokens_[j]
            docs.append(doc)
        return docs

    def _scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every memory for ``query_tokens`` (rebuilding a stale index first)."""
        n = len(self.texts_)
        if self.indexed_ != n:
            self._rebuild()
        if self.index_ is None:                 # no memory holds any token: nothing matches
            return np.zeros(n, dtype=np.float32)
        return np.asarray(self.index_.get_scores_from_ids(self.index_.get_tokens_ids(query_tokens)))

    def _rebuild(self) -> None:
        """Index every memory (vocabulary in sorted order, so builds are reproducible)."""
        docs = self._documents()
        vocab = {t: j for j, t in enumerate(sorted({t for doc in docs for t in doc}))}
        self.indexed_ = len(self.tokens_)
        self.rebuilds_ += 1
        if not vocab:
            self.index_ = None
            return
        index = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        index.index(([[vocab[t] for t in doc] for doc in docs], vocab),
                    create_empty_token=False, show_progress=False)
        self.index_ = index


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


__all__ = ["Bm25System", "tokenize", "METHODS"]
