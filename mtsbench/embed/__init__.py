"""Embedders: text -> L2-normalised float32 vectors."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to an (n, dim) float32 array of unit-norm rows (zero rows for empty text)."""

    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def warm(self, texts: Sequence[str]) -> None:
        """Told a scenario's texts up front: a caching embedder encodes them in batches now
        (the others do nothing)."""
        ...
