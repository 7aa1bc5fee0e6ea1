"""``llm=replay``: answers offline from a cassette recorded with ``llm.record=PATH``.

The backend asks exactly what the recording backend asked (same prompts, same repair
path, see ``chat.py``) and looks every request up by its key in the cassette: the answer
text, token usage and retries recorded for it are replayed, and a recorded transport
failure fails again (then ``on_failure`` decides, as when recording). A request that is
not in the cassette raises ``LLMError`` naming the task and, when the scenario it serves was
not recorded at all, that scenario and the bundled ones the cassette holds, else an excerpt
of the prompt (a prompt changed since recording), whatever ``on_failure`` says: the
cassette does not cover this run.

The backend reads no scenario file: its caller tells it the scenario it serves
(``ReplayLLM.serve(scenario, bundled)``; ``harness.runner`` does, through the system's
``answer_llm``, whenever a system starts or continues on a scenario) and how to get the
bundled scenarios a miss may name (``scenario.catalog.bundled_scenarios``). Of the scenario
it keeps only what it needs (``Serving``): the id, whose own records it is served first
(``Cassette.next``), and the text of its first observed step, which a recorded scenario's
prompts quote. A backend nobody told (built by hand) serves the scenario running in its
context (``scenario.model.RUNNING``), as the recording backends do, and a miss there names
no recorded scenarios.

``max_failure_rate`` is stored for the run (``mtsbench run`` warns and exits 3 above it).

``cassette`` is a file, or the name of a cassette that ships with mtsbench
(``resources.packaged_cassettes()``; ``llm=recorded`` replays the packaged model's).

Which recording to answer as: the cassette's only (backend, model, params) profile, or
the one picked out by ``model``, ``temperature`` and ``seed`` (null = any).

Constructing only stores the parameters; the first task call opens the cassette
(``cassette_``) and picks the profile (``backend_``, ``model_``, ``params_``), raising the
one-line ``LLMError`` of a missing, unreadable or ambiguous cassette then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..core.params import NonNegative, Seed, Share, Text, declared
from ..core.resources import CASSETTE_DIR, packaged_cassettes
from ..scenario.model import OBSERVED_KINDS, RUNNING, Scenario
from .base import LLMError, Meter
from .cassette import Cassette, running_scenario
from .chat import ChatLLM, Exchange, TransportError, excerpt
from .task import Task


def cassette_path(cassette: str) -> Path:
    """The file ``cassette`` names: a path, else a packaged cassette's name; else a one-line error."""
    path = Path(cassette)
    if path.is_file():
        return path
    if (packaged := CASSETTE_DIR / f"{cassette}.jsonl").is_file():
        return packaged
    names = ", ".join(packaged_cassettes()) or "none"
    raise LLMError(f"cassette {path} does not exist (nor is it a packaged cassette: {names})")


def first_text(scenario) -> str | None:
    """The text of ``scenario``'s first observed step (what its first prompt quotes)."""
    return next((s.text for s in scenario.steps if s.kind in OBSERVED_KINDS and s.text), None)


def recorded_scenarios(cassette: Cassette, scenarios: Iterable[Scenario]) -> list[str]:
    """The ids of ``scenarios`` (in their order) ``cassette`` holds answers for: those whose
    first observed step's text one of its prompts quotes."""
    prompts = "\n".join(str(m.get("content", "")) for r in cassette.records for m in r.get("messages", []))
    return [s.id for s in scenarios if (text := first_text(s)) and text in prompts]


@dataclass(frozen=True)
class Serving:
    """What a replay keeps of the scenario it serves: its ``id`` and ``opening``, the text of
    its first observed step (None: it has none).

    >>> from datetime import datetime
    >>> from mtsbench.scenario.model import Step
    >>> steps = (Step(0, "q", 0.0, "probe", "Where is the milk?"), Step(1, "s1", 60.0, "say", "Milk is on the table."))
    >>> Serving.of(Scenario("milk", "Milk", "en", datetime(2026, 1, 1), (), steps))
    Serving(id='milk', opening='Milk is on the table.')
    """

    id: str
    opening: str | None = None

    @classmethod
    def of(cls, scenario: Scenario) -> "Serving":
        return cls(scenario.id, first_text(scenario))


def open_cassette(cassette: str) -> Cassette:
    """The cassette ``cassette`` names (``cassette_path``), read; a one-line ``LLMError`` if it
    is missing or unreadable."""
    path = cassette_path(cassette)
    try:
        return Cassette(path)
    except (ValueError, KeyError) as e:
        raise LLMError(f"cassette {path} is unreadable: {e}") from None


@declared
class ReplayLLM(ChatLLM):
    """Replays a cassette (see the module docstring)."""

    serving_: Serving | None = None                              # told by serve(); the class defaults
    bundled_: Callable[[], Iterable[Scenario]] | None = None     # stand for "told nothing"

    def __init__(self, cassette: Text | None = None, model: Text | None = None, temperature: NonNegative | None = None,
                 seed: Seed | None = None, on_failure: Literal["raise", "skip"] = "raise", max_failure_rate: Share = 0.05):
        self.cassette = cassette
        self.model = model
        self.temperature = temperature
        self.seed = seed
        self.on_failure = on_failure
        self.max_failure_rate = max_failure_rate
        self.meter = Meter()

    def _configure(self) -> dict:
        if not self.cassette:
            raise LLMError("llm.cassette is not set (a file written by llm.record=PATH)")
        recorded = open_cassette(self.cassette)
        path = recorded.path
        wanted = {"temperature": self.temperature, "seed": self.seed}
        profiles = [p for p in recorded.profiles()
                    if (self.model is None or p["model"] == self.model)
                    and all(v is None or p["params"].get(k) == v for k, v in wanted.items())]
        if len(profiles) != 1:
            found = "; ".join(f"model={p['model']} {p['params']}" for p in recorded.profiles()) or "no records"
            how = "none matches" if not profiles else "several match; pick one with llm.model/temperature/seed"
            raise LLMError(f"cassette {path}: {how} (it holds: {found})")
        profile = profiles[0]
        return {"cassette_": recorded, "backend_": profile["backend"], "model_": profile["model"],
                "params_": profile["params"]}

    def serve(self, scenario: Scenario | None, bundled: Callable[[], Iterable[Scenario]] | None = None) -> None:
        """Serve ``scenario`` from now on (None: no scenario): its own records first, and a
        request the cassette lacks names it when the cassette holds none of its prompts.
        ``bundled`` returns the scenarios such a miss lists as recorded (those the cassette
        holds; called only then); None lists none. Told by the caller that runs the
        scenario, so that the backend reads no scenario file itself (module docstring)."""
        self.serving_ = None if scenario is None else Serving.of(scenario)
        self.bundled_ = bundled

    def _serving(self) -> Serving | None:
        """The scenario served: the one told (``serve``), else the one running in this context."""
        if "serving_" in vars(self):
            return self.serving_
        running = RUNNING.get()
        return None if running is None else Serving.of(running)

    def _serving_id(self) -> str | None:
        """The id of the scenario served (``_serving``), without reading the running one's steps."""
        if "serving_" in vars(self):
            return None if self.serving_ is None else self.serving_.id
        return running_scenario()

    def _missing(self, messages: list[dict]) -> str:
        """Why a request has no answer, in one line: the scenario served was not recorded
        (named, with the recorded ones), else the prompt it asked (a changed prompt)."""
        where = f"cassette {self.cassette_.path} (model {self.model_})"
        scenario = self._serving()
        prompts = (str(m.get("content", "")) for r in self.cassette_.records for m in r.get("messages", []))
        text = scenario.opening if scenario is not None else None
        if text and not any(text in p for p in prompts):
            recorded = "" if self.bundled_ is None else \
                f"recorded: {', '.join(recorded_scenarios(self.cassette_, self.bundled_())) or 'none of the bundled ones'}; "
            return (f"no recorded answer in {where}: scenario {scenario.id} was not recorded "
                    f"({recorded}record it with llm.record=PATH, docs/llm.md)")
        return f"no recorded answer in {where} for prompt '{excerpt(messages[-1]['content'])}'"

    def _send(self, task: Task, messages: list[dict], key: str) -> Exchange:
        record = self.cassette_.next(key, self._serving_id())
        if record is None:
            raise LLMError(self._missing(messages), task=task.name)
        if "error" in record:
            raise TransportError(record["error"], int(record.get("retries", 0)))
        return Exchange.recorded(record["response"])
