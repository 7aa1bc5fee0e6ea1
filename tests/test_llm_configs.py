"""The llm config options instantiate the backends, and each passes the component checker."""

from hydra.utils import instantiate

from mtsbench.evaluation.checks import check_component
from mtsbench.config.composition import compose
from mtsbench.config.search import groups
from mtsbench.llm.mock import MockLLM
from mtsbench.llm.openai_backend import OpenAILLM
from mtsbench.llm.replay import ReplayLLM
from mtsbench.llm.testing import FakeOpenAI


def test_every_llm_option_instantiates_and_honours_the_contract(tmp_path):
    assert groups()["llm"] == ["local", "mock", "openai", "profiled", "recorded", "replay", "routed"]
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI() as server:
        cfg, _ = compose(["llm=openai", f"llm.base_url={server.url}", "llm.model=fake", f"llm.record={cassette}",
                          "seed=5"])
        live = instantiate(cfg.llm)
        assert isinstance(live, OpenAILLM) and (live.temperature, live.seed, live.max_tokens) == (0.0, 5, None)
        assert (live.timeout, live.max_retries, live.on_failure) == (60.0, 2, "raise")
        assert live.api_key_env == "OPENAI_API_KEY" and live.response_format == "json_schema"
        check_component("llm", live, generic=False)   # the contract alone: the count below is one run's
        assert live.params_ == {"temperature": 0.0, "seed": 5}   # derived at the first call
        assert len(server.requests) == 6   # one request per task: check_llm asks all six
        cfg, _ = compose(["llm=routed", "llm@llm.real=openai", f"llm.real.base_url={server.url}",
                          "llm.real.model=fake", "llm.tasks=[rate_attention,judge_relation]"])
        routed = instantiate(cfg.llm)
        check_component("llm", routed)          # the mock's answers but two, which the server gives
        assert routed.real.meter.calls == 2 and routed.meter.calls == 6
    cfg, _ = compose(["llm=replay", f"llm.cassette={cassette}"])
    replay = instantiate(cfg.llm)
    assert isinstance(replay, ReplayLLM) and replay.model is None and replay.cassette == str(cassette)
    check_component("llm", replay)
    assert replay.model_ == "fake"         # the cassette's only recording, picked at the first call
    cfg, _ = compose([])
    assert isinstance(instantiate(cfg.llm), MockLLM)
    cfg, _ = compose(["llm=profiled"])          # the mock with the packaged profile, found by its name
    profiled = instantiate(cfg.llm)
    assert isinstance(profiled, MockLLM) and profiled.profile_.get("facts", "recall") < 1
    check_component("llm", profiled)
    cfg, _ = compose(["llm=recorded"])          # the packaged cassette, found by its name
    recorded = instantiate(cfg.llm)
    check_component("llm", recorded)
    assert recorded.model_ == "qwen2.5-coder-1.5b-instruct-q4_k_m" and recorded.cassette_.path.is_file()
