"""The contract every registered component must honour (the Gymnasium checker pattern).

``check_component(group, component)`` runs every check below on a component, prints one verdict
per check and raises AssertionError naming each that broke (``contract`` alone: the group's
checker, what the generic checks call). A checker is
declared where it is defined, with ``@checker(GROUP, ...)``, into the registry ``CHECKERS``;
a checker returns a fingerprint of what it saw the component do (or None), so that the
generic checks can compare two runs.

Besides its group's own checker, every component is held to the generic checks of
``CHECKS`` (``run_check(name, group, make)``, ``make`` building a fresh component from its
config each call):

- ``contract``: the group's checker passes;
- ``constructor``: the constructor only stores its parameters (the scikit-learn rule):
  each ``__init__`` parameter is an attribute of the same name holding the given value,
  and two instances from the same config have equal ``vars()`` (values that cannot be
  compared are skipped);
- ``deterministic``: two fresh instances from the same config and seed give the same
  fingerprint under the checker;
- ``deepcopy``: a ``copy.deepcopy`` of a fresh instance passes the checker with the same
  fingerprint.

The test suite runs every check on every option of every config group, so a new option is
checked the moment its YAML exists.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
from typing import Callable

import numpy as np

from ..embed import Embedder
from ..llm.base import Item
from ..mechanisms.decay import Decay, check_decay
from ..memory.attention import DualAttention
from ..scenario.model import (ArousalCheck, BeliefCheck, ConjectureCheck, EventCountCheck, Hints, StepAttentionCheck,
                              TierCheck)
from ..systems.base import NO_LLM, UNSUPPORTED, Context, EventOf, Observation, Query

CHECKERS: dict[str, Callable] = {}


def checker(*groups: str):
    """Register the decorated function as the checker of each of ``groups``."""
    def register(fn):
        for g in groups:
            if g in CHECKERS:
                raise ValueError(f"config group '{g}' already has a checker ({CHECKERS[g].__name__})")
            CHECKERS[g] = fn
        return fn
    return register


@checker("long_decay", "short_decay")
def check_decays(decay) -> np.ndarray:
    assert isinstance(decay, Decay), "a decay must implement the Decay protocol"
    check_decay(decay)
    dt = np.array([0.0, 1.0, 10.0, 1e3])
    s = np.full(dt.shape, decay.initial_strength, dtype=float)
    return np.concatenate([np.asarray(decay.retention(dt, s), dtype=float),
                           np.asarray(decay.strengthen(s), dtype=float)])


@checker("embedder")
def check_embedder(e: Embedder) -> np.ndarray:
    texts = ["The user is allergic to milk", "用户对牛奶过敏", ""]
    v = e.embed(texts)
    assert v.shape == (3, e.dim) and v.dtype == np.float32, "embed must return (n, dim) float32"
    assert np.allclose(np.linalg.norm(v[:2], axis=1), 1.0, atol=1e-5), "rows must be unit norm"
    assert np.array_equal(v, e.embed(texts)), "must be deterministic"
    return v


@checker("llm")
def check_llm(llm) -> list:
    """Every memory task with an example (``Task.example``) answers with its typed result, in
    range (``Task.check``), through the backend's method of its name; every call is metered."""
    from ..llm.tasks import TASKS

    before = llm.meter.calls
    out = []
    for task in (t for t in TASKS.values() if t.example is not None):
        result = getattr(llm, task.name)(*task.example())
        task.check(result)
        out.append(result)
    assert llm.meter.calls == before + len(out) and llm.meter.tokens > 0, "every call must be metered"
    return out


# -- a tiny seed-design memory, for the checkers of memory's parts ---------------------------
def tiny_agent(labeller=None, retriever=None, **parts):
    """A ``MemoryAgent`` over a small ``Memory`` (flat tiers, full depth, no arousal by default);
    ``parts``: ``Memory``'s by parameter name (``tiers=``, ``arousal=``, ...). A part this does
    not choose small and its consumer requires (a new group's) is built from the group's
    default option in the packaged configs."""
    from ..systems.mts.agent import MemoryAgent
    from ..systems.mts.system import PARTS, by_consumer, required
    from ..embed.hashing import Hashing
    from ..llm.mock import MockLLM
    from ..mechanisms.accumulate import NoisyOr
    from ..mechanisms.arousal import NoArousal
    from ..mechanisms.belief import Ema
    from ..mechanisms.conflict import WeakerLoses
    from ..mechanisms.decay import Exponential, PowerLaw
    from ..mechanisms.depth import Full
    from ..mechanisms.events import PerCategory
    from ..mechanisms.tiers import Flat
    from ..memory.memory import Memory
    from ..memory.retrieval import TieredSearch
    from ..processes.consolidation import Consolidator
    from ..processes.inference import Inferrer
    from ..processes.labelling import CommonSense
    from ..processes.summarize import Summarizer

    small = dict(embedder=Hashing(dim=64), dual=DualAttention(PowerLaw(), Exponential()),
                 retrieval=retriever or TieredSearch(), tiers=Flat(), depth=Full(), arousal=NoArousal(),
                 llm=MockLLM(), attention=labeller or CommonSense(), summarize=Summarizer(),
                 consolidation=Consolidator(), inference=Inferrer(), events=PerCategory(), belief=Ema(),
                 accumulate=NoisyOr(), conflict=WeakerLoses())
    group = {name: g for g, (consumer, name) in PARTS.items() if consumer == "memory"}
    small |= {group[name]: part for name, part in parts.items()}
    missing = [g for g in required() if g not in small]
    if missing:
        from ..config.composition import compose
        from ..core.params import build

        cfg = compose([])[0]
        small |= {g: build(cfg[g], g) for g in missing}
    given = by_consumer(small)
    return MemoryAgent(Memory(**given["memory"]), **given["agent"])


def run_tiny(agent) -> None:
    """Four observations an hour apart, a retrieval, then a rebalance of the tiers: the steps
    every checker of memory's parts runs its part through."""
    texts = ["I love cooking risotto", "The train was late", "Cooking pasta tonight", "risotto cooking tips"]
    for i, t in enumerate(texts):
        agent.observe(Observation(f"s{i}", 3600.0 * i, "say", t, Hints(salience=2.0 + 2 * i)))
    agent.retrieve(Query("s4", 4 * 3600.0, "cooking risotto", k=2, motivation=1.0, depth=2))
    agent.memory.rebalance()


def _state(memory) -> dict:
    """What a checker's fingerprint keeps of a memory: tiers, attention, text, live ids."""
    ids = memory.store.live_ids()
    return {"ids": ids, "tier": memory.store.tier[ids].copy(), "attention": memory.attention_of(ids),
            "text": [memory.text(i) for i in ids]}


@checker("attention")
def check_labeller(labeller) -> list:
    agent = tiny_agent()
    m = agent.memory
    vec = m.embed("milk")
    agent.observe(Observation("s0", 0.0, "say", "The user is allergic to milk"))
    m.now = 60.0
    out = labeller.label(m, agent.llm, Item("milk", "perceive", "s1"), vec)
    assert out.score is not None and 0.0 <= out.score <= 10.0, "a labelled score must lie in 0..10"
    assert all(0 <= i < m.store.size for i in out.associated), "associations must be stored memories"
    assert out.cost.scored >= 0
    assert isinstance(labeller.boost, bool), "a labeller declares whether it boosts its associations"
    return [out.score, np.asarray(out.associated), dataclasses.asdict(out.cost)]


@checker("tiers")
def check_tiers(policy) -> list:
    n = policy.n_tiers
    att = np.array([9.0, 5.0, 2.0, 0.1, 0.0])
    assigned = []
    for full in (True, False):
        t = policy.assign(att, np.full(5, n - 1), np.array([5, 2, 1, 0, 0]), np.ones(5, int),
                          np.array([0.0, 1.0, 10.0, 100.0, 1000.0]), full=full)
        t = np.asarray(t)
        assert t.shape == (5,) and np.all((t >= 0) & (t < n)), "tiers must lie in 0..n_tiers-1"
        assigned.append(t)
    size = policy.fifo
    assert size is None or (isinstance(size, int) and size >= 1), "fifo is None or a top-tier size >= 1"
    agent = tiny_agent(tiers=policy)
    m = agent.memory
    run_tiny(agent)
    ids = m.store.live_ids()
    assert sorted(np.concatenate([m.index.tiers[k].members() for k in range(n)]).tolist()) == ids.tolist(), \
        "every live memory must sit in exactly one tier index"
    for k in range(n):
        assert np.all(m.store.tier[m.index.tiers[k].members()] == k), "index and tier column must agree"
    if size is not None:
        for i in range(size + 2):
            agent.observe(Observation(f"f{i}", m.now + 60.0, "say", f"note number {i}", Hints(salience=3.0)))
        top = np.sort(m.index.tiers[0].members())
        assert top.tolist() == list(range(m.store.size - size, m.store.size)), \
            "a FIFO top tier must hold exactly its newest memories"
    return [assigned, _state(m)]


@checker("depth")
def check_depth(policy) -> list:
    out = []
    for n in (1, 3, 5):
        limits = [policy.limit(m, n) for m in np.linspace(0, 1, 11)]
        assert all(1 <= d <= n for d in limits), "depth must lie in 1..n_tiers"
        assert limits == sorted(limits), "more motivation must never search fewer tiers"
        out.append(limits)
    return out


@checker("motivation")
def check_motivation(policy) -> list:
    """A motivation lies in 0..1, never falls as the labelled score or the repeats rise, and a
    policy that does not label ignores the score; the repeat window is a positive duration."""
    out = []
    assert policy.window() > 0, "repeat_window must be a positive duration"
    for given in (0.0, 0.3, 1.0):
        for repeats in (0, 1, 3):
            row = [policy.solve(given, score, repeats) for score in (None, 0.0, 2.0, 5.0, 8.0, 10.0)]
            assert all(0.0 <= m <= 1.0 for m in row), "motivation must lie in 0..1"
            assert row[1:] == sorted(row[1:]), "more attention must never lower the motivation"
            if not policy.labels:
                assert len(set(row)) == 1, "a policy that labels nothing must ignore the score"
            assert policy.solve(given, 5.0, repeats + 1) >= row[3], "asking again must never lower it"
            out.append(row)
    return out


@checker("workload")
def check_workload(workload) -> list:
    """A workload asks for at most one reply retrieval per observed step, of k >= 1 memories,
    at a motivation in 0..1 that never falls as the turn's attention rises; never on a probe."""
    from ..scenario.model import Step
    from ..systems.base import Outcome, Query

    out = []
    for kind in ("say", "reply", "perceive", "probe"):
        step = Step(0, "s0", 60.0, kind, "I am allergic to milk")
        motivations = []
        for score in (None, 0.0, 2.0, 5.0, 8.0, 10.0):
            q = workload.reply(step, Outcome(score=score))
            assert q is None or isinstance(q, Query), "reply gives a Query or None"
            if q is None:
                continue
            assert kind != "probe", "a probe is the scenario's own retrieval: no reply for it"
            assert q.k >= 1 and q.depth >= q.k and q.purpose == "reply" and q.text == step.text, \
                "a reply retrieves k >= 1 memories for the turn's own text"
            assert 0.0 <= q.motivation <= 1.0, "motivation lies in 0..1"
            if score is not None:
                motivations.append(q.motivation)
        assert motivations == sorted(motivations), "more attention never lowers a reply's motivation"
        out.append(motivations)
    return out


@checker("arousal")
def check_arousal(arousal) -> list:
    sims = np.array([0.9, 0.6, 0.3, 0.1, -0.2])
    a = np.asarray(arousal.amounts(sims), dtype=float)
    assert a.shape == sims.shape and np.all(a >= 0), "arousal only adds attention"
    assert np.all(np.diff(a) <= 1e-12), "a closer neighbour never gains less"
    assert isinstance(arousal.neighbors, int) and arousal.neighbors >= 0, "neighbors is a count"
    agent = tiny_agent(arousal=arousal)
    run_tiny(agent)
    m = agent.memory
    total = m.attention_of(m.store.live_ids())
    assert np.all(np.isfinite(total)) and np.all(total >= 0), "attention stays finite and non-negative"
    return [a, _state(m)]


@checker("events")
def check_events(policy) -> list:
    day = 86400.0
    age = np.array([0.0, 1.0, 10.0, 100.0, 1000.0]) * day
    out = []
    for valid in (np.full(5, np.nan), np.full(5, 30 * day)):
        stale = np.asarray(policy.stale(age, valid))
        assert stale.shape == (5,) and stale.dtype == bool, "stale must return one bool per event"
        assert np.all(np.diff(stale.astype(int)) >= 0), "an older event is never less stale"
        out.append(stale)
    return out


@checker("belief")
def check_belief(rule) -> list:
    b0 = np.array([0.0, 0.3, 0.7, 1.0])
    b, wp, wm = rule.initial(b0)
    assert b.shape == b0.shape and np.all((b >= 0) & (b <= 1)), "initial belief must lie in 0..1"
    out, previous = [b, wp, wm], None
    for e in (0.0, 0.2, 0.5, 0.8, 1.0):
        nb, nwp, nwm = rule.update(b, wp, wm, np.full(4, e))
        assert np.all((nb >= 0) & (nb <= 1)) and np.all(nwp >= 0) and np.all(nwm >= 0), \
            "beliefs stay in 0..1 and evidence non-negative"
        assert previous is None or np.all(nb >= previous - 1e-12), "a higher estimate never lowers the belief"
        previous = nb
        out.append(nb)
    assert np.array_equal(rule.update(b, wp, wm, np.full(4, 0.6))[0], rule.update(b, wp, wm, np.full(4, 0.6))[0])
    return out


@checker("accumulate")
def check_accumulate(rule) -> list:
    rng = np.random.default_rng(0)
    out = []
    for _ in range(20):
        b, d = rng.random(5), rng.random(5)
        total = rule(b, d)
        assert 0.0 <= total <= 1.0, "accumulated belief must lie in 0..1"
        assert rule(np.append(b, 0.5), np.append(d, 1.0)) >= total - 1e-12, "an impression never lowers belief"
        assert rule(b, np.minimum(d * 1.5, 1.0)) >= total - 1e-12, "fresher impressions never lower belief"
        out.append(float(total))
    assert abs(rule(np.zeros(0), np.zeros(0))) <= 1e-12, "no impressions, no belief"
    return out


@checker("conflict")
def check_conflict(rule) -> list:
    b_new, b_old = np.array([0.2, 0.5, 0.9]), np.array([0.8, 0.5, 0.1])
    new_loses, keep = rule.resolve(b_new, b_old, np.ones(3))
    assert np.asarray(new_loses).dtype == bool and np.asarray(new_loses).shape == (3,), "one bool per conflict"
    assert np.all((keep >= 0) & (keep <= 1)), "the loser keeps a share 0..1 of its attention"
    assert isinstance(rule.drops_loser, bool)
    return [np.asarray(new_loses), np.asarray(keep), rule.drops_loser]


@checker("retrieval")   # the group (dense, bm25, hybrid), and the retrieval node of each preset
def check_retrieval(retriever) -> list:
    """A query-time scorer ranks distinct memories best first, at most k, and counts its cost."""
    agent = tiny_agent(retriever=retriever)
    run_tiny(agent)
    m = agent.memory
    q = m.embed("cooking risotto")
    out = []
    for k in (1, 3, 10):
        for text in (None, "cooking risotto"):      # by vector only (a process), and with the query's text
            found = m.search(q, k, 1.0, text=text)
            assert len(found.ids) <= k and len(np.unique(found.ids)) == len(found.ids), "at most k distinct memories"
            assert np.all(np.isfinite(found.scores)) and np.all(np.diff(found.scores) <= 1e-12), "best first, finite"
            assert found.cost.scored >= len(found.ids) and found.cost.tiers_searched >= 1, "the search cost is counted"
            out.append([found.ids, found.scores])
    context = retriever.context
    assert context is None or (isinstance(context, int) and context >= 1), "context is a number of memories"
    return out


LLM_KEYS = tuple(NO_LLM)
SYSTEM_TEXTS = ("I love cooking risotto", "The train was late today", "Cooking pasta tonight",
                "My sister visits in May", "risotto cooking tips please")


@checker("system")
def check_system(system) -> list:
    """A memory system started on a small scenario: rankings are distinct, best first, at most
    ``depth`` deep and costed; ``read`` answers every check or UNSUPPORTED; totals are complete."""
    system.start(Context("check", "en", texts=SYSTEM_TEXTS + ("cooking risotto",)))
    out = []
    for i, text in enumerate(SYSTEM_TEXTS):
        o = system.observe(Observation(f"s{i}", 600.0 * i, "perceive" if i == 3 else "say", text,
                                       Hints(salience=2.0 + i)))
        assert o.score is None or 0.0 <= o.score <= 10.0, "an observation's score lies in 0..10"
        out.append((o.memory, o.score))
    for n, (k, depth) in enumerate(((1, 1), (2, 4), (3, 10))):
        o = system.retrieve(Query(f"q{n}", 3600.0 + n, "cooking risotto", k=k, motivation=1.0, depth=depth))
        r = o.ranking
        assert r is not None, "a retrieval returns a ranking"
        assert len(set(r.ids)) == len(r.ids), "a ranking names distinct memories"
        assert len(r.ids) <= depth, "a ranking is at most depth deep"
        assert len(r.scores) == len(r.ids) and np.all(np.diff(np.asarray(r.scores, dtype=float)) <= 1e-9), \
            "one score per memory, best first"
        assert len(r.provenance) == len(r.tokens) == len(r.ids), "provenance and tokens: one per memory"
        assert r.used is None or 0 <= r.used <= len(r.ids), "a ranking uses at most what it holds"
        assert o.cost.scored >= len(r.ids), "every ranked memory was scored"
        out.append((list(r.ids), list(r.scores), list(r.provenance), list(r.tokens), r.used))
    queries = (BeliefCheck("user.drink"), ConjectureCheck("user.cold"), StepAttentionCheck("s0"), TierCheck("s0", 0),
               EventCountCheck("trip", 0), ArousalCheck("s0"), EventOf("s0"))
    for query in queries:
        try:
            value = system.read(query)
        except Exception as e:
            raise AssertionError(f"read({query!r}) must answer a value or UNSUPPORTED, not raise: {e!r}") from e
        out.append(value if value is UNSUPPORTED else repr(value))
    out.append(system.finish().summarized)
    totals = system.totals()
    missing = [k for k in LLM_KEYS if k not in totals.llm]
    assert not missing, f"totals().llm lacks {', '.join(missing)}"
    out.append({k: totals.llm[k] for k in LLM_KEYS})
    return out


# -- the generic checks ------------------------------------------------------------------------
def contract(group: str, component):
    """Run the checker of ``group`` on ``component`` alone (AssertionError if it breaks the
    group's contract); returns the checker's fingerprint."""
    if group not in CHECKERS:
        raise KeyError(f"no checker for config group '{group}'")
    return CHECKERS[group](component)


VALUES_UNKNOWN = object()    # ``given`` of the constructor check when the component came built: no values to compare


def check_component(group: str, component, generic: bool = True, quiet: bool = False):
    """Hold ``component`` to the contract of config group ``group`` and, with ``generic``, to the
    generic checks (``constructor``, ``deterministic``, ``deepcopy``: the module docstring), run
    on deep copies taken before anything ran; print one verdict line per check (``ok`` or
    ``FAILED`` and why) unless ``quiet``. Every check runs; then AssertionError naming each one
    that failed. Returns the contract's fingerprint. The constructor check, given a built
    component, checks that each parameter is stored and two copies agree, not the values."""
    if group not in CHECKERS:
        raise KeyError(f"no checker for config group '{group}'")
    try:
        pristine = copy.deepcopy(component)
        make = lambda: copy.deepcopy(pristine)       # noqa: E731 - a fresh copy per call, as a config would build
    except Exception as e:  # noqa: BLE001 - reported as the deepcopy check's failure
        pristine, make = e, None
    verdicts, fingerprint = [], None
    try:
        fingerprint = contract(group, component)
        verdicts.append(("contract", None))
    except Exception as e:  # noqa: BLE001 - an assertion or a crash: the check's verdict either way
        verdicts.append(("contract", _why(e)))
    for name in [n for n in CHECKS if n != "contract"] if generic else []:
        if make is None:
            verdicts.append((name, f"not run: {type(component).__name__} cannot be deep-copied ({pristine})"))
            continue
        try:
            CHECKS[name](group, make, VALUES_UNKNOWN)
            verdicts.append((name, None))
        except Exception as e:  # noqa: BLE001
            verdicts.append((name, _why(e)))
    failed = [(n, why) for n, why in verdicts if why is not None]
    if not quiet:
        print(f"check_component({group!r}, {type(component).__name__}): {len(verdicts) - len(failed)} of "
              f"{len(verdicts)} checks passed")
        for name, why in verdicts:
            print(f"  {name:<14} {'ok' if why is None else 'FAILED: ' + why}")
    if failed:
        raise AssertionError("; ".join(f"{n}: {why}" for n, why in failed))
    return fingerprint


def same(a, b) -> bool:
    """Deep equality of fingerprints (arrays, containers, dataclasses; NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and (np.array_equal(a, b, equal_nan=a.dtype.kind == "f" and b.dtype.kind == "f")
                                       if a.dtype.kind in "fc" else np.array_equal(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and same(dataclasses.asdict(a), dataclasses.asdict(b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a).__eq__ is object.__eq__ and hasattr(a, "__dict__"):    # a plain object: by type and state
        return type(a) is type(b) and same(vars(a), vars(b))
    return bool(a == b)


def _comparable(a, b) -> bool | None:
    """a == b as a bool, or None when the values cannot be compared that way."""
    try:
        return same(a, b)
    except Exception:
        return None


def _why(e: Exception) -> str:
    """A failed check's reason: an assertion's message, or what a crash raised.

    >>> _why(AssertionError("x must be y")), _why(ValueError("bad"))
    ('x must be y', 'raised ValueError: bad')
    """
    return (str(e) or "failed") if isinstance(e, AssertionError) else f"raised {type(e).__name__}: {e}"


def _contract(group: str, make: Callable, given: dict | None = None) -> None:
    contract(group, make())


def _plain(value) -> bool:
    """A value a constructor is given as is: a scalar, or a list of scalars."""
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def _constructor(group: str, make: Callable, given: dict | None = None) -> None:
    a, b = make(), make()
    unknown = given is VALUES_UNKNOWN
    given = {} if unknown else given or {}
    name = type(a).__name__
    state = vars(a)
    for p in inspect.signature(type(a).__init__).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        assert p.name in state, f"{name}.__init__ must store its parameter '{p.name}' as an attribute"
        value = given.get(p.name, p.default)
        if unknown or value is inspect.Parameter.empty or not _plain(value):
            continue              # a node instantiated into an object, or no value known: not comparable
        held = state[p.name]
        held = list(held) if isinstance(held, tuple) and isinstance(value, list) else held
        assert _comparable(held, value) is not False, \
            f"{name}.__init__ must store '{p.name}' as given ({value!r}), not {state[p.name]!r}"
    ka, kb = vars(a), vars(b)
    assert ka.keys() == kb.keys(), "two instances from one config must have the same attributes"
    for k in ka:
        assert _comparable(ka[k], kb[k]) is not False, f"two instances from one config differ in '{k}'"


def _deterministic(group: str, make: Callable, given: dict | None = None) -> None:
    first, second = contract(group, make()), contract(group, make())
    assert same(first, second), "the same config and seed must give the same result"


def _deepcopy(group: str, make: Callable, given: dict | None = None) -> None:
    original = make()
    try:
        twin = copy.deepcopy(original)
    except Exception as e:
        raise AssertionError(f"{type(original).__name__} cannot be deep-copied: {e}") from e
    assert same(contract(group, twin), contract(group, original)), \
        "a deep copy must behave as the original"


CHECKS: dict[str, Callable[..., None]] = {
    "contract": _contract, "constructor": _constructor, "deterministic": _deterministic, "deepcopy": _deepcopy,
}


def run_check(name: str, group: str, make: Callable, given: dict | None = None) -> None:
    """Run the generic check ``name`` on the components ``make()`` builds (see the module
    docstring); ``given``: the keyword arguments ``make`` passes (its config node, plain)."""
    CHECKS[name](group, make, given)
