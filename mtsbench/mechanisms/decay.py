"""Decay curves for one attention component, evaluated lazily in closed form.

A component is stored as (value v0, time of last update t0, strength S). Its value at
time t is ``v0 * retention(t - t0, S)``; nothing ticks between updates. Times are in
hours. Every curve satisfies the contract checked by ``check_decay``: retention is 1 at
dt = 0, lies in [0, 1] and never increases with dt.

A recall is a use: ``strengthen(strength)`` gives the strength after one recall. Only
``Ebbinghaus`` has a strength that changes (MemoryBank's intent: each recall makes the
memory more durable); the others keep S as it is.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from ..core.params import NonNegative, Positive, declared


@runtime_checkable
class Decay(Protocol):
    """Retention of an attention component after ``dt`` hours at strength ``S``."""

    initial_strength: float

    def retention(self, dt: np.ndarray, strength: np.ndarray) -> np.ndarray: ...

    def strengthen(self, strength: np.ndarray) -> np.ndarray: ...


class _FixedStrength:
    """Base for curves whose shape does not change with recalls."""

    initial_strength = 1.0

    def strengthen(self, strength: np.ndarray) -> np.ndarray:
        return np.asarray(strength, dtype=float)


@declared
class Exponential(_FixedStrength):
    """r(dt) = 0.5 ** (dt / half_life).

    >>> Exponential(half_life=2.0).retention(np.array([0.0, 2.0, 4.0]), np.ones(3)).tolist()
    [1.0, 0.5, 0.25]
    """

    def __init__(self, half_life: Positive = 6.0):
        self.half_life = half_life

    def retention(self, dt, strength):
        return np.exp2(-np.maximum(dt, 0.0) / self.half_life)


@declared
class PowerLaw(_FixedStrength):
    """ACT-R style r(dt) = (1 + dt / tau) ** -d.

    >>> PowerLaw(tau=1.0, d=0.5).retention(np.array([0.0, 3.0]), np.ones(2)).tolist()
    [1.0, 0.5]
    """

    def __init__(self, tau: Positive = 24.0, d: NonNegative = 0.5):
        self.tau = tau
        self.d = d

    def retention(self, dt, strength):
        return (1.0 + np.maximum(dt, 0.0) / self.tau) ** (-self.d)


@declared
class Hyperbolic(_FixedStrength):
    """r(dt) = 1 / (1 + k * dt).

    >>> Hyperbolic(k=0.5).retention(np.array([0.0, 2.0]), np.ones(2)).tolist()
    [1.0, 0.5]
    """

    def __init__(self, k: NonNegative = 0.05):
        self.k = k

    def retention(self, dt, strength):
        return 1.0 / (1.0 + self.k * np.maximum(dt, 0.0))


@declared
class Ebbinghaus:
    """r(dt) = exp(-dt / (scale * S)); each recall sets S <- S + growth.

    MemoryBank (Zhong et al. 2024) means S to grow with every recall so that recalled
    memories last longer; its published code inverts this. Here S starts at
    ``initial_strength`` and grows, as the paper intends. ``scale`` is hours per unit S.

    >>> e = Ebbinghaus(scale=24.0, initial_strength=1.0, growth=1.0)
    >>> round(float(e.retention(np.array([24.0]), np.array([1.0]))[0]), 4)
    0.3679
    >>> e.strengthen(np.array([1.0])).tolist()
    [2.0]
    """

    def __init__(self, scale: Positive = 24.0, initial_strength: Positive = 1.0, growth: NonNegative = 1.0):
        self.scale = scale
        self.initial_strength = initial_strength
        self.growth = growth

    def retention(self, dt, strength):
        return np.exp(-np.maximum(dt, 0.0) / (self.scale * np.asarray(strength, dtype=float)))

    def strengthen(self, strength):
        return np.asarray(strength, dtype=float) + self.growth


class NoDecay(_FixedStrength):
    """r(dt) = 1: the component never fades (ablation).

    >>> NoDecay().retention(np.array([0.0, 1e6]), np.ones(2)).tolist()
    [1.0, 1.0]
    """

    def retention(self, dt, strength):
        return np.ones_like(np.asarray(dt, dtype=float))


def check_decay(decay: Decay) -> None:
    """Raise AssertionError unless ``decay`` honours the Decay contract."""
    dt = np.array([0.0, 0.5, 1.0, 10.0, 100.0, 1e4])
    s = np.full(dt.shape, decay.initial_strength, dtype=float)
    r = np.asarray(decay.retention(dt, s), dtype=float)
    assert r.shape == dt.shape, "retention must keep the input's shape"
    assert abs(r[0] - 1.0) < 1e-12, "retention must be 1 at dt = 0"
    assert np.all((r >= 0.0) & (r <= 1.0)), "retention must lie in [0, 1]"
    assert np.all(np.diff(r) <= 1e-12), "retention must not increase with dt"
    s2 = np.asarray(decay.strengthen(s), dtype=float)
    assert np.all(s2 >= s), "a recall must not weaken a memory"
