"""The checks an options dataclass (``PreloadSpec``, ``GenerateSpec``) runs on its values.

Each raises ``error`` (the spec's own one-line error class) naming ``prefix + option``
and what was expected; ``prefix`` is the config node (``"preload."``) or empty.

>>> from dataclasses import dataclass
>>> @dataclass
... class S:
...     n: int = 1
...     share: float = 0.5
>>> integers(S(n=0), {"n": 1}, ValueError, "s.")
Traceback (most recent call last):
ValueError: s.n: expected an integer >= 1, got 0
>>> numbers(S(share=True), {"share": 1.0}, ValueError)
Traceback (most recent call last):
ValueError: share: expected a number from 0 to 1, got True
>>> known_keys({"n": 1, "m": 2}, ["n", "share"], "s", "an S option")
Traceback (most recent call last):
mtsbench.errors.ConfigError: s.m: not an S option (options: n, share)
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .errors import ConfigError


def integers(spec, lows: Mapping[str, int], error: type[Exception], prefix: str = "") -> None:
    """Each option named in ``lows`` is an int (not a bool) >= its low bound."""
    for name, lo in lows.items():
        v = getattr(spec, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise error(f"{prefix}{name}: expected an integer >= {lo}, got {v!r}")


def numbers(spec, highs: Mapping[str, float | None], error: type[Exception], prefix: str = "") -> None:
    """Each option named in ``highs`` is an int or float (not a bool) from 0 to its high
    bound (None: unbounded above); NaN is refused."""
    for name, hi in highs.items():
        v = getattr(spec, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v >= 0 and (hi is None or v <= hi)):
            want = "a number >= 0" if hi is None else f"a number from 0 to {hi:g}"
            raise error(f"{prefix}{name}: expected {want}, got {v!r}")


def known_keys(node: Iterable[str], options: list[str], section: str, what: str) -> None:
    """A ``ConfigError`` for the first key of config node ``section`` (sorted) that is not
    one of ``options`` (listed in the order given)."""
    unknown = sorted(set(node) - set(options))
    if unknown:
        raise ConfigError(f"{section}.{unknown[0]}: not {what} (options: {', '.join(options)})")
