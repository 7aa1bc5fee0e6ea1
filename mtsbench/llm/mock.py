"""A deterministic mock LLM: answers every memory task from the step's hints, never from ``expect``.

Each task's answer is the task's own ``mock`` (``mtsbench.llm.tasks``, one module per task,
which documents it), made of the rules in ``mtsbench.llm.heuristics``; this module is the
backend: its parameters, the chance level of relevance, the noise and the metering. The
evaluation tasks (``answer``, ``judge_answer``) have no mock answer: the mock has no such
methods, and a probe's answer is then not scored.

rate_attention — the personalised score (``heuristics.personalised_score``) of the
common-sense salience ``s`` and the associated memories j it is shown, each with attention
a_j and relevance r_j. The item's attention follows the attention of what it evokes, never the top of the scale: a dull item that bears on a memory
reads that memory's attention (on the scale of a fresh label: attention decays, so a
memory still at ``attention_ref`` is read as 10) and is lifted toward it, in proportion to
how strongly it bears on it; associations never lower the common-sense score. A memory
bears on the item when related (relevance from ``relevance_floor``, fully at
``relevance_full``) but not restated: the closer to a restatement (relevance from
``restate_from`` up to ``restate_full``), the less it adds — its memory takes the
attention through the association's recall, not the new copy — which keeps chatter from
feeding chatter (rich get richer). Without any association with g > 0 the score is ``s``.

The thresholds are relative (issue 25): the chance level (m, sd) is the mean and standard
deviation of the embedder's cosines over all 496 pairs of 32 unrelated sentences
(``mtsbench.embed.chance.CHANCE_TEXTS`` of the item's template language), measured once per
language on the embedder whose cosines the relevances are (``MemoryAgent`` tells the mock
through ``calibrate_relevance``; without one, on the default ``Hashing()``). A cosine is
read as how far above what unrelated texts get, in units of their spread, so an embedder
whose cosines are all shifted or stretched gives the same z and the same score (z is
invariant under r -> a + b·r, b > 0; English chance levels: hashing 0.026 ± 0.047,
all-MiniLM-L6-v2 0.077 ± 0.090). ``chance_mean`` /
``chance_std`` fix m / sd instead (0 and 1: absolute cosines, the rule before issue 25).
The default thresholds (1, 2, 2, 10 sd: g rises from 1 to 2 sd above chance, then falls
linearly to 0 at 10 sd) were chosen on LoCoMo conversations conv-26, 30, 41, 42 and 43 so
that neither embedder labels more than a quarter of LoCoMo turns 8 or more; ``attention_ref`` (3.0, was 3.5) then so that every bundled expectation passes
(docs/mechanisms.md).

The known names ``summarize`` and ``infer`` are shown (``known_facts``, ``known_events``,
``known``) are rendered into the prompt, so they count in its tokens as they would for a
model, but never change an answer: the hints already name the keys a perfect model would
reuse.

Noise: with ``noise`` = σ > 0 every number the mock outputs gets Gaussian noise of
standard deviation σ times its range (10 for a score, 1 for a belief or strength) and is
clipped back into range; a duration (validity, TTL) d becomes d·exp(σ·z), z standard
normal. The noise generator is seeded from (seed, task, inputs) with crc32 and drawn in
answer order, so a call's answer does not depend on the order of calls. ``inputs``
(``call_inputs``) is what the call is about as the prompt shows it — the texts, kinds and
numbers at the prompt's precision — not the rendered prompt: rewording a template or
showing the model memory's candidates (known keys, categories) never re-draws the noise.

Profile: with ``profile`` (a file, or the name of a packaged profile in ``mtsbench/profiles``;
null: none, the answers above unchanged) the answers then get a real model's errors as the
profile states them (``mtsbench.llm.profiled``), drawn from their own generator seeded from
(seed, task, inputs) with crc32 likewise.

Tokens are estimated from the rendered prompt and the JSON answer (``estimate_tokens``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ..embed.chance import measure
from ..core.params import Cosine, Number, Positive, Seed, Share, Text, declared
from ..core.seeding import generator
from .base import Meter, estimate_tokens
from . import profiled
from .profile import load as load_profile
from .prompts import lang
from .task import Task
from .tasks import REGISTRY, task_methods


def call_inputs(task: str, *args) -> str:
    """The text a call's noise is seeded from: its inputs as the prompt shows them (the
    task's ``noise_inputs``; module docstring).

    >>> from .base import Association, Fact, Item
    >>> call_inputs("rate_attention", Item("Kim sings.", "say", "s0"), [Association("Kim is a tenor.", 6.04, 0.333)])
    'say: Kim sings.\\n- [6.0, 0.33] Kim is a tenor.'
    >>> call_inputs("judge_relation", Fact("", True, "Kim sings.", 0.5), Fact("", True, "Kim sang.", 0.9))
    'true: Kim sings. (belief 0.50)\\ntrue: Kim sang. (belief 0.90)'
    """
    t = REGISTRY.get(task)
    if t is None or t.noise_inputs is None:
        raise ValueError(f"call_inputs: the mock draws no noise for task {task!r}")
    return t.noise_inputs(*t.bind(*args))


class _Noise:
    """Per-call noise: one generator seeded from (seed, task, inputs), drawn in answer order."""

    def __init__(self, sigma: float, seed: int, task: Task, args: tuple):
        self.sigma = sigma
        self.rng = generator(seed, task.name, task.noise_inputs(*args)) if sigma > 0 else None

    def bounded(self, value: float, lo: float, hi: float) -> float:
        if self.rng is None:
            return value
        return float(np.clip(value + self.rng.normal(0.0, self.sigma * (hi - lo)), lo, hi))

    def duration(self, seconds: float | None) -> float | None:
        if self.rng is None or seconds is None:
            return seconds
        return round(float(seconds * math.exp(self.sigma * self.rng.normal())), 3)


@declared
class MockLLM(task_methods(lambda task: task.mock is not None)):
    """Deterministic backend for offline runs and CI (see the module docstring)."""

    def __init__(self, seed: Seed | None = 0, noise: Share = 0.0, relevance_floor: Number = 1.0,
                 relevance_full: Number = 2.0, follow: Share = 1.0, attention_ref: Positive = 3.0,
                 restate_from: Number = 2.0, restate_full: Number = 10.0, same_text: Share = 0.75,
                 same_event_text: Share = 0.3, chance_mean: Cosine | None = None, chance_std: Positive | None = None,
                 profile: Text | None = None):
        self.seed = seed
        self.noise = noise
        self.relevance_floor = relevance_floor
        self.relevance_full = relevance_full
        self.follow = follow
        self.attention_ref = attention_ref
        self.restate_from, self.restate_full = restate_from, restate_full
        self.same_text = same_text
        self.same_event_text = same_event_text
        self.chance_mean, self.chance_std = chance_mean, chance_std
        self.profile = profile
        self.profile_ = None if profile is None else load_profile(str(profile))     # the loaded profile
        self.embedder = None            # whose cosines the relevances are (calibrate_relevance); None: Hashing()
        self._chance: dict[str, tuple[float, float]] = {}
        self.meter = Meter()

    def calibrate_relevance(self, embedder) -> None:
        """Told the embedder whose cosines the associations' relevances are: the chance level
        is measured on it (``chance``), once per language, when first needed."""
        self.embedder, self._chance = embedder, {}

    def chance(self, language: str = "en") -> tuple[float, float]:
        """(mean, sd) of the embedder's cosines of unrelated texts (``CHANCE_TEXTS`` of the
        item's template language); ``chance_mean`` / ``chance_std`` replace what they set."""
        key = lang(language)
        if key not in self._chance:
            if self.chance_mean is not None and self.chance_std is not None:
                measured = (0.0, 1.0)
            else:
                if self.embedder is None:
                    from ..embed.hashing import Hashing

                    self.embedder = Hashing()
                measured = measure(self.embedder, key)
            self._chance[key] = (measured[0] if self.chance_mean is None else float(self.chance_mean),
                                 measured[1] if self.chance_std is None else float(self.chance_std))
        return self._chance[key]

    def ask(self, task: Task, *args, **kwargs) -> Any:
        """The mock's answer to ``task`` called with these arguments (its method's), metered
        with the tokens of the rendered prompt and of the answer's JSON."""
        if task.mock is None:
            raise NotImplementedError(f"the mock has no answer for task {task.name}")
        args = task.bind(*args, **kwargs)
        prompt = task.render(args)
        noise = _Noise(self.noise if task.noise_inputs is not None else 0.0, self.seed, task, args)
        result, answer = task.mock(self, noise, *args)
        if self.profile_ is not None:
            result, answer = profiled.apply(self.profile_, self.seed, task, args, result, answer)
        self.meter.record(task.name, estimate_tokens(prompt), estimate_tokens(json.dumps(answer, ensure_ascii=False)))
        return result
