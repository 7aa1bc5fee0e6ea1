"""Which mechanisms of the seed design a configuration has on, read from its ablations.

Each ``configs/ablate/NAME.yaml`` turns one mechanism off: it chooses group options
(``override /arousal: none``) and sets values (``retrieval: {attention_weight: 0.0}``). A
configuration of the seed design's system has NAME **off** when every one of those holds in
it, **on** otherwise; the list follows the ablations, so a new ablation is a new mechanism
here with no code. A system that is not the seed design's (``system=bm25``) has none.

One dependency is applied on top (``REQUIRES``): depth by motivation chooses how many tiers to
search, so with the tiers mechanism off (one tier) depth is off too, whatever its option.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import yaml

MTS_SYSTEM = "mtsbench.systems.mts.system.MtsSystem"
REQUIRES = {"depth": "tiers"}     # a mechanism that does nothing without another one


@lru_cache(maxsize=None)
def ablations(folder: str | None = None) -> dict[str, tuple[tuple[tuple[str, str], ...], tuple[tuple[str, Any], ...]]]:
    """NAME -> (group choices, dotted values) of each ablation in ``folder`` (default: the
    packaged ``configs/ablate``), ``none`` left out."""
    from ..core.resources import CONFIG_DIR

    root = Path(folder) if folder else Path(CONFIG_DIR) / "ablate"
    out = {}
    for path in sorted(root.glob("*.yaml")):
        body = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        choices = []
        for entry in body.pop("defaults", []) or []:
            if isinstance(entry, dict):
                for key, value in entry.items():
                    group = str(key).replace("override", "").strip().lstrip("/")
                    if group not in ("_self_",):
                        choices.append((group, str(value)))
        values = tuple(_flatten(body))
        if choices or values:
            out[path.stem] = (tuple(choices), values)
    return out


def _flatten(node: Mapping, prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every leaf of ``node``.

    >>> _flatten({"dual": {"long_gain": 0.0, "short_gain": 0.0}, "x": 1})
    [('dual.long_gain', 0.0), ('dual.short_gain', 0.0), ('x', 1)]
    """
    out = []
    for key, value in node.items():
        path = f"{prefix}{key}"
        out += _flatten(value, path + ".") if isinstance(value, dict) else [(path, value)]
    return out


def _select(cfg: Mapping, path: str):
    node: Any = cfg
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def switched(cfg: Mapping, choices: Mapping[str, str]) -> dict[str, bool] | None:
    """Mechanism -> on, for the job config ``cfg`` (a plain dict) and its group ``choices``
    (Hydra's ``runtime.choices``); None for a system that is not the seed design's.

    >>> cfg = {"system": {"_target_": MTS_SYSTEM}, "retrieval": {"attention_weight": 0.0}}
    >>> on = switched(cfg, {"arousal": "none", "tiers": "thresholds"})
    >>> on["arousal"], on["attention"], on["tiers"], on["depth"]
    (False, False, True, True)
    >>> switched(cfg, {"tiers": "flat", "depth": "linear"})["depth"]     # one tier: nothing to choose
    False
    >>> switched({"system": {"_target_": "mtsbench.systems.bm25.Bm25System"}}, {}) is None
    True
    """
    if _select(cfg, "system._target_") != MTS_SYSTEM:
        return None
    out = {}
    for name, (groups, values) in ablations().items():
        off = all(str(choices.get(g)) == v for g, v in groups) and all(_same(_select(cfg, k), v) for k, v in values)
        out[name] = not off
    for name, needed in REQUIRES.items():
        if name in out and not out.get(needed, True):
            out[name] = False
    return out


def _same(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b


def of_job(job_dir: Path) -> dict[str, bool] | None:
    """``switched`` for the job in ``job_dir`` (its ``.hydra/config.yaml`` and the choices in
    ``.hydra/hydra.yaml``); None when they cannot be read or the system is not the design's."""
    try:
        cfg = yaml.safe_load((Path(job_dir) / ".hydra" / "config.yaml").read_text(encoding="utf-8"))
        hydra = yaml.safe_load((Path(job_dir) / ".hydra" / "hydra.yaml").read_text(encoding="utf-8"))
        choices = hydra["hydra"]["runtime"]["choices"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None
    return switched(cfg, {str(k): str(v) for k, v in (choices or {}).items()})
