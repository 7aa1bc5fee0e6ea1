"""Pure math of dual attention: splitting a labelled score and boosting on recall.

Attention = long-term part + short-term part (DESIGN §1.2). A labelled score ``a``
(0-10) enters as ``long = share * a`` and ``short = (1 - share) * a``. A recall adds
``long_gain`` to the long part and ``short_gain`` (larger) to the short part; arousal adds
to the short part only. ``boost`` clips to ``[0, cap]``; the caller chooses the cap of each
part (``DualAttention`` keeps long + short <= cap).
"""

from __future__ import annotations

import numpy as np


def split_score(score: np.ndarray, long_share: float) -> tuple[np.ndarray, np.ndarray]:
    """(long, short) = (share * a, (1 - share) * a).

    >>> split_score(np.array([8.0]), 0.25)
    (array([2.]), array([6.]))
    """
    score = np.asarray(score, dtype=float)
    return long_share * score, (1.0 - long_share) * score


def boost(current: np.ndarray, gain: np.ndarray | float, cap: np.ndarray | float) -> np.ndarray:
    """min(current + gain, cap), never below zero.

    >>> boost(np.array([1.0, 9.5]), 1.0, 10.0).tolist()
    [2.0, 10.0]
    """
    return np.clip(np.asarray(current, dtype=float) + gain, 0.0, cap)
