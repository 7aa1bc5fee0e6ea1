"""The ``MemorySystem`` protocol: what a scenario drives, and what it gets back.

The runner builds one system per scenario (``hydra.utils.instantiate(cfg.system)``), calls
``start(context)`` and then, step by step on the simulated clock:

- ``observe(Observation)`` for say / reply / perceive: the system takes the item in;
- ``retrieve(Query)`` for a probe: the system ranks memories for ``query.text`` at
  ``query.motivation`` and *uses* its first ``query.k`` (what "use" does is the system's
  business: the seed design recalls them). ``query.depth`` (>= k) is how deep the ranking
  is reported, for evaluation only: it must not change what the system does;
- ``idle(Idle)``: nothing is said for ``duration`` seconds;
- ``tick(Tick)``: a ``check`` step; only time passes;
- ``read(query)`` after a check step: a state value for an expectation (a check of
  ``mtsbench.scenario.model`` or ``EventOf``), or ``UNSUPPORTED`` when the system has no
  such state — reported as unsupported, never as a failure. Each check is read for its
  ``step`` alone (a ``StepAttentionCheck`` with ``step`` None and ``from_`` set reads the facts
  derived from that step: the highest attention among them, None if there is none): an ``ArousalCheck`` as all the arousal that step's memory received since it
  was stored (None: no memory); the runner reads the ``above`` step the same way, and for a
  ``since`` takes the difference with a reading just before that step (``harness.runner.read_check``);
- ``finish()`` when the scenario is over (flush what waits).

``labels`` (an attribute, True when absent) says whether the system rates each observed
item's attention (``Outcome.score``): a system that rates nothing sets it False
(``PlainSystem`` does), and an ``attention`` expectation on an observed step is then
reported as unsupported, never as a failure; a system that rates and returns no score (its
rating failed) fails it.

Optionally, ``take_trace(at_least)``: the trace events emitted since the last take, once
there are at least ``at_least`` of them (else ``[]``), which the system then forgets — the
runner streams a long scenario's trace to disk in chunks instead of holding it all.
``totals().trace`` is what was not taken. A system without it hands its whole trace over
at the end (``PlainSystem`` and ``MtsSystem`` have it).

Every call but ``read`` returns an ``Outcome`` with the step's own ``Cost``. The system
never sees a scenario's expectations: the runner hands it the inputs only, and judging is
the evaluator's (``mtsbench.evaluation.evaluate``), from the saved results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from ..scenario.model import Hints


class _Unsupported:
    """The answer of ``read`` for a state the system does not have."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSUPPORTED"

    def __reduce__(self):
        return (_Unsupported, ())


UNSUPPORTED = _Unsupported()


@dataclass(frozen=True)
class Context:
    """What a system knows of the scenario it is about to run: its id, language, start, and
    the texts of its steps in order (``texts``: inputs only, so that an embedder may encode
    them in batches up front; never the expectations)."""

    scenario: str
    language: str = "en"
    start: datetime = datetime(2026, 1, 1)
    texts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """An item of the perception stream: ``kind`` is say, reply or perceive. ``hints`` is
    what a perfect LLM would output for it (read by the mock LLM only)."""

    step: str
    at: float
    kind: str
    text: str
    hints: Hints = Hints()


@dataclass(frozen=True)
class Query:
    """A retrieval: use the top ``k`` memories for ``text``; report the ranking ``depth``
    deep. ``purpose``: ``probe`` (a scenario step) or ``reply`` (the context a user turn's
    reply uses, under ``workload=reply``: part of that turn's step, not a step of its own).
    ``motivation`` is the scenario's number; a system may solve its own from the question
    (``motivation=from_attention``), for which ``hints`` say what a perfect LLM would rate."""

    step: str
    at: float
    text: str
    k: int = 5
    motivation: float = 0.5
    depth: int = 5
    purpose: str = "probe"
    hints: Hints = Hints()


@dataclass(frozen=True)
class Idle:
    step: str
    at: float
    duration: float


@dataclass(frozen=True)
class Tick:
    step: str
    at: float


@dataclass(frozen=True)
class EventOf:
    """Read the provenance of the first event memory that contains ``step`` (None if none)."""

    step: str


@dataclass
class Cost:
    """What one step cost the system itself (background processes are reported apart).

    ``scored``: memories scored by the step's searches; ``tiers_searched``: the deepest tier
    reached; ``index_queries``: index queries; ``association_scored``: memories scored by a
    probe's own labelling (``motivation=from_attention``: its associated memories; an
    observed item's association search is its ``scored``); ``arousal_scored``: memories scored by the
    neighbour searches of regional arousal; ``distances``: vector distance computations of
    every index query (measured: exact scans count each member, a graph its own count);
    ``index_inserts`` / ``insert_distances_est``: vectors inserted into a graph and their
    *estimated* distance computations; ``index_moves``: memories moved between tiers; then
    the LLM's calls, tokens, retries and failures; ``latency_ms``: wall clock.
    """

    scored: int = 0
    tiers_searched: int = 0
    index_queries: int = 0
    association_scored: int = 0
    arousal_scored: int = 0
    distances: int = 0
    index_inserts: int = 0
    insert_distances_est: int = 0
    index_moves: int = 0
    llm_calls: int = 0
    tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_retries: int = 0
    llm_failures: int = 0
    latency_ms: float = 0.0


@dataclass
class Ranking:
    """A probe's ranking, best first, ``depth`` deep at most: memory ids, their scores, the
    steps each memory stands for (provenance) and each one's text length in tokens. The
    first ``used`` of them are the memories the probe used (its context: at most k, or
    what the system's own context size allows); None means min(k, len(ids)). ``earned``
    (set by the runner from the memories' texts, ``mtsbench.evaluation.credit``): the provenance steps
    each memory's text carries; None when the system cannot show its memories' texts. ``texts``
    (set by the runner too, cut to ``TEXT_CUT`` characters): what each ranked memory said, for
    ``mtsbench show``.

    For inspecting a probe (``mtsbench show RUN --probe STEP``; all optional, None when the
    system does not know): ``tiers``, each ranked memory's tier when it was ranked; ``terms``,
    the terms its score was made of, one list per term (the seed design: ``relevance`` and
    ``attention``); ``visible``, how many memories the search could see (the members of the
    tiers it searched); ``held``, how many the system held."""

    ids: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    provenance: list[tuple[str, ...]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    used: int | None = None
    earned: list[tuple[str, ...]] | None = None
    relevance: list[float] | None = None   # the used memories' relevance alone (no attention term), if known
    texts: list[str] | None = None
    tiers: list[int] | None = None
    terms: dict[str, list[float]] | None = None
    visible: int | None = None
    held: int | None = None


TEXT_CUT = 160      # characters of a ranked memory's text kept in results.parquet (ranked_texts)


@dataclass
class Outcome:
    """What a step returned: the memory an observation created and its attention score
    (None when the system rates nothing or the rating failed), a probe's ``ranking``, the
    steps whose summarization finished during the step (``summarized``), and the cost."""

    cost: Cost = field(default_factory=Cost)
    memory: int | None = None
    score: float | None = None
    ranking: Ranking | None = None
    summarized: tuple[str, ...] = ()
    answer: dict | None = None       # a probe's answer fields (mtsbench.evaluation.answer), set by the runner


@dataclass
class Totals:
    """A scenario's totals: LLM use (``calls, tokens, prompt_tokens, completion_tokens,
    retries, failures`` and ``by_task``), background processes' cost (``processes``), the
    number of memories held and the trace (a list of event dicts)."""

    llm: dict = field(default_factory=dict)
    processes: dict = field(default_factory=dict)
    memories: int = 0
    trace: list = field(default_factory=list)


NO_LLM = {"calls": 0, "tokens": 0, "prompt_tokens": 0, "completion_tokens": 0, "retries": 0, "failures": 0}


class PlainSystem:
    """Defaults for a system without background processes or readable state, to inherit
    from: ``idle``, ``tick`` and ``finish`` do nothing, ``read`` answers ``UNSUPPORTED``,
    it labels nothing (``labels`` False: attention expectations are unsupported),
    nothing waits for summarization, there are no attention timelines, and ``totals``
    reports no LLM use. A subclass writes ``start``, ``observe`` and ``retrieve`` (and may
    override the rest); ``memories_count`` and ``trace_`` feed ``totals``.

    >>> PlainSystem().read(EventOf("s0")) is UNSUPPORTED, PlainSystem().tick(Tick("s0", 0.0)).cost.scored
    (True, 0)
    """

    trace_: tuple | list = ()     # a subclass sets its own list in start()
    labels = False                # rates no observed item's attention (module docstring)

    def idle(self, idle: Idle) -> Outcome:
        return Outcome()

    def tick(self, tick: Tick) -> Outcome:
        return Outcome()

    def finish(self) -> Outcome:
        return Outcome()

    def read(self, query) -> object:
        return UNSUPPORTED

    def waiting(self) -> frozenset[str]:
        return frozenset()

    def sample(self, steps: tuple[str, ...]) -> list[tuple[str, float, float, int]]:
        return []

    def memories_count(self) -> int:
        return 0

    def take_trace(self, at_least: int = 0) -> list[dict]:
        return take_events(self.trace_, at_least) if isinstance(self.trace_, list) else []

    def totals(self) -> Totals:
        return Totals(llm=NO_LLM | {"by_task": {}}, processes={}, memories=self.memories_count(),
                      trace=list(self.trace_))


def take_events(events: list, at_least: int) -> list:
    """Empty ``events`` in place and return what it held, if it holds ``at_least`` (else []).

    >>> trace = [1, 2, 3]; take_events(trace, 4), take_events(trace, 3), trace
    ([], [1, 2, 3], [])
    """
    if not events or len(events) < at_least:
        return []
    taken = events[:]
    events.clear()
    return taken


@runtime_checkable
class MemorySystem(Protocol):
    """A memory system under test (see the module docstring for the call order)."""

    def start(self, context: Context) -> None: ...

    def observe(self, item: Observation) -> Outcome: ...

    def retrieve(self, query: Query) -> Outcome: ...

    def idle(self, idle: Idle) -> Outcome: ...

    def tick(self, tick: Tick) -> Outcome: ...

    def finish(self) -> Outcome: ...

    def read(self, query) -> object: ...

    def waiting(self) -> frozenset[str]:
        """Observed steps whose summarization is still to come (empty for a system that
        does not summarize): an event expectation on them is judged later."""
        ...

    def sample(self, steps: tuple[str, ...]) -> list[tuple[str, float, float, int]]:
        """(step, long, short, tier) of the memory of each step that has one, for the
        attention timelines; [] for a system without attention."""
        ...

    def totals(self) -> Totals: ...
