"""``system=bm25``: BM25 scores computed by hand, ranking, cost, reads and the incremental index
(equality with a from-scratch bm25s index, for every method: tests/test_bm25_incremental.py)."""

import math
from collections import Counter

import pytest
from hydra.utils import instantiate
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from mtsbench.errors import ConfigError
from mtsbench.core.resources import CONFIG_DIR
from mtsbench.scenario.model import BeliefCheck, ConjectureCheck, EventCountCheck, StepAttentionCheck, TierCheck
from mtsbench.systems.base import (UNSUPPORTED, Context, EventOf, Idle, MemorySystem, Observation, Query, Ranking,
                                   Tick)
from mtsbench.systems.bm25 import Bm25System, tokenize

K1, B = 1.5, 0.75
TOY = ["milk tea", "Milk, milk coffee", "green tea leaves"]     # lengths 2, 3, 3 tokens


def system(texts=(), **kw) -> Bm25System:
    s = Bm25System(**kw)
    s.start(Context("test"))
    for i, text in enumerate(texts):
        s.observe(Observation(f"s{i}", 60.0 * i, "say", text))
    return s


def ask(s, text, depth=5, k=5, at=3600.0):
    return s.retrieve(Query("probe", at, text, k=k, depth=depth))


def lucene(query_tokens, docs_tokens, k1=K1, b=B):
    """Reference BM25 (Lucene variant) of every document, in float64."""
    n = len(docs_tokens)
    avgdl = sum(map(len, docs_tokens)) / n
    df = Counter(t for doc in docs_tokens for t in set(doc))
    out = []
    for doc in docs_tokens:
        tf = Counter(doc)
        out.append(sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * tf[t]
                       / (tf[t] + k1 * (1 - b + b * len(doc) / avgdl)) for t in query_tokens if tf[t]))
    return out


def test_scores_match_bm25_by_hand():
    # N = 3, avgdl = 8/3; "milk" is in d0 (tf 1, |d| 2) and d1 (tf 2, |d| 3): df 2
    idf_milk = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    idf_green = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    norm2 = K1 * (1 - B + B * 2 / (8 / 3))     # 1.21875
    norm3 = K1 * (1 - B + B * 3 / (8 / 3))     # 1.640625
    d0 = idf_milk * 1 / (1 + norm2)
    d1 = idf_milk * 2 / (2 + norm3)
    d2 = idf_green * 1 / (1 + norm3)
    s = system(TOY)
    r = ask(s, "milk").ranking
    assert r.ids == [1, 0]                     # d2 has no milk: left out
    assert r.scores == pytest.approx([d1, d0], rel=1e-5)
    r = ask(s, "green milk").ranking
    assert r.ids == [2, 1, 0]
    assert r.scores == pytest.approx([d2, d1, d0], rel=1e-5)
    assert r.provenance == [("s2",), ("s1",), ("s0",)]
    assert r.tokens == [4, 5, 2]               # estimate_tokens: ceil(chars / 4)


def test_ties_go_to_the_older_memory_and_depth_truncates():
    s = system(["apple pie", "banana split", "apple pie", "apple pie"])
    assert ask(s, "apple").ranking.ids == [0, 2, 3]
    assert ask(s, "apple", depth=2).ranking.ids == [0, 2]
    r = ask(s, "apple banana", depth=1).ranking
    assert r.ids == [1] and len(r.scores) == len(r.provenance) == len(r.tokens) == 1   # banana is rarer
    assert ask(s, "apple", depth=0).ranking.ids == []


def test_no_common_token_gives_an_empty_ranking_and_reads_no_posting():
    s = system(TOY)
    out = ask(s, "weather forecast")
    assert out.ranking == Ranking(visible=3, held=3)          # empty, but the search could see every memory
    assert (out.cost.scored, out.cost.index_queries, out.cost.tiers_searched) == (0, 1, 1)
    assert ask(s, "the and of").ranking.ids == []           # stop words only: no token at all


def test_cost_counts():
    s = system()
    out = ask(s, "milk")                                    # nothing stored yet
    assert out.ranking == Ranking() and out.cost.scored == 0 and out.cost.index_queries == 0
    seen = s.observe(Observation("a", 0.0, "perceive", "milk on the table"))
    assert seen.memory == 0 and seen.score is None and seen.cost.scored == 0
    s.observe(Observation("b", 1.0, "reply", "a glass of milk"))
    out = ask(s, "milk", k=1, depth=1)
    assert (out.cost.scored, out.cost.index_queries, out.cost.tiers_searched) == (2, 1, 1)
    assert out.cost.llm_calls == out.cost.tokens == 0 and out.cost.latency_ms >= 0
    for outcome in (s.idle(Idle("i", 2.0, 3600.0)), s.tick(Tick("c", 3.0)), s.finish()):
        assert outcome.cost.scored == 0 and outcome.ranking is None


def test_chinese_and_mixed_text():
    assert tokenize("牛奶") == ["牛", "奶", "牛奶"]
    assert tokenize("我喝Milk") == ["喝", "我喝", "milk"]   # 我 is a stop character; its bigram stays
    s = system(["我对牛奶过敏", "今天天气很好", "我喜欢喝咖啡", "milk 牛奶"])
    r = ask(s, "牛奶过敏吗？").ranking
    assert r.ids[0] == 0 and set(r.ids) == {0, 3}
    assert r.tokens[0] == 6                                 # one token per CJK character
    assert ask(s, "天气").ranking.ids == [1]


def test_the_index_grows_with_each_memory_and_a_query_reads_only_its_terms_postings():
    s = system()
    seen = [s.observe(Observation(f"s{i}", 60.0 * i, "say", t)) for i, t in enumerate(TOY)]
    # each memory's distinct terms: counted into df once and filed once (milk tea: 2 + 2)
    assert [o.cost.index_inserts for o in seen] == [4, 4, 6] and s.index_.work_.postings_written == 7
    assert ask(s, "tea").cost.scored == 2                   # tea's two postings
    s.observe(Observation("x", 500.0, "say", "black tea"))
    out = ask(s, "tea")
    assert out.ranking.ids == [0, 3, 2] and out.cost.scored == 3    # the new memory is found
    for i in range(4, 2004):                                # 2,000 memories without the word
        s.observe(Observation(f"w{i}", 600.0 + i, "say", f"weather report {i}"))
    assert ask(s, "milk").cost.scored == 2 and ask(s, "tea").cost.scored == 3


def test_with_context_open_turns_are_scored_directly_and_charged():
    s = system(context=1, self_weight=2)
    first = s.observe(Observation("a", 0.0, "say", "milk tea"))
    assert first.cost.index_inserts == 2 and s.open_ == [0]             # indexed (2 terms), not filed
    second = s.observe(Observation("b", 60.0, "say", "cat"))
    # 0 re-indexed with its neighbour (2 out, 3 in), 1 indexed (3), 0 filed (3 postings)
    assert second.cost.index_inserts == 2 + 3 + 3 + 3 and s.open_ == [1]
    out = ask(s, "cat")
    assert out.ranking.ids == [1, 0] and out.cost.scored == 1 + 1      # 0's posting of cat, open 1 directly
    third = s.observe(Observation("c", 99999.0, "say", "dog"))           # a new session: 1 is filed
    assert s.open_ == [2] and third.cost.index_inserts == 3 + 1
    assert ask(s, "cat").cost.scored == 2 + 1


def test_reads_are_unsupported_and_totals_hold_no_llm_use():
    s = system(TOY)
    ask(s, "milk")
    for check in (BeliefCheck("allergy"), ConjectureCheck("allergy"), StepAttentionCheck("s0", min=6),
                  TierCheck("s0", max=0), EventCountCheck("meal", equals=1), EventOf("s0")):
        assert s.read(check) is UNSUPPORTED
    assert s.waiting() == frozenset() and s.sample(("s0", "s1")) == []
    totals = s.totals()
    assert totals.llm == {"calls": 0, "tokens": 0, "prompt_tokens": 0, "completion_tokens": 0, "retries": 0,
                          "failures": 0, "by_task": {}}
    assert totals.processes == {} and totals.memories == 3
    assert totals.trace[0] == {"t": 0.0, "event": "created", "id": 0, "kind": "turn", "steps": ["s0"]}
    last = totals.trace[-1]
    assert (last["event"], last["step"], last["ids"], last["scored"]) == ("retrieval", "probe", [1, 0], 2)
    assert len(last["scores"]) == 2 and [e["event"] for e in totals.trace].count("created") == 3


def test_it_is_a_memory_system_and_its_config_instantiates():
    s = instantiate(OmegaConf.load(CONFIG_DIR / "system" / "bm25.yaml"))
    assert isinstance(s, Bm25System) and isinstance(s, MemorySystem)
    assert (s.k1, s.b, s.method) == (1.5, 0.75, "lucene")
    assert not any(name.endswith("_") for name in vars(s))  # state only after start()
    s.start(Context("x"))
    s.start(Context("y"))                                   # start again: an empty store
    assert s.totals().memories == 0


def test_parameters_are_checked_at_start_and_other_variants_run():
    with pytest.raises(ConfigError, match="^method: expected one of lucene, robertson, atire, bm25l, bm25\\+, got 'bm26'$"):
        system(method="bm26")
    with pytest.raises(ConfigError, match="^b: expected a number from 0 to 1, got 1.5$"):
        system(b=1.5)
    for method in ("robertson", "atire", "bm25l", "bm25+"):
        assert ask(system(TOY, method=method), "green").ranking.ids[0] == 2


WORDS = ["milk", "tea", "coffee", "cat", "the", "sleeps", "牛奶", "咖啡", "很", "天气"]
TEXT = st.one_of(st.lists(st.sampled_from(WORDS), max_size=7).map(" ".join), st.text(max_size=20))


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(TEXT, max_size=12), query=TEXT, depth=st.integers(0, 15))
def test_ranking_property(texts, query, depth):
    s = system(texts)
    out = ask(s, query, depth=depth)
    r = out.ranking
    assert len(r.ids) == len(set(r.ids)) <= depth
    assert len(r.scores) == len(r.provenance) == len(r.tokens) == len(r.ids)
    assert all(a >= b for a, b in zip(r.scores, r.scores[1:])), "scores non-increasing"
    assert all(i < j for (i, a), (j, b) in zip(zip(r.ids, r.scores), zip(r.ids[1:], r.scores[1:])) if a == b)
    docs = [tokenize(t) for t in texts]
    assert out.cost.scored == sum(t in doc for t in set(tokenize(query)) for doc in docs)   # postings read: df
    if texts:
        expected = lucene(tokenize(query), [tokenize(t) for t in texts])
        assert len(r.ids) == min(depth, sum(e > 0 for e in expected))
        assert r.scores == pytest.approx([expected[i] for i in r.ids], rel=1e-4, abs=1e-6)
        assert all(r.provenance[n] == (f"s{i}",) for n, i in enumerate(r.ids))


def test_context_indexes_session_neighbours_but_shows_and_charges_the_turn_alone():
    s = Bm25System(context=1, self_weight=2)
    s.start(Context("test"))
    for i, (at, text) in enumerate([(0, "we adopted a puppy"), (60, "so cute"), (120, "traffic was bad"),
                                    (7200, "next session: cute lamps")]):
        s.observe(Observation(f"s{i}", float(at), "say", text))
    docs = s._documents()
    assert Counter(docs[1]) == Counter(["cute", "cute", "adopted", "puppy", "traffic", "bad"])
    assert "lamps" not in docs[2] and Counter(docs[3]) == Counter(["next", "session", "cute", "lamps"] * 2)
    out = ask(s, "puppy", at=8000.0)
    assert out.ranking.ids == [0, 1] and out.ranking.provenance == [("s0",), ("s1",)]
    assert s.context_texts(out.ranking.ids) == ["we adopted a puppy", "so cute"]
    assert out.ranking.tokens == [system(["we adopted a puppy", "so cute"]).sizes_[i] for i in (0, 1)]
    assert ask(system(["we adopted a puppy", "so cute"]), "puppy").ranking.ids == [0]   # without context


def test_stemmer_matches_inflections_and_unknown_languages_are_refused():
    assert ask(system(["she adopted two puppies"], stemmer="english"), "puppy adoption").ranking.ids == [0]
    assert ask(system(["she adopted two puppies"]), "puppy adoption").ranking.ids == []
    with pytest.raises(ValueError, match="stemmer 'klingon'"):
        system([], stemmer="klingon")
    with pytest.raises(ConfigError, match="^context: expected an integer >= 0, got -1$"):
        system([], context=-1)
