"""Who loses when a new fact contradicts a stored one (DESIGN §1.5): the ``conflict`` group.

``resolve(b_new, b_old, strength)`` gets the beliefs of the new and the old side and the
strength of the contradiction, and returns ``(new_loses, keep)``: which side loses, and
``keep``, the share of its attention the loser keeps (its belief is re-estimated by the
LLM and moved by the belief rule). ``drops_loser`` says whether the loser is removed
from memory instead. Pure and vectorised.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class ConflictRule(Protocol):
    drops_loser: bool

    def resolve(self, b_new: np.ndarray, b_old: np.ndarray,
                strength: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


class WeakerLoses:
    """The seed design: the side with less belief loses (a tie goes against the new claim)
    and keeps 1 - strength * b_winner of its attention, so a weak claim barely dents a strong
    fact's rival while a strong fact all but silences a weak claim.

    >>> new_loses, keep = WeakerLoses().resolve(np.array([0.4, 0.9]), np.array([0.8, 0.5]), np.ones(2))
    >>> new_loses.tolist(), keep.round(2).tolist()
    ([True, False], [0.2, 0.1])
    """

    drops_loser = False

    def resolve(self, b_new, b_old, strength):
        b_new, b_old = np.asarray(b_new, dtype=float), np.asarray(b_old, dtype=float)
        new_loses = b_new <= b_old
        winner = np.where(new_loses, b_old, b_new)
        return new_loses, 1.0 - np.asarray(strength, dtype=float) * winner


class NewestWins:
    """Mem0's rule: the new fact replaces the old one, whatever either's belief.

    >>> new_loses, keep = NewestWins().resolve(np.array([0.1]), np.array([0.99]), np.ones(1))
    >>> new_loses.tolist(), keep.tolist()
    ([False], [0.0])
    """

    drops_loser = True

    def resolve(self, b_new, b_old, strength):
        n = len(np.atleast_1d(b_new))
        return np.zeros(n, dtype=bool), np.zeros(n)
