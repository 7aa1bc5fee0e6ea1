"""The Hydra entry point behind ``mtsbench run`` (one job per configuration)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from .errors import one_line, user_error
from .resources import CONFIG_DIR


@hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
def app(cfg: DictConfig) -> None:
    """One job. A job that raises leaves ``failure.json``; in a sweep it then returns, so
    the other jobs still run (``mtsbench.sweep``)."""
    from hydra.types import RunMode

    from . import evidence
    from .config import choices_of, normalise
    from .config_rules import validate
    from .report.markdown import passed_line
    from .runner import run
    from .sweep import record_failure

    hc = HydraConfig.get()
    out = Path(hc.runtime.output_dir)
    sweep = hc.mode == RunMode.MULTIRUN
    choices = choices_of(hc.runtime.choices)
    try:
        normalise(cfg)                                        # scenarios=NAME: a list of one
        validate(cfg, list(hc.overrides.task))                # one line naming the override (config_rules)
        frame = run(cfg, out, choices, progress=not sweep)
    except Exception as e:
        record_failure(out, e)
        if sweep:
            print(f"mtsbench: job {hc.job.num} failed: {one_line(e)}", file=sys.stderr)
            return
        if user_error(e) is None:
            raise
        print(f"mtsbench: {user_error(e)}", file=sys.stderr)
        sys.exit(2)
    if not sweep:
        recall_table = evidence.console(evidence.summarize(frame, evidence.depths_of(cfg), evidence.budgets_of(cfg)))
        if recall_table:
            print(recall_table)
        print(f"{passed_line(frame)}; report: {out / 'report.md'}")
