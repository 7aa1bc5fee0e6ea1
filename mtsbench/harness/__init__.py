"""Running: the harness that replays scenarios through a memory system (``runner``), the
retrieval workload, the lifetime haystack, the Hydra entry point and sweeps, the pytest
plug-in, and the end of a run (``finish``: write, then evaluate, then report).

May import: ``report``, ``tune``, ``evaluation``, ``outputs``, ``systems`` and everything
below them; never ``api``, ``cli`` or the studies.
"""
