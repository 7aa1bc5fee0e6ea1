"""Belief update rules for consolidation (DESIGN §1.5): how a new estimate moves a belief.

The LLM's belief estimates are unstable, so a new estimate of an existing fact is an
*impression impact* on the old belief, not a replacement. State per fact: belief ``b`` and
NARS evidence ``(w_plus, w_minus)``; each rule reads and returns all three as arrays (pure,
vectorised). Not yet wired to a config group: the consolidation process (issue 5) will
choose a rule through the ``belief`` group.
"""

from __future__ import annotations

import numpy as np


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
    w = w_plus + w_minus
    f = np.divide(w_plus, w, out=np.full_like(w, 0.5), where=w > 0)
    c = np.minimum(w / (w + 1.0), max_confidence)
    return c * (f - 0.5) + 0.5, w_plus, w_minus
