"""The llm config options instantiate the backends, and each passes the component checker."""

from hydra.utils import instantiate

from mtsbench.checks import check_component
from mtsbench.config import compose, groups
from mtsbench.llm.mock import MockLLM
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.replay import ReplayLLM
from mtsbench.llm.testing import FakeOpenAI


def test_every_llm_option_instantiates_and_honours_the_contract(tmp_path):
    assert groups()["llm"] == ["mock", "openai", "replay"]
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI() as server:
        cfg, _ = compose(["llm=openai", f"llm.base_url={server.url}", "llm.model=fake", f"llm.record={cassette}",
                          "seed=5"])
        live = instantiate(cfg.llm)
        assert isinstance(live, OpenAILLM) and live.params == {"temperature": 0.0, "seed": 5}
        assert (live.timeout, live.max_retries, live.on_failure) == (60.0, 2, "raise")
        check_component("llm", live)
        assert len(server.requests) == 6   # one request per task: check_llm asks all six
    cfg, _ = compose(["llm=replay", f"llm.cassette={cassette}"])
    replay = instantiate(cfg.llm)
    assert isinstance(replay, ReplayLLM) and replay.model == "fake"
    check_component("llm", replay)
    cfg, _ = compose([])
    assert isinstance(instantiate(cfg.llm), MockLLM)
