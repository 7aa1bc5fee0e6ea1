"""``mtsbench import``: LoCoMo and LongMemEval files written for these tests, through the CLI."""

import json
from datetime import datetime
from pathlib import Path

import pytest

from mtsbench.scenario import load_scenario
from mtsbench.outputs.stream import trace_events

DATA = Path(__file__).parent / "data" / "import"
LOCOMO = DATA / "locomo_small.json"
LME = DATA / "longmemeval_small.json"
CORRECTIONS = DATA / "locomo_corrections.json"


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


def test_locomo_session_recall_names_every_turn_of_each_evidence_session(cli, tmp_path):
    _, scenarios = imported(cli, tmp_path, "locomo", LOCOMO)
    probes = {x.id: x for x in scenarios["locomo_conv_1"].steps if x.kind == "probe"}
    assert dict(probes["q4"].expect.recall_sessions) == {"session_2": ("D2:1", "D2:2", "D2:3")}
    assert [s for s, _ in probes["q2"].expect.recall_sessions] == ["session_1", "session_2", "session_3"]
    assert probes["q6"].expect.recall_sessions == () and probes["q8"].expect.recall_sessions == ()


def test_locomo_citation_corrections(cli, tmp_path):
    out, fixed = imported(cli, tmp_path, "locomo", LOCOMO, "--corrections", CORRECTIONS, out="fixed")
    _, plain = imported(cli, tmp_path, "locomo", LOCOMO)
    lines = [line.strip() for line in out.splitlines()]
    assert ("citation corrections (locomo_corrections.json): 2 of 4 WRONG_CITATION findings applied; "
            "1 other findings (answer errors) not applied") in lines
    assert ("corrections naming no question of the file, or another question (skipped): 2 "
            "(e.g. locomo_1_qa0, locomo_7_qa3)") in lines
    probe = {s: {x.id: x for x in fixed[s].steps if x.kind == "probe"} for s in fixed}
    before = {s: {x.id: x for x in plain[s].steps if x.kind == "probe"} for s in plain}
    assert probe["locomo_conv_1"]["q1"].expect.recall == ("D1:2", "D1:3")     # numbered from 0, as published
    assert probe["locomo_conv_1"]["q4"].expect.recall == ("D2:3", "D3:1")     # numbered from 1: found by its text
    changed = [(s, q) for s in probe for q in probe[s] if probe[s][q].expect != before[s][q].expect]
    assert changed == [("locomo_conv_1", "q1"), ("locomo_conv_1", "q4")]
    text = (tmp_path / "fixed" / "locomo_conv_1.yaml").read_text()
    assert text.count("evidence corrected by the locomo-audit project") == 2


def test_locomo_corrections_file_errors_are_one_line(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"error_type": "WRONG_CITATION", "question_id": "q1"}]')
    done = cli("import", "locomo", LOCOMO, "-o", tmp_path / "o", "--corrections", bad)
    assert done.returncode == 2 and "bad.json: finding 0: expected question_id" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()


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
    assert table[head].split() == ["category", "probes", "evidence", "abstain", "R@k", "R@5", "R@10", "R@25", "R@50",
                                   "sR@5", "sR@10", "sR@25", "sR@50", "R@256t", "R@512t", "R@1024t", "R@2048t",
                                   "scored"]
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
                                   "(formats: beam, locomo, longmemeval)")


# --- --annotations: the data set's own observations and event summaries as hints -----------------------------

# `mtsbench import locomo tests/data/import/locomo_small.json -o DIR`, produced before --annotations existed
# (and given each question's evidence sessions, recall_sessions, since): without the flag the output stays
# byte for byte the same (the annotations are not read).
LOCOMO_PLAIN_STDOUT = """{source}: 2 conversations imported
  image captions appended: 2
  sessions: 6
  turns: 13
  questions: temporal: 1
  questions: multi-hop: 3
  questions: single-hop: 4
  questions: open-domain: 1
  questions: adversarial: 1
  dropped or repaired:
    date keys without a session (ignored): 2 (e.g. conv-1 session_4_date_time)
    evidence entries split into several ids: 2 (e.g. 'D1:2; D2:1', 'D3:2 D9:1')
    repeated evidence ids dropped: 1 (e.g. 'D1:4')
    malformed evidence ids dropped: 2 (e.g. 'D', 'D:11:26')
    evidence ids naming no turn dropped: 3 (e.g. 'D30:05', 'D9:1')
    questions without evidence (no recall): 1 (e.g. locomo_conv_1 q6)
    questions whose every evidence id was dropped (no recall): 1 (e.g. locomo_conv_1 q7)
    adversarial evidence ids not used as recall: 1
    empty sessions skipped: 1 (e.g. conv-2 session_4)
    sessions dated before the previous one (placed right after it): 1 (e.g. conv-2 session_3)
wrote 2 scenario files to {out} (each checked by the scenario loader)
"""
LOCOMO_PLAIN = {"locomo_conv_1.yaml": """# LoCoMo conversation conv-1, imported from locomo_small.json by `mtsbench import locomo`.
# Turns are say steps (id = dia_id, text = 'SPEAKER: TEXT'); questions are probes after the last session.
id: locomo_conv_1
title: 'LoCoMo conv-1: Caroline and Melanie'
language: en
start: '2023-05-08T13:56:00'
tags: [locomo]
steps:
- {id: 'D1:1', at: '2023-05-08T13:56:00', say: 'Caroline: Hey Mel! I went to a support group for painters yesterday.'}
- {id: 'D1:2', at: '2023-05-08T13:57:00', say: 'Melanie: That sounds lovely. I ran a charity race for mental health on Saturday.'}
- {id: 'D1:3', at: '2023-05-08T13:58:00', say: 'Caroline: Wow, how far did you run? [shared an image: a photo of a runner crossing a finish line]'}
- {id: 'D1:4', at: '2023-05-08T13:59:00', say: 'Melanie: Ten kilometres! My kids cheered the whole way.'}
- {id: 'D2:1', at: '2023-05-27T10:37:00', say: 'Melanie: I signed up for a pottery class last week.'}
- {id: 'D2:2', at: '2023-05-27T10:38:00', say: 'Caroline: Pottery is great. I am researching adoption agencies.'}
- {id: 'D2:3', at: '2023-05-27T10:39:00', say: 'Melanie: [shared an image: a bowl made in a pottery class]'}
- {id: 'D3:1', at: '2023-06-09T20:10:00', say: 'Caroline: I gave a speech at a school about my journey.'}
- {id: 'D3:2', at: '2023-06-09T20:11:00', say: 'Melanie: We went camping in the mountains with the kids.'}
# q1 (temporal) answer: 7 May 2023
- id: q1
  at: '2023-06-10T20:11:00'
  probe: When did Caroline go to the support group?
  category: temporal
  answer: 7 May 2023
  expect:
    recall: ['D1:1']
    recall_sessions:
      session_1: ['D1:1', 'D1:2', 'D1:3', 'D1:4']
# q2 (multi-hop) answer: running, pottery, camping
- id: q2
  at: '2023-06-10T20:12:00'
  probe: What activities does Melanie do?
  category: multi-hop
  answer: running, pottery, camping
  expect:
    recall: ['D1:2', 'D2:1', 'D3:2']
    recall_sessions:
      session_1: ['D1:1', 'D1:2', 'D1:3', 'D1:4']
      session_2: ['D2:1', 'D2:2', 'D2:3']
      session_3: ['D3:1', 'D3:2']
# q3 (single-hop) answer: 10
- id: q3
  at: '2023-06-10T20:13:00'
  probe: How many kilometres did Melanie run?
  category: single-hop
  answer: '10'
  expect:
    recall: ['D1:4']
    recall_sessions:
      session_1: ['D1:1', 'D1:2', 'D1:3', 'D1:4']
# q4 (single-hop) answer: Adoption agencies
- id: q4
  at: '2023-06-10T20:14:00'
  probe: What did Caroline research?
  category: single-hop
  answer: Adoption agencies
  expect:
    recall: ['D2:2']
    recall_sessions:
      session_2: ['D2:1', 'D2:2', 'D2:3']
# q5 (multi-hop) answer: mountains
- id: q5
  at: '2023-06-10T20:15:00'
  probe: Where did Melanie camp?
  category: multi-hop
  answer: mountains
  expect:
    recall: ['D3:2']
    recall_sessions:
      session_3: ['D3:1', 'D3:2']
# q6 (open-domain) answer: Likely yes
- {id: q6, at: '2023-06-10T20:16:00', probe: 'Would Caroline enjoy a painting class?', category: open-domain, answer: Likely yes}
# q7 (single-hop) answer: a bowl
- {id: q7, at: '2023-06-10T20:17:00', probe: 'What did Melanie make in pottery class?', category: single-hop, answer: a bowl}
# q8 (adversarial) adversarial: the right answer is 'not mentioned'; trap answer: a dog
- {id: q8, at: '2023-06-10T20:18:00', probe: 'What did Caroline adopt at the race?', category: adversarial, abstain: true}
""",
                "locomo_conv_2.yaml": """# LoCoMo conversation conv-2, imported from locomo_small.json by `mtsbench import locomo`.
# Turns are say steps (id = dia_id, text = 'SPEAKER: TEXT'); questions are probes after the last session.
id: locomo_conv_2
title: 'LoCoMo conv-2: Jon and Gina'
language: en
start: '2023-01-20T16:04:00'
tags: [locomo]
steps:
- {id: 'D1:1', at: '2023-01-20T16:04:00', say: 'Jon: I lost my job at the bank, so I am opening a dance studio.'}
- {id: 'D1:2', at: '2023-01-20T16:05:00', say: 'Gina: I lost my job too and started an online clothing store.'}
- {id: 'D2:1', at: '2023-01-29T14:32:00', say: 'Gina: My store sold its first dress today!'}
- {id: 'D3:1', at: '2023-01-29T14:33:00', say: 'Jon: The dance studio opens next month.'}
# q1 (single-hop) answer: a dance studio
- id: q1
  at: '2023-01-30T14:33:00'
  probe: What business did Jon start?
  category: single-hop
  answer: a dance studio
  expect:
    recall: ['D1:1', 'D3:1']
    recall_sessions:
      session_1: ['D1:1', 'D1:2']
      session_3: ['D3:1']
# q2 (multi-hop) answer: she lost her job
- id: q2
  at: '2023-01-30T14:34:00'
  probe: Why did Gina start a store?
  category: multi-hop
  answer: she lost her job
  expect:
    recall: ['D1:2']
    recall_sessions:
      session_1: ['D1:1', 'D1:2']
"""}


def test_locomo_without_annotations_is_byte_identical_to_before(cli, tmp_path):
    out, _ = imported(cli, tmp_path, "locomo", LOCOMO)
    assert out == LOCOMO_PLAIN_STDOUT.format(source=LOCOMO, out=tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(LOCOMO_PLAIN)
    for name, text in LOCOMO_PLAIN.items():
        assert (tmp_path / "out" / name).read_bytes() == text.encode("utf-8"), name


def facts_of(step):
    return [(f.key, f.text, f.value, f.belief) for f in step.hints.facts]


def test_locomo_annotations_become_hints_on_the_right_turns(cli, tmp_path):
    out, scenarios = imported(cli, tmp_path, "locomo", LOCOMO, "--annotations")
    lines = [line.strip() for line in out.splitlines()]
    for line in ["annotation hints written: 15 fact hints, 13 event hints, 5 idle nights",
                 "observation entries split into several ids: 1 (e.g. 'D1:4; D1:3')",
                 "observations naming several turns (fact on the first): 1 (e.g. conv-1 'D1:4; D1:3')",
                 "malformed observation ids dropped: 1 (e.g. 'D')",
                 "observation ids naming no turn dropped: 1 (e.g. 'D4:1')",
                 "repeated observations on one turn dropped: 1 (e.g. conv-1 D3:2)",
                 "events placed on another speaker's turn (no free turn of theirs): 1 (e.g. conv-1 session_1)",
                 "events without a free turn in their session dropped: 2 (e.g. conv-2 session_2, conv-2 session_3)",
                 "session gaps under 9h (no idle night): 1 (e.g. conv-2 after session_2)",
                 # the evidence tallies are the observations' own: unchanged
                 "malformed evidence ids dropped: 2 (e.g. 'D', 'D:11:26')",
                 "evidence ids naming no turn dropped: 3 (e.g. 'D30:05', 'D9:1')"]:
        assert line in lines, line
    s = scenarios["locomo_conv_1"]
    step = s.step_by_id
    # facts: on the turn dia_id names; no key (identity by search at consolidation), value true, belief 0.9
    assert facts_of(step("D1:1")) == [("", "Caroline went to a support group.", True, 0.9)]
    assert [f.text for f in step("D1:4").hints.facts] == ["Melanie has kids.", "Melanie ran ten kilometres."]
    assert step("D1:3").hints.facts == ()                    # 'D1:4; D1:3': the first turn only
    assert [f.text for f in step("D3:2").hints.facts][1] == "Melanie has kids!"   # merged at consolidation
    assert len(step("D3:2").hints.facts) == 2                # "Melanie has kids" once more on D3:2: kept once
    assert all(x.hints.salience is None for x in s.steps)    # attention is left to the mock's heuristic
    # events: on the speaker's first free turn of the session, else the session's first free turn
    events = {x.id: (x.hints.event.category, x.hints.event.text, x.hints.event.valid)
              for x in s.steps if x.hints.event is not None}
    assert events == {
        "D1:1": ("caroline.support", "Goes to a support group.", None),
        "D1:2": ("melanie.charity", "Runs a charity race for mental health.", None),
        "D1:4": ("melanie.kids", "Her kids cheer her on at the race.", None),
        "D1:3": ("melanie.race", "Finishes the race in good time.", None),       # Melanie's turns were taken
        "D2:1": ("melanie.pottery", "Signs up for a pottery class.", None),
        "D2:3": ("melanie.pottery", "Makes a pottery bowl.", None),
        "D2:2": ("caroline.adoption", "Researches adoption agencies.", None),
        "D3:1": ("caroline.speech", "Gives a speech at a school about her journey.", None),
        "D3:2": ("melanie.camping", "Goes camping in the mountains with the kids.", None)}
    for sid, (category, _, _) in events.items():
        if sid != "D1:3":
            assert step(sid).text.startswith(category.split(".")[0].capitalize() + ": "), sid
    # nights: an 8h idle one hour after each session's last turn, ending before the next step
    assert [x.id for x in s.steps if x.kind != "probe"] == [
        "D1:1", "D1:2", "D1:3", "D1:4", "night_1", "D2:1", "D2:2", "D2:3", "night_2", "D3:1", "D3:2", "night_3"]
    for scenario in scenarios.values():
        for i, x in enumerate(scenario.steps):
            if x.kind == "idle":
                before, after = scenario.steps[i - 1], scenario.steps[i + 1]
                assert (before.kind, x.at - before.at, x.duration) == ("say", 3600.0, 8 * 3600.0)
                assert x.at + x.duration <= after.at, x.id
        assert [x.at for x in scenario.steps] == sorted(x.at for x in scenario.steps)
    late = scenarios["locomo_conv_2"]
    assert [x.id for x in late.steps if x.kind == "idle"] == ["night_1", "night_3"]     # session 3: 1 min after 2
    assert late.step_by_id("D2:1").hints.event.category == "gina.online"     # Jon's event there: no free turn
    assert late.step_by_id("D3:1").hints.event.category == "jon.dance"
    assert late.step_by_id("D3:1").hints.facts[0].text == late.step_by_id("D1:1").hints.facts[1].text
    text = (tmp_path / "out" / "locomo_conv_1.yaml").read_text()
    assert "# session 1 summary (LoCoMo, not a hint): Caroline and Melanie catch up.\n- id: D1:1\n" in text
    assert cli("validate", tmp_path / "out").returncode == 0


def test_locomo_annotations_drive_summaries_events_and_consolidation(cli, tmp_path):
    imported(cli, tmp_path, "locomo", LOCOMO, "--annotations")
    _, summary = run_imported(cli, tmp_path)                 # the default configuration (mts, mock LLM)
    trace = trace_events(tmp_path / "run")

    def of(kind, scenario):
        return [r for r in trace if r["event"] == kind and r["scenario"] == scenario]

    one = "locomo_conv_1"
    assert [(r["steps"], r["facts"], r["events"]) for r in of("summarized", one)] == [
        (["D1:1", "D1:2", "D1:3", "D1:4"], 4, 4), (["D2:1", "D2:2", "D2:3"], 3, 3), (["D3:1", "D3:2"], 3, 2)]
    assert [r["t"] for r in of("summarized", one)] == [r["t"] for r in of("idle", one)]   # at each night
    assert [(r["category"], r["joined"]) for r in of("event", one) if r["category"] == "melanie.pottery"] == [
        ("melanie.pottery", False), ("melanie.pottery", True)]
    assert len(of("consolidation", one)) == 3
    merged = of("merged", one)                               # "Melanie has kids." restated in session 3
    assert len(merged) == 1 and merged[0]["belief"][1] > merged[0]["belief"][0] == 0.9
    two = "locomo_conv_2"
    assert [(r["category"], r["joined"]) for r in of("event", two)] == [
        ("jon.dance", False), ("gina.online", False), ("gina.online", True), ("jon.dance", True)]
    assert len(of("merged", two)) == 1                       # "Jon is opening a dance studio." twice
    processes = summary["overall"]["processes"]
    assert processes["summarize"]["runs"] == 5 and processes["consolidate"]["runs"] == 5
    assert processes["infer"]["runs"] > 0                    # runs on every turn; no infer hints: no impressions


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d[0].update(observation=["D1:1"]), "conversation 0 (conv-1): observation: expected a mapping of "
     "session_<n>_observation entries, got ['D1:1']"),
    (lambda d: d[1]["event_summary"].update(events_session_2=["x"]), "conversation 1 (conv-2): "
     "event_summary.events_session_2: expected a mapping {SPEAKER: [EVENT, ...], date: DATE}, got ['x']"),
])
def test_locomo_broken_annotations_fail_only_with_the_flag(cli, tmp_path, mutate, message):
    bad = tmp_path / "locomo10.json"
    bad.write_text(json.dumps(broken_locomo(mutate)))
    done = cli("import", "locomo", bad, "-o", tmp_path / "out", "--annotations")
    assert (done.returncode, done.stderr) == (2, f"mtsbench: {bad}: {message}\n")
    assert cli("import", "locomo", bad, "-o", tmp_path / "out").returncode == 0    # not read without the flag
