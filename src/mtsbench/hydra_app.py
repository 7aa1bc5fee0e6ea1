"""The Hydra entry point behind ``mtsbench run`` (one job per configuration)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf


@hydra.main(config_path="configs", config_name="config", version_base="1.3")
def app(cfg: DictConfig) -> None:
    from hydra.errors import InstantiationException

    from .llm.base import LLMError, llm_error_in
    from .runner import run
    from .scenario.loader import ScenarioError

    hc = HydraConfig.get()
    out = Path(hc.runtime.output_dir)
    choices = {k: v for k, v in OmegaConf.to_container(hc.runtime.choices).items()
               if not k.startswith("hydra/") and v is not None}
    try:
        frame = run(cfg, out, choices)
    except (ScenarioError, LLMError) as e:
        print(f"mtsbench: {e}", file=sys.stderr)
        sys.exit(2)
    except InstantiationException as e:
        if llm_error_in(e) is None:
            raise
        print(f"mtsbench: {llm_error_in(e)}", file=sys.stderr)
        sys.exit(2)
    checks = frame[frame["check"] != "probe"]
    print(f"{int(checks['passed'].astype(bool).sum())} of {len(checks)} expectations passed; "
          f"report: {out / 'report.md'}")
