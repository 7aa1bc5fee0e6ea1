"""Seeds and 95% bootstrap intervals: the one implementation every report table and figure uses.

A configuration may have run with several seeds (sweep jobs that differ only in ``seed``).
Its mean is the mean over seeds of each seed's mean (over probes, or over expectations
for the pass rate). Its interval is a percentile bootstrap: each of ``RESAMPLES``
resamples draws the seeds with replacement and, inside each drawn seed, its values
(probes or expectations) with replacement, and takes the same mean of means; the 2.5th
and 97.5th percentiles of those means are the interval. With one seed this is the plain
bootstrap over probes; a per-run number (LLM tokens and calls, cost per turn) is a total over
the run's scenarios, so its resamples draw the seeds and, inside each, its scenarios
(``bootstrap_totals``): the total of the drawn scenarios (over their turns for cost per turn),
a mean over seeds. The resamples come from
``numpy.random.default_rng(SEED)``, made afresh for every interval: the same files give the
same intervals, whatever the order of the jobs. Intervals describe one
configuration; comparisons between configurations are paired tests (``paired``).
"""

from __future__ import annotations

import re

import numpy as np

SEED = 20_240_611
RESAMPLES = 1000
LEVEL = 0.95
_SEED_OVERRIDE = re.compile(r"^seed=\S*$")


def config_label(label: str) -> str:
    """A job's label without its ``seed=`` override: the configuration it ran.

    >>> config_label("belief=ema seed=2 llm.noise=0.3"), config_label("seed=1")
    ('belief=ema llm.noise=0.3', 'defaults')
    """
    kept = [part for part in label.split() if not _SEED_OVERRIDE.match(part)]
    return " ".join(kept) or "defaults"


def seed_of(label: str) -> str | None:
    """The value of a label's ``seed=`` override, None without one.

    >>> seed_of("belief=ema seed=2"), seed_of("belief=ema")
    ('2', None)
    """
    return next((part.split("=", 1)[1] for part in label.split() if _SEED_OVERRIDE.match(part)), None)


def _clean(groups) -> list[np.ndarray]:
    """Each group as a float array without NaN; empty groups dropped."""
    arrays = [np.asarray(g, dtype=float).ravel() for g in groups]
    arrays = [a[~np.isnan(a)] for a in arrays]
    return [a for a in arrays if a.size]


def bootstrap(groups, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = SEED) -> tuple[float, float, float]:
    """(mean, lo, hi) of the mean of group means, with a seeded percentile bootstrap that
    resamples groups (seeds) and values inside them (probes); NaN values are left out,
    (nan, nan, nan) when nothing is left.

    >>> bootstrap([[1.0, 1.0, 1.0]])
    (1.0, 1.0, 1.0)
    >>> m, lo, hi = bootstrap([[0, 1] * 20]); (m, lo < m < hi, bootstrap([[0, 1] * 20]) == (m, lo, hi))
    (0.5, True, True)
    >>> [round(v, 3) for v in bootstrap([[1.0], [2.0], [3.0]], resamples=2000)]
    [2.0, 1.0, 3.0]
    """
    arrays = _clean(groups)
    if not arrays:
        return (float("nan"),) * 3
    mean = float(np.mean([a.mean() for a in arrays]))
    rng = np.random.default_rng(seed)
    # resampled means of each group: (groups, resamples)
    inner = np.stack([_resampled_means(a, resamples, rng) for a in arrays])
    if len(arrays) > 1:
        picks = rng.integers(0, len(arrays), (resamples, len(arrays)))
        stats = inner[picks, np.arange(resamples)[:, None]].mean(axis=1)
    else:
        stats = inner[0]
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return mean, float(min(lo, mean)), float(max(hi, mean))


def bootstrap_totals(groups, ratio: bool = False, resamples: int = RESAMPLES, level: float = LEVEL,
                     seed: int = SEED) -> tuple[float, float, float]:
    """(mean, lo, hi) of a per-run total over seeds: each group (a seed) holds one row per
    scenario, (amount, turns); a seed's number is the sum of its amounts (over the sum of its
    turns with ``ratio``: cost per turn); the mean is over seeds, and the seeded percentile
    bootstrap resamples seeds and, inside each, scenarios. (nan, nan, nan) without rows.

    >>> bootstrap_totals([[(10.0, 5), (30.0, 5)]], ratio=True)[0], bootstrap_totals([[(10.0, 1), (30.0, 1)]])[0]
    (4.0, 40.0)
    >>> m, lo, hi = bootstrap_totals([[(10.0, 5), (30.0, 5), (20.0, 5)]], ratio=True); lo < m < hi
    True
    """
    arrays = [np.asarray(g, dtype=float).reshape(-1, 2) for g in groups]
    arrays = [a[~np.isnan(a).any(axis=1)] for a in arrays]
    arrays = [a for a in arrays if len(a)]
    if not arrays:
        return (float("nan"),) * 3

    def stat(a: np.ndarray) -> np.ndarray:     # rows of (scenarios, 2) per resample -> its total
        total = a[..., 0].sum(axis=-1)
        if not ratio:
            return total
        turns = a[..., 1].sum(axis=-1)
        return np.divide(total, turns, out=np.full_like(total, np.nan), where=turns > 0)

    mean = float(np.nanmean([stat(a) for a in arrays]))
    rng = np.random.default_rng(seed)
    inner = np.stack([stat(a[rng.integers(0, len(a), (resamples, len(a)))]) for a in arrays])
    picks = rng.integers(0, len(arrays), (resamples, len(arrays))) if len(arrays) > 1 else np.zeros((resamples, 1), int)
    stats = inner[picks, np.arange(resamples)[:, None]].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.nanpercentile(stats, [tail, 100 - tail])
    return mean, float(min(lo, mean)), float(max(hi, mean))


def _resampled_means(a: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``resamples`` resamples of ``a`` with replacement; with few distinct values
    drawn as counts of each (the same distribution, at a cost of distinct values, not of
    ``a.size``)."""
    values, counts = np.unique(a, return_counts=True)
    if values.size == 1:
        return np.full(resamples, values[0])
    if values.size > 32:
        return a[rng.integers(0, a.size, (resamples, a.size))].mean(axis=1)
    draws = rng.multinomial(a.size, counts / a.size, size=resamples)
    return draws @ values / a.size


def fmt(mean, lo=None, hi=None, digits: int = 3) -> str:
    """'mean [lo, hi]' (just the mean when the interval is a point or missing; '' for NaN).

    >>> fmt(0.8123, 0.75, 0.87), fmt(0.5, 0.5, 0.5), fmt(float("nan"))
    ('0.812 [0.750, 0.870]', '0.500', '')
    """
    if mean is None or _nan(mean):
        return ""
    text = f"{mean:.{digits}f}"
    if lo is None or hi is None or _nan(lo) or _nan(hi) or (round(lo, digits) == round(hi, digits)):
        return text
    return f"{text} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _nan(value) -> bool:
    try:
        return bool(np.isnan(float(value)))
    except (TypeError, ValueError):
        return True
