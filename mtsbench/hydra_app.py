"""The Hydra entry point behind ``mtsbench run`` (one job per configuration).

What a job ends with (one line on stderr for anything but success):

- success: the recall table and ``P of N expectations passed; report: DIR/report.md``;
  exit 0, or 3 after a warning line when more than ``llm.max_failure_rate`` (default 0.05)
  of the LLM calls failed (``on_failure: skip``);
- SIGINT or SIGTERM: the scenarios done are written with ``status: interrupted``; exit 130
  or 143;
- an error: ``failure.json`` (redacted traceback) and, for a user's error (a bad scenario,
  override or LLM setup, an unwritable output), its one line and exit 2, for anything else
  ``job failed: TYPE: MESSAGE; traceback in DIR/failure.json`` and exit 1.

In a sweep (``-m``) a job that fails or is interrupted prints its line and returns, so the
other jobs still run (``mtsbench.sweep``).
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from .errors import Interrupted, exit_code, one_line, redact, signal_name, user_error
from .resources import CONFIG_DIR


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
def app(cfg: DictConfig) -> None:
    """One job (see the module docstring)."""
    from hydra.types import RunMode

    from .config import normalise
    from .config_rules import validate
    from .config import choices_of
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
    elif (warning := _failure_warning(_overall(out))) is not None:
        _say(f"job {hc.job.num}: {warning}")


def config_loader():
    """The config loader ``app()`` (``hydra.main``) would make: the packaged configs, after
    the folders ``mtsbench.config.searching`` puts first (call it inside ``searching``).
    ``mtsbench run`` composes its first job with it (``config.check_run``) and hands it to
    ``launch``: Hydra's config for the run is that one."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import (create_automatic_config_search_path,
                                       detect_calling_file_or_module_from_task_function)
    from hydra.core.utils import setup_globals

    from .hydra_speedups import install

    install()                           # every composition of the run: Hydra's, cheaper
    setup_globals()                     # Hydra's resolvers (${now:...} in hydra.run.dir), as hydra.main registers them
    calling_file, calling_module = detect_calling_file_or_module_from_task_function(app.__wrapped__)
    return ConfigLoaderImpl(config_search_path=create_automatic_config_search_path(calling_file, calling_module,
                                                                                   str(CONFIG_DIR)))


def launch(overrides: list[str], multirun: bool, loader, cfg: DictConfig) -> None:
    """What ``app()`` (``hydra.main``) does for a command line of overrides alone (and
    ``-m``), once ``mtsbench.config.check_run`` has composed ``cfg`` (the run's, or a
    sweep's first job's, config) with ``loader`` (``config_loader``): Hydra does not compose
    the whole config again only to read its ``hydra.mode`` (``Hydra.get_mode``), and a
    single run is ``cfg`` itself (``Hydra.run`` composed it a third time). A sweep goes
    through Hydra's ``multirun``. Other Hydra flags (``--cfg``, ``--info``, ...) go through
    ``app()``."""
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import _run_app, detect_calling_file_or_module_from_task_function, \
        detect_task_name, run_and_report
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    task = app.__wrapped__
    hydra_ = Hydra(task_name=detect_task_name(*detect_calling_file_or_module_from_task_function(task)),
                   config_loader=loader)
    GlobalHydra.instance().initialize(hydra_)
    mode = cfg.hydra.mode
    try:
        if multirun or mode == RunMode.MULTIRUN:
            _run_app(run=not multirun, multirun=multirun, mode=mode, hydra=hydra_, config_name="config",
                     task_function=task, overrides=list(overrides))
        else:
            run_and_report(lambda: _run_composed(hydra_, task, cfg))
    finally:
        GlobalHydra.instance().clear()


def _run_composed(hydra_, task, cfg: DictConfig):
    """``Hydra.run`` on ``cfg``, composed already (as ``Hydra.run`` composes it: ``RUN``
    mode, ``hydra.mode=RUN`` among Hydra's overrides)."""
    from hydra.core.utils import configure_log, run_job
    from hydra.types import HydraContext, RunMode
    from omegaconf import open_dict

    from hydra._internal.callbacks import Callbacks

    if cfg.hydra.mode is None:          # as hydra.main runs it: hydra.mode=RUN added to Hydra's overrides
        with open_dict(cfg.hydra):
            cfg.hydra.overrides.hydra.append("hydra.mode=RUN")
            cfg.hydra.mode = RunMode.RUN
    configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
    callbacks = Callbacks(cfg)
    callbacks.on_run_start(config=cfg, config_name="config")
    try:
        ret = run_job(hydra_context=HydraContext(config_loader=hydra_.config_loader, callbacks=callbacks),
                      task_function=task, config=cfg, job_dir_key="hydra.run.dir", job_subdir_key=None)
    except OSError as e:    # Hydra's own writes around the task (the task's errors are app()'s): .hydra/, the log
        _say(setup_failed(Path(str(cfg.hydra.run.dir)), e))
        sys.exit(2)
    callbacks.on_run_end(config=cfg, config_name="config", job_return=ret)
    _ = ret.return_value            # the job's exception, raised here as Hydra.run does
    return ret


def setup_failed(out: Path, e: OSError) -> str:
    """The one line of a job whose folder Hydra could not set up (a full disk while it wrote
    ``.hydra/`` or opened the log): no summary.json is written, and ``failure.json`` marks
    the folder failed if it can still be written."""
    from .errors import OutputError
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
    from .outputs import failure_line

    return f"warning: {failure_line(overall)}; the results are not to be trusted (summary.json: status unreliable)"


def _finished(cfg: DictConfig, frame, out: Path) -> None:
    from . import evidence
    from .attention_auc import console
    from .report.markdown import passed_line

    recall_table = evidence.console(evidence.summarize(frame, evidence.depths_of(cfg), evidence.budgets_of(cfg),
                                                       evidence.abstain_threshold_of(cfg)))
    if recall_table:
        print(recall_table)
    overall = _overall(out)
    if labelled := console((overall or {}).get("attention")):
        print(labelled)
    print(f"{passed_line(frame)}; report: {out / 'report.md'}")
    warning = _failure_warning(overall)
    if warning is not None:
        _say(warning)
        sys.exit(3)
