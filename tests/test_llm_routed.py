"""``llm=routed`` (issue 52): the mock's memory with a model's answers, and a real extractor on the
oracle's sample; ``answer.budget`` and ``answer.categories``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hydra.utils import instantiate

from mtsbench.config.composition import compose
from mtsbench.errors import ConfigError
from mtsbench.evaluation.answer import Answering
from mtsbench.llm.base import Fact, Item, Meter, Summary
from mtsbench.llm.mock import MockLLM
from mtsbench.llm.routed import RoutedLLM
from mtsbench.llm.tasks import task_methods
from mtsbench.llm.testing import FakeOpenAI, extracting_answer
from mtsbench.scenario.model import Hints

BEAM = Path(__file__).parent / "data" / "beam_small"


class Model(task_methods()):
    """A stand-in for a real backend: records what it was asked, answers summarize with one fact per
    turn it was shown (numbered as shown), everything else as the fake server would."""

    def __init__(self):
        self.meter, self.asked = Meter(), []

    def ask(self, task, *args, **kwargs):
        args = task.bind(*args, **kwargs)
        self.asked.append((task.name, args))
        self.meter.record(task.name, 10, 2)
        if task.name == "summarize":
            return Summary("model summary", tuple(Fact(f"user.k{n}", n, f"said {t.text}", 0.8, (n,))
                                                  for n, t in enumerate(args[0], 1)))
        return task.convert(task.fake(len(self.asked)))


def hinted(text: str, kind: str = "say", step: str = "s") -> Item:
    return Item(text, kind, step, hints=Hints(facts=(Fact("silver.x", "statement 1", text, 0.7),)))


def test_named_tasks_go_to_the_model_and_the_rest_to_the_mock():
    model = Model()
    llm = RoutedLLM(MockLLM(), model)
    llm.rate_attention(Item("I like tea.", "say", "s0"), [])
    assert model.asked == []
    assert llm.answer("What do I like?", ["I like tea."], "en") == "not mentioned"
    assert llm.judge_answer("What do I like?", "tea", "not mentioned", "en") in (True, False)
    assert [name for name, _ in model.asked] == ["answer", "judge_answer"]
    meter = llm.meter                      # both meters summed, per task too
    assert (meter.calls, meter.by_task["rate_attention"]["calls"], meter.by_task["answer"]["calls"]) == (3, 1, 1)
    assert llm.real.meter.calls == 2


def test_the_model_extracts_facts_only_where_the_oracle_put_one_from_the_user_turns():
    model = Model()
    llm = RoutedLLM(MockLLM(), model, tasks=["judge_relation"], extract="hinted")
    plain = [Item("I run 20 km a week.", "say", "m0"), Item("Great, keep going.", "reply", "m1")]
    summary = llm.summarize(plain)
    assert summary.facts == () and model.asked == [] and summary.text      # no hint: no fact, no model call
    window = [Item("A long answer.", "reply", "m1"), hinted("I now run 32 km.", step="m2"),
              Item("And I swim.", "say", "m3")]
    summary = llm.summarize(window)
    (name, (shown, *_)), = model.asked
    assert name == "summarize" and [t.step for t in shown] == ["m2", "m3"]       # the user's turns only
    assert [(f.key, f.turns) for f in summary.facts] == [("user.k1", (2,)), ("user.k2", (3,))]   # renumbered
    assert summary.text == MockLLM().summarize(window).text     # the summary text stays the mock's
    assert all(f.key != "silver.x" for f in summary.facts)       # the hint's own fact is never stored


def test_the_routed_option_composes_with_any_real_backend_and_checks_its_values():
    cfg, _ = compose(["llm=routed", "llm@llm.real=openai", "llm.real.base_url=http://127.0.0.1:9/v1",
                      "llm.real.model=m", "llm.tasks=[answer,judge_answer,judge_relation]", "llm.extract=hinted"])
    llm = instantiate(cfg.llm)
    assert isinstance(llm, RoutedLLM) and isinstance(llm.base, MockLLM) and type(llm.real).__name__ == "OpenAILLM"
    assert llm.tasks == ("answer", "judge_answer", "judge_relation") and llm.extract == "hinted"
    with pytest.raises(ConfigError, match=r"llm\.tasks"):
        compose(["llm=routed", "llm.tasks=[answr]"])
    with pytest.raises(ConfigError, match=r"llm\.extract: expected one of none, hinted"):
        compose(["llm=routed", "llm.extract=all"])


def test_the_answer_node_takes_a_budget_and_categories():
    a = Answering.from_config({"enabled": True, "budget": 1024, "categories": ["knowledge_update"]})
    probe = type("P", (), {"category": "knowledge_update"})
    assert a.wants(probe) and not a.wants(type("Q", (), {"category": "summarization"}))
    assert Answering(enabled=True).wants(type("Q", (), {"category": None}))
    with pytest.raises(ConfigError, match=r"answer\.budget: expected an integer >= 1"):
        compose(["answer.budget=0"])


def answer_rows(run: Path) -> pd.DataFrame:
    m = pd.read_csv(run / "metrics.csv")
    columns = [c for c in ("answer_proxy", "answer_f1", "judge", "recall@10", "recall@1024t") if c in m]
    return m[m["check"] == "probe"].set_index(["scenario", "step"])[columns]


def test_a_model_answers_and_extracts_in_a_run_and_the_cassette_replays_it(cli, tmp_path):
    """End to end on the silver import: flat retrieval answers two categories' probes with the model
    (recorded), the design's facts come from the model on the hinted batches only, and the cassettes
    replay both runs offline to the same numbers."""
    assert cli("import", "beam", BEAM, "-o", tmp_path / "silver", "--hints", "silver").returncode == 0
    qa = ["answer.enabled=true", "answer.judge=true", "answer.budget=1024",
          "answer.categories=[knowledge_update,contradiction_resolution]"]
    runs = {"flat": ["preset=flat_rag", "llm=routed", *qa],
            "extractor": ["llm=routed", "llm.extract=hinted", "llm.tasks=[judge_relation,reassess_belief]"]}
    with FakeOpenAI(answer=extracting_answer) as server:
        for name, overrides in runs.items():
            done = cli("run", f"scenarios=[{tmp_path / 'silver'}]", *overrides, "llm@llm.real=openai",
                       f"llm.real.base_url={server.url}", "llm.real.model=fake",
                       f"llm.real.record={tmp_path / (name + '.jsonl')}", f"hydra.run.dir={tmp_path / name}")
            assert done.returncode == 0, done.stderr
    flat = answer_rows(tmp_path / "flat")
    asked = flat[flat["judge"].notna()]
    assert sorted(s for _, s in asked.index) == ["q_contradiction_resolution_1", "q_knowledge_update_1"]
    assert asked["answer_f1"].notna().all() and flat["judge"].notna().sum() == 2
    summary = json.loads((tmp_path / "flat" / "summary.json").read_text())
    assert summary["overall"]["llm_calls"] == 4                     # two answers, two judgements: flat asks nothing
    trace = pd.read_parquet(tmp_path / "extractor" / "trace.parquet")
    facts = [json.loads(f) for e, f in zip(trace["event"], trace["fields"]) if e == "created" and
             json.loads(f)["kind"] == "fact"]
    assert facts and all(f["key"] == "user.subject" for f in facts)          # the model's, never the hints'
    assert (trace["event"] == "contradicted").any()                         # judged by the model
    for name, overrides in runs.items():                             # offline: the same numbers
        done = cli("run", f"scenarios=[{tmp_path / 'silver'}]", *overrides, "llm@llm.real=replay",
                   f"llm.real.cassette={tmp_path / (name + '.jsonl')}", f"hydra.run.dir={tmp_path / (name + '_replay')}")
        assert done.returncode == 0, done.stderr
        a, b = answer_rows(tmp_path / name), answer_rows(tmp_path / (name + "_replay"))
        pd.testing.assert_frame_equal(a, b)
        assert (pd.read_parquet(tmp_path / (name + "_replay") / "trace.parquet")["event"] == "contradicted").sum() == \
            (pd.read_parquet(tmp_path / name / "trace.parquet")["event"] == "contradicted").sum()
