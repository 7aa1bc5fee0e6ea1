"""A report's figures drawn in two processes (mtsbench.report.parallel): each task's result in
the task's place, both processes drawing; a task the helper cannot take is drawn here; a plot
function's own error is raised; without a helper everything is drawn here."""

import operator
import os
import threading
import time

import pytest

from mtsbench.report.parallel import Drawing, Helper


def test_both_processes_draw_and_the_results_keep_the_tasks_order():
    """This process takes the tasks from the front (its first one lasts 0.3 s), the helper from the back."""
    tasks = [(time.sleep, (0.3,)), *((operator.add, (i, 100)) for i in range(5)), (os.getpid, ())]
    with Helper() as helper:
        assert helper.executor is not None
        results = Drawing(tasks, helper).finish()
    assert results[:6] == [None, 100, 101, 102, 103, 104]
    assert results[6] != os.getpid()


def test_a_task_the_helper_cannot_take_is_drawn_here():
    lock = threading.Lock()                  # not picklable: cannot be sent to the helper
    tasks = [(len, ([lock],))] * 4
    with Helper() as helper:
        assert Drawing(tasks, helper).finish() == [1, 1, 1, 1]


def test_a_plot_functions_error_is_raised():
    with Helper() as helper, pytest.raises(ZeroDivisionError):
        Drawing([(operator.truediv, (1, 0))] * 3, helper).finish()


def test_without_a_helper_everything_is_drawn_here():
    assert Drawing([(os.getpid, ())] * 3).finish() == [os.getpid()] * 3
