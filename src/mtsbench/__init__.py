"""mtsbench: simulate and evaluate agent long-term memory.

Every mechanism of the memory design is a small class behind a Protocol, chosen by a
Hydra config group; scenarios replay scripted multi-day dialogues on a simulated clock,
and runs report recall accuracy against search cost.
"""

__version__ = "0.1.0"

import os as _os

# mtsbench's matrix products are small (one query against one tier), where BLAS threads
# only contend with each other and with other processes: a 2000 x 256 scan went from
# 0.07 ms to 2 ms on average on a busy 2-core machine. Set before numpy loads BLAS; an
# explicit setting in the environment wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")
