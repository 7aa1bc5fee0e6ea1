"""Decay curves against hand-computed values, and the shared contract for every option."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtsbench.mechanisms.decay import (Ebbinghaus, Exponential, Hyperbolic, NoDecay, PowerLaw,
                                       check_decay)

ALL = [Exponential(), PowerLaw(), Hyperbolic(), Ebbinghaus(), NoDecay()]


def r(decay, dt, s=None):
    s = decay.initial_strength if s is None else s
    return float(decay.retention(np.array([dt]), np.array([s]))[0])


def test_exponential_half_life():
    e = Exponential(half_life=12.0)
    assert r(e, 12.0) == pytest.approx(0.5)
    assert r(e, 36.0) == pytest.approx(0.125)
    assert r(e, 6.0) == pytest.approx(1 / math.sqrt(2))


def test_power_law_act_r():
    p = PowerLaw(tau=24.0, d=0.3)
    assert r(p, 24.0) == pytest.approx(2 ** -0.3)          # 0.8123
    assert r(p, 72.0) == pytest.approx(4 ** -0.3)          # 0.6598
    assert r(PowerLaw(tau=2.0, d=1.0), 6.0) == pytest.approx(0.25)


def test_hyperbolic():
    assert r(Hyperbolic(k=0.2), 5.0) == pytest.approx(0.5)
    assert r(Hyperbolic(k=0.01), 300.0) == pytest.approx(0.25)


def test_ebbinghaus_strength_grows_with_recall_as_memorybank_intends():
    e = Ebbinghaus(scale=24.0, initial_strength=1.0, growth=1.0)
    assert r(e, 24.0) == pytest.approx(math.exp(-1))
    s = e.strengthen(np.array([1.0]))
    assert s.tolist() == [2.0]
    assert r(e, 24.0, 2.0) == pytest.approx(math.exp(-0.5))
    assert r(e, 24.0, 2.0) > r(e, 24.0, 1.0)   # the recalled memory lasts longer


def test_none_never_decays():
    assert r(NoDecay(), 1e9) == 1.0


@pytest.mark.parametrize("decay", ALL, ids=lambda d: type(d).__name__)
def test_contract(decay):
    check_decay(decay)


@pytest.mark.parametrize("decay", ALL, ids=lambda d: type(d).__name__)
@given(a=st.floats(0, 1e5), b=st.floats(0, 1e5))
def test_monotone(decay, a, b):
    lo, hi = sorted((a, b))
    assert 0.0 <= r(decay, hi) <= r(decay, lo) <= 1.0
