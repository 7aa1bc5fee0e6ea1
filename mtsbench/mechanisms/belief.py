"""Belief update rules for consolidation (DESIGN §1.5): the ``belief`` config group.

The LLM's belief estimates are unstable, so a new estimate of an existing fact is an
*impression impact* on the old belief, not a replacement. State per fact: belief ``b`` and
NARS evidence ``(w_plus, w_minus)``. A rule has two pure, vectorised steps:

- ``initial(b0) -> (b, w_plus, w_minus)``: the state of a newly formed fact whose LLM
  belief is ``b0`` (one unit of evidence: w+ = b0, w- = 1 - b0);
- ``update(b, w_plus, w_minus, estimate) -> (b, w_plus, w_minus)``: fold a new estimate in.

The functions below hold the formulas; the classes choose one for the config group.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from ..core.params import Confidence, Positive, Share, declared


def replace(b, w_plus, w_minus, estimate):
    """The naive baseline: b <- estimate.

    >>> replace(np.array([0.9]), np.zeros(1), np.zeros(1), np.array([0.2]))[0].tolist()
    [0.2]
    """
    return np.asarray(estimate, dtype=float), w_plus, w_minus


def ema(b, w_plus, w_minus, estimate, eta: float = 0.3):
    """The seed's impression impact: b <- b + eta * (estimate - b).

    >>> ema(np.array([0.9]), np.zeros(1), np.zeros(1), np.array([0.2]), eta=0.5)[0].tolist()
    [0.55]
    """
    b = np.asarray(b, dtype=float)
    return b + eta * (np.asarray(estimate, dtype=float) - b), w_plus, w_minus


def nars(b, w_plus, w_minus, estimate, weight: float = 1.0, max_confidence: float = 0.99):
    """NARS evidence: w+ += weight * e, w- += weight * (1 - e); f = w+/w, c = min(w/(w+1), cap);
    belief = the NARS expectation c * (f - 0.5) + 0.5.

    >>> b, wp, wm = nars(np.array([0.5]), np.zeros(1), np.zeros(1), np.array([1.0]))
    >>> b.tolist(), wp.tolist(), wm.tolist()      # f = 1, c = 1/2
    ([0.75], [1.0], [0.0])
    >>> round(float(nars(b, wp, wm, np.array([1.0]))[0][0]), 4)   # f = 1, c = 2/3
    0.8333
    """
    e = np.asarray(estimate, dtype=float)
    w_plus = np.asarray(w_plus, dtype=float) + weight * e
    w_minus = np.asarray(w_minus, dtype=float) + weight * (1.0 - e)
    return nars_expectation(w_plus, w_minus, max_confidence), w_plus, w_minus


def nars_expectation(w_plus, w_minus, max_confidence: float = 0.99):
    """c * (f - 0.5) + 0.5 with f = w+/w (0.5 without evidence) and c = min(w/(w+1), cap).

    >>> nars_expectation(np.array([0.8]), np.array([0.2])).tolist()     # f = 0.8, c = 1/2
    [0.65]
    """
    w_plus, w_minus = np.asarray(w_plus, dtype=float), np.asarray(w_minus, dtype=float)
    w = w_plus + w_minus
    f = np.divide(w_plus, w, out=np.full_like(w, 0.5), where=w > 0)
    c = np.minimum(w / (w + 1.0), max_confidence)
    return c * (f - 0.5) + 0.5


class BeliefRule(Protocol):
    """How a new estimate moves an existing belief (see the module docstring)."""

    def initial(self, b0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    def update(self, b: np.ndarray, w_plus: np.ndarray, w_minus: np.ndarray,
               estimate: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


class _Direct:
    """A fresh fact's belief is the LLM's estimate; evidence is kept for reporting."""

    def initial(self, b0):
        b0 = np.asarray(b0, dtype=float)
        return b0.copy(), b0.copy(), 1.0 - b0


class Replace(_Direct):
    """The naive baseline: the new estimate wins.

    >>> Replace().update(np.array([0.9]), np.ones(1), np.zeros(1), np.array([0.3]))[0].tolist()
    [0.3]
    """

    def update(self, b, w_plus, w_minus, estimate):
        return replace(b, w_plus, w_minus, estimate)


@declared
class Ema(_Direct):
    """Impression impact: b <- b + eta * (estimate - b) (the seed design, the default).

    >>> Ema(eta=0.25).update(np.array([0.9]), np.ones(1), np.zeros(1), np.array([0.1]))[0].tolist()
    [0.7]
    """

    def __init__(self, eta: Share = 0.3):
        self.eta = eta

    def update(self, b, w_plus, w_minus, estimate):
        return ema(b, w_plus, w_minus, estimate, self.eta)


@declared
class Nars:
    """NARS truth values: every estimate is ``weight`` units of evidence; belief is the
    expectation c * (f - 0.5) + 0.5, so a fresh fact starts half-way to 0.5 (c = 1/2).

    >>> rule = Nars()
    >>> rule.initial(np.array([0.9]))[0].round(4).tolist()          # f = 0.9, c = 1/2
    [0.7]
    >>> rule.update(*rule.initial(np.array([0.9])), np.array([0.9]))[0].round(4).tolist()   # c = 2/3
    [0.7667]
    """

    def __init__(self, weight: Positive = 1.0, max_confidence: Confidence = 0.99):
        self.weight = weight
        self.max_confidence = max_confidence

    def initial(self, b0):
        w_plus = np.asarray(b0, dtype=float) * self.weight
        w_minus = (1.0 - np.asarray(b0, dtype=float)) * self.weight
        return nars_expectation(w_plus, w_minus, self.max_confidence), w_plus, w_minus

    def update(self, b, w_plus, w_minus, estimate):
        return nars(b, w_plus, w_minus, estimate, self.weight, self.max_confidence)
