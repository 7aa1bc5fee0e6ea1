"""Deterministic feature-hashing embedder for English and Chinese.

Features of a text (lower-cased, after dropping a short stop-word list):
- each word of Latin letters/digits (weight 1.0) and its character n-grams of length
  ``char_n`` taken with boundary marks, e.g. ``<mi``, ``mil``, ``ilk``, ``lk>`` (weight
  ``char_weight``), so that "allergic" and "allergy" share features;
- each CJK character (weight ``char_weight``) and each pair of adjacent CJK characters
  (weight 1.0), since Chinese has no spaces between words.

Feature f goes to bucket ``crc32(f) % dim`` with sign ``+1`` or ``-1`` from another bit
of the hash (the signed hashing trick), then the vector is L2-normalised. The same text
always gives the same vector, in every process (crc32, never ``hash()``). A token's
features depend on the token alone, so they are computed once per token and memoised;
a batch is one scatter-add.
"""

from __future__ import annotations

import re
import zlib
from typing import Sequence

import numpy as np
from ..core.params import Count, NonNegative, declared

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
STOP_WORDS = frozenset(
    "a an the is are was were be been am i you he she it we they me my your our their "
    "to of in on at for and or but with this that there here do does did so as by "
    "just very really".split()
) | frozenset("的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 在 和 也 就 都 很 这 那 有".split())


@declared
class Hashing:
    """Signed feature hashing of word and character n-grams, L2-normalised.

    >>> e = Hashing(dim=256)
    >>> v = e.embed(["I am allergic to milk", "milk allergy", "我对牛奶过敏"])
    >>> v.shape, v.dtype.name
    ((3, 256), 'float32')
    >>> bool(abs(np.linalg.norm(v[0]) - 1) < 1e-6)
    True
    >>> bool(v[0] @ v[1] > 0.3)
    True
    """

    def __init__(self, dim: Count = 1024, char_n: Count = 3, char_weight: NonNegative = 0.3, cache_size: Count = 200_000):
        self.dim = dim
        self.char_n = char_n
        self.char_weight = char_weight
        self.cache_size = cache_size      # tokens whose features are memoised (cleared when full)
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def features(self, text: str) -> list[tuple[str, float]]:
        """The weighted features of ``text`` (see the module docstring)."""
        out: list[tuple[str, float]] = []
        for token in _TOKEN.findall(text.lower()):
            if _CJK.match(token):
                chars = [c for c in token if c not in STOP_WORDS]
                out += [("c:" + c, self.char_weight) for c in chars]
                out += [("b:" + a + b, 1.0) for a, b in zip(token, token[1:])]
            elif token not in STOP_WORDS:
                out.append(("w:" + token, 1.0))
                marked = f"<{token}>"
                n = self.char_n
                out += [("n:" + marked[i : i + n], self.char_weight) for i in range(len(marked) - n + 1)]
        return out

    def _token(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """(buckets, signed weights) of one token's features, in feature order; memoised."""
        hit = self._cache.get(token)
        if hit is None:
            buckets, weights = [], []
            for feature, weight in self.features(token):
                h = zlib.crc32(feature.encode("utf-8"))
                buckets.append(h % self.dim)
                weights.append(weight if (h >> 31) & 1 else -weight)
            if len(self._cache) >= self.cache_size:
                self._cache.clear()
            hit = self._cache[token] = (np.array(buckets, dtype=np.int64), np.array(weights, dtype=np.float32))
        return hit

    def warm(self, texts: Sequence[str]) -> None:
        """Nothing to do up front: features are memoised per token as texts come."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch: every feature added in text order with one ``np.add.at`` (unbuffered,
        in order, float32), so a text's vector is the same alone or in any batch."""
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        token = self._token
        parts = [[token(t) for t in _TOKEN.findall(text.lower())] for text in texts]
        counts = [sum(len(b) for b, _ in p) for p in parts]
        flat = [bw for p in parts for bw in p]
        if flat:
            rows = np.repeat(np.arange(len(texts)), counts)
            np.add.at(vectors, (rows, np.concatenate([b for b, _ in flat])), np.concatenate([w for _, w in flat]))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors
