"""An embedder for the tests only: hashing with every cosine c mapped to alpha * c + (1 - alpha).

Each vector gets a shared extra component, so unrelated texts keep cosines near 1 - alpha, as
a dense model's do (multilingual-e5-small's chance level is 0.79 ± 0.03, hashing's 0.03 ±
0.05): the same texts, the same relations, on a shifted and stretched cosine scale.
"""

import numpy as np

from mtsbench.embed.hashing import Hashing


class Squeezed:
    def __init__(self, alpha: float = 0.4, dim: int = 1024, char_n: int = 3, char_weight: float = 0.3):
        self.base, self.alpha = Hashing(dim=dim, char_n=char_n, char_weight=char_weight), alpha
        self.dim = dim + 1

    def embed(self, texts):
        v = self.base.embed(texts)
        extra = np.full((len(texts), 1), np.sqrt(1 - self.alpha), dtype=np.float32)
        return np.hstack([np.sqrt(self.alpha) * v, extra]).astype(np.float32)

    def warm(self, texts):
        pass
