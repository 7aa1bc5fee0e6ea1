"""Incremental rebalancing (memory.tiering) gives the tiers of the full pass, at every pass."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.mechanisms.decay import Ebbinghaus, Exponential, Hyperbolic, NoDecay, PowerLaw
from mtsbench.mechanisms.tiers import Capacity, Heat, Thresholds
from mtsbench.memory.attention import HOUR, DualAttention
from mtsbench.memory.store import MemoryStore
from mtsbench.memory.tiering import Tiering

DECAYS = [PowerLaw(), PowerLaw(tau=2.0, d=0.8), Exponential(), Exponential(half_life=0.5), Hyperbolic(),
          Ebbinghaus(scale=5.0), NoDecay()]


class Harness:
    """What the agent does with tiers: place new memories, promote after writes, rebalance."""

    def __init__(self, policy, attention, incremental):
        self.store = MemoryStore(dim=2)
        self.att = attention
        self.tiering = Tiering(policy, attention, incremental=incremental)

    def add(self, scores, now):
        n = len(scores)
        ids = self.store.add_many(["m"] * n, "turn", created=now, vectors=np.zeros((n, 2)),
                                  provenance=[("s",)] * n)
        self.att.label(self.store, ids, np.asarray(scores, dtype=float), now)
        self.store.tier[ids] = self.tiering.targets(self.store, ids, now, full=False)

    def promote(self, ids, now):
        target = self.tiering.targets(self.store, ids, now, full=False)
        up = target < self.store.tier[ids]
        self.store.tier[ids[up]] = target[up]

    def rebalance(self, now):
        ids = self.tiering.to_check(self.store, now)
        if len(ids):
            self.store.tier[ids] = self.tiering.targets(self.store, ids, now, full=True)
            self.tiering.schedule(self.store, ids, now)


op = st.one_of(
    st.tuples(st.just("add"), st.lists(st.floats(0, 10), min_size=1, max_size=6)),
    st.tuples(st.just("recall"), st.lists(st.integers(0, 200), min_size=1, max_size=4)),
    st.tuples(st.just("arouse"), st.lists(st.tuples(st.integers(0, 200), st.floats(0, 5)), min_size=1, max_size=4)),
    st.tuples(st.just("rebalance"), st.none()),
    st.tuples(st.just("sweep"), st.floats(0.01, 2000)),      # rebalance at 40 times over the next N hours
)


@settings(max_examples=200, deadline=None)
@given(ops=st.lists(st.tuples(st.floats(0, 400), op), min_size=1, max_size=40),
       long_i=st.integers(0, len(DECAYS) - 1), short_i=st.integers(0, len(DECAYS) - 1),
       policy_i=st.integers(0, 2), hysteresis=st.floats(0, 1), share=st.floats(0, 1))
def test_incremental_rebalance_equals_full_pass(ops, long_i, short_i, policy_i, hysteresis, share):
    policies = [lambda: Thresholds(cutoffs=[5.0, 2.0, 0.5], hysteresis=hysteresis),
                lambda: Thresholds(cutoffs=[7.0, 6.5, 3.0, 0.1], hysteresis=hysteresis / 4),
                lambda: Heat(mu_hours=3.0, threshold=2.0)]
    runs = [Harness(policies[policy_i](), DualAttention(DECAYS[long_i], DECAYS[short_i], long_share=share), inc)
            for inc in (True, False)]
    now = 0.0
    for gap_hours, (kind, arg) in ops:
        now += gap_hours * HOUR
        for h in runs:
            size = h.store.size
            if kind == "add":
                h.add(arg, now)
            elif kind == "rebalance":
                h.rebalance(now)
            elif kind == "sweep":
                pass
            elif size:
                if kind == "recall":
                    ids = np.unique(np.array(arg) % size)
                    h.att.recall(h.store, ids, now)
                else:
                    ids, amounts = np.array([a for a, _ in arg]) % size, np.array([b for _, b in arg])
                    ids, _ = h.att.arouse(h.store, ids, amounts, now)
                h.promote(ids, now)
        if kind == "sweep":
            for t in now + np.geomspace(0.01, arg, 40) * HOUR:
                for h in runs:
                    h.rebalance(t)
                assert same_tiers(*runs)
            now = t
        elif kind == "rebalance":
            assert same_tiers(*runs)
    for h in runs:   # and one last pass, far in the future
        h.rebalance(now + 5000 * HOUR)
    assert same_tiers(*runs)


def same_tiers(a, b) -> bool:
    return a.store.tier[: a.store.size].tolist() == b.store.tier[: b.store.size].tolist()


def test_due_time_of_a_single_exponential_is_its_closed_form():
    store = MemoryStore(dim=2)
    att = DualAttention(NoDecay(), Exponential(half_life=6.0), long_share=0.0)
    ids = store.add_many(["a"], "turn", created=0.0, vectors=np.zeros((1, 2)), provenance=[("a",)])
    att.label(store, ids, np.array([8.0]), 0.0)
    t = Tiering(Thresholds(cutoffs=[5.0, 2.0, 0.5], hysteresis=0.25), att)
    # 8 * 0.5 ** (h / 6) < 5 - 0.25  <=>  h > 6 * log2(8 / 4.75)
    exact = 6 * np.log2(8 / 4.75)
    assert exact * (1 - 1e-5) <= t.due(store, ids, 0.0)[0] / HOUR <= exact    # early by at most 1e-5, never late
    # the due time is never late: at it the memory has not crossed yet
    assert att.total(store, ids, t.due(store, ids, 0.0)[0])[0] >= 4.75


def test_bottom_tier_and_undecaying_memories_are_never_scheduled():
    store = MemoryStore(dim=2)
    att = DualAttention(NoDecay(), NoDecay())
    ids = store.add_many(["a", "b"], "turn", created=0.0, vectors=np.zeros((2, 2)), provenance=[("a",), ("b",)])
    att.label(store, ids, np.array([9.0, 0.1]), 0.0)
    t = Tiering(Thresholds(), att)
    store.tier[ids] = t.targets(store, ids, 0.0, full=True)
    assert store.tier[ids].tolist() == [0, 3]
    assert np.isinf(t.due(store, ids, 0.0)).all()


def test_rank_policies_get_the_full_pass():
    store = MemoryStore(dim=2)
    att = DualAttention(NoDecay(), NoDecay())
    ids = store.add_many(["a", "b", "c"], "turn", created=0.0, vectors=np.zeros((3, 2)),
                         provenance=[("a",), ("b",), ("c",)])
    att.label(store, ids, np.array([9.0, 1.0, 5.0]), 0.0)
    t = Tiering(Capacity(sizes=[1]), att)
    assert not t.incremental
    store.take_changed()
    assert t.to_check(store, 10.0).tolist() == [0, 1, 2]
