"""``mtsbench import beam --hints silver`` (issue 52): the oracle extractor from BEAM's own question
annotations, and the default import left byte for byte as it was.

The small chats are tests/data/beam_small (written for the tests, not BEAM's); hypothesis draws chats
in the authors' layout too. With ``MTSBENCH_BEAM`` (a folder of BEAM's chats) the real chats are checked:
the silver import is the default import plus hints and nights, nothing else.
"""

import hashlib
import json
import os
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtsbench.scenario import load_scenario
from mtsbench.scenario.importers import beam
from mtsbench.scenario.importers.writer import render

BEAM = Path(__file__).parent / "data" / "beam_small"

# sha256 of each file of the default import of tests/data/beam_small (--turns all, then --turns user),
# computed with the importer before issue 52 (commit 79e44fd): the default output must never change.
BEFORE = {
    ("all", "beam_100k_1.yaml"): "647a4f137d0cc33054800f9d20eaf607cdf3eb4ada3e8bca59500671217c8cf7",
    ("all", "beam_100k_2.yaml"): "433364c654a04c377819aab44838a24b8282048820d1b31f4dada19780d3cc9d",
    ("user", "beam_100k_1.yaml"): "ffd261e19297e0c31afcb373f778d7ee88cab7c60701ed92c05ffec071262f87",
    ("user", "beam_100k_2.yaml"): "41c1f3b2641f54dfb2bccef1d8ca78d43594f7a59d1dd9b58a08f42b3754dd2d",
}


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.yaml"))}


def test_the_default_import_is_byte_for_byte_what_it_was(cli, tmp_path):
    for turns in ("all", "user"):
        done = cli("import", "beam", BEAM, "-o", tmp_path / turns, "--turns", turns)
        assert done.returncode == 0, done.stderr
        got = digests(tmp_path / turns)
        assert got == {name: digest for (t, name), digest in BEFORE.items() if t == turns}, turns
        assert "silver" not in done.stdout and "night" not in "".join(p.read_text() for p in (tmp_path / turns).iterdir())


def silver_import(cli, tmp_path, source=BEAM, out="silver"):
    done = cli("import", "beam", source, "-o", tmp_path / out, "--hints", "silver")
    assert done.returncode == 0, done.stderr
    return done.stdout, {p.stem: load_scenario(p) for p in sorted((tmp_path / out).glob("*.yaml"))}


def test_silver_hints_name_each_statement_of_a_changed_fact(cli, tmp_path):
    out, scenarios = silver_import(cli, tmp_path)
    s = scenarios["beam_100k_1"]
    steps = {x.id: x for x in s.steps}
    hinted = {x.id: x.hints.facts for x in s.steps if x.hints.facts}
    assert sorted(hinted) == ["m0", "m4", "m7", "m9"]       # the roles of the update and the contradiction
    update, contra = "silver.beam_100k_1.q_knowledge_update_1", "silver.beam_100k_1.q_contradiction_resolution_1"
    assert [(f.key, f.value) for f in hinted["m0"]] == [(update, "statement 1")]
    assert [(f.key, f.value) for f in hinted["m7"]] == [(update, "statement 2")]
    assert [(f.key, f.value) for f in hinted["m4"] + hinted["m9"]] == [(contra, "statement 1"), (contra, "statement 2")]
    for sid, facts in hinted.items():             # the statement's own words, the default belief, nothing else
        assert [f.text for f in facts] == [steps[sid].text] and all(f.belief == 0.7 for f in facts)
        assert steps[sid].hints.salience is None and steps[sid].hints.event is None and not steps[sid].hints.infer
    nights = [x for x in s.steps if x.kind == "idle"]
    assert [(x.id, x.duration) for x in nights] == [("night_1", 8 * 3600.0), ("night_2", 8 * 3600.0)]
    order = [x.id for x in s.steps]
    assert order.index("night_1") == order.index("m6") + 1 and order.index("night_2") == order.index("m10") + 1
    assert nights[0].at == steps["m6"].at + 3600 and nights[1].at + 8 * 3600 <= steps["q_information_extraction_1"].at
    lines = [x.strip() for x in out.splitlines()]
    for line in ("silver: questions: 2", "silver: fact hints: 4", "silver: messages hinted: 4", "silver: idle nights: 3"):
        assert line in lines, out


def test_silver_import_is_the_default_plus_hints_and_nights(cli, tmp_path):
    silver_import(cli, tmp_path)
    assert cli("import", "beam", BEAM, "-o", tmp_path / "default").returncode == 0
    for p in sorted((tmp_path / "default").glob("*.yaml")):
        assert stripped(yaml.safe_load((tmp_path / "silver" / p.name).read_text())) == \
            yaml.safe_load(p.read_text())
    assert cli("validate", tmp_path / "silver").returncode == 0


def stripped(doc: dict) -> dict:
    """A scenario document without what --hints silver adds: hints and idle steps."""
    steps = [{k: v for k, v in s.items() if k != "hints"} for s in doc["steps"] if "idle" not in s]
    return {**doc, "steps": steps}


def test_an_unknown_hints_mode_is_one_line(cli, tmp_path):
    done = cli("import", "beam", BEAM, "-o", tmp_path / "x", "--hints", "gold")
    assert done.returncode == 2 and "--hints: invalid choice: 'gold'" in done.stderr
    with pytest.raises(beam.DataError, match=r"--hints: expected one of none, silver, got 'gold'"):
        beam.convert(BEAM, hints="gold")


# ---- hypothesis: chats in the authors' layout ---------------------------------------------------------

@st.composite
def chats(draw):
    """(chat.json, probing_questions.json) of a small chat: 1-3 batches, dated or not, of 1-3
    exchanges of a user message and maybe a reply; a knowledge update, a contradiction and an
    information question naming random messages (some twice, some outside the chat)."""
    batches, mid, day = [], 0, date(2024, 1, 1)
    for b in range(draw(st.integers(1, 3))):
        day += timedelta(days=draw(st.integers(-1, 20)))
        exchanges = []
        for e in range(draw(st.integers(1, 3))):
            anchor = {"time_anchor": day.strftime("%B-%d-%Y")} if e == 0 and draw(st.booleans()) else {}
            exchange = [{"role": "user", "id": str(mid), "content": f"user says {mid} ->-> {b + 1},{e}", **anchor}]
            mid += 1
            if draw(st.booleans()):
                exchange.append({"role": "assistant", "id": str(mid), "content": f"reply {mid}"})
                mid += 1
            exchanges.append(exchange)
        batches.append({"batch_number": b + 1, "turns": exchanges})
    ids = st.integers(0, mid + 2)
    roles = st.lists(ids, min_size=1, max_size=3)
    questions = {
        "knowledge_update": [{"question": "now?", "answer": "x",
                              "source_chat_ids": str({"original_info": draw(roles), "updated_info": draw(roles)})}],
        "contradiction_resolution": [{"question": "which?", "ideal_answer": "both",
                                      "source_chat_ids": {"first_statement": draw(roles),
                                                          "second_statement": draw(roles)}}],
        "information_extraction": [{"question": "what?", "answer": "y", "source_chat_ids": draw(roles)}]}
    return batches, questions


def write_chat(folder: Path, batches, questions) -> Path:
    chat = folder / "100K" / "7"
    (chat / "probing_questions").mkdir(parents=True, exist_ok=True)
    (chat / "chat.json").write_text(json.dumps(batches))
    (chat / "probing_questions" / "probing_questions.json").write_text(json.dumps(questions))
    return folder


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chat=chats())
def test_silver_adds_hints_and_nights_and_nothing_else(tmp_path_factory, chat):
    source = write_chat(tmp_path_factory.mktemp("beam"), *chat)
    (default,), _ = beam.convert(source)
    (silver,), _ = beam.convert(source, hints="silver")
    by_id = {s["id"]: s for s in silver.steps}
    roles = {}                            # step id -> the (key, value) pairs its questions' roles give it
    for s in silver.steps:
        for role_n, (_, ids) in enumerate((s.get("expect") or {}).get("recall_roles", {}).items(), 1):
            for sid in ids:
                roles.setdefault(sid, []).append((f"silver.{silver.id}.{s['id']}", f"statement {role_n}"))
    for s in silver.steps:
        facts = s.get("hints", {}).get("facts", [])
        assert set(s.get("hints", {})) <= {"facts"}
        for f in facts:                   # the statement's own words, on a step a role names, first role first
            assert set(f) == {"key", "text", "value"} and f["text"] == s.get("say", s.get("reply"))
            assert (f["key"], f["value"]) == next(kv for kv in roles[s["id"]] if kv[0] == f["key"])
        assert len({f["key"] for f in facts}) == len(facts)
    assert set(roles) == {sid for sid, s in by_id.items() if s.get("hints")}
    times = [s["at"] for s in silver.steps]
    assert times == sorted(times)         # a night ends before the next step
    for i, s in enumerate(silver.steps):
        if "idle" in s:
            assert "idle" not in silver.steps[i - 1] and i + 1 < len(silver.steps)
    without = [{k: v for k, v in s.items() if k != "hints"} for s in silver.steps if "idle" not in s]
    assert without == default.steps
    assert [silver.comments[i] for i in sorted(silver.comments)] == [default.comments[i] for i in sorted(default.comments)]


@pytest.mark.skipif(not os.environ.get("MTSBENCH_BEAM"), reason="set MTSBENCH_BEAM to a folder of BEAM's chats")
def test_real_chats_silver_is_the_default_import_plus_hints(cli, tmp_path):
    """On BEAM's own chats: the silver import with its hints, nights and header line taken out renders
    to the default import's bytes, and every hinted message is a statement of a changed fact."""
    source = Path(os.environ["MTSBENCH_BEAM"])
    done = cli("import", "beam", source, "-o", tmp_path / "default")
    assert done.returncode == 0, done.stderr
    drafts, _ = beam.convert(source, hints="silver")
    assert len(drafts) == len(list((tmp_path / "default").glob("*.yaml")))
    hinted = 0
    for d in drafts:
        roles = {sid for s in d.steps if s.get("category") in beam.SILVER
                 for ids in (s.get("expect") or {}).get("recall_roles", {}).values() for sid in ids}
        hinted += sum(1 for s in d.steps if "hints" in s)
        assert {s["id"] for s in d.steps if "hints" in s} <= roles
        kept = [i for i, s in enumerate(d.steps) if "idle" not in s]
        d.comments = {kept.index(i): c for i, c in d.comments.items()}
        d.steps = [{k: v for k, v in d.steps[i].items() if k != "hints"} for i in kept]
        d.header = "\n".join(d.header.splitlines()[:2])
        assert render(d) == (tmp_path / "default" / f"{d.id}.yaml").read_text(encoding="utf-8"), d.id
    assert hinted > 0


def rankings(run: Path) -> list[tuple]:
    """Every probe's and reply's ranking of a run: (scenario, step, record, ids, scores, provenance)."""
    from mtsbench.outputs.results import load

    records, _ = load(run / "results.parquet")
    ranked = records[records["ranked_ids"].notna()]
    return [(r.scenario, r.step, r.record, list(r.ranked_ids), [round(x, 9) for x in r.ranked_scores],
             [list(p) for p in r.ranked_provenance]) for r in ranked.itertuples()]


@pytest.mark.parametrize("system", [["preset=flat_rag", "workload=reply"], ["preset=recency_only"],
                                    ["system=bm25", "system.context=2"]])
def test_flat_systems_see_nothing_of_the_silver_hints(cli, tmp_path, system):
    """A flat system ranks the same on the silver import as on the default one: the hints are read by
    the mock LLM only, and the nights change nothing it ranks by."""
    silver_import(cli, tmp_path)
    assert cli("import", "beam", BEAM, "-o", tmp_path / "default").returncode == 0
    for name in ("default", "silver"):
        done = cli("run", f"scenarios=[{tmp_path / name}]", *system, f"hydra.run.dir={tmp_path / ('run_' + name)}")
        assert done.returncode == 0, done.stderr
    a, b = rankings(tmp_path / "run_default"), rankings(tmp_path / "run_silver")
    assert a and a == b
    llm = [json.loads((tmp_path / f"run_{n}" / "summary.json").read_text())["overall"]["llm_calls"]
           for n in ("default", "silver")]
    assert llm == [0, 0]
