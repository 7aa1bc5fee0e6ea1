"""A report's figures drawn in two processes at once (issue 50: a sweep's report must not
dominate the sweep): this one and a helper process (``Helper``), started before the report
reads its results so that the helper's start (a fresh interpreter importing matplotlib and
pandas) overlaps that reading.

``draw`` hands the figures out from both ends of their list: this process takes them from
the front, the helper from the back, each the next one left as it becomes free, so that the
two finish together whatever each figure costs. A figure is drawn as in one process: the
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
    """One helper process for ``draw`` while inside (``executor``: None when it could not start)."""

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


def draw(tasks: Sequence[Task], helper: Helper | None = None) -> list:
    """``fn(*args)`` of each task, in order, drawn in this process and in ``helper``'s at once
    (see the module docstring). A task the helper could not draw is drawn here; a plot
    function's own error is raised as in one process."""
    executor = None if helper is None else helper.executor
    if executor is None or len(tasks) < 2:
        return [fn(*args) for fn, args in tasks]
    results: list = [None] * len(tasks)
    left = [0, len(tasks)]          # tasks[left[0]:left[1]] not taken yet
    lock = threading.Lock()
    failed: list[int] = []

    def take(front: bool) -> int | None:
        with lock:
            if left[0] >= left[1]:
                return None
            left[0 if front else 1] += 1 if front else -1
            return left[0] - 1 if front else left[1]

    def feed() -> None:
        while (i := take(front=False)) is not None:
            try:
                results[i] = executor.submit(*tasks[i][:1], *tasks[i][1]).result()
            except Exception:  # noqa: BLE001 - drawn here instead (its own error, if any, raised there)
                failed.append(i)

    feeder = threading.Thread(target=feed, name="mtsbench-figures", daemon=True)
    feeder.start()
    try:
        while (i := take(front=True)) is not None:
            results[i] = tasks[i][0](*tasks[i][1])
    finally:
        feeder.join()
    for i in failed:
        results[i] = tasks[i][0](*tasks[i][1])
    return results
