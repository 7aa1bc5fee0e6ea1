"""workload=reply and the total-cost block: every kind of search counted, for every system."""

import json

import pytest

from mtsbench.outputs.results import FILE, load


def run(cli, tmp_path, name, *overrides):
    out = tmp_path / name
    r = cli("run", "scenarios=[milk_allergy,disneyland_twice]", f"hydra.run.dir={out}", *overrides)
    assert r.returncode == 0, r.stderr
    return out, json.loads((out / "summary.json").read_text())


def test_probes_workload_makes_no_reply_and_the_parts_add_up(cli, tmp_path):
    out, summary = run(cli, tmp_path, "probes")
    cost = summary["cost"]["overall"]
    assert cost["scored"]["reply"] == 0
    assert cost["total"] == sum(cost["scored"].values())
    records, _ = load(out / FILE)
    assert "reply" not in set(records["record"])
    # every part is read from the saved records and process totals
    steps = records[records["record"].isin(["observe", "probe", "idle", "tick"])]
    assert cost["scored"]["probe"] == steps.loc[steps["record"] == "probe", "scored"].sum()
    assert cost["scored"]["association"] == steps.loc[steps["record"] == "observe", "scored"].sum()
    assert cost["scored"]["arousal"] == steps["arousal_scored"].sum()
    assert cost["scored"]["processes"] == sum(p["scored"] + p["arousal_scored"]
                                              for p in summary["overall"]["processes"].values())
    assert cost["turns"] > 0 and cost["per_turn"] == pytest.approx(cost["total"] / cost["turns"], abs=1e-4)
    per = summary["cost"]["scenarios"]
    assert sum(p["total"] for p in per.values()) == cost["total"]


@pytest.mark.parametrize("system", ["preset=mts", "preset=flat_rag", "system=bm25"])
def test_reply_workload_retrieves_on_every_user_turn(cli, tmp_path, system):
    out, summary = run(cli, tmp_path, system.replace("=", "_"), "workload=reply", system)
    records, _ = load(out / FILE)
    said = records[(records["record"] == "observe") & (records["kind"] == "say")]
    replies = records[records["record"] == "reply"]
    assert len(replies) == len(said) > 0
    assert list(replies["step"]) == list(said["step"])
    assert all(0 < len(ids) <= 5 for ids in replies["ranked_ids"])
    cost = summary["cost"]["overall"]
    assert cost["scored"]["reply"] == replies["scored"].sum() > 0
    assert cost["total"] == sum(cost["scored"].values())


def test_flat_rag_rates_nothing(cli, tmp_path):
    _, summary = run(cli, tmp_path, "rag", "preset=flat_rag")
    assert summary["overall"]["llm_calls"] == 0 and summary["cost"]["overall"]["llm_calls"] == 0


def test_reply_motivation_follows_the_turns_attention():
    from mtsbench.systems.base import Outcome
    from mtsbench.harness.workload import Reply

    r = Reply(k=4, default_motivation=0.3)
    assert [r.motivation(s) for s in (0.0, 2.5, 10.0, 12.0, None)] == [0.0, 0.25, 1.0, 1.0, 0.3]
    from mtsbench.scenario.model import Step
    assert r.reply(Step(0, "r0", 0.0, "reply", "ok"), Outcome(score=9.0)) is None     # the agent's own turn
