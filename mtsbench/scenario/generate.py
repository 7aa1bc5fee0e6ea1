"""Long-horizon scenarios generated from a seed: ``mtsbench generate`` and the ``generate`` config node.

A generated scenario is an ordinary scenario file (DESIGN §3), written compactly: one
step per line as a YAML flow mapping. It holds, over ``days`` days:

- **chatter**: ``turns_per_day`` turns a day between 07:00 and 23:00, in sessions of a
  few consecutive turns on one topic field (fields are drawn by a Zipf popularity, so some
  fields come back often); a turn's content words come from its field's vocabulary
  (``vocab.FIELDS``), so the turns of a field lie near each other for the embedder.
  60% are ``say``, 30% ``reply``, 10% ``perceive``; each has a ``salience`` hint 1-4.
- a night's **idle** (``23:00``, ``8h``) every day: rebalance and sleep-time processes.
- **needles**: ``needles`` facts about people ("My neighbour Tolin's cat is called
  Vessa.") planted early with ``salience`` 7 and the ``facts`` a perfect LLM would
  extract, and probed ``probe_min_days``-``probe_max_days`` days later, twice: first
  casually (``casual`` motivation), then as a second thought two minutes later
  (``important`` motivation). Both probes carry ``expect: {recall: [NEEDLE], k}``; the
  question never contains the answer, and no probe carries hints.
- **reminders**: a share ``awaken`` of the needles is re-mentioned ``reminders`` times
  between planting and probing (the person and the attribute, never the value); the last
  two come as a short talk about the person 30 minutes to 4 hours before the probe, the
  others anywhere since the planting: these needles are *awakened*; the others are never
  mentioned again (*dormant*). (In a 60-day run on a 20k pre-load at dim 256, two
  reminders together lifted casual recall of awakened needles from 0.27 to 0.73, since the
  second one's association recalls the first, whose arousal reaches the needle; in a year
  on a 90k pre-load at dim 1024 casual probes found few awakened needles either way.)
- **distractors**: ``distractors`` per needle, spread between planting and probing: the
  same person with another attribute, or the same attribute of another person.

Step ids: needle ``nI``, its distractors ``nI.dJ``, reminders ``nI.rJ``, probes ``nI.ask``
and ``nI.ask2``; every other step keeps its default id ``s<index>``.

Every draw comes from ``seeding.generator(seed, "generate", ...)``, so the same spec gives
a byte-identical file.

>>> text = render(GenerateSpec(days=3, turns_per_day=4, needles=1, seed=1))
>>> text == render(GenerateSpec(days=3, turns_per_day=4, needles=1, seed=1))
True
>>> [line.split(", at:")[0] for line in text.splitlines() if "probe:" in line]
['- {id: "n0.ask"', '- {id: "n0.ask2"']
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from ..errors import ConfigError, GenerateError
from ..core.params import Count, IsoDatetime, Natural, Seed, Share, Text, Top, declared
from ..core.seeding import generator
from .times import MAX_DAYS
from .vocab import NEEDLES, PERCEIVE, PETS, RELATIONS, REPLY, SAY, SYLLABLES, field_words

DAY_START, DAY_END = 7 * 60, 23 * 60        # turns fall in [07:00, 23:00); the night's idle starts at 23:00
KIND_SHARES = (("say", 0.6), ("reply", 0.3), ("perceive", 0.1))


@declared(error=GenerateError)
@dataclass(frozen=True)
class GenerateSpec:
    """What to generate (see the module docstring); ``id`` defaults to ``gen_<lang>_<days>d_s<seed>``.
    ``days`` 0 in the config generates nothing (``from_config``); a spec needs at least 1."""

    days: Annotated[int, Field(ge=0, le=MAX_DAYS)] = 30     # at most the scenario clock's 100 years
    turns_per_day: Count = 20
    fields: Count = 12
    needles: Natural = 20
    awaken: Share = 0.5
    reminders: Count = 2
    distractors: Natural = 3
    probe_min_days: Count = 14
    probe_max_days: Count = 180
    casual: Share = 0.2
    important: Share = 0.9
    k: Top = 10
    language: Literal["en", "zh"] = "en"
    seed: Seed = 0
    start: IsoDatetime = "2026-01-05T07:00:00"
    id: Text | None = None

    def __post_init__(self):
        if self.days < 1:
            raise GenerateError(f"days: expected an integer >= 1, got {self.days}")
        if self.fields > len(field_words(self.language)):
            raise GenerateError(f"fields: expected at most {len(field_words(self.language))}, got {self.fields}")
        if self.probe_max_days < self.probe_min_days:
            raise GenerateError(f"probe_max_days: expected >= probe_min_days ({self.probe_min_days}), "
                                f"got {self.probe_max_days}")
        if self.id is not None and not (isinstance(self.id, str) and self.id and
                                        all(c.islower() or c.isdigit() or c == "_" for c in self.id)):
            raise GenerateError(f"id: expected lowercase letters, digits and '_' only, got {self.id!r}")

    @property
    def scenario_id(self) -> str:
        return self.id or f"gen_{self.language}_{self.days}d_s{self.seed}"

    @classmethod
    def from_config(cls, node) -> "GenerateSpec | None":
        """``from_config`` (the module's function)."""
        return from_config(node)

    @classmethod
    def options(cls) -> dict[str, object]:
        """Every option and its default, in declaration order."""
        return {f.name: f.default for f in fields(cls)}


@dataclass
class _Step:
    minute: int                      # minutes since d0 00:00
    seq: int                         # tie-break: creation order
    body: dict


class _Timeline:
    def __init__(self):
        self.steps: list[_Step] = []

    def add(self, minute: int, body: dict) -> None:
        self.steps.append(_Step(int(minute), len(self.steps), body))

    def ordered(self) -> list[_Step]:
        return sorted(self.steps, key=lambda s: (s.minute, s.seq))


def _names(rng: np.random.Generator, language: str, count: int, taken: set[str], syllables: int) -> list[str]:
    """``count`` new names of ``syllables`` syllables (capitalised in English), none in ``taken``."""
    pool, out = SYLLABLES[language], []
    while len(out) < count:
        parts = [pool[i] for i in rng.integers(0, len(pool), syllables)]
        name = "".join(parts).capitalize() if language == "en" else "".join(parts)
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def _fill(template: str, words: list[str]) -> str:
    return template.format(a=words[0], b=words[1], c=words[2] if len(words) > 2 else words[0])


def _chatter(spec: GenerateSpec, tl: _Timeline) -> None:
    """Sessions of turns on one field each, every day, and the night's idle."""
    rng = generator(spec.seed, "generate", spec.language, "chatter")
    vocab = field_words(spec.language)
    names = list(vocab)[: spec.fields]
    popularity = 1.0 / np.arange(1, len(names) + 1)
    popularity /= popularity.sum()
    kinds, shares = zip(*KIND_SHARES)
    templates = {"say": SAY, "reply": REPLY, "perceive": PERCEIVE}
    for day in range(spec.days):
        minutes = np.sort(rng.integers(DAY_START, DAY_END, spec.turns_per_day))
        left, field = 0, names[0]
        for minute in minutes:
            if left == 0:
                field, left = names[rng.choice(len(names), p=popularity)], int(rng.geometric(1 / 6))
            left -= 1
            kind = kinds[rng.choice(3, p=shares)]
            words = vocab[field]
            picked = [words[i] for i in rng.choice(len(words), 3, replace=False)]
            options = templates[kind][spec.language]
            text = _fill(options[rng.integers(0, len(options))], picked)
            tl.add(day * 1440 + minute, {kind: text, "hints": {"salience": int(rng.integers(1, 5))}})
        tl.add(day * 1440 + DAY_END, {"idle": "8h"})


def _needles(spec: GenerateSpec, tl: _Timeline) -> None:
    """Plant, distract, remind (awakened needles only) and probe each needle."""
    rng = generator(spec.seed, "generate", spec.language, "needles")
    lang = spec.language
    attrs = list(NEEDLES[lang])
    taken: set[str] = set()
    lo = min(spec.probe_min_days, max(1, spec.days // 2))
    awake = set(rng.permutation(spec.needles)[: int(round(spec.awaken * spec.needles))].tolist())
    for i in range(spec.needles):
        if spec.days < 2:
            raise GenerateError("days: expected at least 2 days to plant and probe needles, got 1")
        plant_day = int(rng.integers(0, max(1, spec.days - lo)))
        hi = min(spec.probe_max_days, spec.days - 1 - plant_day)
        probe_day = plant_day + int(rng.integers(lo, hi + 1))
        plant = plant_day * 1440 + int(rng.integers(DAY_START, 20 * 60))
        probe = probe_day * 1440 + int(rng.integers(12 * 60, 22 * 60))
        person = _person(rng, lang, taken)
        attr = attrs[rng.integers(0, len(attrs))]
        nid = f"n{i}"
        _fact(tl, plant, nid, lang, person, attr, _value(rng, lang, attr, taken), f"people.p{i}.{attr}", 7)
        others = [attrs[(attrs.index(attr) + 1 + o) % len(attrs)] for o in rng.permutation(len(attrs) - 1)]
        told: dict[str, str] = {}   # one value per attribute of this person: repeats agree
        for j in range(spec.distractors):
            at = _daytime(rng, plant, probe - 5)
            if j % 2 == 0:       # the same person, another attribute
                other = others[(j // 2) % len(others)]
                told.setdefault(other, _value(rng, lang, other, taken))
                _fact(tl, at, f"{nid}.d{j}", lang, person, other, told[other], f"people.p{i}.{other}", 4)
            else:                # the same attribute, another person
                stranger = _person(rng, lang, taken) | {"pet": person["pet"]}
                _fact(tl, at, f"{nid}.d{j}", lang, stranger, attr, _value(rng, lang, attr, taken),
                      f"people.p{i}x{j}.{attr}", 4)
        if i in awake:
            # the last reminders come as a short talk about the person before the probe (30 min
            # to 4 h ahead), the others spread since the planting
            near = min(2, spec.reminders)
            times = sorted(_daytime(rng, plant, probe - 240) for _ in range(spec.reminders - near))
            times += sorted(probe - int(m) for m in rng.choice(np.arange(30, 241), near, replace=False))
            for j, at in enumerate(times):
                mention = NEEDLES[lang][attr][2].format(**person)
                tl.add(at, {"id": f"{nid}.r{j}", "say": mention, "hints": {"salience": 5}})
        ask = NEEDLES[lang][attr][1].format(**person)
        for sid, delay, motivation in ((f"{nid}.ask", 0, spec.casual), (f"{nid}.ask2", 2, spec.important)):
            tl.add(probe + delay, {"id": sid, "probe": ask, "motivation": motivation,
                                   "expect": {"recall": [nid], "k": spec.k}})


def _daytime(rng, after: int, before: int) -> int:
    """A minute strictly between ``after`` and ``before`` that falls in a day's turn window."""
    width = DAY_END - DAY_START

    def to_u(minute: int) -> int:       # daytime minutes before ``minute``
        day, rest = divmod(minute, 1440)
        return day * width + min(max(rest - DAY_START, 0), width)

    lo, hi = to_u(after + 1), to_u(before)
    u = int(rng.integers(lo, max(hi, lo + 1)))
    return (u // width) * 1440 + DAY_START + u % width


def _person(rng, lang: str, taken: set[str]) -> dict:
    rel = RELATIONS[lang][rng.integers(0, len(RELATIONS[lang]))]
    pet = PETS[lang][rng.integers(0, len(PETS[lang]))]
    return {"rel": rel, "name": _names(rng, lang, 1, taken, 2)[0], "pet": pet}


def _value(rng, lang: str, attr: str, taken: set[str]) -> str:
    values = NEEDLES[lang][attr][3]
    if values is None:           # a generated pet or place name
        return _names(rng, lang, 1, taken, 2 if attr == "pet" else 3)[0]
    return values[rng.integers(0, len(values))]


def _fact(tl: _Timeline, at: int, sid: str, lang: str, person: dict, attr: str, value: str, key: str,
          salience: int) -> None:
    text = NEEDLES[lang][attr][0].format(value=value, **person)
    tl.add(at, {"id": sid, "say": text, "hints": {"salience": salience,
                                                  "facts": [{"key": key, "text": text, "value": value}]}})


def _flow(value) -> str:
    """``value`` as a YAML flow node (strings JSON-quoted, which YAML reads as double-quoted)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def _at(minute: int) -> str:
    day, rest = divmod(minute, 1440)
    return f"d{day} {rest // 60:02d}:{rest % 60:02d}"


def render(spec: GenerateSpec) -> str:
    """The scenario file's text (deterministic in ``spec``)."""
    tl = _Timeline()
    _chatter(spec, tl)
    _needles(spec, tl)
    start = datetime.fromisoformat(spec.start)
    first = start.hour * 60 + start.minute
    lines = [f"id: {spec.scenario_id}",
             f"title: {_flow(title(spec))}",
             f"language: {spec.language}",
             f"start: {start.isoformat()}",
             "tags: [generated, needles, arousal, tiers]",
             "# mtsbench generate " + " ".join(f"--{k.replace('_', '-')} {getattr(spec, k)}"
                                               for k in spec.options() if k != "id"),
             "steps:"]
    for step in tl.ordered():
        minute = max(step.minute, first)
        lines.append("- " + _flow(({"id": step.body["id"]} if "id" in step.body else {}) |
                                  {"at": _at(minute)} | {k: v for k, v in step.body.items() if k != "id"}))
    return "\n".join(lines) + "\n"


def title(spec: GenerateSpec) -> str:
    return (f"Generated: {spec.days} days, {spec.turns_per_day} turns a day, {spec.needles} needles "
            f"({spec.language}, seed {spec.seed})")


def from_config(node) -> GenerateSpec | None:
    """The spec of a ``generate`` config node; None when ``days`` is 0 (or the node is missing).

    A bad value is a one-line ``ConfigError`` naming ``generate.OPTION``.
    """
    if node is None or not node.get("days"):
        return None
    try:
        return GenerateSpec(**{k: node[k] for k in node})
    except GenerateError as e:
        raise ConfigError(f"generate.{e}") from None


def generated_paths(node, folder: Path | None) -> list[Path]:
    """Write the scenario a ``generate`` config node asks for into ``folder/generated``; [] if none."""
    import tempfile

    spec = from_config(node)
    if spec is None:
        return []
    folder = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="mtsbench-gen-"))
    return [write(spec, folder / "generated")]


def write(spec: GenerateSpec, out: Path) -> Path:
    """Write the scenario to ``out`` (a ``.yaml`` file, or a folder to put ``<id>.yaml`` in)."""
    out = Path(out)
    path = out if out.suffix in (".yaml", ".yml") else out / f"{spec.scenario_id}.yaml"
    if path.stem != spec.scenario_id:
        spec = replace(spec, id=path.stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(spec), encoding="utf-8")
    return path


def generate_main(argv: list[str]) -> int:
    """``mtsbench generate [--OPTION VALUE ...] [--out FILE|DIR]``: write a scenario, print its path."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="mtsbench generate", description="Write a long-horizon scenario "
                                     "generated from a seed (same options, same bytes).")
    for name, default in GenerateSpec.options().items():
        kind = str if default is None else type(default)
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default, metavar=kind.__name__.upper(),
                            help=f"default {default}")
    parser.add_argument("--out", default=".", help="a .yaml file, or a folder for <id>.yaml (default: .)")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    options = {k: v for k, v in vars(ns).items() if k != "out"}
    try:
        spec = GenerateSpec(**options)
        path = write(spec, Path(ns.out))
    except GenerateError as e:
        print(f"mtsbench: generate: --{str(e).replace('_', '-', str(e).index(':'))}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"mtsbench: generate: {ns.out}: cannot write ({e.strerror or type(e).__name__})", file=sys.stderr)
        return 2
    steps = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("- "))
    print(f"{path} ({steps} steps, {spec.days} days, {spec.needles} needles)")
    return 0
