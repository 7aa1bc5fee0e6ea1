"""Issue 36: the seed design reads every similarity relative to the embedder's chance level —
the mock's relevance (issue 25), and now regional arousal's reach and amounts, labelling's
association cut and the retrieval score's cosine — so a shifted and stretched cosine scale
changes nothing; and a memory just perceived arouses its field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from omegaconf import open_dict

from mtsbench.config.composition import compose
from mtsbench.embed.chance import measure
from mtsbench.embed.hashing import Hashing
from mtsbench.llm.base import Item
from mtsbench.llm.mock import MockLLM
from mtsbench.mechanisms.arousal import Radius
from mtsbench.mechanisms.decay import Exponential, PowerLaw
from mtsbench.mechanisms.depth import Full
from mtsbench.mechanisms.tiers import Flat
from mtsbench.memory.attention import DualAttention
from mtsbench.memory.memory import Memory
from mtsbench.memory.retrieval import Retrieval, SearchCost, TieredSearch
from mtsbench.processes.labelling import Associative, CommonSense
from mtsbench.processes.perceive import Perception
from mtsbench.harness.runner import build_system, drive
from mtsbench.scenario.loader import load_scenario

REPO = Path(__file__).resolve().parent.parent
GARDEN = REPO / "scenarios" / "behaviour" / "arousal" / "garden_roses.yaml"
PLUGINS = Path(__file__).resolve().parent / "data" / "plugins"
WATCHED = ("scored", "recalled", "aroused", "moved", "retrieval")


def run_garden(monkeypatch, squeezed: bool):
    """The garden scenario on the defaults, hashing or hashing squeezed to 0.4 cos + 0.6: (what
    memory did, the probe's raw relevance, the memory's chance level)."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    scenario = load_scenario(GARDEN)
    cfg, _ = compose([])
    if squeezed:
        with open_dict(cfg):
            cfg.embedder = {"_target_": "squeezed_embedder.Squeezed", "alpha": 0.4}
    system = build_system(cfg, scenario)
    found = [drive(system, step, 0) for step in scenario.steps]
    m = system.memory_
    events = [(e["event"], e.get("ids"), e.get("id"), e.get("score"), e.get("to"), e.get("amounts"))
              for e in m.trace if e["event"] in WATCHED]
    probe = next(o for o, s in zip(found, scenario.steps) if s.kind == "probe")
    return events, probe.ranking.relevance, m.chance()


def test_the_seed_design_does_the_same_on_a_shifted_and_stretched_cosine_scale(monkeypatch):
    """Every label, association, arousal amount, tier move and ranking of the garden scenario is
    the same when every cosine c becomes 0.4 c + 0.6 (unrelated texts near 0.6, as a dense
    model's): what was read against absolute cosines before (arousal's radius 0.15 and gain per
    cosine, the association cut 0.08, the retrieval score's cosine) now reads z = (c - m) / sd."""
    plain, plain_rel, plain_chance = run_garden(monkeypatch, squeezed=False)
    squeezed, squeezed_rel, squeezed_chance = run_garden(monkeypatch, squeezed=True)
    assert [e[0] for e in plain].count("aroused") >= 5
    assert [e[:5] for e in squeezed] == [e[:5] for e in plain]      # the same events, ids, scores and moves
    for (*_, a), (*_, b) in zip(squeezed, plain):                    # arousal amounts up to float32 and rounding
        assert (a is None) == (b is None) and (a is None or a == pytest.approx(b, abs=1e-3))
    assert squeezed_chance[0] == pytest.approx(0.4 * plain_chance[0] + 0.6, abs=1e-5)
    assert squeezed_chance[1] == pytest.approx(0.4 * plain_chance[1], abs=1e-5)
    assert np.allclose(squeezed_rel, 0.4 * np.array(plain_rel) + 0.6, atol=1e-5)     # the cosines did change


def small_memory(perceived: bool) -> Memory:
    return Memory(Hashing(), DualAttention(PowerLaw(), Exponential()), TieredSearch(), Flat(), Full(),
                  Radius(perceived=perceived))


@pytest.mark.parametrize("perceived", [True, False])
def test_a_memory_just_perceived_arouses_its_field(perceived):
    """The roses memory sits alone; a new garden turn is perceived without any association
    (common-sense labelling recalls nothing): with ``perceived`` the new turn's own field — the
    roses — gains short-term attention at once; without it nothing is aroused."""
    m = small_memory(perceived)
    see = Perception(m, CommonSense(), MockLLM())
    roses = see(Item("I pruned the roses in the garden this morning.", "say", "roses"), "turn", ("roses",))
    m.now = 3600.0
    before = m.attention_of(np.array([roses]))[0]
    see(Item("I am planting roses and tomatoes in the garden again.", "say", "back"), "turn", ("back",))
    aroused = [e for e in m.trace if e["event"] == "aroused"]
    after = m.attention_of(np.array([roses]))[0]
    if perceived:
        assert [e["ids"] for e in aroused] == [[roses]] and after > before + 0.5
    else:
        assert aroused == [] and after == pytest.approx(before)


class FixedHits:
    """An ``Associations`` port whose search returns fixed hits and whose chance level is given."""

    def __init__(self, relevance, chance):
        self.rel, self.level = np.asarray(relevance, dtype=float), chance

    def search(self, vector, k, motivation, rank_to=0):
        ids = np.arange(len(self.rel))
        return Retrieval(ids, self.rel, self.rel, np.full(len(ids), 3.0), SearchCost(scored=len(ids)))

    def chance(self):
        return self.level

    def text(self, i):
        return f"memory {i}"

    def provenance(self, i):
        return (f"s{i}",)


def test_an_association_is_a_hit_at_least_min_relevance_sd_above_chance():
    """At chance (0.8, 0.05), cosines 0.86 and 0.95 are 1.2 and 3 sd above it (associations),
    0.84 is 0.8 sd (none): the absolute cut of 0.08 before let all three through."""
    hits = FixedHits([0.95, 0.86, 0.84], (0.8, 0.05))
    labelled = Associative(associations=3, min_relevance=1.0).label(hits, MockLLM(), Item("x", "say", "s9"), None)
    assert labelled.associated.tolist() == [0, 1]
    assert labelled.relevance.tolist() == [0.95, 0.86]


def test_the_retrieval_score_reads_a_cosine_against_the_chance_level():
    """relevance_sd * (c - m) / sd: hashing's own level moves its cosines little (the bundled
    scenarios keep their rankings); e5's 0.79 +- 0.026 is stretched about twofold, so attention
    no longer outweighs every difference of relevance; null keeps the raw cosine."""
    search, hashing = TieredSearch(), measure(Hashing())
    c = np.array([0.1, 0.3, 0.5])
    assert np.allclose(search.scored_cosine(c, hashing), c, atol=0.04)
    assert search.scored_cosine(np.array([0.80, 0.85]), (0.794, 0.026)) == pytest.approx([0.0115, 0.1077], abs=1e-3)
    assert TieredSearch(relevance_sd=None).scored_cosine(c, (0.794, 0.026)) is c



def test_a_summary_does_not_arouse_the_turns_it_is_made_of():
    """A derived item's sources are its content, not its field (labelling does not associate
    them either): perceiving the summary of two garden turns arouses neither of them."""
    m = small_memory(perceived=True)
    see = Perception(m, CommonSense(), MockLLM())
    see(Item("I pruned the roses in the garden this morning.", "say", "roses"), "turn", ("roses",))
    see(Item("I planted tulips in the garden this morning.", "say", "tulips"), "turn", ("tulips",))
    m.trace.clear()
    see(Item("The user pruned the roses and planted tulips in the garden.", "summary", "sum",
             sources=("roses", "tulips")), "summary", ("roses", "tulips"))
    assert [e for e in m.trace if e["event"] == "aroused"] == []
