"""``mtsbench import beam``: BEAM chats written for these tests (tests/data/beam_small), through the CLI."""

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from mtsbench.scenario import load_scenario

BEAM = Path(__file__).parent / "data" / "beam_small"


def imported(cli, tmp_path, source=BEAM, *extra, out="out"):
    done = cli("import", "beam", source, "-o", tmp_path / out, *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout, {p.stem: load_scenario(p) for p in sorted((tmp_path / out).glob("*.yaml"))}


def test_every_message_is_a_step_on_its_batch_day(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path)
    assert sorted(scenarios) == ["beam_100k_1", "beam_100k_2"]
    s = scenarios["beam_100k_1"]
    messages = [x for x in s.steps if x.kind in ("say", "reply")]
    assert [x.id for x in messages] == [f"m{i}" for i in range(11)]
    assert [x.kind for x in messages[:5]] == ["say", "reply", "say", "reply", "say"]
    assert messages[0].text.endswith("right now.")                     # the position marker is stripped
    assert s.start == datetime(2024, 3, 4, 8, 0) and s.tags == ("beam", "100k")
    day = 86400.0
    # batch 1: three exchanges spread over 08:00-22:00 (14 h / 3 apart), messages of one exchange 60 s apart
    assert [x.at for x in messages[:7]] == [0.0, 60.0, 14 * 3600 / 3, 14 * 3600 / 3 + 60, 14 * 3600 / 3 + 120,
                                            2 * 14 * 3600 / 3, 2 * 14 * 3600 / 3 + 60]
    assert messages[7].at == (datetime(2024, 4, 15, 8) - s.start).total_seconds()
    probes = [x for x in s.steps if x.kind == "probe"]
    assert probes[0].at == messages[-1].at + day and probes[1].at - probes[0].at == 60
    for line in ("chats: 2", "messages: 15", "position markers stripped: 1", "questions: knowledge_update: 1"):
        assert line in [x.strip() for x in out.splitlines()], line


def test_questions_keep_their_evidence_roles_and_sessions(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path)
    probe = {x.category: x for x in scenarios["beam_100k_1"].steps if x.kind == "probe"}
    update = probe["knowledge_update"]
    assert update.expect.recall == ("m0", "m7") and update.answer == "32 km"
    assert update.expect.recall_roles == (("original_info", ("m0",)), ("updated_info", ("m7",)))
    assert [name for name, _ in update.expect.recall_sessions] == ["batch_1", "batch_2"]
    assert dict(update.expect.recall_sessions)["batch_2"] == ("m7", "m8", "m9", "m10")   # the whole batch
    contra = probe["contradiction_resolution"]                 # a real dict, and an id outside the chat dropped
    assert contra.expect.recall_roles == (("first_statement", ("m4",)), ("second_statement", ("m9",)))
    assert probe["event_ordering"].expect.recall == ("m2", "m5", "m7") and probe["event_ordering"].expect.recall_roles == ()
    assert probe["abstention"].abstain and probe["abstention"].expect.recall == ()
    assert probe["summarization"].expect.recall == ()          # evidence that does not parse: no recall
    assert probe["information_extraction"].expect.recall == ("m2",)
    lines = [x.strip() for x in out.splitlines()]
    assert "evidence ids naming no imported message dropped: 2 (e.g. beam_100k_1 q_contradiction_resolution_1: 42, " \
           "beam_100k_1 q_event_ordering_1: 'x')" in lines
    assert "evidence that does not parse dropped: 1 (e.g. beam_100k_1 q_summarization_1)" in lines


def test_user_turns_only_and_byte_identical_output(cli, tmp_path):
    imported(cli, tmp_path, BEAM, out="a")
    imported(cli, tmp_path, BEAM, out="b")
    for p in (tmp_path / "a").glob("*.yaml"):
        assert p.read_bytes() == (tmp_path / "b" / p.name).read_bytes()
    out, scenarios = imported(cli, tmp_path, BEAM, "--turns", "user", out="user")
    assert all(x.kind in ("say", "probe") for s in scenarios.values() for x in s.steps)
    assert "assistant messages not imported (--turns user): 7" in out
    done = cli("validate", tmp_path / "a")
    assert done.returncode == 0, done.stdout + done.stderr


def test_one_chat_or_one_scale_folder_imports_too(cli, tmp_path):
    _, one = imported(cli, tmp_path, BEAM / "100K" / "2", out="one")
    _, scale = imported(cli, tmp_path, BEAM / "100K", out="scale")
    assert sorted(one) == ["beam_100k_2"] and sorted(scale) == ["beam_100k_1", "beam_100k_2"]


@pytest.mark.parametrize("spoil,message", [
    (lambda d: (d / "probing_questions" / "probing_questions.json").unlink(),
     "probing_questions.json: no such file (the chat's questions)"),
    (lambda d: (d / "chat.json").write_text("[{\"turns\": [[{\"role\": \"system\", \"id\": \"0\", \"content\": \"x\"}]]}]"),
     "chat.json: batch 0: turns[0][0]: expected a message with role user or assistant"),
    (lambda d: (d / "chat.json").write_text("{not json"), "chat.json: invalid JSON at line 1"),
    (lambda d: (d / "chat.json").write_text(
        (d / "chat.json").read_text().replace("January-10-2024", "Jan 10th")),
     "time_anchor: expected a date such as 'January-05-2024', got 'Jan 10th'"),
])
def test_a_dirty_chat_is_skipped_in_one_line(cli, tmp_path, spoil, message):
    source = tmp_path / "beam"
    shutil.copytree(BEAM, source)
    spoil(source / "100K" / "2")
    out, scenarios = imported(cli, tmp_path, source)
    assert sorted(scenarios) == ["beam_100k_1"]
    skipped = [line.strip() for line in out.splitlines() if line.strip().startswith("skipped beam_100k_2")]
    assert len(skipped) == 1 and message in skipped[0], out
    assert "chats skipped: 1 (e.g. beam_100k_2)" in out and "Traceback" not in out


def test_no_chat_at_all_is_one_line(cli, tmp_path):
    done = cli("import", "beam", tmp_path, "-o", tmp_path / "out")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no <scale>/<chat>/chat.json under it" in done.stderr


def test_an_imported_chat_runs_and_scores_every_category(cli, tmp_path):
    imported(cli, tmp_path)
    done = cli("run", f"scenarios=[{tmp_path / 'out'}]", f"hydra.run.dir={tmp_path / 'run'}")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    ev = summary["overall"]["evidence"]
    assert set(ev["by_category"]) == {"information_extraction", "knowledge_update", "contradiction_resolution",
                                      "event_ordering", "abstention", "summarization"}
    assert ev["by_category"]["knowledge_update"]["later_wins@1024t"] is not None


@pytest.mark.skipif(not os.environ.get("MTSBENCH_BEAM"), reason="set MTSBENCH_BEAM to a folder of BEAM's chats")
def test_the_real_chats_import_cleanly(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path, Path(os.environ["MTSBENCH_BEAM"]))
    assert scenarios and "chats skipped" not in out
