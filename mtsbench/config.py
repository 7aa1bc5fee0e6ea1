"""Finding and composing the packaged Hydra configs, and checking overrides early."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf, open_dict

from .errors import ConfigError
from .resources import CONFIG_DIR


COMPOSITE_GROUPS = ("preset", "ablate", "experiment")   # set many groups at once; not mechanisms


def groups(extra: Sequence[str | Path] = ()) -> dict[str, list[str]]:
    """Every config group and its options, read from the packaged ``configs/`` folder and
    the ``extra`` ones (a user's ``--config-dir``; ``hydra/`` holds Hydra's own groups)."""
    found: dict[str, set[str]] = {}
    for root in (CONFIG_DIR, *map(Path, extra)):
        for d in (sorted(root.iterdir()) if root.is_dir() else []):
            if d.is_dir() and not d.name.startswith("_") and d.name != "hydra":
                found.setdefault(d.name, set()).update(p.stem for p in d.glob("*.yaml"))
    return {g: sorted(found[g]) for g in sorted(found)}


def config_dirs(argv: Sequence[str]) -> list[str]:
    """The folders named by ``--config-dir DIR``, ``--config-dir=DIR`` or ``-cd DIR`` in ``argv``.

    >>> config_dirs(["--config-dir", "a", "x=1", "-cd", "b", "--config-dir=c"])
    ['a', 'b', 'c']
    """
    dirs = []
    for i, a in enumerate(argv):
        if a in ("--config-dir", "-cd") and i + 1 < len(argv):
            dirs.append(argv[i + 1])
        elif a.startswith("--config-dir="):
            dirs.append(a.partition("=")[2])
    return dirs


def mechanism_groups() -> dict[str, list[str]]:
    """The groups that each choose one mechanism (every group but presets and experiments)."""
    return {g: opts for g, opts in groups().items() if g not in COMPOSITE_GROUPS}


def check_overrides(overrides: list[str], extra_dirs: Sequence[str | Path] = ()) -> None:
    """Refuse ``GROUP=OPTION`` overrides naming an unknown option, with a did-you-mean; the
    options are the packaged ones plus those in ``extra_dirs`` (``--config-dir``).

    Other overrides (``llm.noise=0.1``, ``+x=1``, sweeps with commas) are left to Hydra.
    """
    known = groups(extra_dirs)
    for o in overrides:
        name, sep, value = o.partition("=")
        if not sep or name.startswith(("+", "~", "hydra")) or "," in value or "(" in value:
            continue
        if name in known and value not in known[name]:
            hint = difflib.get_close_matches(value, known[name], n=1)
            tip = f"; did you mean '{hint[0]}'?" if hint else ""
            raise ConfigError(f"override '{o}': '{value}' is not an option of group '{name}' "
                              f"(options: {', '.join(known[name])}){tip}")


def compose(overrides: list[str]) -> tuple[DictConfig, dict]:
    """The job config for ``overrides`` and the chosen option of each group."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    check_overrides(overrides)
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3", job_name="mtsbench"):
        cfg = hydra_compose(config_name="config", overrides=overrides, return_hydra_config=True)
    choices = {k: v for k, v in OmegaConf.to_container(cfg.hydra.runtime.choices).items()
               if not k.startswith("hydra/") and v is not None}
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg, choices

