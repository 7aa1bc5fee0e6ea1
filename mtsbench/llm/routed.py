"""``llm=routed``: two backends behind one, so that a real model does only part of a run's work.

``base`` (the mock by default) answers every task but those routed to ``real`` (a model:
``llm@llm.real=local``, ``replay``, ``openai``):

- ``tasks`` (default ``[answer, judge_answer]``): every call of these goes to ``real``. A flat
  system (``preset=flat_rag llm=routed``) then answers its probes with the model while its
  memory makes no call at all, and the seed design keeps the mock's memory tasks (its hints:
  ``import beam --hints silver``) while the model answers from what it retrieved -- one
  answerer for every system compared (``answer.*``, ``mtsbench.evaluation.answer``).
- ``extract: hinted`` (default ``none``): **a real extractor on the oracle's sample**. A
  ``summarize`` call whose items include one with fact hints (the statements a data set's
  questions name, and the turns summarized with them: the window) is also sent to ``real``,
  with only the items of the kinds ``extract_kinds`` (default ``[say]``: the user's turns;
  on BEAM every statement of a changed fact is a user message, and its assistant messages,
  about 1,000 tokens each, would overflow a small model's context). The summary keeps the
  base's text and events, and its facts are the model's, each naming the batch's turns it
  read (a fact naming none is credited to all of them). Every other summary gets no facts:
  with this option every fact of the run is the model's, found where the oracle says a fact
  is, and the base's (the hints') are never stored. The router reads the hints only to
  choose the sample; the model never sees them. ``judge_relation`` and ``reassess_belief``
  go to ``real`` when ``tasks`` lists them (``make belief`` does).

A failed ``real`` call is the real backend's (``on_failure`` there); its facts are then none.

The meter is both backends' summed (``meter``: calls, tokens, failures, per task), so a
run's LLM accounting counts the mock's estimated calls beside the model's measured ones;
``real.meter`` alone is the model's. ``serve`` (which scenario a cassette serves),
``calibrate_relevance`` and ``close`` reach both.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from ..core.params import Kinds, Share, declared
from .base import Fact, Meter, Summary
from .task import Task
from .tasks import REGISTRY, task_methods

TaskName = Literal[tuple(REGISTRY)]      # a registered task's name


@declared
class RoutedLLM(task_methods()):
    """``base`` answers, but ``tasks`` (and, with ``extract: hinted``, the sample's facts) are ``real``'s."""

    def __init__(self, base, real, tasks: list[TaskName] = ["answer", "judge_answer"],   # noqa: B006 (never mutated)
                 extract: Literal["none", "hinted"] = "none", extract_kinds: Kinds = ["say"],   # noqa: B006
                 max_failure_rate: Share = 0.05):
        self.base, self.real = base, real
        self.tasks = tuple(tasks)
        self.extract = extract
        self.extract_kinds = tuple(extract_kinds)
        self.max_failure_rate = max_failure_rate

    @property
    def meter(self) -> Meter:
        """Both backends' meters summed (a fresh ``Meter``: reading it counts nothing)."""
        total = Meter()
        for m in (self.base.meter, self.real.meter):
            for task, t in m.by_task.items():
                into = total.by_task.setdefault(task, {k: 0 for k in t})
                for k, v in t.items():
                    into[k] += v
            total.calls += m.calls
            total.prompt_tokens += m.prompt_tokens
            total.completion_tokens += m.completion_tokens
            total.retries += m.retries
            total.failures += m.failures
        return total

    def ask(self, task: Task, *args, **kwargs) -> Any:
        if task.name in self.tasks:
            return self.real.ask(task, *args, **kwargs)
        if task.name == "summarize" and self.extract == "hinted":
            return self.extracted(*task.bind(*args, **kwargs))
        return self.base.ask(task, *args, **kwargs)

    def extracted(self, turns, known_facts=(), known_events=()) -> Summary | None:
        """The base's summary with the real model's facts when ``turns`` hold a hinted item
        (the module docstring), else with none."""
        summary = self.base.summarize(turns, known_facts, known_events)
        if summary is None:
            return None
        read = [n for n, t in enumerate(turns, 1) if t.kind in self.extract_kinds]
        if not any(t.hints.facts for t in turns) or not read:
            return replace(summary, facts=())
        answer = self.real.summarize([turns[n - 1] for n in read], known_facts, known_events)
        facts = () if answer is None else tuple(_renumbered(f, read) for f in answer.facts)
        return replace(summary, facts=facts)

    def serve(self, scenario, bundled=None) -> None:
        """Tell both backends the scenario served (a replayed cassette serves its records first)."""
        for backend in (self.base, self.real):
            if callable(getattr(backend, "serve", None)):
                backend.serve(scenario, bundled)

    def calibrate_relevance(self, embedder) -> None:
        for backend in (self.base, self.real):
            if callable(getattr(backend, "calibrate_relevance", None)):
                backend.calibrate_relevance(embedder)

    def close(self) -> None:
        for backend in (self.base, self.real):
            if callable(getattr(backend, "close", None)):
                backend.close()


def _renumbered(fact: Fact, read: list[int]) -> Fact:
    """``fact`` with the turn numbers of the items the model read (1-based in ``read``) mapped
    back to the batch's; none named, or none that exists: every turn it read.

    >>> _renumbered(Fact("k", 1, "t", 0.5, (2, 9)), [1, 3, 5]).turns, _renumbered(Fact("k", 1, "t", 0.5), [1, 3]).turns
    ((3,), (1, 3))
    """
    named = tuple(read[n - 1] for n in dict.fromkeys(fact.turns) if 1 <= n <= len(read))
    return replace(fact, turns=named or tuple(read))
