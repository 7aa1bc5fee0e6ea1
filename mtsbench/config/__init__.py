"""The configuration path: where the Hydra configs are found (``search``), checking the
command line's overrides (``overrides``), composing a job config and checking it
(``composition``), the options the harness reads itself (``options``), checking a composed
config against the parameters its components declare (``check``) and the rules over a whole
job (``rules``). Nothing here builds a component or runs anything; checking a whole
``mtsbench run`` command (sweeps, tuning studies) is ``mtsbench.harness.preflight``'s.

May import: ``core``, ``errors``, and Hydra/OmegaConf. The old module ``mtsbench.config``'s
names (``compose``, ``ConfigError``, ...) are still found here, each from its new module.
"""

import importlib

_SEARCH = ("COMPOSITE_GROUPS", "PLUGIN_GROUP", "PLUGIN_PROVIDER", "SEARCH_PROVIDER", "CONFIG_DIR", "plugin_dirs",
           "groups", "mechanism_groups", "user_dirs", "searching", "split_config_dirs")
_OVERRIDES = ("check_overrides", "overrides_set_scenarios", "REQUIRED_NODES")
_COMPOSITION = ("ConfigError", "compose", "normalise", "choices_of", "scenario_list", "option_files")
_OPTIONS = ("SweepOptions", "DEFAULT_MAX_JOBS")
OLD_NAMES = {**dict.fromkeys(_SEARCH, "search"), **dict.fromkeys(_OVERRIDES, "overrides"),
             **dict.fromkeys(_COMPOSITION, "composition"), **dict.fromkeys(_OPTIONS, "options")}
# the former module's names now above the config path: config imports nothing of them, not even lazily
MOVED_UP = {"check_run": "mtsbench.harness.preflight", "SWEEP_COMBOS_COMPOSED": "mtsbench.harness.preflight"}


def __getattr__(name):
    # the public names of the former module mtsbench.config (issue 37 made it this package)
    if name in MOVED_UP:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: it moved to {MOVED_UP[name]}")
    if name not in OLD_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{OLD_NAMES[name]}"), name)
