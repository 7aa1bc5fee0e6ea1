"""``llm=replay``: answers offline from a cassette recorded with ``llm.record=PATH``.

The backend asks exactly what the recording backend asked (same prompts, same repair
path, see ``chat.py``) and looks every request up by its key in the cassette: the answer
text, token usage and retries recorded for it are replayed, and a recorded transport
failure fails again (then ``on_failure`` decides, as when recording). A request that is
not in the cassette raises ``LLMError`` naming the task and, when the running scenario was
not recorded at all, that scenario and the bundled ones the cassette holds, else an excerpt
of the prompt (a prompt changed since recording), whatever ``on_failure`` says: the
cassette does not cover this run.

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

from pathlib import Path
from typing import Literal

from ..core.params import NonNegative, Seed, Share, Text, declared
from ..core.resources import CASSETTE_DIR, packaged_cassettes
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
    from ..scenario.model import OBSERVED_KINDS

    return next((s.text for s in scenario.steps if s.kind in OBSERVED_KINDS and s.text), None)


def recorded_scenarios(cassette: Cassette) -> list[str]:
    """The bundled scenarios ``cassette`` holds answers for: those whose first observed
    step's text one of its prompts quotes."""
    from ..scenario.catalog import resolve
    from ..scenario.loader import load_scenario

    prompts = "\n".join(str(m.get("content", "")) for r in cassette.records for m in r.get("messages", []))
    found = []
    for path in resolve([]):
        try:
            scenario = load_scenario(path)
        except Exception:  # noqa: BLE001 - a bundled scenario that does not load is not listed
            continue
        if (text := first_text(scenario)) and text in prompts:
            found.append(scenario.id)
    return found


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

    def _missing(self, messages: list[dict]) -> str:
        """Why a request has no answer, in one line: the running scenario was not recorded
        (named, with the recorded ones), else the prompt it asked (a changed prompt)."""
        from ..scenario.model import RUNNING

        where = f"cassette {self.cassette_.path} (model {self.model_})"
        scenario = RUNNING.get()
        prompts = (str(m.get("content", "")) for r in self.cassette_.records for m in r.get("messages", []))
        text = first_text(scenario) if scenario is not None else None
        if text and not any(text in p for p in prompts):
            recorded = ", ".join(recorded_scenarios(self.cassette_)) or "none of the bundled ones"
            return (f"no recorded answer in {where}: scenario {scenario.id} was not recorded "
                    f"(recorded: {recorded}; record it with llm.record=PATH, docs/llm.md)")
        return f"no recorded answer in {where} for prompt '{excerpt(messages[-1]['content'])}'"

    def _send(self, task: Task, messages: list[dict], key: str) -> Exchange:
        record = self.cassette_.next(key, running_scenario())
        if record is None:
            raise LLMError(self._missing(messages), task=task.name)
        if "error" in record:
            raise TransportError(record["error"], int(record.get("retries", 0)))
        return Exchange.recorded(record["response"])
