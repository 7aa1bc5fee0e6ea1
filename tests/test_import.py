"""``mtsbench import``: LoCoMo and LongMemEval files written for these tests, through the CLI."""

import json
from datetime import datetime
from pathlib import Path

import pytest

from mtsbench.scenario import load_scenario

DATA = Path(__file__).parent / "data" / "import"
LOCOMO = DATA / "locomo_small.json"
LME = DATA / "longmemeval_small.json"


def imported(cli, tmp_path, fmt, source, *extra, out="out"):
    done = cli("import", fmt, source, "-o", tmp_path / out, *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout, {p.stem: load_scenario(p) for p in sorted((tmp_path / out).glob("*.yaml"))}


def test_locomo_import_counts_every_repair(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path, "locomo", LOCOMO)
    lines = [line.strip() for line in out.splitlines()]
    for line in ["sessions: 6", "turns: 13", "image captions appended: 2", "questions: adversarial: 1",
                 "date keys without a session (ignored): 2 (e.g. conv-1 session_4_date_time)",
                 "evidence entries split into several ids: 2 (e.g. 'D1:2; D2:1', 'D3:2 D9:1')",
                 "malformed evidence ids dropped: 2 (e.g. 'D', 'D:11:26')",
                 "evidence ids naming no turn dropped: 3 (e.g. 'D30:05', 'D9:1')",
                 "repeated evidence ids dropped: 1 (e.g. 'D1:4')",
                 "questions without evidence (no recall): 1 (e.g. locomo_conv_1 q6)",
                 "questions whose every evidence id was dropped (no recall): 1 (e.g. locomo_conv_1 q7)",
                 "adversarial evidence ids not used as recall: 1",
                 "empty sessions skipped: 1 (e.g. conv-2 session_4)",
                 "sessions dated before the previous one (placed right after it): 1 (e.g. conv-2 session_3)"]:
        assert line in lines, line
    assert sorted(scenarios) == ["locomo_conv_1", "locomo_conv_2"]


def test_locomo_turns_sessions_and_questions(cli, tmp_path):
    _, scenarios = imported(cli, tmp_path, "locomo", LOCOMO)
    s = scenarios["locomo_conv_1"]
    turns = [x for x in s.steps if x.kind == "say"]
    assert [x.id for x in turns] == ["D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3", "D3:1", "D3:2"]
    assert s.start == datetime(2023, 5, 8, 13, 56)
    assert [x.at for x in turns[:4]] == [0.0, 60.0, 120.0, 180.0]          # one minute apart
    assert turns[4].at == (datetime(2023, 5, 27, 10, 37) - s.start).total_seconds()
    assert turns[7].at == (datetime(2023, 6, 9, 20, 10) - s.start).total_seconds()   # "8:10 PM"
    assert turns[0].text == "Caroline: Hey Mel! I went to a support group for painters yesterday."
    assert turns[2].text.endswith("how far did you run? [shared an image: a photo of a runner crossing a finish line]")
    assert turns[6].text == "Melanie: [shared an image: a bowl made in a pottery class]"
    probes = {x.id: x for x in s.steps if x.kind == "probe"}
    assert list(probes) == [f"q{i}" for i in range(1, 9)]
    assert probes["q1"].at - turns[-1].at == 86400.0 and probes["q2"].at - probes["q1"].at == 60.0
    want = {"q1": ("temporal", ("D1:1",)), "q2": ("multi-hop", ("D1:2", "D2:1", "D3:2")),
            "q3": ("single-hop", ("D1:4",)), "q4": ("single-hop", ("D2:2",)), "q5": ("multi-hop", ("D3:2",)),
            "q6": ("open-domain", ()), "q7": ("single-hop", ()), "q8": ("adversarial", ())}
    assert {i: (p.category, p.expect.recall) for i, p in probes.items()} == want
    assert [i for i, p in probes.items() if p.abstain] == ["q8"]
    late = scenarios["locomo_conv_2"]
    assert [x.id for x in late.steps if x.kind == "say"] == ["D1:1", "D1:2", "D2:1", "D3:1"]
    assert late.step_by_id("D3:1").at == late.step_by_id("D2:1").at + 60   # dated before session 2: right after it


def test_locomo_options_and_identical_output(cli, tmp_path):
    imported(cli, tmp_path, "locomo", LOCOMO, out="a")
    imported(cli, tmp_path, "locomo", LOCOMO, out="b")
    for a in (tmp_path / "a").iterdir():
        assert a.read_bytes() == (tmp_path / "b" / a.name).read_bytes()
    text = (tmp_path / "a" / "locomo_conv_1.yaml").read_text()
    assert "# q3 (single-hop) answer: 10\n" in text and "trap answer: a dog" in text
    _, scenarios = imported(cli, tmp_path, "locomo", LOCOMO, "--k", "10", "--motivation", "0.9", "--turn-gap", "2m",
                            "--questions-after", "2h", "--limit", "1", out="c")
    (s,) = scenarios.values()
    q1 = s.step_by_id("q1")
    assert (q1.expect.k, q1.motivation, s.step_by_id("D1:2").at) == (10, 0.9, 120.0)
    assert q1.at - s.step_by_id("D3:2").at == 7200.0
    assert cli("validate", tmp_path / "a").returncode == 0


def broken_locomo(mutate):
    data = json.loads(LOCOMO.read_text())
    mutate(data)
    return data


LOCOMO_ERRORS = [
    (lambda d: d[1]["qa"][1].update(category=7),
     "conversation 1 (conv-2): qa[1].category: input should be 1, 2, 3, 4 or 5, got 7"),
    (lambda d: d[0]["qa"][2].pop("question"), "conversation 0 (conv-1): qa[2].question: missing (required)"),
    (lambda d: d[0]["qa"].__setitem__(0, "what?"),
     "conversation 0 (conv-1): qa[0]: input should be a valid dictionary or instance of QA, got 'what?'"),
    (lambda d: d[0]["conversation"]["session_2"][1].pop("text"),
     "conversation 0 (conv-1): conversation.session_2[1].text: missing (required)"),
    (lambda d: d[0]["conversation"].update(session_3_date_time="June 9th"),
     "conversation 0 (conv-1): conversation.session_3_date_time: expected a time such as '1:56 pm on 8 May, 2023', "
     "got 'June 9th'"),
    (lambda d: d[0]["conversation"].pop("session_1_date_time"),
     "conversation 0 (conv-1): conversation.session_1_date_time: missing (required for session_1)"),
    (lambda d: d[0]["conversation"]["session_1"][0].update(dia_id="D1 1"),
     "conversation 0 (conv-1): conversation.session_1[0].dia_id: expected an id such as 'D1:3', got 'D1 1'"),
    (lambda d: d[1].update(sample_id="conv 1"),
     "'conv 1' and 'conv-1' both become scenario 'locomo_conv_1'; expected distinct ids"),
]


@pytest.mark.parametrize("mutate,message", LOCOMO_ERRORS, ids=[m for _, m in LOCOMO_ERRORS])
def test_locomo_structural_errors_are_one_line(cli, tmp_path, mutate, message):
    bad = tmp_path / "locomo10.json"
    bad.write_text(json.dumps(broken_locomo(mutate)))
    done = cli("import", "locomo", bad, "-o", tmp_path / "out")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"mtsbench: {bad}: {message}\n"
    assert not (tmp_path / "out").exists()      # nothing written unless the whole file converted


@pytest.mark.parametrize("text,message", [
    ("[{", "invalid JSON at line 1, column 3: Expecting property name enclosed in double quotes"),
    ('{"a": 1}', "expected a JSON list of conversations, got dict"),
])
def test_unreadable_files_are_one_line(cli, tmp_path, text, message):
    bad = tmp_path / "x.json"
    bad.write_text(text)
    done = cli("import", "locomo", bad, "-o", tmp_path / "out")
    assert (done.returncode, done.stderr) == (2, f"mtsbench: {bad}: {message}\n")
    done = cli("import", "locomo", tmp_path / "missing.json", "-o", tmp_path / "out")
    assert (done.returncode, done.stderr) == (2, f"mtsbench: {tmp_path / 'missing.json'}: no such file\n")


def test_longmemeval_import_all_turns(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path, "longmemeval", LME)
    lines = [line.strip() for line in out.splitlines()]
    for line in ["sessions: 6", "turns: 14", "haystacks not in date order (sorted): 1 (e.g. q_user_1)",
                 "empty turns dropped: 1 (e.g. answer_f6_3)",
                 "abstention questions (_abs: abstaining probes, no recall): 1",
                 "answer session ids naming no imported session dropped: 1 (e.g. 'answer_zz9')"]:
        assert line in lines, line
    user = scenarios["lme_q_user_1"]
    assert [x.id for x in user.steps] == ["noise_b2_1", "noise_b2_2", "answer_a1_1", "answer_a1_2", "answer_a1_3",
                                          "question"]                    # sorted by date: noise_b2 came first
    assert [x.kind for x in user.steps] == ["say", "reply", "say", "reply", "say", "probe"]
    assert user.start == datetime(2023, 5, 12, 18, 5)
    q = user.steps[-1]
    assert q.at == (datetime(2023, 5, 30, 23, 40) - user.start).total_seconds()
    assert (q.category, q.abstain, q.expect.recall) == ("single-session-user", False, ("answer_a1_1",))
    assert q.expect.recall_sessions == (("answer_a1", ("answer_a1_1", "answer_a1_2", "answer_a1_3")),)
    assistant = scenarios["lme_q_assistant_3"].steps[-1]
    assert assistant.expect.recall == ("answer_f6_2",)                  # an assistant turn holds the answer
    assert "answer_f6_3" not in scenarios["lme_q_assistant_3"].ids       # empty turn dropped, ids stay official
    assert assistant.expect.recall_sessions == (("answer_f6", ("answer_f6_1", "answer_f6_2", "answer_f6_4")),)
    abstain = scenarios["lme_q_temporal_2_abs"].steps[-1]
    assert (abstain.abstain, abstain.expect.recall, abstain.expect.recall_sessions) == (True, (), ())


def test_longmemeval_import_user_turns_only(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path, "longmemeval", LME, "--turns", "user")
    assert "evidence turns of the assistant not imported (--turns user): 1 (e.g. answer_f6_2)" in out
    assert "questions without evidence turns (no turn recall): 1 (e.g. q_assistant_3)" in out
    assert all(x.kind in ("say", "probe") for s in scenarios.values() for x in s.steps)
    assert scenarios["lme_q_user_1"].ids == ("noise_b2_1", "answer_a1_1", "answer_a1_3", "question")
    assistant = scenarios["lme_q_assistant_3"].steps[-1]
    assert assistant.expect.recall == () and assistant.expect.recall_sessions == (
        ("answer_f6", ("answer_f6_1", "answer_f6_4")),)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d[0]["haystack_dates"].pop(), "question 0 (q_user_1): haystack_session_ids, haystack_dates and "
     "haystack_sessions: expected one entry per session in each, got 2, 1 and 2"),
    (lambda d: d[1]["haystack_dates"].__setitem__(1, "2023-06-05"), "question 1 (q_temporal_2_abs): "
     "haystack_dates[1]: expected a date such as '2023/05/20 (Sat) 02:21', got '2023-06-05'"),
    (lambda d: d[2]["haystack_sessions"][1][0].update(role="system"), "question 2 (q_assistant_3): "
     "haystack_sessions[1][0].role: input should be 'user' or 'assistant', got 'system'"),
    (lambda d: d[0].pop("question_date"), "question 0 (q_user_1): question_date: missing (required)"),
])
def test_longmemeval_structural_errors_are_one_line(cli, tmp_path, mutate, message):
    data = json.loads(LME.read_text())
    mutate(data)
    bad = tmp_path / "longmemeval_s.json"
    bad.write_text(json.dumps(data))
    done = cli("import", "longmemeval", bad, "-o", tmp_path / "out")
    assert (done.returncode, done.stderr) == (2, f"mtsbench: {bad}: {message}\n")


def run_imported(cli, tmp_path, *overrides):
    done = cli("run", f"scenarios=[{tmp_path / 'out'}]", *overrides, f"hydra.run.dir={tmp_path / 'run'}")
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads((tmp_path / "run" / "summary.json").read_text())


@pytest.mark.parametrize("preset", ["preset=flat_rag", "preset=mts"])
def test_imported_locomo_runs_and_reports_evidence_recall(cli, tmp_path, preset):
    imported(cli, tmp_path, "locomo", LOCOMO)
    out, summary = run_imported(cli, tmp_path, preset)
    table = out.splitlines()
    head = next(i for i, line in enumerate(table) if line.startswith("category"))
    assert table[head].split() == ["category", "probes", "evidence", "abstain", "R@5", "R@10", "R@25", "R@50",
                                   "R@256t", "R@512t", "R@1024t", "R@2048t", "scored"]
    assert [line.split()[0] for line in table[head + 1:head + 7]] == [
        "adversarial", "multi-hop", "open-domain", "single-hop", "temporal", "all"]
    ev = summary["overall"]["evidence"]
    assert (ev["depths"], ev["probes"], ev["with_evidence"], ev["abstain"]) == ([5, 10, 25, 50], 10, 7, 1)
    assert table[head + 6].split()[1:4] == ["10", "7", "1"]
    assert set(ev["by_category"]) == {"adversarial", "multi-hop", "open-domain", "single-hop", "temporal"}
    assert ev["by_category"]["adversarial"]["recall@5"] is None and ev["by_category"]["adversarial"]["scored"] > 0
    recalls = [ev[f"recall@{d}"] for d in (5, 10, 25, 50)]
    assert recalls == sorted(recalls) and 0 < recalls[0]
    assert ev["by_category"]["temporal"]["recall@5"] == 1.0    # 'support group' + 'Caroline': lexical rank 1
    if preset == "preset=flat_rag":                          # every memory scored: all evidence within 50
        assert recalls[-1] == 1.0 and ev["scored"] >= 4
        for sid, turns in (("locomo_conv_1", 9), ("locomo_conv_2", 4)):
            assert summary["scenarios"][sid]["evidence"]["scored"] >= turns
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Evidence recall" in report and "| temporal | 1 | 1 | 0 | 1.000 |" in report
    (tmp_path / "run" / "report.md").unlink()
    assert cli("report", tmp_path / "run").returncode == 0
    assert (tmp_path / "run" / "report.md").read_text().startswith(report)   # plus the figures


def test_imported_longmemeval_reports_session_recall(cli, tmp_path):
    imported(cli, tmp_path, "longmemeval", LME)
    out, summary = run_imported(cli, tmp_path, "preset=flat_rag")
    ev = summary["overall"]["evidence"]
    assert "sR@5" in out and (ev["probes"], ev["with_evidence"], ev["abstain"]) == (3, 2, 1)
    assert ev["session_recall@50"] == 1.0 and ev["by_category"]["temporal-reasoning"]["abstain"] == 1


def test_an_unknown_format_is_one_line_with_a_hint(cli, tmp_path):
    done = cli("import", "locomo2", tmp_path / "x.json", "-o", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.strip() == ("mtsbench: import: unknown format 'locomo2'; did you mean 'locomo'? "
                                   "(formats: locomo, longmemeval)")
