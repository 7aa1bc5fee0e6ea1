"""The one seeding helper: every random draw in mtsbench comes from ``generator``."""

from __future__ import annotations

import zlib

import numpy as np


def generator(seed: int, *keys: str) -> np.random.Generator:
    """A numpy Generator seeded from ``seed`` and string keys (crc32, stable across processes).

    >>> float(generator(0, "a").random()) == float(generator(0, "a").random())
    True
    >>> float(generator(0, "a").random()) == float(generator(0, "b").random())
    False
    """
    return np.random.default_rng([int(seed), *(zlib.crc32(k.encode("utf-8")) for k in keys)])
