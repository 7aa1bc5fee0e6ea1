"""The contract every registered component must honour (the Gymnasium checker pattern).

``check_component(group, component)`` raises AssertionError naming what broke. The test
suite runs it on every option of every config group, so a new option is checked the
moment its YAML exists.
"""

from __future__ import annotations

import numpy as np

from .embed import Embedder
from .llm.base import Association, Item
from .mechanisms.decay import Decay, check_decay
from .memory.attention import DualAttention
from .memory.store import MemoryStore
from .scenario.model import Hints


def check_embedder(e: Embedder) -> None:
    v = e.embed(["The user is allergic to milk", "用户对牛奶过敏", ""])
    assert v.shape == (3, e.dim) and v.dtype == np.float32, "embed must return (n, dim) float32"
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0, atol=1e-5), "rows must be unit norm"
    assert np.array_equal(v, e.embed(["The user is allergic to milk", "用户对牛奶过敏", ""])), "must be deterministic"


def check_llm(llm) -> None:
    item = Item("A glass of milk is on the table.", "perceive", "s0", "en", Hints(salience=1))
    before = llm.meter.calls
    score = llm.rate_attention(item, [Association("The user is allergic to milk", 8.0, 0.5)])
    assert 0.0 <= score <= 10.0, "rate_attention must answer within 0..10"
    assert llm.meter.calls == before + 1 and llm.meter.tokens > 0, "every call must be metered"


def _tiny_memory(embedder, llm):
    from .agent import MemoryAgent
    from .mechanisms.decay import Exponential, PowerLaw
    from .memory.retrieval import FlatScan
    from .processes.labelling import CommonSense

    return MemoryAgent(embedder, llm, DualAttention(PowerLaw(), Exponential()), CommonSense(), FlatScan())


def check_labeller(labeller) -> None:
    from .embed.hashing import Hashing
    from .llm.mock import MockLLM

    agent = _tiny_memory(Hashing(dim=64), MockLLM())
    vec = agent.embedder.embed(["milk"])[0]
    agent.store.add("The user is allergic to milk", "turn", created=0.0, provenance=("s0",), vector=vec)
    out = labeller.label(agent, Item("milk", "perceive", "s1"), vec, 0.0)
    assert 0.0 <= out.score <= 10.0, "a labelled score must lie in 0..10"
    assert all(0 <= i < agent.store.size for i in out.associated), "associations must be stored memories"
    assert out.cost.scored >= 0


def check_retriever(retriever) -> None:
    from .embed.hashing import Hashing
    from .mechanisms.decay import Exponential, PowerLaw

    e = Hashing(dim=64)
    store, att = MemoryStore(dim=64), DualAttention(PowerLaw(), Exponential())
    texts = ["milk allergy", "train late", "bookshop novel", "milk on the table"]
    for i, (t, v) in enumerate(zip(texts, e.embed(texts))):
        store.add(t, "turn", created=0.0, provenance=(f"s{i}",), vector=v)
    att.label(store, np.arange(4), np.array([8.0, 2.0, 2.0, 1.0]), 0.0)
    found = retriever.search(store, att, e.embed(["milk"])[0], 2, 1.0, 3600.0)
    assert len(found.ids) <= 2 and len(set(found.ids.tolist())) == len(found.ids), "top k, no repeats"
    assert np.all(np.diff(found.scores) <= 1e-12), "results must be ranked best first"
    assert found.cost.scored >= len(found.ids), "a returned memory must have been scored"


CHECKERS = {
    "long_decay": check_decay, "short_decay": check_decay, "embedder": check_embedder, "llm": check_llm,
    "attention": check_labeller, "retrieval": check_retriever,
}


def check_component(group: str, component) -> None:
    """Run the checker of ``group`` on ``component`` (AssertionError if it breaks the contract)."""
    if group not in CHECKERS:
        raise KeyError(f"no checker for config group '{group}'")
    if group.endswith("decay"):
        assert isinstance(component, Decay), "a decay must implement the Decay protocol"
    CHECKERS[group](component)
