"""``system=bm25``: a plain lexical memory ranked by BM25, the seam's second system.

Every observed item (say, reply, perceive) is one memory, whose provenance is its step;
there is no attention, no tiering, no LLM and no background process. A probe scores its
text against the memories with BM25 (the Lucene variant by default, as the library
``bm25s`` computes it)::

    score(q, d) = sum over the tokens t of q (with repetition) of
                  idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

with N the number of memories, df(t) the number holding token t, |d| a memory's length
in tokens and avgdl the mean length (Lucene drops the classic ``(k1 + 1)`` factor of the
numerator, which changes no ranking). ``method`` picks another variant of ``bm25s``
(robertson, atire, bm25l, bm25+: formulas in ``mtsbench.memory.lexical``); under bm25l and
bm25+ a memory sharing no token with the query still scores the query's base (sum of idf *
tfc(0), bm25s's "non-occurrence" score), so every memory is ranked, those sharing a token
first.

**The index is incremental** (``mtsbench.memory.lexical.Bm25Index``, the one the seed
design's tiers use under ``retrieval=bm25``): a memory's terms are counted (N, df, total
length: counters, so idf and avgdl are always current) and its postings filed when it is
observed, and a query reads only the postings of its terms. Scores equal those of a
``bm25s`` index built from scratch over the same documents at the query (tested for every
method: ``tests/test_bm25_incremental.py``), to float rounding (bm25s computes in float32,
this index in float64). Until issue 50 the system rebuilt a ``bm25s`` index at every probe
that followed new memories: O(store) per probe, 10 s at 48,600 memories (25 s with context
and stems), so a ``workload=reply`` lifetime (a retrieval after every user turn) could not
run.

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
credit) as its own text only. A turn's later neighbours count once they were said
(nothing after a probe is seen): the last w turns of the current session are *open* —
indexed (their terms count in N, df and avgdl) but not filed, re-indexed as each
neighbour arrives, and scored at a probe directly from their term counts — and a turn is
filed once its w later neighbours were said or its session ended. ``stemmer`` names a
Snowball stemmer of PyStemmer (``english``, ...) applied to memories' and queries' tokens;
null: none.

**Cost** (the work, in the unit of ``retrieval=bm25`` in the tiers): a retrieval's
``scored`` is the postings it read (one per (query term, memory) pair looked at) plus the
open memories it scored from their counts, plus, under bm25l and bm25+, the (at most
``depth``) memories sharing no term it ranked at the base score; an observation's
``index_inserts`` is the index entries it wrote: its postings filed and the (term, memory)
pairs counted into or out of df (re-indexed open neighbours included). Until issue 50
``scored`` was the store size.

This system reads no ``retrieval`` node: ``retrieval=dense`` (the default) and
``retrieval=bm25`` change nothing here, and ``retrieval=hybrid`` with ``system=bm25`` is
refused at composition (one line; ``config_rules``).
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np

from ..llm.base import estimate_tokens
from ..memory.lexical import METHODS, Bm25Index, tokenize
from ..memory.topk import rank
from ..core.params import Count, Natural, NonNegative, Share, Text, declared
from .base import UNSUPPORTED, Context, Cost, Observation, Outcome, PlainSystem, Query, Ranking

FILED = 0          # the index's one set of postings


@declared
class Bm25System(PlainSystem):
    """A lexical memory: one memory per observed item, ranked by BM25 (see the module).

    ``retrieve`` scores the memories sharing a token with the query (one index query, one
    tier; ``cost.scored``: the module's Cost; under bm25l and bm25+ the others score the
    base) and ranks those with a positive score, best
    first, ties by memory id (older first), ``query.depth`` deep. Memories scoring 0 (with
    the default method: sharing no token with the query) are left out rather than ranked by
    age, so that a chance hit is never counted as recall; a query sharing nothing returns
    an empty ranking. An empty store returns an empty ranking at no cost. ``read`` answers
    ``UNSUPPORTED`` to every state check.

    >>> from mtsbench.systems.base import Context, Observation, Query
    >>> s = Bm25System()
    >>> s.start(Context("demo"))
    >>> texts = ["I drink milk every morning", "The cat sleeps", "Milk makes me sick"]
    >>> [s.observe(Observation(f"s{i}", 60.0 * i, "say", t)).memory for i, t in enumerate(texts)]
    [0, 1, 2]
    >>> out = s.retrieve(Query("p", 600.0, "milk?", k=1, depth=5))
    >>> out.ranking.ids, out.ranking.provenance, out.ranking.tokens
    ([2, 0], [('s2',), ('s0',)], [5, 7])
    >>> out.cost.scored, out.cost.index_queries, out.cost.tiers_searched     # milk's 2 postings read
    (2, 1, 1)
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
    >>> c.open_                              # the session's last turn, its next neighbour still to come
    [3]
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
        self.steps_: list[tuple[str, ...]] = []
        self.sizes_: list[int] = []            # each memory's text length in tokens (estimate_tokens)
        self.trace_: list[dict] = []
        self.index_ = Bm25Index(1, self.k1, self.b, self.method)
        self.session_: list[tuple[int, np.ndarray, np.ndarray]] = []   # the current session's last 2w + 1 items:
        #                                      (id, term ids, tfs) of their own tokens
        self.open_: list[int] = []             # its last w memories: indexed, not filed (their context may grow)
        self.last_: tuple[str, list[str]] = ("", [])

    def observe(self, item: Observation) -> Outcome:
        """Store the item as a new memory (ids 0, 1, ... in order) and index it (class
        docstring); no score. Cost: ``index_inserts``, the index entries written."""
        started = time.perf_counter()
        i = len(self.texts_)
        work = self.index_.work_
        before = work.postings_written + work.terms_counted
        new_session = i > 0 and item.at - self.at_[-1] > self.context_gap
        self.texts_.append(item.text)
        self.at_.append(float(item.at))
        self.steps_.append((item.step,))
        self.sizes_.append(estimate_tokens(item.text))
        self.trace_.append({"t": round(item.at, 3), "event": "created", "id": i, "kind": "turn",
                            "steps": [item.step]})
        tokens = self._tokens(item.text)
        self.last_ = (item.text, tokens)       # a reply's query is the turn just observed: tokenized once
        self._index(i, tokens, new_session)
        written = work.postings_written + work.terms_counted - before
        return Outcome(cost=Cost(index_inserts=written, latency_ms=_ms(started)), memory=i)

    def retrieve(self, query: Query) -> Outcome:
        """Rank the memories for ``query.text`` (see the class docstring). Using the first
        ``k`` changes nothing here, so ``k`` and ``motivation`` are ignored."""
        started = time.perf_counter()
        n = len(self.texts_)
        if n == 0:
            return Outcome(cost=Cost(latency_ms=_ms(started)), ranking=Ranking())
        tokens = self.last_[1] if self.last_[0] == query.text else self._tokens(query.text)
        ids, scores, scored = self._ranked(tokens, max(query.depth, 0))
        ranking = Ranking(ids=ids, scores=scores, provenance=[self.steps_[i] for i in ids],
                          tokens=[self.sizes_[i] for i in ids], visible=n, held=n)
        self.trace_.append({"t": round(query.at, 3), "event": "retrieval", "step": query.step, "ids": ids,
                            "scores": [round(s, 6) for s in ranking.scores], "scored": scored})
        cost = Cost(scored=scored, tiers_searched=1, index_queries=1, latency_ms=_ms(started))
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

    def _index(self, i: int, tokens: list[str], new_session: bool) -> None:
        """Index memory ``i``: without context, count and file it. With context w, a new
        session first files the open memories (their context is complete); then the open
        memories (the w before ``i`` in its session) are re-indexed with ``i`` as a
        neighbour, ``i`` is indexed with them as its own, and the open memory that now has its
        w later neighbours is filed."""
        w, index = self.context, self.index_
        if w <= 0:
            index.index(i, tokens)
            index.file(i, FILED)
            return
        if new_session:
            for j in self.open_:
                index.file(j, FILED)
            self.open_, self.session_ = [], []
        self.session_ = self.session_[-2 * w:] + [(i, *index.counts(tokens))]
        held = {j: (terms, tfs) for j, terms, tfs in self.session_}
        for j in self.open_:
            index.unindex(j)
        for j in self.open_ + [i]:              # j's document: its counts self_weight times, its neighbours' once
            parts = [(held[m][0], held[m][1] * (self.self_weight if m == j else 1))
                     for m in range(j - w, j + w + 1) if m in held]
            terms, inverse = np.unique(np.concatenate([t for t, _ in parts]), return_inverse=True)
            tfs = np.bincount(inverse, weights=np.concatenate([f for _, f in parts])).astype(np.int32)
            index.index_counts(j, terms.astype(np.int32), tfs)
        self.open_.append(i)
        while len(self.open_) > w:
            index.file(self.open_.pop(0), FILED)

    def _ranked(self, tokens: list[str], depth: int) -> tuple[list[int], list[float], int]:
        """(ids, scores, work) of the ``depth`` best memories for the query ``tokens``: the
        memories sharing a term (postings, and the open ones directly), best first, ties by id;
        under bm25l and bm25+ then the rest at the base score, by id. Positive scores only."""
        q = self.index_.terms(tokens)
        cand, above, work = self.index_.lexical(FILED, q, unfiled=self.open_)
        total = above + q.base
        top = rank(total, depth)
        ids, total = cand[top], total[top]
        if q.base > 0 and depth > 0:            # bm25l, bm25+: the first memories sharing no term score the base
            room = depth - int(np.count_nonzero(total > q.base))
            first = np.arange(min(len(self.texts_), depth + len(cand)))
            rest = np.setdiff1d(first, cand, assume_unique=True)[:room]
            ids, total = np.concatenate([ids, rest]), np.concatenate([total, np.full(len(rest), q.base)])
            order = np.lexsort((ids, -total))[:depth]
            ids, total = ids[order], total[order]
            work += len(rest)
        keep = total > 0
        return [int(i) for i in ids[keep]], [float(s) for s in total[keep]], work

    def _documents(self) -> list[list[str]]:
        """What each memory is indexed as (recomputed from the texts: a reference for tests):
        its tokens, or with ``context`` its tokens ``self_weight`` times and its session
        neighbours' (class docstring)."""
        tokens = [self._tokens(t) for t in self.texts_]
        if self.context <= 0:
            return tokens
        at = np.asarray(self.at_)
        session = np.concatenate([[0], np.cumsum(np.diff(at) > self.context_gap)]) if len(at) else at
        docs = []
        for i, own in enumerate(tokens):
            doc = own * self.self_weight
            for j in range(max(0, i - self.context), min(len(tokens), i + self.context + 1)):
                if j != i and session[j] == session[i]:
                    doc = doc + tokens[j]
            docs.append(doc)
        return docs


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


__all__ = ["Bm25System", "tokenize", "METHODS"]
