"""The ``retrieval`` group: dense (the default), bm25 and hybrid relevance over the tiers.

BM25 is checked against hand-computed values and against ``bm25s`` on the same corpus;
the incremental per-tier index against a from-scratch one after adds, moves, rewrites and
removals; tier-restricted queries return only that tier's members; RRF against hand
values; the default is the dense search; every preset runs with ``retrieval=hybrid``.
"""

import math

import bm25s
import numpy as np
import pytest

from mtsbench.config.composition import compose
from mtsbench.config.search import groups
from mtsbench.embed.hashing import Hashing
from mtsbench.memory.graph_index import SharedGraphIndex
from mtsbench.memory.index import TierIndexes
from mtsbench.memory.lexical import LexicalTiers, tokenize
from mtsbench.memory.relevance import Bm25, Cosine, Hybrid, competition_rank, rrf
from mtsbench.memory.retrieval import TieredSearch
from mtsbench.memory.store import MemoryStore

CORPUS = ["milk allergy milk", "cat sleeps", "milk tea please", "the cat drinks milk", "train late again",
          "allergy season", "tea time", "late train cat"]


def bm25s_scores(texts: list[str], query: str, k1=1.5, b=0.75) -> np.ndarray:
    """A from-scratch bm25s (lucene) index of ``texts``: every text's score for ``query``."""
    docs = [tokenize(t) for t in texts]
    vocab = {t: j for j, t in enumerate(sorted({t for d in docs for t in d}))}
    index = bm25s.BM25(k1=k1, b=b, method="lucene")
    index.index(([[vocab[t] for t in d] for d in docs], vocab), create_empty_token=False, show_progress=False)
    ids = [vocab[t] for t in tokenize(query) if t in vocab]
    return np.asarray(index.get_scores_from_ids(ids), dtype=float)


def lexical_over(texts, tiers, n_tiers=3, index=None, compact_above=1024):
    """A LexicalTiers over a store of ``texts``, memory i filed in tier ``tiers[i]``."""
    emb = Hashing(dim=64)
    store = MemoryStore(dim=64)
    ids = store.add_many(list(texts), "turn", created=0.0, vectors=emb.embed(list(texts)),
                         provenance=[()] * len(texts))
    lx = LexicalTiers(index or TierIndexes(64, n_tiers), store, compact_above=compact_above)
    for i, t in zip(ids.tolist(), tiers):
        store.tier[i] = t
        lx.add(t, np.array([i]), store.vectors[i:i + 1])
    return store, lx


def all_scores(lx, n, query) -> np.ndarray:
    """Every memory's BM25 from the per-tier lists (0 where no term is shared)."""
    out = np.zeros(n)
    q = lx.terms(query)
    for t in range(lx.n_tiers):
        ids, sc, _ = lx.lexical(t, q)
        out[ids] = sc
    return out


# -- the formulas ---------------------------------------------------------------------------
def test_rrf_against_hand_values():
    dense = np.array([0.9, 0.1, 0.5, 0.5])
    lexical = np.array([0.0, 3.0, 1.0, 3.0])
    # dense ranks 1, 4, 2, 2 (ties share the best); BM25 ranks (positive only) -, 1, 3, 1
    want = [2 / 61, 2 / 64 + 3 / 61, 2 / 62 + 3 / 63, 2 / 62 + 3 / 61]
    assert np.allclose(rrf(dense, lexical, 2.0, 3.0, 60), want)
    assert competition_rank(dense).tolist() == [1, 4, 2, 2]
    h = Hybrid(w_dense=2.0, w_bm25=3.0, k_rrf=60)
    assert np.allclose(h.relevance(dense, lexical, 1.0), np.array(want) / (5 / 61))
    assert h.relevance(np.array([0.3]), np.array([2.0]), 1.0).tolist() == [1.0]    # first in both: 1


def test_bm25_hand_computed_tiny_corpus():
    store, lx = lexical_over(["milk milk tea", "cat", "milk cat cat cat"], [0, 0, 0], n_tiers=1)
    ids, scores, read = lx.lexical(0, lx.terms("milk"))
    n, avgdl, k1, b = 3, (3 + 1 + 4) / 3, 1.5, 0.75
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    want = [idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)) for tf, dl in ((2, 3), (1, 4))]
    assert ids.tolist() == [0, 2] and np.allclose(scores, want) and read == 2
    assert Bm25().relevance(np.zeros(2), scores, lx.terms("milk").bound).max() < 1.0


def test_bm25_matches_bm25s_on_the_same_corpus():
    store, lx = lexical_over(CORPUS, [0] * len(CORPUS), n_tiers=1)
    for query in ("milk", "cat milk", "late train", "milk milk allergy", "nothing here"):
        assert np.allclose(all_scores(lx, len(CORPUS), query), bm25s_scores(CORPUS, query), rtol=1e-5, atol=1e-6), query


# -- incremental, per tier --------------------------------------------------------------------
def test_incremental_adds_moves_rewrites_and_removals_match_a_from_scratch_index():
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(["milk", "cat", "tea", "train", "late", "allergy", "sun", "rain"], 4))
             for _ in range(300)]
    store, lx = lexical_over(texts[:200], rng.integers(0, 3, 200).tolist(), compact_above=64)
    for i in range(200, 300):                      # memories arrive over time, between queries
        store.add(texts[i], "turn", created=0.0, provenance=(), vector=np.zeros(64))
        store.tier[i] = 0
        lx.add(0, np.array([i]), np.zeros((1, 64), dtype=np.float32))
        if i % 25 == 0:
            live = store.live_ids()
            got = all_scores(lx, store.size, "milk cat")[live]
            assert np.allclose(got, bm25s_scores([store.text[j] for j in live], "milk cat"), rtol=1e-5)
    written = lx.lexical_work_.postings_written
    for _ in range(5):                             # tier moves back and forth: marks only, no posting written
        ids = rng.choice(300, 120, replace=False)
        old, new = store.tier[ids].astype(int), rng.integers(0, 3, 120)
        lx.move(ids, old, new, np.zeros((120, 64), dtype=np.float32))
        store.tier[ids] = new
    assert lx.lexical_work_.postings_written == written and lx.lexical_work_.compactions == 0
    store.rewrite(7, "rain rain sun", np.zeros(64), ())      # a rewrite changes the statistics
    lx.update(int(store.tier[7]), 7, np.zeros(64, dtype=np.float32))
    for gone in (3, 11, *range(40, 200)):          # removals leave stale postings (compaction kicks in)
        store.kill(gone)
        lx.remove(int(store.tier[gone]), gone)
    assert lx.lexical_work_.compactions >= 1
    live = store.live_ids()
    for query in ("milk cat", "rain sun", "late late train"):
        got = all_scores(lx, store.size, query)
        assert np.allclose(got[live], bm25s_scores([store.text[j] for j in live], query), rtol=1e-5), query
        assert got[3] == got[11] == got[50] == 0.0
        for t in range(3):                         # each tier returns exactly its live members that match
            ids, _, _ = lx.lexical(t, lx.terms(query))
            assert np.all(store.tier[ids] == t) and np.all(store.alive[ids])
            assert set(ids.tolist()) == {j for j in live.tolist() if store.tier[j] == t and got[j] > 0}


def test_query_cost_is_the_postings_it_reads_once_not_the_store_size():
    """A query reads its terms' postings once, at its first tier (every tier's postings: tiers
    are marks), and nothing more at the next tiers; memories without its terms cost nothing."""
    store, lx = lexical_over(["milk allergy", "cat", "milk tea"], [0, 1, 1])
    q = lx.terms("milk")
    assert lx.lexical(0, q)[2] == 2 and lx.lexical(1, q)[2] == 0 and lx.lexical(2, q)[2] == 0
    for i in range(3, 2003):                       # 2,000 memories without the word
        store.add(f"weather report {i}", "turn", created=0.0, provenance=(), vector=np.zeros(64))
        lx.add(2, np.array([i]), np.zeros((1, 64), dtype=np.float32))
    q = lx.terms("milk")
    assert lx.lexical(2, q)[2] == 2 and lx.lexical(0, q)[2] == 0
    assert lx.lexical(0, lx.terms("milk weather"))[2] == 2 + 2000


def test_a_move_between_two_tier_calls_of_one_query_is_seen():
    """The tier marks are read at each call: a memory moved after a query's first call is
    returned by its new tier, not its old one; an insert makes the query read again."""
    store, lx = lexical_over(["milk allergy", "cat", "milk tea"], [0, 1, 1])
    q = lx.terms("milk")
    assert lx.lexical(1, q)[0].tolist() == [2]
    lx.move(np.array([2]), np.array([1]), np.array([0]), np.zeros((1, 64), dtype=np.float32))
    assert lx.lexical(0, q)[0].tolist() == [0, 2] and lx.lexical(1, q)[0].tolist() == []
    store.add("milk shake", "turn", created=0.0, provenance=(), vector=np.zeros(64))
    lx.add(1, np.array([3]), np.zeros((1, 64), dtype=np.float32))
    ids, _, read = lx.lexical(1, q)
    assert ids.tolist() == [3] and read == 3


def test_tier_restricted_search_returns_only_members_of_the_tiers_searched():
    """Graph tiers (shared faiss graph, exact_below 8) and an exact top tier; depth fixed at 1
    and then 2: a search returns only members of the tiers it walked, for every relevance."""
    from mtsbench.mechanisms.decay import NoDecay
    from mtsbench.mechanisms.depth import Fixed
    from mtsbench.memory.attention import DualAttention

    rng = np.random.default_rng(1)
    words = ["milk", "cat", "tea", "train", "late", "allergy", "sun", "rain"]
    texts = [" ".join(rng.choice(words, 3)) for _ in range(120)]
    emb = Hashing(dim=64)
    for relevance in (Bm25(), Hybrid()):
        search = TieredSearch(attention_weight=0.0, candidates=10, relevance=relevance)
        store = MemoryStore(dim=64)
        ids = store.add_many(texts, "turn", created=0.0, vectors=emb.embed(texts), provenance=[()] * 120)
        att = DualAttention(NoDecay(), NoDecay())
        att.label(store, ids, np.zeros(120), 0.0)
        index = search.tier_index(store, SharedGraphIndex(64, 3, exact_below=8))
        tiers = rng.integers(0, 3, 120)
        tiers[:5] = 0                              # tier 0 small: exact; tiers 1, 2 graph tiers
        tiers[5:][tiers[5:] == 0] = 1
        for t in range(3):
            sel = ids[tiers == t]
            store.tier[sel] = t
            index.add(t, sel, store.vectors[sel])
        assert index.tiers[0].kind == "exact" and index.tiers[1].kind == "graph"
        q = emb.embed(["milk tea"])[0]
        for n, allowed in ((1, {0}), (2, {0, 1})):
            found = search.search(store, att, index, Fixed(n=n), q, 10, 1.0, 0.0, rank_to=50, text="milk tea")
            assert set(store.tier[found.ranked].tolist()) <= allowed
            assert found.cost.tiers_searched == n and found.cost.scored >= len(found.ranked)
        found = search.search(store, att, index, Fixed(n=3), q, 10, 1.0, 0.0, text="milk tea")
        assert len(found.ids) == 10 and np.all(np.diff(found.scores) <= 1e-12)


# -- configuration ----------------------------------------------------------------------------
def test_default_is_dense_and_unchanged():
    cfg, choices = compose([])
    assert choices["retrieval"] == "dense" and cfg.retrieval.relevance._target_.endswith(".Cosine")
    assert (cfg.retrieval.relevance_weight, cfg.retrieval.attention_weight, cfg.retrieval.candidates) == (1.0, 0.3, 50)
    cfg, _ = compose(["retrieval.attention_weight=0.1", "retrieval=hybrid", "retrieval.relevance.w_bm25=2"])
    assert cfg.retrieval.attention_weight == 0.1 and cfg.retrieval.relevance.w_bm25 == 2
    cfg, _ = compose(["preset=generative_agents", "retrieval=bm25"])    # a preset's formula keeps its relevance
    assert cfg.retrieval._target_.endswith("WeightedMinMax") and cfg.retrieval.relevance._target_.endswith(".Bm25")
    # dense: the index is not wrapped and a text changes nothing
    from mtsbench.evaluation.checks import run_tiny, tiny_agent

    agent = tiny_agent(retriever=TieredSearch(relevance=Cosine()))
    run_tiny(agent)
    m = agent.memory
    assert not isinstance(m.index, LexicalTiers)
    a, b = m.search(m.embed("cooking risotto"), 3, 1.0), m.search(m.embed("cooking risotto"), 3, 1.0, text="cooking")
    assert a.ids.tolist() == b.ids.tolist() and a.scores.tolist() == b.scores.tolist() and a.cost == b.cost


def test_bad_values_and_hybrid_with_the_bm25_system_are_refused():
    from mtsbench.errors import ConfigError

    with pytest.raises(ConfigError, match="retrieval.relevance.b"):
        compose(["retrieval=bm25", "retrieval.relevance.b=2"])
    with pytest.raises(ConfigError, match="system=bm25 ranks by BM25 alone"):
        compose(["system=bm25", "retrieval=hybrid"])
    compose(["system=bm25", "retrieval=bm25"])


@pytest.mark.parametrize("preset", groups()["preset"])
def test_every_preset_runs_with_hybrid_retrieval(preset, tmp_path, cli):
    out = cli("run", f"preset={preset}", "retrieval=hybrid", "scenarios=[milk_allergy]",
              f"hydra.run.dir={tmp_path}/run")
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "run" / "metrics.csv").exists()


def test_hybrid_with_the_bm25_system_is_one_line(cli, tmp_path):
    out = cli("run", "system=bm25", "retrieval=hybrid", "scenarios=[milk_allergy]")
    assert out.returncode != 0 and "system=bm25 ranks by BM25 alone" in out.stderr
    assert len([line for line in out.stderr.splitlines() if line.strip()]) == 1
