"""The registered LLM tasks: one module per task, each defining ``TASK`` (a ``task.Task``).

Every module of this package is imported and its ``TASK`` registered under its name in
``REGISTRY`` (in module-name order); ``TASKS`` are the tasks of memory's processes (the
contract checks them), the others serve evaluation (``answer``, ``judge_answer``). To add a
task, add a module here (schema, templates, mock and fake answers, example: see
``rate_attention.py``) and call it where it is needed: every backend has a method of the
task's name at once.

A backend implements one method, ``ask(task, *args, **kwargs)``, and inherits from
``task_methods(...)`` one method per task, with the task's signature and doc, that calls it:
``llm.rate_attention(item, associated)`` is ``llm.ask(REGISTRY["rate_attention"], item,
associated)``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Callable

from ..task import AnswerError, Task, extract_json, keyless, validate  # noqa: F401  (their old home)

REGISTRY: dict[str, Task] = {}
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    _task = importlib.import_module(f"{__name__}.{_module}").TASK
    if _task.name in REGISTRY:
        raise ValueError(f"LLM task {_task.name!r} is defined twice (mtsbench.llm.tasks.{_module})")
    REGISTRY[_task.name] = _task
TASKS = {name: t for name, t in REGISTRY.items() if t.memory}


def _method(task: Task) -> Callable:
    def method(self, *args, **kwargs):
        return self.ask(task, *args, **kwargs)

    method.__name__ = method.__qualname__ = task.name
    method.__doc__ = task.call.__doc__
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = task.signature.replace(parameters=[this, *task.signature.parameters.values()])
    return method


def task_methods(which: Callable[[Task], bool] = lambda task: True) -> type:
    """A base class with one method per registered task that ``which`` accepts, each calling
    ``self.ask(task, *args, **kwargs)``."""
    return type("TaskMethods", (), {t.name: _method(t) for t in REGISTRY.values() if which(t)})
