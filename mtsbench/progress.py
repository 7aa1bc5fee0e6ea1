"""Progress lines for the run's log (``mtsbench.log`` in the job directory), terminal or not.

``StepLog`` writes one line at each phase (building a scenario's system, which includes
pre-loading its store, is its own phase) and, while steps run, one line every ``every``
seconds with the steps done, steps per second since the phase began and the ETA of the
run's remaining steps. A tqdm bar, if any, is updated alongside (``update``).
"""

from __future__ import annotations

import logging
import time

LOG = logging.getLogger("mtsbench")


def clock_text(seconds: float) -> str:
    """H:MM:SS.

    >>> clock_text(3725.2), clock_text(59.9)
    ('1:02:05', '0:01:00')
    """
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class StepLog:
    """Progress of ``total`` steps as log lines; ``bar`` (a tqdm bar or None) is updated too.

    >>> t = iter([0.0, 0.0, 5.0, 12.0, 12.0])
    >>> lines = []
    >>> log = StepLog(100, every=10.0, clock=lambda: next(t), emit=lines.append)
    >>> log.phase("scenario a: building the system")
    >>> log.update(30); log.update(30)
    >>> lines
    ['scenario a: building the system', 'steps 60/100 (60%), 5.0 steps/s, ETA 0:00:08']
    """

    def __init__(self, total: int, every: float = 10.0, bar=None, clock=time.monotonic, emit=None):
        self.total, self.every, self.bar, self.clock = total, every, bar, clock
        self.emit = emit or LOG.info
        self.done = 0
        self.since = self.last = clock()
        self.done_at_phase = 0

    def phase(self, text: str) -> None:
        """A new phase: its line now; steps per second count from here."""
        self.emit(text)
        self.since = self.last = self.clock()
        self.done_at_phase = self.done

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            rate = (self.done - self.done_at_phase) / max(now - self.since, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            self.emit(f"steps {self.done}/{self.total} ({self.done / max(self.total, 1):.0%}), {rate:.1f} steps/s, "
                      f"ETA {clock_text(eta) if eta != float('inf') else '?'}")
