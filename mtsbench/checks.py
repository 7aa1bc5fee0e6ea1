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
from .scenario.model import Expect, FactHint, Hints, InferHint, Step


def check_embedder(e: Embedder) -> None:
    v = e.embed(["The user is allergic to milk", "用户对牛奶过敏", ""])
    assert v.shape == (3, e.dim) and v.dtype == np.float32, "embed must return (n, dim) float32"
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0, atol=1e-5), "rows must be unit norm"
    assert np.array_equal(v, e.embed(["The user is allergic to milk", "用户对牛奶过敏", ""])), "must be deterministic"


def check_llm(llm) -> None:
    """Every task answers with its typed result, in range, and every call is metered."""
    from .llm.base import Fact, Impression, Relation, Summary

    hints = Hints(salience=1, facts=(FactHint("user.allergy.milk", "The user is allergic to milk", True),),
                  infer=(InferHint("user.diet", "The user avoids dairy", 0.4, 86400.0),))
    item = Item("A glass of milk is on the table.", "perceive", "s0", "en", hints)
    before = llm.meter.calls
    score = llm.rate_attention(item, [Association("The user is allergic to milk", 8.0, 0.5)])
    assert 0.0 <= score <= 10.0, "rate_attention must answer within 0..10"
    summary = llm.summarize([item])
    assert isinstance(summary, Summary) and all(isinstance(f, Fact) for f in summary.facts)
    assert isinstance(llm.merge_event("A trip to Paris.", "The user is back from Paris."), str)
    fact = Fact("user.allergy.milk", True, "The user is allergic to milk", 0.7)
    rel = llm.judge_relation(fact, fact)
    assert isinstance(rel, Relation) and 0.0 <= rel.strength <= 1.0, "judge_relation gives a Relation"
    assert 0.0 <= llm.reassess_belief(fact, [fact]) <= 1.0, "belief lies in 0..1"
    impressions = llm.infer(item, ["The user is allergic to milk"])
    assert all(isinstance(i, Impression) and 0 <= i.belief <= 1 and i.ttl > 0 for i in impressions)
    assert llm.meter.calls == before + 6 and llm.meter.tokens > 0, "every call must be metered"


def _tiny_agent(labeller=None, retriever=None, **parts):
    from .agent import MemoryAgent
    from .embed.hashing import Hashing
    from .llm.mock import MockLLM
    from .mechanisms.arousal import NoArousal
    from .mechanisms.decay import Exponential, PowerLaw
    from .mechanisms.depth import Full
    from .mechanisms.tiers import Flat
    from .memory.retrieval import TieredSearch
    from .processes.labelling import CommonSense

    kw = dict(tiers=Flat(), depth=Full(), arousal=NoArousal()) | parts
    return MemoryAgent(Hashing(dim=64), MockLLM(), DualAttention(PowerLaw(), Exponential()),
                       labeller or CommonSense(), retriever or TieredSearch(), **kw)


def _run_tiny(agent) -> None:
    texts = ["I love cooking risotto", "The train was late", "Cooking pasta tonight", "risotto cooking tips"]
    for i, t in enumerate(texts):
        agent.step(Step(i, f"s{i}", 3600.0 * i, "say", t, hints=Hints(salience=2.0 + 2 * i)))
    agent.step(Step(4, "s4", 4 * 3600.0, "probe", "cooking risotto", motivation=1.0, expect=Expect(k=2)))
    agent.rebalance()


def check_labeller(labeller) -> None:
    agent = _tiny_agent()
    vec = agent.embedder.embed(["milk"])[0]
    agent.step(Step(0, "s0", 0.0, "say", "The user is allergic to milk"))
    out = labeller.label(agent, Item("milk", "perceive", "s1"), vec, 60.0)
    assert 0.0 <= out.score <= 10.0, "a labelled score must lie in 0..10"
    assert all(0 <= i < agent.store.size for i in out.associated), "associations must be stored memories"
    assert out.cost.scored >= 0


def check_tiers(policy) -> None:
    n = policy.n_tiers
    att = np.array([9.0, 5.0, 2.0, 0.1, 0.0])
    for full in (True, False):
        t = policy.assign(att, np.full(5, n - 1), np.array([5, 2, 1, 0, 0]), np.ones(5, int),
                          np.array([0.0, 1.0, 10.0, 100.0, 1000.0]), full=full)
        assert t.shape == (5,) and np.all((t >= 0) & (t < n)), "tiers must lie in 0..n_tiers-1"
    agent = _tiny_agent(tiers=policy)
    _run_tiny(agent)
    ids = agent.store.live_ids()
    assert sorted(np.concatenate([agent.index.tiers[k].members() for k in range(n)]).tolist()) == ids.tolist(), \
        "every live memory must sit in exactly one tier index"
    for k in range(n):
        assert np.all(agent.store.tier[agent.index.tiers[k].members()] == k), "index and tier column must agree"
    size = getattr(policy, "fifo", None)
    if size is not None:
        for i in range(size + 2):
            agent.step(Step(5 + i, f"f{i}", agent.now + 60.0, "say", f"note number {i}", hints=Hints(salience=3.0)))
        top = np.sort(agent.index.tiers[0].members())
        assert top.tolist() == list(range(agent.store.size - size, agent.store.size)), \
            "a FIFO top tier must hold exactly its newest memories"


def check_depth(policy) -> None:
    for n in (1, 3, 5):
        limits = [policy.limit(m, n) for m in np.linspace(0, 1, 11)]
        assert all(1 <= d <= n for d in limits), "depth must lie in 1..n_tiers"
        assert limits == sorted(limits), "more motivation must never search fewer tiers"


def check_arousal(arousal) -> None:
    sims = np.array([0.9, 0.6, 0.3, 0.1, -0.2])
    a = np.asarray(arousal.amounts(sims), dtype=float)
    assert a.shape == sims.shape and np.all(a >= 0), "arousal only adds attention"
    assert np.all(np.diff(a) <= 1e-12), "a closer neighbour never gains less"
    agent = _tiny_agent(arousal=arousal)
    _run_tiny(agent)
    assert np.all(agent.attention.total(agent.store, agent.store.live_ids(), agent.now) >= 0)


def check_events(policy) -> None:
    day = 86400.0
    age = np.array([0.0, 1.0, 10.0, 100.0, 1000.0]) * day
    for valid in (np.full(5, np.nan), np.full(5, 30 * day)):
        stale = np.asarray(policy.stale(age, valid))
        assert stale.shape == (5,) and stale.dtype == bool, "stale must return one bool per event"
        assert np.all(np.diff(stale.astype(int)) >= 0), "an older event is never less stale"


def check_belief(rule) -> None:
    b0 = np.array([0.0, 0.3, 0.7, 1.0])
    b, wp, wm = rule.initial(b0)
    assert b.shape == b0.shape and np.all((b >= 0) & (b <= 1)), "initial belief must lie in 0..1"
    previous = None
    for e in (0.0, 0.2, 0.5, 0.8, 1.0):
        nb, nwp, nwm = rule.update(b, wp, wm, np.full(4, e))
        assert np.all((nb >= 0) & (nb <= 1)) and np.all(nwp >= 0) and np.all(nwm >= 0), \
            "beliefs stay in 0..1 and evidence non-negative"
        assert previous is None or np.all(nb >= previous - 1e-12), "a higher estimate never lowers the belief"
        previous = nb
    assert np.array_equal(rule.update(b, wp, wm, np.full(4, 0.6))[0], rule.update(b, wp, wm, np.full(4, 0.6))[0])


def check_accumulate(rule) -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        b, d = rng.random(5), rng.random(5)
        total = rule(b, d)
        assert 0.0 <= total <= 1.0, "accumulated belief must lie in 0..1"
        assert rule(np.append(b, 0.5), np.append(d, 1.0)) >= total - 1e-12, "an impression never lowers belief"
        assert rule(b, np.minimum(d * 1.5, 1.0)) >= total - 1e-12, "fresher impressions never lower belief"
    assert abs(rule(np.zeros(0), np.zeros(0))) <= 1e-12, "no impressions, no belief"


def check_conflict(rule) -> None:
    b_new, b_old = np.array([0.2, 0.5, 0.9]), np.array([0.8, 0.5, 0.1])
    new_loses, keep = rule.resolve(b_new, b_old, np.ones(3))
    assert np.asarray(new_loses).dtype == bool and np.asarray(new_loses).shape == (3,), "one bool per conflict"
    assert np.all((keep >= 0) & (keep <= 1)), "the loser keeps a share 0..1 of its attention"
    assert isinstance(rule.drops_loser, bool)
def check_retrieval(retriever) -> None:
    """A query-time scorer ranks distinct memories best first, at most k, and counts its cost."""
    agent = _tiny_agent(retriever=retriever)
    _run_tiny(agent)
    q = agent.embedder.embed(["cooking risotto"])[0]
    for k in (1, 3, 10):
        found = agent.search(q, k, 1.0, agent.now)
        assert len(found.ids) <= k and len(np.unique(found.ids)) == len(found.ids), "at most k distinct memories"
        assert np.all(np.isfinite(found.scores)) and np.all(np.diff(found.scores) <= 1e-12), "best first, finite"
        assert found.cost.scored >= len(found.ids) and found.cost.tiers_searched >= 1, "the search cost is counted"
    context = getattr(retriever, "context", None)
    assert context is None or context >= 1, "context is a number of memories"


CHECKERS = {
    "long_decay": check_decay, "short_decay": check_decay, "embedder": check_embedder, "llm": check_llm,
    "attention": check_labeller, "tiers": check_tiers, "depth": check_depth, "arousal": check_arousal,
    "events": check_events, "belief": check_belief, "accumulate": check_accumulate, "conflict": check_conflict,
    "retrieval": check_retrieval,   # not a group: the retrieval node of config.yaml and of each preset
}


def check_component(group: str, component) -> None:
    """Run the checker of ``group`` on ``component`` (AssertionError if it breaks the contract)."""
    if group not in CHECKERS:
        raise KeyError(f"no checker for config group '{group}'")
    if group.endswith("decay"):
        assert isinstance(component, Decay), "a decay must implement the Decay protocol"
    CHECKERS[group](component)
