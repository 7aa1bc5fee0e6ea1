"""Issue 53's two mutation scripts, without running the suite: scripts/realistic_mutants.py (each
realistic mutant's line is in the installed package exactly once, and applying one changes that
line only) and scripts/mutation.py (the triage file's one-line errors; the report's counts and
kill rate from a cosmic-ray session, with the survivors triaged or not)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mtsbench

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(mtsbench.__file__).parent


def test_every_realistic_mutant_names_one_line_of_the_package(import_file, tmp_path):
    rm = import_file("realistic_mutants_script", ROOT / "scripts" / "realistic_mutants.py")
    assert len(rm.MUTANTS) >= 12 and len({m.id for m in rm.MUTANTS}) == len(rm.MUTANTS)
    for m in rm.MUTANTS:
        text = (PACKAGE / m.file).read_text(encoding="utf-8")
        assert text.count(m.old) == 1, m.id
    mutant = rm.MUTANTS[0]
    copy = rm.apply(mutant, PACKAGE, tmp_path)
    before = (PACKAGE / mutant.file).read_text(encoding="utf-8").splitlines()
    after = (copy / mutant.file).read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(changed) == 1 and mutant.new in changed[0][1]


@pytest.fixture
def mutation(import_file):
    return import_file("mutation_script", ROOT / "scripts" / "mutation.py")


@pytest.mark.parametrize("text,error", [
    ("- a\n", "expected a mapping of mutant id to {equivalent: REASON} or {killed_by: CHECK}"),
    ("m:1:0:X#0: {equivalent: same, killed_by: x}\n", "m:1:0:X#0: expected {equivalent: REASON} or {killed_by: CHECK}"),
    ("m:1:0:X#0: {why: x}\n", "m:1:0:X#0: expected {equivalent: REASON} or {killed_by: CHECK}"),
])
def test_a_bad_triage_is_one_line(mutation, tmp_path, text, error):
    path = tmp_path / "triage.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        mutation.load_triage(path)
    assert str(info.value).startswith(f"{path}: ") and error in str(info.value)


def test_the_report_counts_and_triages(mutation, tmp_path, monkeypatch):
    pytest.importorskip("cosmic_ray")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, TestOutcome, WorkerOutcome, WorkItem, WorkResult

    def item(n: int, line: int) -> WorkItem:
        return WorkItem(f"job{n}", [MutationSpec("mtsbench/mechanisms/arousal.py", "core/NumberReplacer", n,
                                                 (line, 4), (line, 7))])

    results = [WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.KILLED, "-a\n+b"),
               WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.KILLED, "-a\n+b"),
               WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.SURVIVED, "-a\n+b"),
               WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.SURVIVED, "-a\n+b"),
               WorkResult(WorkerOutcome.SKIPPED, mutation.NOT_RUN),
               WorkResult(WorkerOutcome.SKIPPED, "Filtered operator"), None]
    with use_db(str(tmp_path / "session.sqlite"), WorkDB.Mode.create) as db:
        for n, result in enumerate(results):
            db.add_work_item(item(n, 10 + n))
            if result is not None:
                db.set_result(f"job{n}", result)
    triage = tmp_path / "triage.yaml"
    triage.write_text("mtsbench/mechanisms/arousal.py:12:4:NumberReplacer#2: {equivalent: the cap is never reached}\n"
                      "mtsbench/mechanisms/gone.py:1:0:AddNot#0: {killed_by: arousal/garden_roses}\n", encoding="utf-8")
    monkeypatch.setattr(mutation, "TRIAGE", triage)
    mutation.report(tmp_path, tmp_path / "out", "one module")
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "**Partial run: one module.**" in text
    for row in ("| generated | 7 |", "| killed | 2 |", "| survived | 2 |", "| on lines the suite never runs | 1 |",
                "| left out by operator (`cosmic-ray.toml`) | 1 |", "| still pending | 1 |",
                "| survivors triaged equivalent | 1 |", "| survivors untriaged | 1 |",
                "| survivors in an option the suite never chooses (`not_chosen`) | 0 |"):
        assert row in text, row
    assert "**2 of 3 (66.7%)**" in text           # the equivalent survivor is not counted
    assert "| `mtsbench/mechanisms/arousal.py:13:4:NumberReplacer#3` | **untriaged** |" in text
    assert "stale" not in text.lower() or "`mtsbench/mechanisms/gone.py:1:0:AddNot#0`" in text
    assert (tmp_path / "out" / "mutants.csv").read_text(encoding="utf-8").count("\n") == 8


def test_a_rerun_replaces_the_outcomes_of_what_it_ran_again(mutation, tmp_path, monkeypatch):
    """``rerun``'s session: a survivor killed now counts killed, a pending mutant takes its outcome,
    one the rerun has not reached yet waits, and a survivor whose id the rerun does not hold (its
    module changed) keeps its first outcome."""
    pytest.importorskip("cosmic_ray")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, TestOutcome, WorkerOutcome, WorkItem, WorkResult

    def session(path: Path, outcomes: dict[int, object]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with use_db(str(path), WorkDB.Mode.create) as db:
            for n, outcome in outcomes.items():
                db.add_work_item(WorkItem(f"job{n}", [MutationSpec("mtsbench/memory/memory.py", "core/AddNot", n,
                                                                   (10 + n, 4), (10 + n, 7))]))
                if outcome is not None:
                    db.set_result(f"job{n}", WorkResult(WorkerOutcome.NORMAL, "", outcome, "-a\n+b"))

    killed, survived = TestOutcome.KILLED, TestOutcome.SURVIVED
    session(tmp_path / "session.sqlite", {0: killed, 1: survived, 2: survived, 3: None, 4: None})
    session(tmp_path / "rerun" / "session.sqlite", {0: None, 2: killed, 3: survived, 4: None})
    monkeypatch.setattr(mutation, "TRIAGE", tmp_path / "none.yaml")
    mutation.report(tmp_path, tmp_path / "out", None)
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    for row in ("| killed | 2 |", "| survived | 2 |", "| still pending | 1 |",
                "| rerun against the current suite (`rerun`): still waiting in the rerun | 1 |",
                "| rerun against the current suite (`rerun`): ran again | 2 |",
                "| rerun against the current suite (`rerun`): survivors killed now | 1 |",
                "| rerun against the current suite (`rerun`): not found in the rerun | 1 |"):
        assert row in text, row
    assert "**2 of 4 (50.0%)**" in text
    assert "| `mtsbench/memory/memory.py:11:4:AddNot#1` | **untriaged** |" in text       # kept its first outcome
    assert "| `mtsbench/memory/memory.py:13:4:AddNot#3` | **untriaged** |" in text       # pending, survived the rerun


def test_a_sample_keeps_each_modules_share_and_the_report_gives_its_interval(mutation, tmp_path, monkeypatch):
    pytest.importorskip("cosmic_ray")
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, TestOutcome, WorkerOutcome, WorkItem, WorkResult

    session = tmp_path / "session.sqlite"
    modules = ["mtsbench/memory/tiers.py"] * 30 + ["mtsbench/mechanisms/arousal.py"] * 10
    with use_db(str(session), WorkDB.Mode.create) as db:
        for n, module in enumerate(modules):
            db.add_work_item(WorkItem(f"job{n}", [MutationSpec(module, "core/NumberReplacer", n, (n + 1, 0), (n + 1, 2))]))
    assert mutation.filter_sample(session, 8, seed=3) == 32
    with use_db(str(session), WorkDB.Mode.open) as db:
        kept = [i for i in db.pending_work_items]
        assert sorted(i.mutations[0].module_path.name for i in kept).count("tiers.py") == 6   # 30 of 40: 6 of 8
        for k, i in enumerate(kept):
            db.set_result(i.job_id, WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.KILLED if k else TestOutcome.SURVIVED))
    monkeypatch.setattr(mutation, "TRIAGE", tmp_path / "none.yaml")
    mutation.report(tmp_path, tmp_path / "out", None)
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| outside the stratified sample (`--sample`) | 32 |" in text
    assert f"**7 of 8 (87.5%)**, 95% Wilson interval {mutation.wilson(7, 8)}" in text


@pytest.mark.parametrize("argv", [["run", "--work", "w", "--out", "o"], ["report", "--work", "w", "--out", "o"]])
def test_folders_given_relative_are_made_absolute(mutation, tmp_path, monkeypatch, argv):
    """`make mutants SAMPLE=N` passes --work multirun/mutation_sample: the baseline's coverage run starts in
    that folder, where the relative path named nothing (the run stopped, 'the suite fails')."""
    monkeypatch.chdir(tmp_path)
    ns = mutation.parser().parse_args(argv)
    assert ns.work == tmp_path / "w" and ns.out == tmp_path / "o"
