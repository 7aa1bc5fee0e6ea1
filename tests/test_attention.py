"""Dual attention: hand values, and hypothesis properties of the lazy closed form."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtsbench.mechanisms.decay import Ebbinghaus, Exponential, Hyperbolic, NoDecay, PowerLaw
from mtsbench.memory.attention import HOUR, DualAttention
from mtsbench.memory.store import MemoryStore

DECAYS = [Exponential(half_life=12.0), PowerLaw(tau=24.0, d=0.3), Hyperbolic(k=0.2), Ebbinghaus(scale=6.0),
          NoDecay()]


def store_with(n, dim=4):
    s = MemoryStore(dim=dim, capacity=2)
    for i in range(n):
        s.add(f"m{i}", "turn", created=0.0, provenance=(f"s{i}",), vector=np.zeros(dim))
    return s


def test_hand_values_split_decay_and_recall():
    s = store_with(1)
    att = DualAttention(PowerLaw(tau=24.0, d=0.3), Exponential(half_life=12.0), long_share=0.5,
                        long_gain=0.5, short_gain=2.0)
    ids = np.array([0])
    att.label(s, ids, np.array([8.0]), now=0.0)
    long, short = att.parts(s, ids, now=24 * HOUR)
    assert long[0] == pytest.approx(4 * 2 ** -0.3)   # 3.2490
    assert short[0] == pytest.approx(4 * 0.25)       # two half-lives
    att.recall(s, ids, now=24 * HOUR)
    long, short = att.parts(s, ids, now=24 * HOUR)
    assert long[0] == pytest.approx(4 * 2 ** -0.3 + 0.5)
    assert short[0] == pytest.approx(1.0 + 2.0)
    assert s.recalls[0] == 1


def test_arousal_adds_to_short_only_and_sums_duplicates():
    s = store_with(2)
    att = DualAttention(NoDecay(), NoDecay(), long_share=0.5)
    att.label(s, np.array([0, 1]), np.array([2.0, 2.0]), now=0.0)
    att.arouse(s, np.array([1, 1]), np.array([0.5, 0.25]), now=0.0)
    long, short = att.parts(s, np.array([0, 1]), now=0.0)
    assert long.tolist() == [1.0, 1.0] and short.tolist() == [1.0, 1.75]


def test_store_grows_without_losing_rows():
    s = store_with(100)
    assert s.size == 100 and s.text[99] == "m99" and s.provenance[50] == ("s50",)
    assert s.alive[:100].all()


@settings(max_examples=60, deadline=None)
@given(long_i=st.integers(0, 4), short_i=st.integers(0, 4),
       score=st.floats(0, 10), times=st.lists(st.floats(0, 2000), min_size=2, max_size=8),
       share=st.floats(0, 1))
def test_never_negative_and_never_rises_without_recall(long_i, short_i, score, times, share):
    s = store_with(1)
    att = DualAttention(DECAYS[long_i], DECAYS[short_i], long_share=share)
    att.label(s, np.array([0]), np.array([score]), now=0.0)
    values = [att.total(s, np.array([0]), now=t * HOUR)[0] for t in sorted(times)]
    assert all(v >= 0 for v in values)
    assert all(b <= a + 1e-9 for a, b in zip(values, values[1:]))
    assert values[0] <= score + 1e-9


@settings(max_examples=60, deadline=None)
@given(long_i=st.integers(0, 4), short_i=st.integers(0, 4), score=st.floats(0, 10),
       t=st.floats(0, 500), gain=st.floats(0, 3))
def test_recall_and_arousal_never_lower_attention(long_i, short_i, score, t, gain):
    s = store_with(1)
    att = DualAttention(DECAYS[long_i], DECAYS[short_i])
    ids = np.array([0])
    att.label(s, ids, np.array([score]), now=0.0)
    before = att.total(s, ids, now=t * HOUR)[0]
    att.arouse(s, ids, np.array([gain]), now=t * HOUR)
    mid = att.total(s, ids, now=t * HOUR)[0]
    att.recall(s, ids, now=t * HOUR)
    after = att.total(s, ids, now=t * HOUR)[0]
    assert before - 1e-9 <= mid <= after + 1e-9
    assert after <= max(att.cap, score) + 1e-9
