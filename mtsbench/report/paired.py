"""Paired comparisons of configurations: the only ground for "best" and "no difference".

Configurations of a sweep run the same scenarios, so their probes (and expectations) are
paired: probe ``p`` of seed ``s`` under configuration A and the same probe and seed under B.
Two configurations are compared on the differences of those pairs, not on whether their
separate 95% intervals overlap (two intervals can overlap while every paired difference
has the same sign, and can miss each other on a handful of probes too few to show anything).

The test is a sign-flip permutation test of the mean paired difference: under "no
difference" each pair's difference is as likely to have either sign, so the p-value is the
share of the 2^n sign assignments whose mean is at least as far from 0 as the observed one.
Units are (seed, scenario, step, check) pairs, so seeds that ran add units to the test.
With up to ``EXACT`` non-zero differences every assignment is enumerated; above that
``RESAMPLES`` assignments are drawn from ``numpy.random.default_rng(SEED)`` (the same files
give the same p-values). A difference is reported where p < ``ALPHA``.

A measure on which every configuration has the same value on every unit names no best.

Cost is compared too, lower being better: memories scored per probe (units: probes, as
recall) and, per scenario, the total cost per dialogue turn and the LLM tokens (units: (seed,
scenario) pairs, read from each job's summary.json: ``SCENARIO_MEASURES``), so an ablation that
changes only what a design spends shows in a test, not only in a table.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from . import data
from .intervals import SEED, fmt, seed_of
from .seeds import Config, passed

ALPHA = 0.05
EXACT = 16
RESAMPLES = 20_000
KEY = ["seed", "scenario", "step", "check", "n"]


def sign_flip_p(differences, resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """Two-sided p-value of the sign-flip permutation test that the mean paired difference is 0.

    >>> sign_flip_p([0.0, 0.0, 0.0])
    1.0
    >>> sign_flip_p([0.1] * 5)            # 2 of 32 sign assignments are as extreme
    0.0625
    >>> sign_flip_p([0.1] * 40) < 0.001, sign_flip_p([0.1] * 40) == sign_flip_p([0.1] * 40)
    (True, True)
    """
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d) & (d != 0)]          # a zero difference is the same under either sign
    if d.size == 0:
        return 1.0
    observed = abs(d.sum()) - 1e-12 * np.abs(d).sum()
    if d.size <= EXACT:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
        return float(np.mean(np.abs(signs @ d) >= observed))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(resamples, d.size))
    return float((1 + np.sum(np.abs(signs @ d) >= observed)) / (1 + resamples))


SCENARIO_MEASURES = {"cost_per_turn": lambda summary, sid: ((summary.get("cost") or {}).get("scenarios") or {})
                     .get(sid, {}).get("per_turn"),
                     "tokens": lambda summary, sid: (summary.get("scenarios") or {}).get(sid, {}).get("tokens")}


def scenario_values(config: Config, column: str) -> pd.Series:
    """``column`` (``SCENARIO_MEASURES``) per (seed, scenario) of ``config``, from its jobs'
    summary.json, indexed as ``unit_values`` (step and check empty)."""
    read = SCENARIO_MEASURES[column]
    rows = [((seed_of(job.label) or "", sid, "", "", 0), read(job.summary, sid))
            for job in config.jobs if job.summary for sid in job.summary.get("scenarios") or {}]
    rows = [(key, float(v)) for key, v in rows if v is not None]
    if not rows:
        return pd.Series(dtype=float)
    return pd.Series([v for _, v in rows], index=pd.MultiIndex.from_tuples([k for k, _ in rows], names=KEY))


def unit_values(config: Config, column: str, units: dict | None = None) -> pd.Series:
    """``column``'s value per unit of ``config``: per probe (per judged expectation, 1/0, for
    ``pass_rate``; per scenario for ``SCENARIO_MEASURES``) of each of its seeds, indexed by
    (seed, scenario, step, check, n). ``units``: a dict that keeps each job's index for the
    next measure on the same rows (``_units``)."""
    if column in SCENARIO_MEASURES:
        return scenario_values(config, column)
    parts = []
    for job in config.jobs:
        frame = data.metrics(job)
        if frame is None:
            continue
        if column == "pass_rate":
            rows = frame[(frame["check"] != "probe") & frame["passed"].notna()]
            values = passed(frame)
        elif column in frame:
            rows = frame[frame["check"] == "probe"]
            values = pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=float)
        else:
            continue
        index = _units(job, column == "pass_rate", rows, {} if units is None else units)
        parts.append(pd.Series(values, index=index))
    if not parts:
        return pd.Series(dtype=float)
    return pd.concat(parts).dropna()


def _units(job, expectations: bool, rows: pd.DataFrame, kept: dict) -> pd.MultiIndex:
    """The units of ``rows`` (the job's probe rows, or its judged expectations), by ``KEY``;
    kept in ``kept`` for the job's next measure on the same rows."""
    key = (str(job.dir), job.label, expectations)
    if key not in kept:
        where = rows[["scenario", "step", "check"]]
        keys = where.astype(str).assign(seed=seed_of(job.label) or "",
                                         n=where.groupby(["scenario", "step", "check"]).cumcount().to_numpy())
        kept[key] = pd.MultiIndex.from_frame(keys[KEY])
    return kept[key]


def compare(values: dict[str, pd.Series], lower: bool = False) -> dict:
    """Compare configurations (label -> value per unit) by paired tests against the one
    with the highest mean (the lowest with ``lower``: a cost): ``{"identical": value or None,
    "top": label, "mean": {label: mean}, "against": [(label, mean difference, p or None when
    no unit is shared)], "lower": lower}``."""
    values = {label: v for label, v in values.items() if len(v)}
    if not values:
        return {}
    pooled = np.concatenate([v.to_numpy(dtype=float) for v in values.values()])
    same_units = len({tuple(sorted(v.index)) for v in values.values()}) == 1
    identical = float(pooled[0]) if same_units and np.all(pooled == pooled[0]) else None
    means = {label: float(v.mean()) for label, v in values.items()}
    top = (min if lower else max)(means, key=lambda label: means[label])    # the first of equals
    against = []
    for label, v in values.items():
        if label == top:
            continue
        shared = values[top].index.intersection(v.index)
        if not len(shared):
            against.append((label, means[label] - means[top], None))
            continue
        d = v.loc[shared].to_numpy(dtype=float) - values[top].loc[shared].to_numpy(dtype=float)
        against.append((label, float(d.mean()), sign_flip_p(d)))
    return {"identical": identical, "top": top, "mean": means, "against": against, "lower": lower}


def line(name: str, result: dict, digits: int = 3) -> str | None:
    """One bullet of the report for a measure's comparison (None when nothing was compared)."""
    if not result or not result["against"]:
        return None
    if result["identical"] is not None:
        return (f"- **{name}**: every configuration has the same value, {result['identical']:.{digits}f}, on every "
                f"probe: no best and no difference to test.")
    top, worse = result["top"], "higher" if result.get("lower") else "lower"
    extreme = "lowest" if result.get("lower") else "highest"
    lower = [(c, d, p) for c, d, p in result["against"] if p is not None and p < ALPHA]
    same = [(c, d, p) for c, d, p in result["against"] if p is not None and p >= ALPHA]
    unpaired = [c for c, _, p in result["against"] if p is None]

    def pairs(rows):
        return ", ".join(f"`{c}` ({d:+.{digits}f}, p={p:.3g})" for c, d, p in rows)

    if not same and not unpaired:
        text = (f"best `{top}` {fmt(result['mean'][top], digits=digits)}: every other configuration is {worse} "
                f"by a paired test: {pairs(lower)}")
    else:
        text = f"{extreme} mean `{top}` {fmt(result['mean'][top], digits=digits)}, but no best"
        if same:
            text += f": no difference found from {pairs(same)}"
        if lower:
            text += f"; {worse} by a paired test: {pairs(lower)}"
        if unpaired:
            text += f"; not compared (no probe in common): {', '.join(f'`{c}`' for c in unpaired)}"
    return f"- **{name}**: {text}."


def comparison_lines(groups: list[Config], measures: list[tuple]) -> list[str]:
    """For each (column, name[, lower]) of ``measures`` (``lower``: a cost, lower is better):
    one bullet comparing the configurations by paired tests (see the module's text)."""
    lines, units = [], {}
    for column, name, *rest in measures:
        lower = bool(rest and rest[0])
        result = compare({c.label: unit_values(c, column, units) for c in groups}, lower)
        if (text := line(name, result, digits=3 if not lower else 1)) is not None:
            lines.append(text)
    return lines


REFERENCE = "ablate=none"      # a sweep holding this configuration compares every other with it


def reference_lines(groups: list[Config], measures: list[tuple]) -> list[str]:
    """With a configuration labelled ``ablate=none`` among ``groups`` (the seed design of an
    ablation sweep): one bullet per other configuration, its paired mean difference from it and
    p on every measure (``(column, name[, lower])``), and a last line naming the configurations
    that a paired test moved (p < ``ALPHA``) and on what; [] without one."""
    ref = next((c for c in groups if REFERENCE in c.label.split()), None)
    if ref is None or len(groups) < 2:
        return []
    units: dict = {}
    base = {column: unit_values(ref, column, units) for column, *_ in measures}
    lines, moved = [], []
    for c in groups:
        if c is ref:
            continue
        cells, hits = [], []
        for column, name, *_ in measures:
            v = unit_values(c, column, units)
            shared = base[column].index.intersection(v.index)
            if not len(shared):
                continue
            d = v.loc[shared].to_numpy(dtype=float) - base[column].loc[shared].to_numpy(dtype=float)
            p = sign_flip_p(d)
            digits = 3 if "recall" in column or column == "pass_rate" else 1
            cells.append(f"{name} {d.mean():+.{digits}f} (p={p:.3g})")
            if p < ALPHA:
                hits.append(name)
        lines.append(f"- `{c.label}`: " + "; ".join(cells) + ".")
        if hits:
            moved.append(f"`{c.label}` ({', '.join(hits)})")
    verdict = (f"Moved by a paired test (p < {ALPHA}): {'; '.join(moved)}." if moved
               else f"No configuration differs from `{ref.label}` by a paired test (p < {ALPHA}).")
    return [f"## Against `{ref.label}`", "",
            f"Each configuration against `{ref.label}` on the same units (probes; scenarios for cost per turn and "
            "tokens): the mean paired difference (configuration minus it) and the sign-flip test's p.", "",
            *lines, "", verdict, ""]
