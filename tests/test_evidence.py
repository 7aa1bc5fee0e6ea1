"""Evidence recall@k: the per-probe math, the aggregates, and that deeper ranking changes nothing else."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.evaluation import evidence
from mtsbench.config.composition import compose
from mtsbench.config.options import Evaluation
from mtsbench.evaluation.evaluate import COLUMNS
from mtsbench.memory.attention import DualAttention
from mtsbench.memory.index import TierIndexes
from mtsbench.memory.retrieval import TieredSearch
from mtsbench.memory.store import MemoryStore
from mtsbench.mechanisms.decay import Exponential, PowerLaw
from mtsbench.mechanisms.depth import Escalate, Linear
from mtsbench.harness.runner import run
from mtsbench.scenario.model import Expect, Step
from mtsbench.outputs.stream import trace_events

DEPTHS = (5, 10, 25, 50)


def probe(recall=(), sessions=(), category=None, abstain=False, roles=()):
    return Step(9, "q", 0.0, "probe", "?", category=category, abstain=abstain,
                expect=Expect(recall=tuple(recall), recall_sessions=tuple(sessions), recall_roles=tuple(roles)))


def test_probe_fields_by_hand():
    # ranking provenance: rank 1 = a, rank 2 = (b, c), then 20 fillers, rank 23 = d; e never ranked
    provenance = [("a",), ("b", "c")] + [(f"x{i}",) for i in range(20)] + [("d",)]
    step = probe(recall=("a", "d", "e", "c"), sessions=(("s1", ("e", "d")), ("s2", ("c",)), ("s3", ("zz",))),
                 category="multi-hop")
    got = evidence.probe_fields(step, provenance, DEPTHS, earned=provenance)
    # evidence ranks 1, 23, -, 2: @5 and @10 find a and c (2/4), @25 and @50 also d (3/4)
    assert [got[f"recall@{d}"] for d in DEPTHS] == [0.5, 0.5, 0.75, 0.75]
    # session ranks: s1 -> 23 (d), s2 -> 2, s3 -> never
    assert [got[f"session_recall@{d}"] for d in DEPTHS] == [0.3333, 0.3333, 0.6667, 0.6667]
    assert (got["category"], got["abstain"]) == ("multi-hop", None)


def test_any_all_and_roles_by_hand():
    # ranks: old statement 'o' at 1 and 4, update 'u' at 3; tokens 100 each: 256t keeps 2, 512t keeps 5
    provenance = [("o",), ("x",), ("u",), ("o2",), ("y",)]
    step = probe(recall=("o", "o2", "u"), roles=(("original_info", ("o", "o2")), ("updated_info", ("u",))),
                 sessions=(("b1", ("o", "x")), ("b2", ("u", "y"))))
    got = evidence.probe_fields(step, provenance, (1, 3), tokens=[100] * 5, budgets=(256, 512), earned=provenance)
    assert [got[f"recall@{c}"] for c in ("1", "3", "256t", "512t")] == [0.3333, 0.6667, 0.3333, 1.0]
    assert [got[f"recall_any@{c}"] for c in ("1", "3", "256t", "512t")] == [1.0, 1.0, 1.0, 1.0]
    assert [got[f"recall_all@{c}"] for c in ("1", "3", "256t", "512t")] == [0.0, 0.0, 0.0, 1.0]
    assert (got["session_recall@256t"], got["session_recall@512t"]) == (0.5, 1.0)
    # 256t: the update (rank 3) is not kept: no order to judge; the stale one wins the unconditional view
    assert (got["later_above@256t"], got["later_wins@256t"]) == (None, 0.0)
    # 512t: both kept, the stale statement's best rank (1) is above the update's (3)
    assert (got["later_above@512t"], got["later_wins@512t"]) == (0.0, 0.0)
    flipped = probe(recall=("o", "u"), roles=(("original_info", ("o",)), ("updated_info", ("u",))))
    got = evidence.probe_fields(flipped, [("u",), ("o",)], (1,), tokens=[100, 100], budgets=(150, 512),
                                earned=[("u",), ("o",)])
    assert (got["later_above@150t"], got["later_wins@150t"], got["later_above@512t"]) == (None, 1.0, 1.0)
    plain = evidence.probe_fields(probe(recall=("o",)), [("o",)], (1,), tokens=[10], budgets=(512,), earned=[("o",)])
    assert plain["later_above@512t"] is None and plain["recall_all@512t"] == 1.0


def test_abstaining_probe_and_probe_without_evidence_have_no_recall():
    for step in (probe(category="adversarial", abstain=True), probe()):
        got = evidence.probe_fields(step, [("a",)], DEPTHS, earned=[("a",)])
        assert all(got[f"recall@{d}"] is None and got[f"session_recall@{d}"] is None for d in DEPTHS)
    assert evidence.probe_fields(probe(abstain=True), [], DEPTHS)["abstain"] is True


def test_summary_per_category_by_hand():
    rows = [  # category, abstain, recall@5, recall@10, scored
        ("single-hop", None, 1.0, 1.0, 10), ("single-hop", None, 0.0, 0.5, 30),
        ("multi-hop", None, 0.5, 1.0, 20), ("adversarial", True, None, None, 40), (None, None, None, None, 0)]
    frame = pd.DataFrame([{"check": "probe", "category": c, "abstain": a, "recall@5": r5, "recall@10": r10,
                           "session_recall@5": None, "session_recall@10": None, "scored": s}
                          for c, a, r5, r10, s in rows] + [{"check": "recall", "scored": 999}])
    out = evidence.summarize(frame, (5, 10))
    assert (out["probes"], out["with_evidence"], out["abstain"], out["scored"]) == (5, 3, 1, 20.0)
    assert (out["recall@5"], out["recall@10"]) == (0.5, 0.8333)
    single = out["by_category"]["single-hop"]
    assert (single["probes"], single["recall@5"], single["recall@10"], single["scored"]) == (2, 0.5, 0.75, 20.0)
    adversarial = out["by_category"]["adversarial"]
    assert (adversarial["abstain"], adversarial["with_evidence"], adversarial["recall@5"]) == (1, 0, None)
    assert list(out["by_category"]) == ["adversarial", "multi-hop", "single-hop"]
    text = evidence.console(out)
    assert "single-hop" in text and text.splitlines()[-3].split()[:4] == ["all", "5", "3", "1"]


def test_depths_from_config():
    cfg, _ = compose([])
    assert Evaluation.of(cfg).depths == DEPTHS
    cfg, _ = compose(["evaluation.recall_at=[50,5,5]"])
    assert Evaluation.of(cfg).depths == (5, 50)


def test_each_evaluation_default_is_the_options_class_s():
    """A config without ``evaluation`` (or with nulls) reads ``config.options.Evaluation``'s defaults."""
    bare = Evaluation.of({"evaluation": {"abstain_threshold": None, "rank_to": None}})
    assert bare == Evaluation() == Evaluation.of({}) == Evaluation.of(None)
    assert (bare.abstain_threshold, bare.earned_share, bare.rank_depth) == (0.5, 0.5, 0)
    cfg, _ = compose(["evaluation.rank_to=3"])
    assert Evaluation.of(cfg).rank_depth == max(DEPTHS)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 120), k=st.integers(1, 8), rank_to=st.integers(0, 60),
       motivation=st.floats(0, 1), escalate=st.booleans())
def test_ranking_deeper_keeps_the_top_k_and_the_cost(seed, n, k, rank_to, motivation, escalate):
    rng = np.random.default_rng(seed)
    store, index = MemoryStore(dim=8), TierIndexes(8, 3, exact_below=40)
    attention = DualAttention(PowerLaw(), Exponential())
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = store.add_many([f"m{i}" for i in range(n)], "turn", created=np.zeros(n), vectors=vectors,
                         provenance=[(f"m{i}",) for i in range(n)])
    attention.label(store, ids, rng.uniform(0, 10, n), 0.0)
    tiers = rng.integers(0, 3, n)
    store.tier[ids] = tiers
    for t in range(3):
        index.add(t, ids[tiers == t], vectors[tiers == t])
    depth = Escalate(confidence=0.9) if escalate else Linear()
    search = TieredSearch(candidates=10)
    q = rng.normal(size=8).astype(np.float32)
    plain = search.search(store, attention, index, depth, q, k, motivation, 3600.0)
    deep = search.search(store, attention, index, depth, q, k, motivation, 3600.0, rank_to=rank_to)
    assert np.array_equal(plain.ids, deep.ids) and np.array_equal(plain.scores, deep.scores)
    assert plain.cost == deep.cost
    assert np.array_equal(deep.ranked[:k], deep.ids)
    assert len(deep.ranked) == min(max(k, rank_to), plain.cost.scored)
    assert len(set(deep.ranked.tolist())) == len(deep.ranked)


def test_bundled_metrics_do_not_change_with_evaluation_depths(tmp_path):
    scenarios = "scenarios=[deep_memory,second_thought,field_warmup]"
    frames = []
    for extra in ([], ["evaluation.recall_at=[]", "evaluation.recall_at_tokens=[]", "evaluation.rank_to=0"]):
        cfg, choices = compose([scenarios, *extra])
        frames.append(run(cfg, tmp_path / str(len(frames)), choices))
    with_depths, without = frames
    keep = [c for c in COLUMNS if c != "latency_ms"]
    assert list(without.columns) == COLUMNS + ["category", "abstain"] == COLUMNS + evidence.columns(())
    assert list(with_depths.columns) == COLUMNS + evidence.columns(DEPTHS, (256, 512, 1024, 2048))
    pd.testing.assert_frame_equal(with_depths[keep], without[keep])
    assert trace_events(tmp_path / "0") == trace_events(tmp_path / "1")
    probes = with_depths[(with_depths["check"] == "probe") & with_depths["expected"].notna()]
    assert len(probes) and (probes["recall@50"] >= probes["recall@5"]).all()
