"""Mutation fuzz of the bundled scenarios (issue 16, item 7): hypothesis mutates their
parsed YAML (values replaced by odd ones, keys dropped or added, steps dropped, duplicated
or swapped) and their text (characters deleted, inserted or replaced); every mutant must
load or be refused with the loader's contract: a ``ScenarioError`` whose message is one
line starting with the file's path. Anything else (another exception, a second line) is a
failure. 700 structural + 300 textual mutants per run (about 10-20 s)."""

import atexit
import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtsbench.errors import ScenarioError
from mtsbench.scenario.loader import load_scenario

BUNDLED = sorted((Path(__file__).resolve().parent.parent / "scenarios").glob("*.yaml"))
TEXTS = {p.stem: p.read_text(encoding="utf-8") for p in BUNDLED}
PARSED = {name: yaml.safe_load(text) for name, text in TEXTS.items()}
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
WORK = Path(tempfile.mkdtemp(prefix="mtsbench-fuzz-"))     # one folder, each mutant overwrites its file
atexit.register(shutil.rmtree, WORK, True)
OUTCOMES = {"loaded": 0, "refused": 0}                      # counted for the closing note

ODD = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["d1000000000 08:00", "1000000000y", "３h", "d３ 08:00", "-1h", "0s", "99999-01-01T00:00",
                     "25:61", "", "~", "NaN", "1e308", "s0", "milk", "d0 08:00", "P1D"]),
    st.lists(st.integers(min_value=-5, max_value=10**20), max_size=3),
    st.dictionaries(st.sampled_from(["min", "max", "k", "recall", "say", "at", "x"]), st.integers(), max_size=2),
)


def _paths(node, prefix=()):
    """Every (path, value) inside a parsed scenario."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


def _set(root, path, value):
    node = root
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _check(name: str, text: str) -> None:
    path = WORK / f"{name}.yaml"              # named as the scenario's id, so the id check passes
    path.write_text(text, encoding="utf-8")
    try:
        load_scenario(path)
        OUTCOMES["loaded"] += 1
    except ScenarioError as e:
        message = str(e)
        assert "\n" not in message and message.startswith(str(path)), message
        OUTCOMES["refused"] += 1


@st.composite
def structural(draw):
    import copy

    name = draw(st.sampled_from(sorted(PARSED)))
    doc = copy.deepcopy(PARSED[name])
    for _ in range(draw(st.integers(1, 3))):
        places = [p for p, _ in _paths(doc) if p]
        how = draw(st.sampled_from(["replace", "drop", "add", "steps"]))
        path = draw(st.sampled_from(places))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        if how == "replace":
            _set(doc, path, draw(ODD))
        elif how == "drop":
            del parent[path[-1]]
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["hint", "expect", "idle", "probe", "say", "k", "checks", "zz"]))] = draw(ODD)
        elif how == "steps" and isinstance(doc.get("steps"), list) and doc["steps"]:
            steps = doc["steps"]
            i, j = draw(st.integers(0, len(steps) - 1)), draw(st.integers(0, len(steps) - 1))
            op = draw(st.sampled_from(["swap", "dup", "del"]))
            if op == "swap":
                steps[i], steps[j] = steps[j], steps[i]
            elif op == "dup":
                steps.insert(j, copy.deepcopy(steps[i]))
            else:
                del steps[i]
    return name, yaml.dump(doc, Dumper=DUMPER, allow_unicode=True, sort_keys=False)


@st.composite
def textual(draw):
    name = draw(st.sampled_from(sorted(TEXTS)))
    text = TEXTS[name]
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(["", ":", "- ", "\n", "  ", "{", "]", "'", "&a", "*a", "!!python/object", "\t",
                                      "９", "\x00", "#", "?"]))
        cut = draw(st.integers(0, 3))
        text = text[:i] + piece + text[i + cut:]
    return name, text


@settings(max_examples=700, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(structural())
def test_structural_mutants_load_or_are_refused_in_one_line(mutant):
    _check(*mutant)


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(textual())
def test_textual_mutants_load_or_are_refused_in_one_line(mutant):
    _check(*mutant)
