"""What each process may do to memory: narrow protocols over ``memory.Memory``.

A process receives the one it names (plus the LLM and the mechanism rules it uses, passed
in explicitly) and returns what it produced; it never sees the agent. Tests drive each
process against a small in-memory fake of its protocols (``tests/test_process_fakes.py``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..llm.base import Fact, Item
from ..memory.retrieval import Retrieval


class Associations(Protocol):
    """Labelling: find an item's associated memories."""

    def search(self, vector: np.ndarray, k: int, motivation: float, rank_to: int = 0) -> Retrieval: ...

    def text(self, i: int) -> str: ...

    def provenance(self, i: int) -> tuple[str, ...]: ...


class Perceive(Protocol):
    """Label a derived item (summary, event, conjecture) and store it; returns its id."""

    def __call__(self, item: Item, kind: str, provenance: tuple[str, ...], meta: dict | None = None,
                 **fact) -> int: ...


class Trace(Protocol):
    now: float

    def emit(self, event: str, **fields) -> None: ...


class SummaryMemory(Trace, Protocol):
    """Summarization: store facts with the attention their source turns hold."""

    def remember(self, text: str, kind: str, provenance: tuple[str, ...], *, score: float | None,
                 meta: dict | None = None, **fact) -> int: ...

    def attention_of_steps(self, steps: tuple[str, ...]) -> float: ...


class EventMemory(Trace, Protocol):
    """Major events: read an event, rewrite it with a new development, recall it; find the
    events most similar to a keyless tag (``embed``, ``search``, ``kind``, ``meta``)."""

    def alive(self, i: int) -> bool: ...

    def embed(self, text: str) -> np.ndarray: ...

    def search(self, vector: np.ndarray, k: int, motivation: float, rank_to: int = 0) -> Retrieval: ...

    def kind(self, i: int) -> str: ...

    def meta(self, i: int) -> dict: ...

    def text(self, i: int) -> str: ...

    def provenance(self, i: int) -> tuple[str, ...]: ...

    def rewrite(self, i: int, text: str, provenance: tuple[str, ...], reembed: bool = True) -> None: ...

    def recall(self, ids: np.ndarray, why: str) -> None: ...


class FactMemory(EventMemory, Protocol):
    """Consolidation: find related facts, merge them, settle contradictions, move beliefs."""

    def vector(self, i: int) -> np.ndarray: ...

    def key(self, i: int) -> str | None: ...

    def fact(self, i: int) -> Fact: ...

    def belief(self, i: int) -> float: ...

    def created(self, i: int) -> float: ...

    def with_key(self, key: str | None) -> list[int]: ...

    def drop(self, i: int) -> None: ...

    def move_belief(self, i: int, rule, estimate: float) -> None: ...

    def weaken(self, i: int, keep: float) -> None: ...


class ImpressionMemory(Trace, Protocol):
    """Inference: extend a live conjecture's provenance; embed a keyless impression."""

    def alive(self, i: int) -> bool: ...

    def embed(self, text: str) -> np.ndarray: ...

    def text(self, i: int) -> str: ...

    def key(self, i: int) -> str | None: ...

    def provenance(self, i: int) -> tuple[str, ...]: ...

    def rewrite(self, i: int, text: str, provenance: tuple[str, ...], reembed: bool = True) -> None: ...
