"""The task registry (issue 26, item 3): every task is one object, and every backend's
method of a task is the task's, dispatched through ``ask``."""

import inspect
import json

import pytest

from mtsbench.llm.base import EventTag
from mtsbench.llm.local import LocalLLM
from mtsbench.llm.mock import MockLLM
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.prompts import LANGUAGES
from mtsbench.llm.replay import ReplayLLM
from mtsbench.llm.tasks import REGISTRY, TASKS
from mtsbench.llm.testing import task_of, valid_answer

# the contract's examples, and one call of each task the contract does not check
EXAMPLES = {name: t.example() for name, t in REGISTRY.items() if t.example is not None} | {
    "same_event": (EventTag("trip", "Flew to Oslo."), EventTag("", "Landed.")),
    "answer": ("What does Kim play?", ["Kim plays the cello."]), "judge_answer": ("Q?", "cello", "a cello")}


def body(prompt: str) -> dict:
    return {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": prompt}]}


def test_every_registered_task_is_complete():
    assert set(EXAMPLES) == set(REGISTRY) and set(TASKS) < set(REGISTRY)
    assert {n for n, t in REGISTRY.items() if not t.memory} == {"answer", "judge_answer"}
    for task in REGISTRY.values():
        assert set(task.templates) == set(LANGUAGES), task.name
        assert task.call.__doc__ and task.name == task.call.__name__


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_fake_server_recognises_each_prompt_and_answers_it_validly(name, language):
    task = REGISTRY[name]
    args = task.bind(*EXAMPLES[name])
    if "language" in task.signature.parameters:
        args = task.bind(*args[:-1], language=language)
    elif language == "zh":
        pytest.skip("the call's language comes from its items")
    prompt = task.render(args)
    assert task_of(body(prompt)) == name                  # by the template's answer line, no schema sent
    for h in (0, 1, 7, 100):
        task.parse(json.dumps(task.fake(h)))               # valid under the task's own schema
    task.parse(valid_answer(body(prompt)))


@pytest.mark.parametrize("name", sorted(n for n, t in REGISTRY.items() if t.mock is not None))
def test_the_mocks_answer_is_valid_under_the_tasks_schema(name):
    task = REGISTRY[name]
    llm = MockLLM(noise=0.3, seed=1)
    result = getattr(llm, name)(*EXAMPLES[name])
    _, answer = task.mock(llm, Unnoised(), *task.bind(*EXAMPLES[name]))
    assert list(llm.meter.by_task) == [name] and type(task.parse(json.dumps(answer))) is type(result)


class Unnoised:
    """The mock's noise at sigma 0."""

    def bounded(self, value, lo, hi):
        return value

    def duration(self, seconds):
        return seconds


@pytest.mark.parametrize("backend", [MockLLM, OpenAILLM, ReplayLLM, LocalLLM])
def test_each_backends_task_methods_have_the_tasks_signatures(backend):
    have = [n for n in REGISTRY if callable(getattr(backend, n, None))]
    want = [n for n, t in REGISTRY.items() if backend is not MockLLM or t.mock is not None]
    assert have == want
    for name in have:
        method = getattr(backend, name)
        assert list(inspect.signature(method).parameters)[1:] == list(REGISTRY[name].signature.parameters)
        assert method.__doc__ == REGISTRY[name].call.__doc__


def test_the_mock_has_no_evaluation_tasks():
    """A probe's answer is scored only by a backend with an ``answer`` task (mtsbench.evaluation.answer)."""
    assert not hasattr(MockLLM(), "answer") and not hasattr(MockLLM(), "judge_answer")
    with pytest.raises(NotImplementedError, match="the mock has no answer for task answer"):
        MockLLM().ask(REGISTRY["answer"], "Q?", [])
