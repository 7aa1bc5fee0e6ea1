"""A lifetime haystack: each target scenario asked after N messages of *other* dialogue.

LongMemEval's method at a lifetime's scale: the memory first takes in real dialogue that is
not the target's, through the whole design (labelled, tiered, summarized, consolidated:
the same steps any scenario drives, never a bulk load), and only then the target scenario
and its probes. The ``haystack`` config node::

    mtsbench run scenarios=[data/beam_targets] haystack.sources=[data/beam,data/locomo] \\
        'haystack.messages=[0,10000,30000,all]'

- ``sources``: scenario files or folders holding the other dialogue. A scenario that is
  also a target (same id) is never part of the haystack.
- ``messages``: the sizes. Each target runs once after each size's first N haystack
  messages (observed steps: say, reply, perceive); ``0`` is no haystack, ``all`` every
  message of the sources. Empty (the default): no haystack, the run is a plain run.
- ``gap``: the idle time between two haystack conversations and before a target.
- ``seed``: the haystack's order (``mtsbench.core.seeding.generator(seed, "haystack")``).

**How the haystack is laid out** (``Haystack.build``): the sources' scenarios, sorted by id,
in a seeded permutation, laid end to end on one clock from the first one's start: each
keeps its own step times (relative to its start) and begins ``gap`` after the previous one
ended, with an ``idle`` step of ``gap`` between the two (a night's sleep: the design
summarizes and consolidates at idle). Only observed and idle steps are kept (probes and
checks are the sources' own questions: never asked); their ids become
``<source id>/<step id>``, so a haystack memory's provenance never names a target's step
and earns it no credit.

**How a run uses it** (``mtsbench.harness.runner``): one system is started on a context holding
every haystack and target text, and the haystack's steps are driven through it once, in
order. When N messages have been taken in (sizes ascending), the system is copied
(``copy.deepcopy``; every bundled component passes the checker's deepcopy test) once per
target; the copy idles ``gap`` (the night before the target) and then runs the target with
its steps re-dated (``Haystack.place``): the target starts on the first day after that idle
ends, at its own time of day, its steps keeping their spacing. A target's results are
named ``<target id>_h<N>``; what the haystack itself cost (its steps, wall time, memory) is
saved apart (``haystack.json``), and a target's totals count its own steps only
(``since``). Same config and seed, same haystack, same results.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal, Union

from ..core.params import Duration, Natural, Seed, Text, declared
from ..scenario.model import OBSERVED_KINDS, Scenario, Step
from ..core.seeding import generator

@declared(node="haystack")
@dataclass(frozen=True)
class HaystackOptions:
    """The ``haystack`` config node (module docstring); no sizes: no haystack."""

    sources: list[Text] = ()
    messages: list[Union[Natural, Literal["all"]]] = ()
    gap: Duration = "1d"
    seed: Seed = 0

    @classmethod
    def from_config(cls, node) -> "HaystackOptions":
        """The options of a ``haystack`` node (None or missing: none)."""
        return cls() if node is None else cls(**{k: node[k] for k in node})

    @property
    def active(self) -> bool:
        return bool(self.messages)

    @property
    def gap_seconds(self) -> float:
        from ..core.units import parse_duration

        return float(self.gap) if isinstance(self.gap, (int, float)) else parse_duration(self.gap)


@dataclass(frozen=True)
class Haystack:
    """The haystack's steps on one clock (seconds since ``start``), its conversations in
    order, and the sizes asked for, resolved (``all`` -> the message count), ascending."""

    start: datetime
    steps: tuple[Step, ...]
    order: tuple[str, ...]
    sizes: tuple[int, ...]
    gap: float

    @classmethod
    def build(cls, sources: list[Scenario], targets: list[Scenario], options: HaystackOptions) -> "Haystack":
        """Lay ``sources`` (targets excluded by id) end to end in a seeded order (module docstring).

        >>> from mtsbench.scenario.model import Step, Scenario
        >>> def conv(sid, n): return Scenario(sid, sid, "en", datetime(2024, 3, 1, 9), (),
        ...     tuple(Step(i, f"s{i}", 60.0 * i, "say", f"{sid} line {i}") for i in range(n)))
        >>> h = Haystack.build([conv("a", 3), conv("b", 2), conv("t", 4)], [conv("t", 4)],
        ...                    HaystackOptions(messages=[0, "all"], seed=0))
        >>> h.sizes, sorted(h.order), len(h.steps)          # 5 messages, one idle night between a and b
        ((0, 5), ['a', 'b'], 6)
        >>> [s.id for s in h.steps if s.kind == "idle"], h.steps[0].id.split("/")[0] in ("a", "b")
        (['~night1'], True)
        """
        taken = {t.id for t in targets}
        pool = sorted((s for s in sources if s.id not in taken), key=lambda s: s.id)
        order = [pool[i] for i in generator(options.seed, "haystack").permutation(len(pool))]
        gap = options.gap_seconds
        steps: list[Step] = []
        clock = 0.0
        start = order[0].start if order else datetime(2026, 1, 1)
        for n, conv in enumerate(order):
            kept = [s for s in conv.steps if s.kind in OBSERVED_KINDS or s.kind == "idle"]
            if not kept:
                continue
            if steps:
                steps.append(Step(len(steps), f"~night{n}", clock, "idle", duration=gap))
                clock += gap
            first = kept[0].at
            for s in kept:
                steps.append(replace(s, index=len(steps), id=f"{conv.id}/{s.id}", at=clock + s.at - first,
                                     expect=type(s.expect)(), checks=()))
            clock = steps[-1].end
        total = sum(s.kind in OBSERVED_KINDS for s in steps)
        sizes = sorted({total if m == "all" else int(m) for m in options.messages})
        if sizes and sizes[-1] > total:
            from ..errors import ConfigError

            raise ConfigError(f"haystack.messages: expected at most {total:,} (every message of haystack.sources "
                              f"but the targets), got {sizes[-1]:,}; use 'all' for every message")
        return cls(start, tuple(steps), tuple(c.id for c in order), tuple(sizes), gap)

    def cut(self, size: int) -> int:
        """How many of ``steps`` hold the first ``size`` messages (0: none).

        >>> from mtsbench.scenario.model import Step
        >>> h = Haystack(datetime(2024, 1, 1), (Step(0, "a", 0.0, "say", "x"), Step(1, "n", 1.0, "idle", duration=9.0),
        ...              Step(2, "b", 10.0, "say", "y")), ("a",), (0, 2), 9.0)
        >>> h.cut(0), h.cut(1), h.cut(2)
        (0, 1, 3)
        """
        seen = 0
        for n, s in enumerate(self.steps):
            if seen == size:
                return n
            seen += s.kind in OBSERVED_KINDS
        return len(self.steps)

    def night_before(self, done: int) -> Step:
        """The idle step a target's copy takes after the first ``done`` haystack steps: ``gap``
        long, starting when the last of them ends (at 0 with no haystack)."""
        at = self.steps[done - 1].end if done else 0.0
        return Step(done, "~before_target", at, "idle", duration=self.gap)

    def place(self, target: Scenario, after: float, size: int) -> Scenario:
        """``target`` on the haystack's clock, named ``<id>_h<size>``: its first step on the
        first day starting after ``after`` seconds (at its own time of day), its steps keeping
        their spacing; ``start`` becomes the haystack's, since every time is counted from it.

        >>> from mtsbench.scenario.model import Step
        >>> h = Haystack(datetime(2024, 1, 1, 8), (), (), (0,), 86400.0)
        >>> t = Scenario("t", "t", "en", datetime(2023, 6, 1, 14), (), (Step(0, "x", 30.0, "say", "hi"),))
        >>> p = h.place(t, 3 * 86400.0, 0); p.id, p.start, p.steps[0].at / 3600   # day 4, 14:00 + 30 s
        ('t_h0', datetime.datetime(2024, 1, 1, 8, 0), 78.00833333333334)
        """
        ready = self.start + timedelta(seconds=after)
        first = datetime.combine(ready.date(), target.start.time())
        if first <= ready:
            first += timedelta(days=1)
        offset = (first - self.start).total_seconds()
        steps = tuple(replace(s, at=s.at + offset) for s in target.steps)
        return replace(target, id=f"{target.id}_h{size}", start=self.start, steps=steps)

    @property
    def texts(self) -> tuple[str, ...]:
        """The texts of the steps the run takes in: those of the largest size's messages only
        (a run of ``messages=[0,10000]`` never reads the rest, so a caching embedder warmed
        with these encodes no text it will not store).

        >>> from mtsbench.scenario.model import Step
        >>> h = Haystack(datetime(2024, 1, 1), (Step(0, "a", 0.0, "say", "x"), Step(1, "b", 1.0, "say", "y")),
        ...              ("a",), (1,), 9.0)
        >>> h.texts
        ('x',)
        """
        return tuple(s.text for s in self.steps[: self.cut(self.sizes[-1]) if self.sizes else 0] if s.text)


def since(now: dict, then: dict) -> dict:
    """``now`` minus ``then``, key by key, for nested dicts of numbers (a key only in ``now``
    is kept): a forked system's totals less what it held when it was copied.

    >>> since({"calls": 5, "by_task": {"rate": 3, "new": 1}}, {"calls": 2, "by_task": {"rate": 1}})
    {'calls': 3, 'by_task': {'rate': 2, 'new': 1}}
    """
    out = {}
    for key, value in now.items():
        before = then.get(key)
        if isinstance(value, dict):
            out[key] = since(value, before if isinstance(before, dict) else {})
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(before, (int, float)):
            out[key] = value - before
        else:
            out[key] = value
    return out


def messages_of(steps) -> int:
    """The observed steps among ``steps`` (what a haystack size counts)."""
    return sum(s.kind in OBSERVED_KINDS for s in steps)
