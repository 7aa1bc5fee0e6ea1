"""Belief update and accumulation rules: hand values and invariants."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtsbench.mechanisms import accumulate, belief

Z = np.zeros(1)


def test_ema_moves_a_damped_step_and_replace_jumps():
    b = np.array([0.9])
    assert belief.ema(b, Z, Z, np.array([0.1]), eta=0.25)[0][0] == pytest.approx(0.7)
    assert belief.replace(b, Z, Z, np.array([0.1]))[0][0] == pytest.approx(0.1)


def test_nars_one_contradiction_does_not_topple_repeated_evidence():
    b, wp, wm = np.array([0.5]), Z, Z
    for _ in range(4):
        b, wp, wm = belief.nars(b, wp, wm, np.array([0.9]))
    strong = b[0]                                   # f = 0.9, c = 4/5: 0.82
    assert strong == pytest.approx(0.8 * 0.4 + 0.5)
    b, wp, wm = belief.nars(b, wp, wm, np.array([0.1]))
    assert 0.6 < b[0] < strong                      # f = 3.7/5 = 0.74, c = 5/6: 0.7
    assert b[0] == pytest.approx((5 / 6) * (0.74 - 0.5) + 0.5)


def test_accumulation_rules_by_hand():
    b, d = np.array([0.4, 0.4, 0.4]), np.ones(3)
    assert accumulate.noisy_or(b, d) == pytest.approx(1 - 0.6 ** 3)            # 0.784
    assert accumulate.nars(b, d) == pytest.approx(1.2 / 2.2)                  # w+ = 1.2
    assert accumulate.log_odds(b, d) == pytest.approx(np.tanh(1.5 * np.log(1.4 / 0.6)))
    assert accumulate.log_odds(np.array([0.9]), np.ones(1)) == pytest.approx(0.9)
    assert accumulate.maximum(b, d) == pytest.approx(0.4)
    # impressions spaced beyond their TTL barely add up
    faded = accumulate.ttl_weight(np.array([30.0, 20.0, 0.0]), np.full(3, 5.0))
    assert accumulate.noisy_or(b, faded) < 0.41


@given(st.lists(st.floats(0, 1), min_size=1, max_size=8), st.lists(st.floats(0, 1), min_size=8, max_size=8))
def test_every_rule_stays_in_unit_interval_and_noisy_or_never_below_max(bs, ds):
    b, d = np.array(bs), np.array(ds[: len(bs)])
    for rule in (accumulate.noisy_or, accumulate.nars, accumulate.log_odds, accumulate.maximum):
        assert 0.0 <= rule(b, d) <= 1.0
    assert accumulate.noisy_or(b, d) >= accumulate.maximum(b, d) - 1e-12


@given(st.lists(st.floats(0, 0.99), min_size=1, max_size=6), st.floats(0, 0.99))
def test_one_more_impression_never_lowers_an_accumulated_belief(bs, extra):
    b, d = np.array(bs), np.ones(len(bs))
    more, d2 = np.append(b, extra), np.ones(len(bs) + 1)
    for rule in (accumulate.NoisyOr(), accumulate.Nars(), accumulate.LogOdds(), accumulate.Max()):
        assert rule(more, d2) >= rule(b, d) - 1e-12


@given(st.floats(0, 1), st.floats(0, 1))
def test_ema_stays_between_old_belief_and_estimate(b0, e):
    b = belief.Ema(eta=0.3).update(np.array([b0]), Z, Z, np.array([e]))[0][0]
    assert min(b0, e) - 1e-12 <= b <= max(b0, e) + 1e-12
