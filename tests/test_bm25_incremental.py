"""``system=bm25``'s incremental index against its reference: a ``bm25s`` index built from
scratch at every query over the same documents (what the system did until issue 50), for
every method, with and without context and stems, memories and queries interleaved."""

import copy
import pickle

import bm25s
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mtsbench.memory.lexical import METHODS
from mtsbench.systems.base import Context, Observation, Query
from mtsbench.systems.bm25 import Bm25System

TOL = dict(rel=2e-5, abs=2e-6)     # bm25s computes in float32, the index in float64


def reference(s: Bm25System, query: str) -> np.ndarray:
    """Every memory's score for ``query`` by a fresh bm25s index of ``s._documents()``, built
    as the system's rebuild did (vocabulary in sorted order)."""
    docs = s._documents()
    vocab = {t: j for j, t in enumerate(sorted({t for doc in docs for t in doc}))}
    if not vocab:
        return np.zeros(len(docs))
    index = bm25s.BM25(k1=s.k1, b=s.b, method=s.method)
    index.index(([[vocab[t] for t in doc] for doc in docs], vocab), create_empty_token=False, show_progress=False)
    ids = [vocab[t] for t in s._tokens(query) if t in vocab]
    return np.asarray(index.get_scores_from_ids(ids), dtype=float)


def same_as_reference(s: Bm25System, query: str, depth: int, at: float) -> None:
    """The system's ranking is the reference's (positive scores, best first, ties by id,
    ``depth`` deep) and so are its scores; two memories may swap only where the reference
    scores them equal within float32 rounding."""
    out = s.retrieve(Query("q", at, query, k=depth, depth=depth))
    ids, scores = out.ranking.ids, out.ranking.scores
    ref = reference(s, query)
    want = [int(i) for i in np.lexsort((np.arange(len(ref)), -ref)) if ref[i] > 0][:depth]
    assert len(ids) == len(want), (ids, want)
    assert scores == pytest.approx(ref[ids].tolist(), **TOL)                  # each memory's own score
    assert scores == pytest.approx(ref[want].tolist(), **TOL)                 # the reference's, place by place
    for got, exp in zip(ids, want):
        assert got == exp or ref[got] == pytest.approx(ref[exp], **TOL), (ids, want, ref.tolist())
    assert all(a > b or (a == b and i < j) for a, b, i, j in zip(scores, scores[1:], ids, ids[1:]))


WORDS = ["milk", "milks", "tea", "cat", "cats", "running", "run", "the", "sleeps", "牛奶", "咖啡", "7"]
TEXT = st.one_of(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), st.text(max_size=12))
GAPS = st.sampled_from([0.0, 30.0, 600.0, 1800.0, 1801.0, 90000.0])      # 1800 stays in a session, 1801 does not
EVENT = st.one_of(st.tuples(st.just("add"), TEXT, GAPS),
                  st.tuples(st.just("ask"), TEXT, st.integers(0, 12)))
SETUP = st.fixed_dictionaries({"method": st.sampled_from(METHODS), "context": st.integers(0, 2),
                               "self_weight": st.integers(1, 3), "stemmer": st.sampled_from([None, "english"]),
                               "k1": st.sampled_from([1.5, 0.9, 0.0]), "b": st.sampled_from([0.75, 0.0, 1.0])})


def comparable(setup) -> bool:
    """bm25s's bm25+ at k1 = 0 scores every memory NaN (its tfc(0) is 0 / 0; see
    test_bm25plus_without_k1_is_finite): no reference there."""
    return not (setup["method"] == "bm25+" and setup["k1"] == 0.0)


def run(events, setup, s=None, clock=0.0):
    s = s or Bm25System(**setup)
    if s.__dict__.get("context_") is None:
        s.start(Context("test"))
    for kind, text, arg in events:
        if kind == "add":
            clock += arg
            s.observe(Observation(f"s{len(s.texts_)}", clock, "say", text))
        elif s.texts_:
            same_as_reference(s, text, arg, clock)
    return s, clock


@settings(max_examples=300, deadline=None)
@given(setup=SETUP, events=st.lists(EVENT, max_size=30), last=TEXT)
def test_incremental_equals_a_fresh_bm25s_index_at_every_query(setup, events, last):
    assume(comparable(setup))
    s, clock = run(events, setup)
    if s.texts_:
        same_as_reference(s, last, 20, clock)


@settings(max_examples=40, deadline=None)
@given(setup=SETUP, before=st.lists(EVENT, max_size=15), after=st.lists(EVENT, max_size=15),
       other=st.lists(EVENT, max_size=15))
def test_a_copy_continues_as_the_original_would(setup, before, after, other):
    """A lifetime haystack deep-copies the system per target: the copy (its stemmer made anew)
    and the original each continue on their own, each equal to its reference."""
    assume(comparable(setup))
    s, clock = run(before, setup)
    fork = copy.deepcopy(s)
    assert (fork.stem_ is None) == (setup["stemmer"] is None)
    run(after, setup, s, clock)
    run(other, setup, fork, clock)
    again = pickle.loads(pickle.dumps(fork))
    run(after, setup, again, clock)


def test_equal_documents_tie_and_rank_by_id_whether_filed_or_open():
    """Four equal turns, each alone in its session: three filed, the last open (scored from
    its counts): equal scores, older first, for every method."""
    for method in METHODS:
        s = Bm25System(context=2, self_weight=2, stemmer="english", method=method)
        s.start(Context("t"))
        texts = ["cats drink milk", "weather report", "cats drink milk", "cat drinks milk", "weather", "rain",
                 "sun", "snow", "cat drink milks"]      # the terms in 4 of 9: robertson's idf is positive
        for i, text in enumerate(texts):
            s.observe(Observation(f"s{i}", 90000.0 * i, "say", text))
        assert s.open_ == [8]
        out = s.retrieve(Query("q", 1e6, "milk cat", k=4, depth=4))
        assert out.ranking.ids == [0, 2, 3, 8] and len(set(out.ranking.scores)) == 1, method
        same_as_reference(s, "milk cat", 6, 1e6)


def test_bm25l_and_bm25plus_rank_memories_sharing_no_term_at_the_base_score():
    s = Bm25System(method="bm25+")
    s.start(Context("t"))
    for i, text in enumerate(["weather", "milk tea", "rain", "milk"]):
        s.observe(Observation(f"s{i}", 60.0 * i, "say", text))
    out = s.retrieve(Query("q", 600.0, "milk", k=5, depth=3))
    assert out.ranking.ids == [3, 1, 0]                    # then memory 0 at the base (bm25s's non-occurrence)
    assert out.ranking.scores[2] == pytest.approx(np.log((4 + 1) / 2) * 0.5)       # idf * delta
    assert out.cost.scored == 2 + 1                        # milk's postings, one memory at the base
    same_as_reference(s, "milk", 3, 600.0)


def test_bm25plus_without_k1_is_finite():
    """k1 = 0: a term's tf part is 1 if the memory holds it (bm25+: 1 + delta), delta if not.
    bm25s's own bm25+ computes tfc(0) as 0 / 0 there, and so scores NaN; this index does not."""
    s = Bm25System(method="bm25+", k1=0.0)
    s.start(Context("t"))
    for i, text in enumerate(["weather", "milk tea", "rain", "milk"]):
        s.observe(Observation(f"s{i}", 60.0 * i, "say", text))
    out = s.retrieve(Query("q", 600.0, "milk", k=5, depth=3))
    idf = np.log((4 + 1) / 2)
    assert out.ranking.ids == [1, 3, 0]
    assert out.ranking.scores == pytest.approx([idf * 1.5, idf * 1.5, idf * 0.5])
    assert np.isnan(reference(s, "milk")).all()


@pytest.mark.parametrize("method", METHODS)
def test_a_larger_store_summed_either_way(method):
    """400 memories of Zipf-distributed words in sessions, with context: a query of rare
    words (few postings against the id range: summed by a sort of the ids) and one of common
    words (summed densely over the range) both equal the reference."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(2000)]
    s = Bm25System(context=2, self_weight=2, method=method)
    s.start(Context("t"))
    at = 0.0
    for i in range(400):
        at += 60.0 if rng.random() < 0.9 else 7200.0
        s.observe(Observation(f"s{i}", at, "say", " ".join(words[z] for z in rng.zipf(1.3, 12) if z < 2000)))
    for query, sparse in (("w150 w170 w123", True), ("w1 w2 w3 w4", False), ("w1 w90 w123", False)):
        postings = sum(s.index_.df_[np.array([s.index_.vocab_[w]])][0] for w in query.split() if w in s.index_.vocab_)
        assert (4 * postings < 400) == sparse                   # which way lexical sums them
        same_as_reference(s, query, 25, at)
