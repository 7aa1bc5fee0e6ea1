"""The scenario JSON Schema (``mtsbench schema``): generated from the loader's pydantic models,
committed as docs/scenario.schema.json (kept current by a test), and in agreement with the
loader: every bundled scenario passes it, a wrong field is refused by both, and the
malformed files it lets through are exactly those only the loader's cross-step rules catch.

The checks against the schema use the ``jsonschema`` library (the ``test`` extra) and are
skipped without it. Files are read as an editor reads them: YAML timestamps stay text.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtsbench.scenario import ScenarioError, load_scenario
from mtsbench.scenario.schema_models import json_schema, schema_main, schema_text

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "docs" / "scenario.schema.json"
DATA = Path(__file__).parent / "data"
VALID = sorted((REPO / "scenarios").glob("*.yaml")) + sorted((DATA / "valid").glob("*.yaml"))
# malformed files only the loader refuses: YAML itself, and rules across fields, steps or the file name
LOADER_ONLY = {"bad_yaml", "duplicate_key", "impossible_date", "id_mismatch", "backwards", "before_start",
               "inside_idle", "duplicate_id", "default_id_dup", "unknown_ref", "later_ref", "later_same_as",
               "self_ref", "idle_ref", "unknown_check_ref", "sessions_ref", "abstain_recall", "min_above_max",
               "role_not_evidence"}


class _EditorLoader(yaml.SafeLoader):
    """YAML as a YAML 1.2 editor reads it: no timestamp type (``2026-03-02T09:00:00`` is text)."""


_EditorLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def editor_view(text: str):
    return yaml.load(text, Loader=_EditorLoader)


@pytest.fixture(scope="module")
def validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_copy_is_current(cli):
    assert COMMITTED.read_text(encoding="utf-8") == schema_text(), \
        "docs/scenario.schema.json is stale: run  mtsbench schema -o docs/scenario.schema.json"
    done = cli("schema")
    assert done.returncode == 0 and done.stdout == schema_text() and not done.stderr


def test_schema_command_writes_a_file_or_fails_in_one_line(tmp_path, capsys):
    out = tmp_path / "scenario.schema.json"
    assert schema_main(["-o", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == json_schema()
    assert capsys.readouterr().out == f"wrote {out}\n"
    assert schema_main(["-o", str(tmp_path / "no" / "such" / "folder" / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mtsbench: cannot write ") and err.count("\n") == 1


def test_the_schema_documents_fields_and_defaults():
    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    defs = schema["$defs"]
    assert defs["ProbeExpect"]["properties"]["k"]["default"] == 5
    assert defs["Fact"]["properties"]["belief"]["default"] == 0.7
    assert defs["ProbeStep"]["properties"]["motivation"]["default"] == 0.5
    assert defs["ConjectureCheck"]["properties"]["present"]["default"] is True
    assert schema["properties"]["language"]["enum"] == ["en", "zh"]
    assert {s["$ref"].rsplit("/", 1)[1] for s in schema["properties"]["steps"]["items"]["oneOf"]} == {
        "SayStep", "ReplyStep", "PerceiveStep", "ProbeStep", "IdleStep", "CheckStep"}
    undocumented = [f"{name}.{prop}" for name, d in [("top", schema), *defs.items()]
                    for prop, spec in d.get("properties", {}).items() if not spec.get("description")]
    assert undocumented == []
    assert all(d.get("additionalProperties") is False for d in [schema, *defs.values()])


@pytest.mark.parametrize("path", VALID, ids=[p.name for p in VALID])
def test_valid_scenarios_pass_the_schema(validator, path):
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(editor_view(path.read_text("utf-8")))]
    assert errors == []


@pytest.mark.parametrize("path", sorted((DATA / "malformed").glob("*.yaml")), ids=lambda p: p.stem)
def test_malformed_files_the_schema_can_see_are_refused(validator, path):
    try:
        doc = editor_view(path.read_text("utf-8"))
    except yaml.YAMLError:
        assert path.stem in LOADER_ONLY
        return
    refused = any(True for _ in validator.iter_errors(doc))
    assert refused == (path.stem not in LOADER_ONLY)


WRONG_FIELDS = {  # a valid scenario with one field wrong -> the loader's message after "step 1 (s1): "
    "{at: d0 09:05, probe: 'Who?', expect: {recal: [name]}}": "expect.recal: 'recal' is not a known key; "
                                                            "did you mean 'recall'?",
    "{at: d0 09:05, probe: 'Who?', motivaton: 0.9}": "motivaton: 'motivaton' is not a known key; "
                                                   "did you mean 'motivation'?",
    "{at: d0 09:05, say: Hi, motivation: 0.9}": "motivation: only allowed on probe steps, not on a 'say' step",
    "{at: d0 09:05, probe: 'Who?', expect: {k: 0}}": "expect.k: expected an integer from 1 to 10,000, got 0",
    "{at: d0 09:05, idle: 8 hours}": "idle: expected a duration: a number and a unit s, m, h, d, w, mo or y "
                                     "(e.g. 90s, 30m, 1.5h, 3d, 2w, 6mo, 1y), got '8 hours'",
    "{at: d0 25:00, say: Hi}": "at: expected HH:MM with hours 00-23 and minutes 00-59, got 'd0 25:00'",
    "{at: d0 09:05, say: Hi, hints: {facts: [{key: a, text: t, value: 1, belief: 2}]}}":
        "hints.facts[0].belief: expected a number from 0 to 1, got 2",
}


@pytest.mark.parametrize("step", list(WRONG_FIELDS), ids=range(len(WRONG_FIELDS)))
def test_a_wrong_field_is_refused_by_the_loader_and_the_schema(validator, tmp_path, step):
    text = ("id: wrong\ntitle: One field wrong\nlanguage: en\nstart: 2026-03-02T09:00:00\nsteps:\n"
            "  - {id: name, at: d0 09:00, say: My name is Ada.}\n"
            f"  - {step}\n")
    path = tmp_path / "wrong.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == f"{path}: step 1 (s1): {WRONG_FIELDS[step]}"
    assert any(True for _ in validator.iter_errors(editor_view(text)))
    path.write_text(text.replace(f"  - {step}\n", "  - {at: d0 09:05, probe: 'Who?', expect: {recall: [name]}}\n"))
    load_scenario(path)                                          # the same file, fixed: valid for both
    assert not any(True for _ in validator.iter_errors(editor_view(path.read_text())))


# --- what the loader accepts, the schema accepts (damaged copies of valid files) -------------------------

BASES = {p.stem: yaml.safe_load(p.read_text("utf-8")) for p in VALID}
JUNK = st.one_of(st.none(), st.booleans(), st.integers(-5, 400), st.floats(allow_nan=False), st.text(max_size=8),
                 st.sampled_from(["d1 08:00", "d3 07:00", "30d", "2w", "allergy", "s1", "zh", "2026-03-09"]),
                 st.lists(st.sampled_from(["allergy", "s1", 3]), max_size=2),
                 st.dictionaries(st.sampled_from(["min", "max", "key", "step", "x"]), st.integers(0, 3), max_size=2))


def _places(node, path=()):
    yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _places(child, (*path, key))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_what_the_loader_accepts_the_schema_accepts(validator, tmp_path_factory, data):
    name = data.draw(st.sampled_from(sorted(BASES)))
    doc = copy.deepcopy(BASES[name])
    place = data.draw(st.sampled_from([p for p in _places(doc) if p]))
    parent = doc
    for key in place[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()):
        del parent[place[-1]]
    else:
        parent[place[-1]] = data.draw(JUNK)
    text = yaml.safe_dump(doc, allow_unicode=True)
    path = tmp_path_factory.mktemp("damaged") / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_scenario(path)
    except ScenarioError:
        return
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(editor_view(text))]
    assert errors == [], text
