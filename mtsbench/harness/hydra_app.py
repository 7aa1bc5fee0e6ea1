"""The Hydra entry point behind ``mtsbench run`` (one job per configuration).

What a job ends with (one line on stderr for anything but success):

- success: the recall table and ``P of N expectations passed; report: DIR/report.md and
  report.html; its figures: mtsbench report DIR`` (drawing them takes far longer than the run's
  last second, so the run leaves it to that one command);
  exit 0, or 3 after a warning line when more than ``llm.max_failure_rate`` (default 0.05)
  of the LLM calls failed (``on_failure: skip``);
- SIGINT or SIGTERM: the scenarios done are written with ``status: interrupted``; exit 130
  or 143;
- an error: ``failure.json`` (redacted traceback) and, for a user's error (a bad scenario,
  override or LLM setup, an unwritable output), its one line and exit 2, for anything else
  ``job failed: TYPE: MESSAGE; traceback in DIR/failure.json`` and exit 1.

In a sweep (``-m``) a job that fails or is interrupted prints its line and returns, so the
other jobs still run (``mtsbench.harness.sweep``); a job that completes returns its ``tune.objectives``
(``objective_values``: what hydra-optuna-sweeper's sweeper tells Optuna).
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from ..errors import Interrupted, exit_code, one_line, redact, signal_name, user_error
from ..core.resources import CONFIG_DIR


@contextmanager
def sigterm_interrupts():
    """While inside, SIGTERM raises ``errors.Interrupted`` (as SIGINT raises KeyboardInterrupt)."""
    def stop(signum, frame):
        raise Interrupted(signum)
    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:          # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _say(line: str) -> None:
    print(f"mtsbench: {redact(line)}", file=sys.stderr)


def _how_far(out: Path) -> str:
    import json

    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        return f" after {len(summary['scenarios_done'])} of {len(summary['scenarios_planned'])} scenarios"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


@hydra.main(config_path=str(CONFIG_DIR), config_name="config", version_base="1.3")
def app(cfg: DictConfig) -> list[float] | None:
    """One job (see the module docstring)."""
    from hydra.types import RunMode

    from ..config.composition import normalise
    from ..config.rules import validate
    from ..config.composition import choices_of
    from .runner import run
    from .sweep import clear_failure, record_failure

    hc = HydraConfig.get()
    out = Path(hc.runtime.output_dir)
    sweep = hc.mode == RunMode.MULTIRUN
    who = f"job {hc.job.num}" if sweep else "run"
    try:
        clear_failure(out)
        with sigterm_interrupts():
            normalise(cfg)                                        # scenarios=NAME: a list of one
            validate(cfg, list(hc.overrides.task))                # one line naming the override (config_rules)
            frame = run(cfg, out, choices_of(hc.runtime.choices), progress=not sweep)
    except (KeyboardInterrupt, Interrupted) as stop:
        _say(f"{who} interrupted by {signal_name(stop)}{_how_far(out)}; what was done is in {out} "
             f"(summary.json status: interrupted)")
        if sweep:
            return
        sys.exit(exit_code(stop))
    except Exception as e:
        try:
            where = f"; traceback in {record_failure(out, e)}"
        except Exception:  # noqa: BLE001 - nowhere to write it (a full disk): the line says what went wrong
            where = ""
        message = user_error(e)
        if sweep:
            _say(f"job {hc.job.num} failed: {one_line(e)}")
            return
        if message is not None:
            _say(message)
            sys.exit(2)
        _say(f"run failed: {one_line(e)}{where}")
        sys.exit(1)
    if not sweep:
        _finished(cfg, frame, out)
        return None
    if (warning := _failure_warning(_overall(out))) is not None:
        _say(f"job {hc.job.num}: {warning}")
    return objective_values(cfg, out)


def objective_values(cfg: DictConfig, out: Path) -> list[float] | None:
    """A sweep's job returns its ``tune.objectives`` (read from its summary.json), what
    hydra-optuna-sweeper's ``hydra/sweeper=optuna`` tells Optuna; None when it has none (that
    sweeper then marks the trial failed). ``hydra/sweeper=tune`` reads them from the job's
    folder itself, with the reason when there are none (``mtsbench.tune.objectives``)."""
    from ..tune.objectives import TrialFailed, values

    try:
        return values(out, [str(o) for o in cfg.tune.objectives]) if "tune" in cfg else None
    except TrialFailed:
        return None


def run_checked(run_dir: Path | None) -> None:
    """``app()`` (``hydra.main``, reading ``sys.argv``) for a command line ``mtsbench run``
    has checked (``mtsbench.harness.preflight.check_run``): an error Hydra raises around the task (its
    own writes: ``.hydra/``, the log, ``multirun.yaml``) is one line, not Hydra's stack trace.
    Hydra raises it to here with ``HYDRA_FULL_ERROR=1`` (its documented switch, set only
    while the app runs). A write that fails is an ``OutputError`` (exit 2; for a single run
    ``run_dir`` gets ``failure.json``, see ``setup_failed``); a sweep's job that does not
    compose (the sweeper composes each job the check did not before launching) exit 2; anything
    else exit 1."""
    import os

    from hydra.errors import ConfigCompositionException

    from ..errors import OutputError

    before = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        app()
    except OSError as e:
        _say(setup_failed(run_dir, e) if run_dir is not None else str(OutputError(e.filename or "?", e)))
        sys.exit(2)
    except ConfigCompositionException as e:   # a combination the check did not compose: Hydra's sweeper refused it
        _say(f"a job of the sweep does not compose, so none was started: {one_line(e)}")
        sys.exit(2)
    except Exception as e:  # noqa: BLE001 - Hydra's own error: one line
        _say(f"hydra: {one_line(e)}")
        sys.exit(1)
    finally:
        if before is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = before


def setup_failed(out: Path, e: OSError) -> str:
    """The one line of a job whose folder Hydra could not set up (a full disk while it wrote
    ``.hydra/`` or opened the log): no summary.json is written, and ``failure.json`` marks
    the folder failed if it can still be written."""
    from ..errors import OutputError
    from .sweep import record_failure

    error = OutputError(e.filename or out / ".hydra", e)
    try:
        record_failure(out, error)
    except Exception:  # noqa: BLE001 - the disk takes nothing more: the line says what went wrong
        pass
    return str(error)


def _overall(out: Path) -> dict | None:
    """The ``overall`` block of a finished run's summary.json (None when it cannot be read)."""
    import json

    try:
        return json.loads((out / "summary.json").read_text(encoding="utf-8"))["overall"]
    except (OSError, ValueError, KeyError):
        return None


def _failure_warning(overall: dict | None) -> str | None:
    """The warning line when the run's share of failed LLM calls is above its limit."""
    if not overall or not overall.get("llm_failure_rate_exceeded"):
        return None
    from .finish import failure_line

    return f"warning: {failure_line(overall)}; the results are not to be trusted (summary.json: status unreliable)"


def _finished(cfg: DictConfig, frame, out: Path) -> None:
    from ..config.options import Evaluation
    from ..evaluation import evidence
    from ..evaluation.attention_auc import console
    from ..report.markdown import passed_line

    evaluation = Evaluation.of(cfg)
    recall_table = evidence.console(evidence.summarize(frame, evaluation.depths, evaluation.budgets,
                                                       evaluation.abstain_threshold))
    if recall_table:
        print(recall_table)
    overall = _overall(out)
    if labelled := console((overall or {}).get("attention")):
        print(labelled)
    print(f"{passed_line(frame)}; report: {out / 'report.md'} and report.html; its figures: mtsbench report {out}")
    warning = _failure_warning(overall)
    if warning is not None:
        _say(warning)
        sys.exit(3)
