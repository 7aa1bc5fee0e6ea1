"""Progress lines for the run's log (``mtsbench.log`` in the job directory), terminal or not.

``StepLog`` writes one line at each phase (building a scenario's system, which includes
pre-loading its store, is its own phase) and, while steps run, one line every ``every``
seconds with the steps done, the recent rate in steps per second and the ETA of the run's
remaining steps at that rate. The recent rate is an exponential moving average of the rate
of each interval between lines (weight ``SMOOTHING`` for the newest, as tqdm's
``smoothing``), so an ETA follows a run that slows down (a store that grows) rather than
its average since the start. A tqdm bar, if any, is updated alongside (``update``); it
is made by ``step_bar``: on a terminal only.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time

LOG = logging.getLogger("mtsbench")
SMOOTHING = 0.3     # weight of the newest interval's rate in the recent rate (tqdm's default)


def step_bar(total: int, enabled: bool = True, file=None, **options):
    """A tqdm bar over ``total`` on ``file`` (stderr), shown on a terminal only (``enabled``
    and ``file`` a TTY). A terminal that does not report its width (0 columns: a pty made
    by a tool, an editor's console) gets ``shutil.get_terminal_size``'s size (``COLUMNS``
    and ``LINES``, or 80 by 24) rather than tqdm's silence (it takes 0 columns and -1 rows)."""
    from tqdm import tqdm

    file = file if file is not None else sys.stderr
    if enabled and _width(file) == 0:
        size = shutil.get_terminal_size()
        options.setdefault("ncols", size.columns)
        options.setdefault("nrows", size.lines)
    return tqdm(total=total, file=file, disable=None if enabled else True, **options)


def _width(file) -> int | None:
    """The terminal's width in columns, or None when ``file`` is not a terminal."""
    try:
        return os.get_terminal_size(file.fileno()).columns if file.isatty() else None
    except (AttributeError, OSError, ValueError):
        return None


def recent_rate(rate: float | None, steps: float, seconds: float, smoothing: float = SMOOTHING) -> float:
    """The recent rate after an interval of ``steps`` in ``seconds``: the exponential moving
    average of the intervals' rates, ``rate`` the one before (None: this is the first).

    A rate that falls from 100 to 40 steps/s is followed within a few intervals:

    >>> r = recent_rate(None, 1000, 10.0); r
    100.0
    >>> r = recent_rate(r, 400, 10.0); round(r, 6)
    82.0
    >>> r = recent_rate(r, 400, 10.0); round(r, 6)
    69.4
    """
    now = steps / max(seconds, 1e-9)
    return now if rate is None else smoothing * now + (1 - smoothing) * rate


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

    The rate and ETA are the recent ones (``recent_rate``), not the average since the phase began.
    """

    def __init__(self, total: int, every: float = 10.0, bar=None, clock=time.monotonic, emit=None):
        self.total, self.every, self.bar, self.clock = total, every, bar, clock
        self.emit = emit or LOG.info
        self.done = 0
        self.since = self.last = clock()
        self.done_at_phase = self.done_at_last = 0
        self.rate: float | None = None      # recent steps per second (None: no interval yet)

    def phase(self, text: str) -> None:
        """A new phase: its line now; steps per second count from here."""
        self.emit(text)
        self.since = self.last = self.clock()
        self.done_at_phase = self.done_at_last = self.done

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        now = self.clock()
        if now - self.last >= self.every:
            self.rate = rate = recent_rate(self.rate, self.done - self.done_at_last, now - self.last)
            self.last, self.done_at_last = now, self.done
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            self.emit(f"steps {self.done}/{self.total} ({self.done / max(self.total, 1):.0%}), {rate:.1f} steps/s, "
                      f"ETA {clock_text(eta) if eta != float('inf') else '?'}")
