"""mtsbench: simulate and evaluate agent long-term memory.

Every mechanism of the memory design is a small class behind a Protocol, chosen by a
Hydra config group; scenarios replay scripted multi-day dialogues on a simulated clock,
and runs report recall accuracy against search cost.
"""

__version__ = "0.1.0"

import os as _os

# mtsbench's matrix products are small (a few queries against one tier), where BLAS threads
# only contend with each other and with other processes: a 2000 x 256 scan went from
# 0.07 ms to 2 ms on average on a busy 2-core machine. Limit BLAS to one thread, unless
# the environment sets it explicitly. The environment variable covers BLAS not loaded yet;
# threadpoolctl the one numpy has already loaded when mtsbench is imported after it.
if not any(v in _os.environ for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")):
    _os.environ["OPENBLAS_NUM_THREADS"] = "1"
    import numpy as _np  # noqa: E402,F401 - loads BLAS so that the limit below reaches it
    from threadpoolctl import threadpool_limits as _threadpool_limits  # noqa: E402

    _threadpool_limits(1, user_api="blas")
