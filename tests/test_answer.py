"""Answers scored end to end (issue 15, item 5): token F1, the LLM-free proxy, the answer and
judge tasks, and how a probe's answer is metered."""

from types import SimpleNamespace as NS

import pytest

from mtsbench.evaluation.answer import Answering, answer_step, context_proxy, score_probe, token_f1, tokens
from mtsbench.errors import ConfigError
from mtsbench.llm.tasks import REGISTRY
from mtsbench.llm.base import Meter
from mtsbench.llm.mock import MockLLM
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.testing import FakeOpenAI, task_of
from mtsbench.systems.base import Outcome, Ranking


def test_squad_normalisation_and_token_f1():
    assert tokens("The  Eiffel-Tower, in Paris!") == ["eiffeltower", "in", "paris"]   # SQuAD drops punctuation
    assert tokens("An apple a day") == ["apple", "day"]
    assert token_f1("in Paris", "Paris") == pytest.approx(2 * 0.5 * 1 / 1.5, abs=1e-4)
    assert token_f1("Paris", "The city of paris.") == 0.5                  # P = 1, R = 1/3 (the article dropped)
    assert token_f1("Oslo", "Paris") == 0.0 and token_f1("", "Paris") == 0.0
    assert token_f1("paris paris", "paris") == pytest.approx(2 * 0.5 * 1 / 1.5, abs=1e-4)   # a multiset


def test_chinese_is_scored_by_character():
    assert tokens("她的猫叫小白。") == ["她", "的", "猫", "叫", "小", "白"]
    assert token_f1("小白", "她的猫叫小白") == pytest.approx(2 * 1 * (2 / 6) / (1 + 2 / 6), abs=1e-4)


def test_the_proxy_is_the_share_of_gold_content_tokens_in_the_context():
    context = ["Kim's cat is called Vessa.", "Kim moved to Oslo in May."]
    assert context_proxy(context, "Vessa") == 1.0
    assert context_proxy(context, "in Bergen, in Oslo") == 0.5           # "in" is a function word
    assert context_proxy([], "Vessa") == 0.0 and context_proxy(context, "the") is None


class Answerer:
    """An LLM stub with the answer and judge tasks, metered like a backend."""

    def __init__(self, reply="Vessa", verdict=True):
        self.meter, self.reply, self.verdict, self.asked = Meter(), reply, verdict, []

    def answer(self, question, context, language="en"):
        self.asked.append((question, tuple(context), language))
        self.meter.record("answer", 40, 3)
        return self.reply

    def judge_answer(self, question, gold, reply, language="en"):
        self.meter.record("judge_answer", 30, 2)
        return self.verdict


def test_score_probe_with_the_mock_is_the_proxy_alone_and_calls_nothing():
    mock = MockLLM()
    out = score_probe(mock, "What is Kim's cat called?", "Vessa", ["Kim's cat is called Vessa."], judge=True)
    assert out == {"answer": None, "answer_f1": None, "answer_proxy": 1.0, "judge": None}
    assert mock.meter.calls == 0
    assert score_probe(mock, "q", None, ["x"]) == {"answer": None, "answer_f1": None, "answer_proxy": None,
                                                   "judge": None}          # no gold answer: nothing


def test_score_probe_with_a_model_answers_and_judges():
    llm = Answerer("a cat named Vessa", verdict=True)
    out = score_probe(llm, "What is Kim's cat called?", "Vessa", ["Kim's cat is called Vessa."], "en", judge=True)
    assert out["answer"] == "a cat named Vessa" and out["answer_f1"] == token_f1("a cat named Vessa", "Vessa")
    assert out["judge"] == 1.0 and out["answer_proxy"] == 1.0
    assert score_probe(llm, "q", "Vessa", [], judge=False)["judge"] is None


def test_answer_step_uses_the_probes_context_and_adds_the_calls_to_its_cost():
    llm = Answerer()
    system = NS(context_texts=lambda ids: [f"memory {i}" for i in ids], answer_llm=llm)
    step = NS(text="What is Kim's cat called?", answer="Vessa", expect=NS(k=2))
    outcome = Outcome(ranking=Ranking(ids=[7, 3, 9], scores=[3.0, 2.0, 1.0]))
    answer_step(system, step, outcome, Answering(enabled=True, judge=True))
    assert llm.asked == [("What is Kim's cat called?", ("memory 7", "memory 3"), "en")]   # the first k it used
    assert outcome.cost.llm_calls == 2 and outcome.cost.tokens == 75 and outcome.cost.prompt_tokens == 70
    assert outcome.answer["answer_f1"] == 1.0 and outcome.answer["judge"] == 1.0
    off = Outcome(ranking=Ranking(ids=[7]))
    answer_step(system, step, off, Answering())
    assert off.answer is None and off.cost.llm_calls == 0                               # off by default


def test_a_memory_stored_several_times_is_shown_once_and_frees_its_places():
    # four copies of one summary filled a context of k=4 (issue 27): now it is shown once, and the
    # places go to the next memories of the ranking, within the used memories' token budget
    llm = Answerer()
    texts = {1: "Kim went to Oslo.", 2: "Kim went to Oslo.", 3: "Kim  went to Oslo.", 4: "Kim went to Oslo.",
             5: "Kim's cat is called Vessa.", 6: "Kim has a red bicycle."}
    system = NS(context_texts=lambda ids: [texts[i] for i in ids], answer_llm=llm)
    step = NS(text="What is Kim's cat called?", answer="Vessa", expect=NS(k=4))
    outcome = Outcome(ranking=Ranking(ids=[1, 2, 3, 4, 5, 6], tokens=[5, 5, 5, 5, 6, 6]))
    answer_step(system, step, outcome, Answering(enabled=True))
    assert llm.asked == [("What is Kim's cat called?", ("Kim went to Oslo.", "Kim's cat is called Vessa.",
                                                        "Kim has a red bicycle."), "en")]
    assert outcome.answer["answer_proxy"] == 1.0


def test_the_answer_node_is_checked():
    assert Answering.from_config(None) == Answering() and Answering.from_config({"enabled": True}).enabled
    with pytest.raises(ConfigError, match="answer.judge: expected true or false, got 'yes'"):
        Answering.from_config({"judge": "yes"})


def test_the_answer_and_judge_tasks_through_a_server():
    with FakeOpenAI() as server:
        llm = OpenAILLM(base_url=server.url, model="any", timeout=5.0, max_retries=1)
        assert llm.answer("What is Kim's cat called?", ["Kim's cat is called Vessa."], "zh") == "not mentioned"
        assert isinstance(llm.judge_answer("q", "Vessa", "not mentioned"), bool)
        assert [task_of(body) for _, body in server.requests] == ["answer", "judge_answer"]
        assert "记忆：\n- Kim's cat is called Vessa." in server.requests[0][1]["messages"][-1]["content"]
        assert set(llm.meter.by_task) == {"answer", "judge_answer"}
    assert "Gold reply: Vessa" in REGISTRY["judge_answer"].prompt("q", "Vessa", "a cat")


def _with_answers(monkeypatch, answer="a sore throat"):
    """Run cold_then_fever with a gold answer on its probe (as an imported probe would have)."""
    from dataclasses import replace

    from mtsbench.harness import runner
    from mtsbench.scenario.catalog import resolve
    from mtsbench.scenario.loader import load_scenario

    (path,) = resolve(["cold_then_fever"])
    scenario = load_scenario(path)
    scenario = replace(scenario, steps=tuple(replace(s, answer=answer) if s.kind == "probe" else s
                                             for s in scenario.steps))
    monkeypatch.setattr(runner, "load_all", lambda cfg, out_dir=None: [scenario])


def test_a_run_scores_probes_with_the_proxy_under_the_mock(monkeypatch, tmp_path):
    import json

    from mtsbench.config.composition import compose
    from mtsbench.harness.runner import run

    _with_answers(monkeypatch)
    cfg, choices = compose(["answer.enabled=true"])
    frame = run(cfg, tmp_path / "on", choices)
    (probe,) = frame[frame["check"] == "probe"].itertuples()
    assert probe.answer_proxy == 1.0 and probe.llm_calls == 0            # the day-0 malaise was retrieved
    assert frame["answer_f1"].isna().all()                               # the mock does not answer
    block = json.loads((tmp_path / "on" / "summary.json").read_text())["overall"]["answer"]
    assert block == {"probes": 1, "answer_f1": None, "answer_proxy": 1.0, "judge": None}
    cfg, choices = compose([])
    off = run(cfg, tmp_path / "off", choices)
    assert "answer_proxy" not in off and "answer" not in json.loads((tmp_path / "off" / "summary.json").read_text())["overall"]


def test_a_run_with_a_model_answers_judges_and_meters_the_probe(monkeypatch, tmp_path):
    import json

    from mtsbench.config.composition import compose
    from mtsbench.harness.runner import run

    _with_answers(monkeypatch)
    with FakeOpenAI() as server:
        cfg, choices = compose(["llm=openai", f"llm.base_url={server.url}", "llm.model=m", "answer.enabled=true",
                                "answer.judge=true"])
        frame = run(cfg, tmp_path / "run", choices)
    (probe,) = frame[frame["check"] == "probe"].itertuples()
    assert probe.answer_f1 == 0.0 and probe.judge in (0.0, 1.0) and probe.llm_calls == 2   # "not mentioned"
    by_task = json.loads((tmp_path / "run" / "summary.json").read_text())["scenarios"]["cold_then_fever"]["llm"]["by_task"]
    assert by_task["answer"]["calls"] == 1 and by_task["judge_answer"]["calls"] == 1
