"""The inferrer (DESIGN §1.6): impressions accumulate belief under a TTL and become conjectures.

After each item of the perception stream whose kind is in ``kinds`` (by default what the
user says and what the agent perceives; not its own replies), the LLM's ``infer`` task
gives impressions (key, text, belief, ttl), shown the texts of the memories the item's
labelling associated as context. An impression is not a memory: the inferrer keeps, per
key, the impressions' beliefs, times, TTLs and steps, and traces each one.

When an impression of key K arrives, K's accumulated belief is computed in closed form from
K's impressions only: B = accumulate(b, d) with d_i = exp(-3 age_i / ttl_i), or d_i = 1 with
``ttl_decay: false`` (the ablation switch). Belief only fades between arrivals, so checking
at arrivals is exact. When B >= ``threshold``, K becomes a conjecture: a timestamped
``conjecture`` memory (key K, value true, belief B, ``meta.at`` its time) whose provenance
is the steps of K's impressions still within their TTL; it is written back into the
perception stream (labelled, never itself inferred from) and traced. While it is valid (up
to the longest TTL of its impressions after its last one) new impressions of K join it
instead of forming another. Impressions faded below 0.1% are forgotten when their key is
touched, so a key's state stays small.

An impression without a key (``llm.tasks.keyless``) is matched among the open keyless
keys instead: the ``related`` whose text embeds nearest to it (cosine at least
``min_relevance``), best first, are put to the LLM's ``judge_relation`` (each as a fact
with value true) until one is judged ``same``; it then joins that key, else it opens a
key of its own, ``#<n>``. A conjecture formed under such a key is stored without a key.

The model keeps names the inferrer already holds (issue 15): ``infer`` is shown the
``known_keys`` open keys nearest the item — keys the LLM named (not the inferrer's own
``#<n>``) that still have an impression within its TTL or a valid conjecture — ranked by the
cosine of the item's embedding with the embedding of the key's first text, each with its
text and its accumulated belief now; the model reuses a key for the same statement instead
of naming a new one, so impressions of one statement accumulate. The table is the
inferrer's own (a few open keys), so this is no memory search; ``known_keys: 0`` shows none.

The inferrer sees memory through ``ImpressionMemory``, stores conjectures through
``perceive``; the LLM and the ``accumulate`` rule are passed in; ``observe`` returns the ids
of the conjectures formed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..llm.base import LLM, Fact, Impression, Item, Known
from ..llm.tasks import keyless
from ..mechanisms.accumulate import ttl_weight
from ..core.params import Kinds, Natural, Share, declared
from .ports import ImpressionMemory, Perceive

FORGOTTEN = 1e-3
WITHIN_TTL = float(np.exp(-3.0))   # an impression's weight at its TTL


@dataclass
class _Key:
    """One key's impressions (parallel lists) and its live conjecture, if any."""

    text: str = ""
    belief: list[float] = field(default_factory=list)
    at: list[float] = field(default_factory=list)
    ttl: list[float] = field(default_factory=list)
    step: list[str] = field(default_factory=list)
    conjecture: int | None = None
    valid_until: float = -np.inf
    vector: np.ndarray | None = None    # the embedding of the key's first text
    keyless: bool = False               # a key of the inferrer's own (#<n>): the LLM named none


@declared
class Inferrer:
    """Impressions per key, accumulated by the ``accumulate`` rule, conjectures past ``threshold``."""

    def __init__(self, threshold: Share = 0.7, ttl_decay: bool = True, kinds: Kinds = ("say", "perceive"),
                 enabled: bool = True, related: Natural = 5, min_relevance: Share = 0.1, known_keys: Natural = 8):
        self.threshold = threshold
        self.known_keys = known_keys
        self.related = related
        self.min_relevance = min_relevance
        self.ttl_decay = ttl_decay
        self.kinds = tuple(kinds)
        self.enabled = enabled
        self.keys_: dict[str, _Key] = {}

    def wants(self, item: Item) -> bool:
        return self.enabled and item.kind in self.kinds

    def observe(self, memory: ImpressionMemory, llm: LLM, perceive: Perceive, accumulate, item: Item,
                context: list[str]) -> list[int]:
        """Infer from ``item`` (``context``: the texts its labelling associated); returns the
        ids of conjectures formed."""
        impressions = llm.infer(item, context, self.known(memory, accumulate, item))
        if impressions is None:
            memory.emit("infer_failed", step=item.step)
            return []
        formed = []
        for imp in impressions:
            if keyless(imp.key):
                imp = replace(imp, key=self.match(memory, llm, imp, item.language))
            i = self._add(memory, perceive, accumulate, imp, item.step, item.language)
            if i is not None:
                formed.append(i)
        return formed

    def known(self, memory: ImpressionMemory, accumulate, item: Item) -> tuple[Known, ...]:
        """The open named keys nearest ``item``, with their accumulated beliefs (module docstring)."""
        if self.known_keys <= 0:
            return ()
        now = memory.now
        names = [name for name, k in self.keys_.items() if not k.keyless and k.vector is not None and
                 (now <= k.valid_until or any(a + t >= now for a, t in zip(k.at, k.ttl)))]
        if not names:
            return ()
        relevance = np.stack([self.keys_[name].vector for name in names]) @ memory.embed(item.text)
        out = []
        for j in np.argsort(-relevance, kind="stable")[:self.known_keys]:
            k = self.keys_[names[j]]
            belief = float(accumulate(np.array(k.belief), self.weights(k, now))) if k.belief else 0.0
            out.append(Known(names[j], k.text, round(belief, 4)))
        return tuple(out)

    def match(self, memory: ImpressionMemory, llm: LLM, imp: Impression, language: str) -> str:
        """The open keyless key the LLM judges ``imp`` the same as, else a new one (module docstring)."""
        vector = memory.embed(imp.text)
        names = [name for name, k in self.keys_.items() if k.keyless]
        if names:
            relevance = np.stack([self.keys_[name].vector for name in names]) @ vector
            for j in np.argsort(-relevance, kind="stable")[:self.related]:
                if relevance[j] < self.min_relevance:
                    break
                k = self.keys_[names[j]]
                relation = llm.judge_relation(Fact("", True, imp.text, imp.belief),
                                              Fact("", True, k.text, k.belief[-1] if k.belief else 0.0), language)
                if relation is not None and relation.label == "same":
                    return names[j]
        name = f"#{sum(1 for k in self.keys_.values() if k.keyless)}"
        self.keys_[name] = _Key(text=imp.text, vector=vector, keyless=True)
        return name

    def weights(self, k: _Key, now: float) -> np.ndarray:
        """d_i of a key's impressions at ``now``."""
        return ttl_weight(now - np.array(k.at), np.array(k.ttl), self.ttl_decay)

    def _add(self, memory, perceive, accumulate, imp: Impression, step: str, language: str) -> int | None:
        k = self.keys_.get(imp.key)
        if k is None:
            k = self.keys_[imp.key] = _Key(vector=memory.embed(imp.text) if self.known_keys > 0 else None)
        k.text = imp.text
        k.belief.append(imp.belief)
        k.at.append(memory.now)
        k.ttl.append(imp.ttl)
        k.step.append(step)
        d = self.weights(k, memory.now)
        keep = d >= FORGOTTEN
        if not keep.all():
            for name in ("belief", "at", "ttl", "step"):
                setattr(k, name, [x for x, kept in zip(getattr(k, name), keep) if kept])
            d = d[keep]
        accumulated = float(accumulate(np.array(k.belief), d))
        memory.emit("impression", key=imp.key, text=imp.text, step=step, belief=imp.belief, ttl=imp.ttl,
                    accumulated=round(accumulated, 4))
        live = k.conjecture is not None and memory.alive(k.conjecture) and memory.now <= k.valid_until
        if live:
            self._extend(memory, k, step, imp.ttl)
            return None
        if accumulated < self.threshold:
            return None
        return self._conjecture(memory, perceive, imp.key, k, d, accumulated, language)

    def _conjecture(self, memory, perceive, key: str, k: _Key, d: np.ndarray, belief: float, language: str) -> int:
        within = d >= WITHIN_TTL - 1e-12
        steps = tuple(dict.fromkeys(s for s, w in zip(k.step, within) if w))
        item = Item(k.text, "conjecture", steps[-1], language)
        i = perceive(item, "conjecture", steps, meta={"at": memory.now}, key=None if k.keyless else key,
                     value=True, belief=belief)
        k.conjecture = i
        k.valid_until = memory.now + max(t for t, w in zip(k.ttl, within) if w)
        memory.emit("conjecture", id=i, key=key, belief=round(belief, 4), steps=list(steps))
        return i

    def _extend(self, memory, k: _Key, step: str, ttl: float) -> None:
        i = k.conjecture
        parts = tuple(dict.fromkeys(memory.provenance(i) + (step,)))
        memory.rewrite(i, memory.text(i), parts, reembed=False)
        k.valid_until = max(k.valid_until, memory.now + ttl)
        memory.emit("conjecture", id=i, key=memory.key(i), joined=step)
