"""A report's figures drawn in two processes at once (issue 50: a sweep's report must not
dominate the sweep): this one and a helper process (``Helper``), started before the report
reads its results so that the helper's start (a fresh interpreter importing matplotlib and
pandas) overlaps that reading.

``Drawing`` hands the figures out from both ends of their list: the helper takes them from
the back as soon as it starts, this process from the front once it has done its own work
(``finish``), each the next one left as it becomes free, so that the two finish together
whatever each figure costs. A figure is drawn as in one process: the
same plot function on the same arguments (pickled to the helper), writing the same file. The
helper is loky's (joblib's) worker, a fresh interpreter rather than a fork of this process,
whose threads (a Ray launcher's) a fork would copy mid-state. Without a helper (it could not
start, or died) the figures are drawn here, one after another.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

Task = tuple[Callable[..., Any], tuple]


class Helper:
    """One helper process for ``Drawing`` while inside (``executor``: None when it could not start)."""

    executor = None

    def __enter__(self) -> "Helper":
        try:
            from joblib.externals.loky.process_executor import ProcessPoolExecutor

            self.executor = ProcessPoolExecutor(max_workers=1)
            self.executor.submit(_warm)         # its imports made while this process reads the results
        except Exception:  # noqa: BLE001 - no helper: the figures are drawn here
            self.executor = None
        return self

    def __exit__(self, *exc) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=exc[0] is None, kill_workers=exc[0] is not None)


def _warm() -> None:
    from . import plots, sweepplots, timeplots  # noqa: F401 - the plot functions' modules


class Drawing:
    """``fn(*args)`` of each task, drawn in this process and in ``helper``'s at once (see the
    module docstring): the helper starts on the back of the list at once, while this process
    does other work (the report's tables); ``finish`` draws from the front until none is left
    and returns every result in the tasks' order. A task the helper could not draw is drawn
    here; a plot function's own error is raised as in one process."""

    def __init__(self, tasks: Sequence[Task], helper: Helper | None = None) -> None:
        self.tasks = list(tasks)
        self.results: list = [None] * len(self.tasks)
        self.left = [0, len(self.tasks)]        # tasks[left[0]:left[1]] not taken yet
        self.lock = threading.Lock()
        self.failed: list[int] = []
        self.executor = None if helper is None else helper.executor
        self.feeder = None
        if self.executor is not None and len(self.tasks) > 1:
            self.feeder = threading.Thread(target=self._feed, name="mtsbench-figures", daemon=True)
            self.feeder.start()

    def _take(self, front: bool) -> int | None:
        with self.lock:
            if self.left[0] >= self.left[1]:
                return None
            self.left[0 if front else 1] += 1 if front else -1
            return self.left[0] - 1 if front else self.left[1]

    def _feed(self) -> None:
        while (i := self._take(front=False)) is not None:
            fn, args = self.tasks[i]
            try:
                self.results[i] = self.executor.submit(fn, *args).result()
            except Exception:  # noqa: BLE001 - drawn here instead (its own error, if any, raised there)
                self.failed.append(i)

    def finish(self) -> list:
        try:
            while (i := self._take(front=True)) is not None:
                self.results[i] = self.tasks[i][0](*self.tasks[i][1])
        finally:
            if self.feeder is not None:
                self.feeder.join()
        for i in self.failed:
            self.results[i] = self.tasks[i][0](*self.tasks[i][1])
        return self.results
