"""The prompts leak nothing a scenario expects (issue 15, item 7).

A real model copies a prompt's examples: with ``user.allergy.milk`` as the example key it
names unrelated facts ``user.allergy.milk``, and an expectation naming that key passes
because the prompt gave it away. So no prompt text (every template of ``llm.prompts``, en
and zh, every task) may contain, from any bundled scenario or a generated one (en and zh):

- a **key or category** (facts, events, impressions, and the keys checks name), whole;
- a **key part** of four letters or more (``illness`` of ``user.illness.cold``), but for the
  generic parts in ``STOP``;
- a **distinctive word** of a hint, expect or check text: a word of five letters or more
  that is not in ``STOP`` (whole words, case-insensitive);
- in Chinese, a **character pair** of a hint, expect or check text (texts have no spaces:
  any two adjacent CJK characters), but for the generic pairs in ``STOP_ZH``.

Scenarios are read as raw YAML (the loader's model is not needed to find strings).
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from mtsbench.llm import prompts
from mtsbench.llm.tasks import REGISTRY
from mtsbench.scenario.generate import GenerateSpec, render

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
NAMES = ("key", "category")                 # mapping fields that name a key or a category
TEXTS = ("hints", "expect", "check")         # subtrees whose strings are hint or expectation texts
STOP = frozenset("user users people again about would could their there these those which while "
                 "after before being other where".split())
STOP_ZH = frozenset(["用户", "可能", "的是", "一个", "我们", "他们", "没有", "什么"])


def _walk(node, inside: bool, names: set, texts: set) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k in NAMES and isinstance(v, str):
                names.add(v)
            _walk(v, inside or k in TEXTS, names, texts)
    elif isinstance(node, list):
        for v in node:
            _walk(v, inside, names, texts)
    elif isinstance(node, str) and inside:
        texts.add(node)


def scenario_documents() -> dict[str, dict]:
    """Every bundled scenario and a generated one per language, as raw YAML documents."""
    docs = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(SCENARIOS.glob("*.yaml"))}
    for language in ("en", "zh"):
        spec = GenerateSpec(days=60, needles=12, language=language, seed=0)
        docs[spec.scenario_id] = yaml.safe_load(render(spec))
    return docs


@lru_cache(maxsize=1)
def forbidden() -> dict[str, frozenset[str]]:
    """What no prompt may contain: keys/categories, key parts, words, Chinese pairs (module docstring)."""
    names: set[str] = set()
    texts: set[str] = set()
    for doc in scenario_documents().values():
        _walk(doc, False, names, texts)
    parts = {p for n in names for p in re.split(r"[._\s]+", n.lower()) if len(p) >= 4 and p.isalpha()} - STOP
    words = {w for t in texts | names for w in re.findall(r"[a-z]+", t.lower()) if len(w) >= 5} - STOP
    pairs = {run[i:i + 2] for t in texts for run in re.findall(r"[\u3400-\u9fff]+", t) for i in range(len(run) - 1)}
    return {"names": frozenset(n for n in names if n.strip()), "parts": frozenset(parts), "words": frozenset(words),
            "pairs": frozenset(pairs - STOP_ZH)}


def prompt_texts() -> dict[str, str]:
    """Every prompt template: each task's templates (under its name in upper case), and each
    other upper-case table of ``llm.prompts`` and of the tasks' modules, per language (nested
    tables flattened)."""
    out = {}

    def flatten(where: str, value) -> None:
        if isinstance(value, str):
            out[where] = value
        elif isinstance(value, dict):
            for k, v in value.items():
                flatten(f"{where}.{k}", v)

    for module in [prompts] + [sys.modules[t.call.__module__] for t in REGISTRY.values()]:
        for name in dir(module):
            table = getattr(module, name)
            if name.isupper() and name != "TEMPLATES" and isinstance(table, dict) and set(table) <= {"en", "zh"}:
                flatten(name, table)
    for task in REGISTRY.values():
        flatten(task.name.upper(), dict(task.templates))
    return out


def test_the_collections_are_not_empty():
    """The test looks at something: the scenarios' names and words, and every task's template."""
    f = forbidden()
    assert {"user.allergy.milk", "trip.disneyland", "user.illness.cold"} <= f["names"]
    assert {"illness", "disneyland", "milk", "cold"} <= f["parts"] and "throat" in f["words"]
    assert "感冒" in f["pairs"] and "迪士" in f["pairs"]
    texts = prompt_texts()
    for table in ("RATE_ATTENTION", "SUMMARIZE", "MERGE_EVENT", "JUDGE_RELATION", "REASSESS_BELIEF", "INFER",
                  "SAME_EVENT"):
        assert {f"{table}.en", f"{table}.zh"} <= set(texts)


@pytest.mark.parametrize("where", sorted(prompt_texts()))
def test_no_prompt_names_what_a_scenario_expects(where):
    text = prompt_texts()[where]
    low = text.lower()
    f = forbidden()
    leaks = sorted(n for n in f["names"] if n.lower() in low)
    leaks += sorted(w for w in f["parts"] | f["words"] if re.search(rf"(?<![a-z]){w}(?![a-z])", low))
    leaks += sorted(p for p in f["pairs"] if p in text)
    assert not leaks, f"{where} leaks {leaks}"
