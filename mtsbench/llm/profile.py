"""An error profile: how a real model's answers differ from the mock's, as numbers the mock
can apply (``llm=mock llm.profile=FILE``; fitted by ``mtsbench calibrate --fit A B``).

This module is the profile's math and its file: pure functions of numbers and a seeded numpy
``Generator`` (the mock's wiring is ``mtsbench.llm.profiled``; the estimators are
``mtsbench.calibration.profile_fit``). Every draw uses the generator it is given, in a fixed order, so a
call's answer depends only on (seed, task, the call's inputs).

Distributions are stored as quantile tables: q_0 .. q_n, the values at probabilities
p_i = i / n. A draw is the inverse of the piecewise-linear CDF through (q_i, p_i) at a
uniform u::

    x(u) = q_i + (q_{i+1} - q_i) * (u * n - i),   i = floor(u * n)

so a table of n + 1 equal values always gives that value, and the draws' distribution
is the fitted sample's up to the table's resolution. Durations are stored in days and drawn
on log(days) (``log_quantile_draw``), so a table spanning 1 to 3650 days is not dominated by
its longest entries.

Counts (extra facts, events or impressions of one call) are Poisson with the fitted mean
λ: ``poisson(λ)`` (numpy's ``Generator.poisson``). A yes/no with probability p is
``u < p``. A categorical (relation labels) draws u and takes the first label whose cumulative
probability exceeds it (``categorical``).

A key a model names for a statement of its own is the text's first content words, dotted:
``text_key("user", "I bought new running shoes.")`` is ``user.bought.new.running`` (``text_key``);
such keys are unique per statement, as the recorded model's mostly are.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError

KINDS = ("say", "reply", "perceive")
DRAWS = ("random", "position", "mean")         # attention.draw: how u is chosen (mtsbench.llm.profiled)
LABELS = ("same", "contradicts", "unrelated")
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")
_SKIP = frozenset("a an the i i'm im my me you your we our it is are was were be to of in on at and or "
                  "but so that this for with by as just by way".split())


def quantile_draw(q: Sequence[float], u: float) -> float:
    """The inverse piecewise-linear CDF of the quantile table ``q`` at ``u`` in [0, 1] (module docstring).

    >>> quantile_draw([0.0, 10.0], 0.25), quantile_draw([5, 5, 5], 0.9), quantile_draw([0, 5, 10], 0.75)
    (2.5, 5.0, 7.5)
    """
    q = np.asarray(q, dtype=float)
    return float(np.interp(u, np.linspace(0.0, 1.0, len(q)), q))


def table_mean(q: Sequence[float]) -> float:
    """The mean of the distribution a quantile table draws from: the integral of
    ``quantile_draw(q, u)`` over u in [0, 1] (trapezoids on p_i = i / n).

    Table (5, 5, 5, 10, 10): trapezoids 5, 5, 7.5, 10 of width 1/4, mean 27.5 / 4:

    >>> table_mean([5, 5, 5, 10, 10]), table_mean([0, 10])
    (6.875, 5.0)
    """
    q = np.asarray(q, dtype=float)
    if len(q) == 1:
        return float(q[0])
    return float(((q[:-1] + q[1:]) / 2).mean())


def log_quantile_draw(q_days: Sequence[float], u: float) -> float:
    """``quantile_draw`` on log(days): exp of the draw from the logs of the table.

    >>> round(log_quantile_draw([1.0, 100.0], 0.5), 6)
    10.0
    """
    return float(math.exp(quantile_draw(np.log(np.asarray(q_days, dtype=float)), u)))


def quantiles(values: Sequence[float], n: int = 20) -> list[float]:
    """The quantile table of a sample: its values at probabilities 0, 1/n, ..., 1 (linear
    interpolation between order statistics), rounded to 4 decimals; [] for an empty sample.

    >>> quantiles([1, 2, 3, 4, 5], 4)
    [1.0, 2.0, 3.0, 4.0, 5.0]
    """
    v = np.asarray([x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))], dtype=float)
    if v.size == 0:
        return []
    return [round(float(x), 4) for x in np.quantile(v, np.linspace(0.0, 1.0, n + 1))]


def bin_of(edges: Sequence[float], x: float) -> int:
    """The index of the bin of ``edges`` (ascending) holding ``x``: bin i is [e_i, e_{i+1}), the
    last one closed; values outside go to the first or last bin.

    >>> [bin_of([0, 2, 4, 10], x) for x in (-1, 0, 1.99, 2, 10, 11)]
    [0, 0, 0, 1, 2, 2]
    """
    i = int(np.searchsorted(np.asarray(edges, dtype=float), x, side="right")) - 1
    return min(max(i, 0), len(edges) - 2)


def position(edges: Sequence[float], i: int, x: float) -> float:
    """Where ``x`` lies in bin ``i`` of ``edges``: (x - e_i) / (e_{i+1} - e_i), clipped to [0, 1].

    >>> position([0, 2, 4], 1, 3.0), position([0, 2, 4], 0, -1.0)
    (0.5, 0.0)
    """
    lo, hi = float(edges[i]), float(edges[i + 1])
    return float(min(max((x - lo) / (hi - lo), 0.0), 1.0))


def categorical(probabilities: Mapping[str, float], u: float) -> str:
    """The first label whose cumulative probability (in the mapping's order) exceeds ``u``;
    the probabilities are normalised to sum 1.

    >>> p = {"same": 0.5, "contradicts": 0.25, "unrelated": 0.25}
    >>> categorical(p, 0.1), categorical(p, 0.6), categorical(p, 0.99)
    ('same', 'contradicts', 'unrelated')
    """
    labels = list(probabilities)
    w = np.asarray([probabilities[k] for k in labels], dtype=float)
    cum = np.cumsum(w / w.sum())
    return labels[min(int(np.searchsorted(cum, u, side="right")), len(labels) - 1)]


def poisson(rng: np.random.Generator, mean: float) -> int:
    """A Poisson count of mean ``mean`` (0 for a mean of 0 or less)."""
    return int(rng.poisson(mean)) if mean > 0 else 0


def text_key(prefix: str, text: str, words: int = 3) -> str:
    """A dotted key from the first ``words`` content words of ``text`` (CJK: characters).

    >>> text_key("user", "I bought new running shoes."), text_key("event", "我们去了海边。", 2)
    ('user.bought.new.running', 'event.我们')
    """
    tokens = [w for w in _WORD.findall(text.lower()) if w not in _SKIP]
    cjk = [t for t in tokens if not t.isascii()]
    if cjk and len(cjk) >= len(tokens) / 2:
        return f"{prefix}.{''.join(cjk[:words])}"
    return ".".join([prefix, *tokens[:words]]) if tokens else f"{prefix}.other"


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (split after . ! ? and 。！？), non-empty, stripped.

    >>> sentences("Hi there. I moved!  我搬家了。好。")
    ['Hi there.', 'I moved!', '我搬家了。', '好。']
    """
    parts = re.findall(r".+?(?:[.!?](?=\s|$)|[。！？]|$)", text.strip(), re.S)
    return [p.strip() for p in parts if p.strip()] or [text.strip()]


@dataclass(frozen=True)
class Profile:
    """A loaded profile: ``data`` is the YAML mapping (see ``SCHEMA`` for its keys); ``source``
    the file it came from."""

    data: dict
    source: str

    def get(self, *path: str) -> Any:
        d: Any = self.data
        for p in path:
            d = d[p]
        return d


# every key a profile must have, with its rule: (kind, lo, hi); kinds: share, number, table, kinds, map
SCHEMA: dict[str, tuple] = {
    "attention.bins": ("edges",),
    "attention.quantiles": ("tables",),
    "facts.recall": ("number", 0.0, 1.0),
    "facts.key_kept": ("number", 0.0, 1.0),
    "facts.extra_per_turn": ("kinds",),
    "facts.belief": ("table", 0.0, 1.0),
    "events.recall": ("number", 0.0, 1.0),
    "events.category_kept": ("number", 0.0, 1.0),
    "events.extra_per_turn": ("kinds",),
    "events.join.same": ("number", 0.0, 1.0),
    "events.join.new": ("number", 0.0, 1.0),
    "relation.same": ("labels",),
    "relation.contradicts": ("labels",),
    "relation.unrelated": ("labels",),
    "impressions.recall": ("number", 0.0, 1.0),
    "impressions.key_kept": ("number", 0.0, 1.0),
    "impressions.extra_per_call": ("number", 0.0, 100.0),
    "impressions.belief": ("table", 0.0, 1.0),
    "impressions.ttl_days": ("table", 1e-6, 36500.0),
}


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _problem(rule: tuple, v) -> str | None:
    kind = rule[0]
    if kind == "number":
        lo, hi = rule[1], rule[2]
        return None if _number(v) and lo <= v <= hi else f"expected a number from {lo:g} to {hi:g}"
    if kind == "table":
        lo, hi = rule[1], rule[2]
        ok = isinstance(v, list) and len(v) >= 1 and all(_number(x) and lo <= x <= hi for x in v) \
            and all(a <= b for a, b in zip(v, v[1:]))
        return None if ok else f"expected a non-empty ascending list of numbers from {lo:g} to {hi:g}"
    if kind == "edges":
        ok = isinstance(v, list) and len(v) >= 2 and all(_number(x) for x in v) and all(a < b for a, b in zip(v, v[1:]))
        return None if ok else "expected at least 2 strictly ascending numbers"
    if kind == "tables":
        ok = isinstance(v, list) and all(isinstance(t, list) and t and all(_number(x) and 0 <= x <= 10 for x in t)
                                         and all(a <= b for a, b in zip(t, t[1:])) for t in v)
        return None if ok else "expected one non-empty ascending list of scores 0-10 per bin"
    if kind == "kinds":
        ok = isinstance(v, dict) and set(v) <= set(KINDS) and all(_number(x) and 0 <= x <= 100 for x in v.values())
        return None if ok else f"expected a mapping of {', '.join(KINDS)} to a mean count from 0 to 100"
    if kind == "labels":
        ok = isinstance(v, dict) and set(v) == set(LABELS) and all(_number(x) and x >= 0 for x in v.values()) \
            and sum(v.values()) > 0
        return None if ok else f"expected probabilities of {', '.join(LABELS)} (>= 0, not all 0)"
    raise AssertionError(kind)


def check(data: Any, source: str) -> Profile:
    """The profile of the mapping ``data`` (read from ``source``); ConfigError naming the file
    and the first bad key otherwise.

    >>> check({"attention": {}}, "p.yaml")
    Traceback (most recent call last):
    mtsbench.errors.ConfigError: p.yaml: attention.bins: missing (expected at least 2 strictly ascending numbers)
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of the profile's tasks, got {type(data).__name__}")
    for key, rule in SCHEMA.items():
        d: Any = data
        for part in key.split("."):
            if not isinstance(d, dict) or part not in d:
                raise ConfigError(f"{source}: {key}: missing ({_problem(rule, None)})")
            d = d[part]
        if (why := _problem(rule, d)) is not None:
            raise ConfigError(f"{source}: {key}: {why}, got {str(d)[:60]}")
    if data["attention"].get("draw", "random") not in DRAWS:
        raise ConfigError(f"{source}: attention.draw: expected one of {', '.join(DRAWS)}, "
                          f"got {data['attention']['draw']}")
    if len(data["attention"]["quantiles"]) != len(data["attention"]["bins"]) - 1:
        raise ConfigError(f"{source}: attention.quantiles: expected one table per bin "
                          f"({len(data['attention']['bins']) - 1}), got {len(data['attention']['quantiles'])}")
    return Profile(data, source)


PROFILE_DIR = Path(__file__).resolve().parent.parent / "profiles"


def packaged_profiles() -> list[str]:
    """The names of the profiles shipped with the package (``mtsbench/profiles/NAME.yaml``)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml")) if PROFILE_DIR.is_dir() else []


def load(name_or_path: str) -> Profile:
    """The profile in the file ``name_or_path``, or the packaged profile of that name;
    ConfigError (one line, naming the file and key) when absent or malformed."""
    import yaml

    path = Path(name_or_path)
    if not path.is_file():
        packaged = PROFILE_DIR / f"{name_or_path}.yaml"
        if "/" in str(name_or_path) or not packaged.is_file():
            raise ConfigError(f"llm.profile: {name_or_path} does not exist (nor is it a packaged profile: "
                              f"{', '.join(packaged_profiles()) or 'none'})")
        path = packaged
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}:{where} not valid YAML ({getattr(e, 'problem', None) or e})") from None
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror or e}") from None
    return check(data, str(path))
