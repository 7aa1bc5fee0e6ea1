"""The mock's wiring of an error profile (``llm=mock llm.profile=FILE``, ``llm=profiled``):
after the mock answers a call from the hints, ``apply`` turns its answer into the one a model
with the profile's errors would give (the math and the file: ``mtsbench.llm.profile``).

Every call draws from its own generator, seeded with crc32 from (seed, "profile", task, the
call's inputs) and drawn in a fixed order, so the same config and seed give the same answers
whatever the order of calls. The inputs: for ``rate_attention`` and ``infer`` the item alone
(its kind and text), so that two configurations showing the item other memories (an ablation)
draw the same u for it — common random numbers: an ablation's effect is not confounded with a
re-drawn error; for the other tasks their inputs as the mock's noise reads them
(``Task.noise_inputs``), for ``same_event`` both events' categories and texts. Per task:

- ``rate_attention``: the mock's score s falls in a bin of ``attention.bins``; the answer is
  that bin's quantile table of the model's scores at u: with ``attention.draw: random`` a
  uniform draw (the model's spread, the mock's rank lost within a bin), with ``position``
  s's position in its bin (``profile.position``: monotone in s, no spread within a bin), with
  ``mean`` the table's mean (``profile.table_mean``: the model's expected score given the bin,
  no spread at all).
- ``summarize``: each hinted fact is kept with probability ``facts.recall``; a kept fact keeps
  its hinted key with probability ``facts.key_kept``, else takes the key of its own text
  (``profile.text_key``). Each turn then adds Poisson(``facts.extra_per_turn[kind]``) facts of
  its own sentences (the k-th extra states the turn's sentence k mod n; value true; belief a
  draw from ``facts.belief``; key ``text_key("user", sentence)``). Event tags alike:
  ``events.recall``, ``events.category_kept``, ``events.extra_per_turn`` (category
  ``text_key("event", sentence)``, text the sentence, no validity).
- ``infer``: each hinted impression is kept with probability ``impressions.recall`` (its key
  with ``impressions.key_kept``); then Poisson(``impressions.extra_per_call``) impressions of
  the item's own sentences (key ``text_key("impression", sentence)``). Every impression's belief
  is a draw from ``impressions.belief`` and its lifetime from ``impressions.ttl_days`` (log scale).
- ``judge_relation``: the mock's label l is replaced by a draw from ``relation[l]`` (the
  model's labels on pairs the mock labels l); the strength is kept.
- ``same_event``: the mock's answer a is replaced by a yes with probability
  ``events.join.same`` (a yes) or ``events.join.new`` (a no).
- ``reassess_belief``, ``merge_event``: unchanged (not fitted).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.seeding import generator
from . import profile as pm
from .base import EventTag, Fact, Impression, Summary
from .task import days


def _rng(seed: int, task, args: tuple):
    if task.name in ("rate_attention", "infer"):
        inputs = f"{args[0].kind}: {args[0].text}"          # the item alone: common random numbers
    elif task.noise_inputs is not None:
        inputs = task.noise_inputs(*args)
    else:
        inputs = "\n".join(f"{getattr(a, 'category', '')}: {getattr(a, 'text', a)}" for a in args)
    return generator(seed, "profile", task.name, inputs)


def apply(p: pm.Profile, seed: int, task, args: tuple, result: Any, answer: dict) -> tuple[Any, dict]:
    """The profiled (result, answer object) of the mock's ``result`` and ``answer`` to ``task``."""
    fn = _APPLY.get(task.name)
    if fn is None:
        return result, answer
    return fn(p, _rng(seed, task, args), args, result, answer)


def _attention(p, rng, args, score, answer):
    edges = p.get("attention", "bins")
    b = pm.bin_of(edges, score)
    table, u, draw = p.get("attention", "quantiles")[b], float(rng.random()), p.data["attention"].get("draw", "random")
    if draw == "mean":
        s = round(pm.table_mean(table), 3)
    else:
        s = round(pm.quantile_draw(table, pm.position(edges, b, score) if draw == "position" else u), 3)
    return s, {"score": s}


def _summarize(p, rng, args, summary: Summary, answer):
    turns = args[0]
    facts = []
    for f in summary.facts:
        keep, key_kept = rng.random(), rng.random()
        if keep < p.get("facts", "recall"):
            facts.append(f if key_kept < p.get("facts", "key_kept") else replace(f, key=pm.text_key("user", f.text)))
    events = []
    for e in summary.events:
        keep, kept = rng.random(), rng.random()
        if keep < p.get("events", "recall"):
            events.append(e if kept < p.get("events", "category_kept")
                          else replace(e, category=pm.text_key("event", e.text, 2)))
    for n, t in enumerate(turns, 1):
        said = pm.sentences(t.text)
        for k in range(pm.poisson(rng, p.get("facts", "extra_per_turn").get(t.kind, 0.0))):
            s = said[k % len(said)]
            belief = round(pm.quantile_draw(p.get("facts", "belief"), float(rng.random())), 4)
            facts.append(Fact(pm.text_key("user", s), True, s, belief, (n,)))
        for k in range(pm.poisson(rng, p.get("events", "extra_per_turn").get(t.kind, 0.0))):
            s = said[k % len(said)]
            events.append(EventTag(pm.text_key("event", s, 2), s, None, (n,)))
    out = Summary(summary.text, tuple(facts), tuple(events))
    return out, {
        "summary": out.text,
        "facts": [{"key": f.key, "value": f.value, "text": f.text, "belief": f.belief, "turns": list(f.turns)}
                  for f in out.facts],
        "events": [{"category": e.category, "text": e.text, "valid_days": days(e.valid), "turns": list(e.turns)}
                   for e in out.events]}


def _impression_numbers(p, rng) -> tuple[float, float]:
    belief = round(pm.quantile_draw(p.get("impressions", "belief"), float(rng.random())), 4)
    ttl = round(pm.log_quantile_draw(p.get("impressions", "ttl_days"), float(rng.random())) * 86400.0, 3)
    return belief, ttl


def _infer(p, rng, args, impressions: tuple[Impression, ...], answer):
    info = args[0]
    out = []
    for i in impressions:
        keep, key_kept = rng.random(), rng.random()
        belief, ttl = _impression_numbers(p, rng)
        if keep < p.get("impressions", "recall"):
            key = i.key if key_kept < p.get("impressions", "key_kept") else pm.text_key("impression", i.text)
            out.append(replace(i, key=key, belief=belief, ttl=ttl))
    said = pm.sentences(info.text)
    for k in range(pm.poisson(rng, p.get("impressions", "extra_per_call"))):
        s = said[k % len(said)]
        belief, ttl = _impression_numbers(p, rng)
        out.append(Impression(pm.text_key("impression", s), s, belief, ttl))
    return tuple(out), {"impressions": [{"key": i.key, "text": i.text, "belief": i.belief, "ttl_days": days(i.ttl)}
                                        for i in out]}


def _relation(p, rng, args, relation, answer):
    label = pm.categorical(p.get("relation", relation.label), float(rng.random()))
    return replace(relation, label=label), {"label": label, "strength": relation.strength}


def _same_event(p, rng, args, same: bool, answer):
    same = bool(rng.random() < p.get("events", "join", "same" if same else "new"))
    return same, {"same": same}


_APPLY = {"rate_attention": _attention, "summarize": _summarize, "infer": _infer,
          "judge_relation": _relation, "same_event": _same_event}
