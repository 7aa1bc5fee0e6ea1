"""Scenario YAML out of an importer's drafts: deterministic bytes, checked by the loader.

``write_all(drafts, out_dir)`` renders every draft first, writes each as ``<id>.yaml``,
then loads each file back with ``load_scenario``: an importer that produced a file the
loader refuses fails loudly instead of leaving it to be found at run time. The same
drafts always give byte-identical files (no clock, no dict-order surprises).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..loader import ScenarioError, load_scenario
from .common import DataError


@dataclass
class Draft:
    """A scenario being built: top-level fields, steps as plain dicts, comments per step."""

    id: str
    title: str
    start: str
    tags: list[str]
    header: str
    steps: list[dict] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)   # step index -> a comment line above it
    language: str = "en"

    def add_probe(self, step: dict, expect: dict, k: int | None, motivation: float | None, comment: str) -> None:
        """Append a probe step with its expectations, the command's k and motivation (if given)
        and a comment line (the data set's answer)."""
        if motivation is not None:
            step["motivation"] = motivation
        if k is not None:
            expect["k"] = k
        if expect:
            step["expect"] = expect
        self.comments[len(self.steps)] = comment
        self.steps.append(step)


_FAST_DUMPER = getattr(yaml, "CSafeDumper", None)      # libyaml's emitter, when PyYAML was built with it
_ESCAPED_APART = re.compile("[\x85\U00010000-\U0010ffff]")


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(k)
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


def _dump(value) -> str:
    """``value`` as YAML (block style for mappings holding lists or mappings, flow otherwise;
    no line folding). libyaml's emitter writes it about 30 times faster than PyYAML's own, and
    the same bytes except for two kinds of character, which it escapes and PyYAML keeps: NEL
    (U+0085) and those beyond U+FFFF (an emoji) -- found by comparing the two on every
    character of the BMP in four contexts and on some 56,000 imported steps. A value holding
    one of them is written by PyYAML's emitter, the reference."""
    options = dict(sort_keys=False, allow_unicode=True, width=1 << 30, default_flow_style=None)
    if _FAST_DUMPER is not None and not any(_ESCAPED_APART.search(t) for t in _texts(value)):
        return yaml.dump(value, Dumper=_FAST_DUMPER, **options)
    return yaml.safe_dump(value, **options)


def render(draft: Draft) -> str:
    """The scenario file's text.

    >>> d = Draft("x", "A title", "2023-05-08T13:56:00", ["locomo"], "made by hand",
    ...           [{"id": "D1:1", "at": "2023-05-08T13:56:00", "say": "Caroline: Hi!"}], {0: "first turn"})
    >>> print(render(d), end="")
    # made by hand
    id: x
    title: A title
    language: en
    start: '2023-05-08T13:56:00'
    tags: [locomo]
    steps:
    # first turn
    - {id: 'D1:1', at: '2023-05-08T13:56:00', say: 'Caroline: Hi!'}
    """
    top = {"id": draft.id, "title": draft.title, "language": draft.language, "start": draft.start,
           "tags": draft.tags}
    parts = ["".join(f"# {line}\n" for line in draft.header.splitlines()), _dump(top), "steps:\n"]
    for i, step in enumerate(draft.steps):
        if i in draft.comments:
            parts.append(f"# {' '.join(draft.comments[i].split())}\n")
        parts.append(_dump([step]))
    return "".join(parts)


def write_all(drafts: list[Draft], out_dir: Path) -> list[Path]:
    """Write every draft to ``out_dir/<id>.yaml`` and check each with the scenario loader."""
    texts = [(out_dir / f"{d.id}.yaml", render(d)) for d in drafts]
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for path, text in texts:
            path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise DataError(f"{out_dir}: cannot write the scenarios ({e.strerror or type(e).__name__})") from None
    for path, _ in texts:
        try:
            load_scenario(path)
        except ScenarioError as e:
            raise DataError(f"the importer wrote a scenario the loader refuses (a bug): {e}") from None
    return [p for p, _ in texts]
