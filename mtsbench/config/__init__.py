"""The configuration path: finding and composing the Hydra configs (``composition``), the
options the harness reads itself (``options``), checking a composed config against the
parameters its components declare (``check``) and the rules over a whole job (``rules``).
Nothing here builds a component or runs anything.

May import: ``core``, ``errors``, and Hydra/OmegaConf. The old module ``mtsbench.config``'s
names (``compose``, ``ConfigError``, ...) are still found here.
"""

import importlib


def __getattr__(name):
    # the names of the former module mtsbench.config (issue 37 made it this package)
    module = importlib.import_module(f"{__name__}.composition")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
