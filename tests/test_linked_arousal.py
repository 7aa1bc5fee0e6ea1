"""index.arousal=links: a memory's neighbours are the memories its labelling associated and
those that associated it (Memory.link), read with no distance computed."""

import numpy as np

from mtsbench.core import costs
from mtsbench.config.composition import compose
from mtsbench.harness.runner import build_system, drive
from mtsbench.scenario.loader import load_scenario

STEPS = """id: links
title: t
language: en
start: 2026-01-05T09:00:00
steps:
  - {id: a, at: d0 09:00, say: "I am allergic to milk."}
  - {id: b, at: d0 09:01, say: "Milk gives me a rash, the allergy again."}
  - {id: c, at: d0 09:02, say: "The train was late."}
  - {id: d, at: d0 09:03, say: "Still allergic to milk, so no latte."}
"""


def memory_after(tmp_path, *overrides):
    path = tmp_path / "links.yaml"
    path.write_text(STEPS, encoding="utf-8")
    scenario = load_scenario(path)
    cfg, _ = compose(["summarize.enabled=false", *overrides])
    system = build_system(cfg, scenario)
    for step in scenario.steps:
        drive(system, step, 0)
    return system.memory_


def test_links_are_the_associations_both_ways_and_arousal_reads_them(tmp_path):
    m = memory_after(tmp_path, "index.arousal=links")
    associated = [e for e in m.trace if e["event"] == "scored"]
    by_id = {e["id"]: e["associated"] for e in associated}
    for i, assoc in by_id.items():
        for j in assoc:     # filed both ways, with the cosine of the two vectors
            assert j in m.links_[i][0].tolist() and i in m.links_[j][0].tolist()
            sim = m.links_[i][1][m.links_[i][0].tolist().index(j)]
            assert abs(sim - float(m.store.vectors[i] @ m.store.vectors[j])) < 1e-5
    linked = [i for i in m.links_ if len(m.links_[i][0])]
    assert linked, "the milk turns associate each other"
    with costs.scope() as spent:
        m.arouse(np.array(linked[:1]))
    assert spent["arousal_scored"] == len(m.links_[linked[0]][0])     # entries read, no scan
    assert all(len(ids) <= m.arousal.neighbors for ids, _ in m.links_.values())


def test_scan_keeps_no_links_and_costs_a_scan(tmp_path):
    m = memory_after(tmp_path)
    assert m.links_ == {} and not m.linked
    with costs.scope() as spent:
        m.arouse(np.array([0]))
    assert spent["arousal_scored"] == len(m.store.live_ids())       # every memory, every tier
