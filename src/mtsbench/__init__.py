"""mtsbench: simulate and evaluate agent long-term memory.

Every mechanism of the memory design is a small class behind a Protocol, chosen by a
Hydra config group; scenarios replay scripted multi-day dialogues on a simulated clock,
and runs report recall accuracy against search cost.
"""

__version__ = "0.1.0"
