"""Finding and composing the packaged Hydra configs, and checking overrides early."""

from __future__ import annotations

import difflib
from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict

from .resources import CONFIG_DIR


class ConfigError(Exception):
    """A bad override or config; its str is one line."""


COMPOSITE_GROUPS = ("preset", "ablate", "experiment")   # set many groups at once; not mechanisms


def groups() -> dict[str, list[str]]:
    """Every config group and its options, read from the packaged ``configs/`` folder
    (``hydra/`` holds Hydra's own groups, e.g. the launchers)."""
    return {d.name: sorted(p.stem for p in d.glob("*.yaml"))
            for d in sorted(CONFIG_DIR.iterdir()) if d.is_dir() and not d.name.startswith("_") and d.name != "hydra"}


def mechanism_groups() -> dict[str, list[str]]:
    """The groups that each choose one mechanism (every group but presets and experiments)."""
    return {g: opts for g, opts in groups().items() if g not in COMPOSITE_GROUPS}


def check_overrides(overrides: list[str]) -> None:
    """Refuse ``GROUP=OPTION`` overrides naming an unknown option, with a did-you-mean.

    Other overrides (``llm.noise=0.1``, ``+x=1``, sweeps with commas) are left to Hydra.
    """
    known = groups()
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

