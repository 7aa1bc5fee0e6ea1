"""Every checker can fail: a deliberately broken component of each group, and of each generic
check, and the assertion that its checker rejects it (AssertionError)."""

from dataclasses import replace

import numpy as np
import pytest

from mtsbench.evaluation.checks import CHECKERS, CHECKS, check_component, run_check
from mtsbench.embed.hashing import Hashing
from mtsbench.llm.mock import MockLLM
from mtsbench.mechanisms.accumulate import NoisyOr
from mtsbench.mechanisms.arousal import Knn
from mtsbench.mechanisms.belief import Ema
from mtsbench.mechanisms.conflict import WeakerLoses
from mtsbench.mechanisms.decay import Exponential
from mtsbench.mechanisms.depth import Linear
from mtsbench.mechanisms.events import PerCategory
from mtsbench.mechanisms.tiers import Thresholds
from mtsbench.memory.retrieval import TieredSearch
from mtsbench.processes.labelling import CommonSense, Labelled
from mtsbench.systems.base import Ranking, UNSUPPORTED
from mtsbench.systems.bm25 import Bm25System
from mtsbench.mechanisms.motivation import FromAttention
from mtsbench.harness.workload import Reply


# -- one broken component per group --------------------------------------------------------

class RisingDecay(Exponential):
    """Retention rises with time after the start."""

    def retention(self, dt, strength):
        dt = np.asarray(dt, dtype=float)
        return np.where(dt == 0, 1.0, np.minimum(1.0, 0.5 + 0.01 * dt))


class UnnormalisedEmbedder(Hashing):
    def embed(self, texts):
        return 2.0 * super().embed(texts)


class OutOfRangeLLM(MockLLM):
    def rate_attention(self, item, associated):
        super().rate_attention(item, associated)
        return 11.0


class ElevenLabeller(CommonSense):
    def label(self, memory, llm, item, vector):
        return Labelled(11.0)


class TierTooDeep(Thresholds):
    def assign(self, *args, **kw):
        return np.full(len(args[0]), self.n_tiers)


class ShallowerWhenMotivated(Linear):
    def limit(self, motivation, n_tiers):
        return max(1, n_tiers - int(motivation * (n_tiers - 1)))


class SubtractingArousal(Knn):
    def amounts(self, sims):
        return -np.asarray(super().amounts(sims))


class YoungerIsStale(PerCategory):
    def stale(self, age, valid):
        return ~np.asarray(super().stale(age, valid))


class BeliefOverOne(Ema):
    def update(self, b, w_plus, w_minus, estimate):
        nb, wp, wm = super().update(b, w_plus, w_minus, estimate)
        return nb + 0.5, wp, wm


class MoreImpressionsLess(NoisyOr):
    def __call__(self, b, d):
        return float(np.prod(np.asarray(b) * np.asarray(d)))


class FloatConflict(WeakerLoses):
    def resolve(self, b_new, b_old, strength):
        new_loses, keep = super().resolve(b_new, b_old, strength)
        return np.asarray(new_loses, dtype=float), keep


class DuplicateSearch(TieredSearch):
    def search(self, *args, **kw):
        found = super().search(*args, **kw)
        return replace(found, ids=np.concatenate([found.ids, found.ids]),
                       scores=np.concatenate([found.scores, found.scores]), ranked=None, ranked_scores=None)


class UnsortedBm25(Bm25System):
    def retrieve(self, query):
        out = super().retrieve(query)
        r = out.ranking
        out.ranking = Ranking(r.ids[::-1], r.scores[::-1], r.provenance[::-1], r.tokens[::-1], r.used)
        return out


class CalmerWhenAttended(Reply):
    def motivation(self, score):
        return 1.0 - super().motivation(score)


class CalmerWhenAttentive(FromAttention):
    def solve(self, given, score, repeats):
        return 1.0 - super().solve(given, score, repeats)


class RaisingRead(Bm25System):
    def read(self, query):
        raise KeyError("no such state")


BROKEN = {
    "long_decay": RisingDecay(), "short_decay": RisingDecay(), "embedder": UnnormalisedEmbedder(dim=16),
    "llm": OutOfRangeLLM(), "attention": ElevenLabeller(), "tiers": TierTooDeep(), "depth": ShallowerWhenMotivated(),
    "arousal": SubtractingArousal(), "events": YoungerIsStale(), "belief": BeliefOverOne(),
    "accumulate": MoreImpressionsLess(), "conflict": FloatConflict(), "retrieval": DuplicateSearch(),
    "system": UnsortedBm25(), "workload": CalmerWhenAttended(), "motivation": CalmerWhenAttentive(),
}
# what each checker must say about its broken component (the intended breach, not another)
REASON = {
    "long_decay": "must not increase with dt", "short_decay": "must not increase with dt",
    "embedder": "unit norm", "llm": "within 0..10", "attention": "score must lie in 0..10",
    "tiers": "0..n_tiers-1", "depth": "never search fewer tiers", "arousal": "only adds attention",
    "events": "never less stale", "belief": "stay in 0..1", "accumulate": "an impression never lowers belief",
    "conflict": "one bool per conflict", "retrieval": "distinct", "system": "best first",
    "workload": "never lowers", "motivation": "never lower the motivation",
}
GOOD = {
    "long_decay": Exponential(), "short_decay": Exponential(), "embedder": Hashing(dim=16), "llm": MockLLM(),
    "attention": CommonSense(), "tiers": Thresholds(), "depth": Linear(), "arousal": Knn(),
    "events": PerCategory(), "belief": Ema(), "accumulate": NoisyOr(), "conflict": WeakerLoses(),
    "retrieval": TieredSearch(), "system": Bm25System(), "workload": Reply(), "motivation": FromAttention(),
}


def test_every_checker_has_a_broken_component():
    assert set(BROKEN) == set(CHECKERS) == set(GOOD) == set(REASON)


@pytest.mark.parametrize("group", sorted(BROKEN))
def test_the_checker_rejects_a_broken_component(group):
    check_component(group, GOOD[group])           # the sound parent passes ...
    with pytest.raises(AssertionError, match=REASON[group]):
        check_component(group, BROKEN[group])     # ... the broken child does not


def test_a_system_whose_read_raises_fails_its_check():
    with pytest.raises(AssertionError, match="must answer a value or UNSUPPORTED"):
        check_component("system", RaisingRead())
    assert Bm25System().read(None) is UNSUPPORTED


def test_a_fifo_capability_must_be_a_size():
    class BadFifo(Thresholds):
        fifo = 0
    with pytest.raises(AssertionError, match="fifo"):
        check_component("tiers", BadFifo())


# -- one broken component per generic check --------------------------------------------------
class Doubling(Exponential):
    """Transforms its parameter in the constructor."""

    def __init__(self, half_life: float = 6.0):
        super().__init__(half_life * 2)


class Unstored(Exponential):
    """Takes a parameter it never stores."""

    def __init__(self, half_life: float = 6.0, unused: int = 1):
        super().__init__(half_life)


class Stamped(Exponential):
    """Each instance differs from the last one made from the same config."""

    made = 0

    def __init__(self, half_life: float = 6.0):
        super().__init__(half_life)
        Stamped.made += 1
        self.serial_ = Stamped.made


class Drifting(Exponential):
    """Each instance decays a little faster than the one before: same config, another result."""

    made = 0

    def retention(self, dt, strength):
        return super().retention(dt, strength) ** (1 + self.serial_ * 0.01)

    def __init__(self, half_life: float = 6.0):
        super().__init__(half_life)
        Drifting.made += 1
        self.serial_ = Drifting.made

    def __eq__(self, other):           # compares equal, so only the result betrays it
        return isinstance(other, Drifting)


class CopiesBadly(Exponential):
    """A deep copy that forgets its half-life."""

    def __deepcopy__(self, memo):
        return Exponential(half_life=1.0)


class Uncopyable(Exponential):
    def __deepcopy__(self, memo):
        raise TypeError("cannot pickle '_thread.RLock' object")


@pytest.mark.parametrize("check,make,given", [
    ("constructor", lambda: Doubling(half_life=6.0), {"half_life": 6.0}),
    ("constructor", lambda: Unstored(half_life=6.0), {"half_life": 6.0}),
    ("constructor", lambda: Stamped(half_life=6.0), {"half_life": 6.0}),
    ("deterministic", lambda: Drifting(half_life=6.0), None),
    ("deepcopy", lambda: CopiesBadly(half_life=6.0), None),
    ("deepcopy", lambda: Uncopyable(half_life=6.0), None),
], ids=["transforms", "unstored", "differs", "drifts", "copies-badly", "uncopyable"])
def test_a_generic_check_rejects_a_broken_component(check, make, given):
    run_check(check, "long_decay", lambda: Exponential(half_life=6.0), {"half_life": 6.0})   # sound: passes
    with pytest.raises(AssertionError):
        run_check(check, "long_decay", make, given)


def test_every_generic_check_has_a_broken_component():
    tested = {"constructor", "deterministic", "deepcopy"}
    assert tested | {"contract"} == set(CHECKS)       # contract: the per-group cases above
