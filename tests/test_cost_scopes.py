"""Cost by scope (issue 26, item 5): each step and each background process is charged what
ran inside it, so the steps' own cost and the processes' add up to what the LLM meter
counted, nothing counted twice and nothing lost; the ledger of processes is the agent's."""

from __future__ import annotations

from mtsbench.core import costs
from mtsbench.config.composition import compose
from mtsbench.harness.runner import load_all, run_scenario


def test_steps_and_processes_add_up_to_the_meter():
    cfg, _ = compose(["scenarios=[milk_allergy]"])
    done = run_scenario(cfg, load_all(cfg)[0])
    processes = done.totals.processes
    assert processes["summarize"]["calls"] > 0 and processes["infer"]["calls"] > 0
    for key, column in (("calls", "llm_calls"), ("tokens", "tokens"), ("prompt_tokens", "prompt_tokens")):
        steps = sum(r[column] or 0 for r in done.records)
        assert 0 < steps < done.totals.llm[key]
        assert steps + sum(p[key] for p in processes.values()) == done.totals.llm[key], key


def test_a_scope_inside_a_scope_takes_what_runs_inside_it():
    with costs.scope() as outer:
        costs.charge(calls=1)
        with costs.scope() as inner:
            costs.charge(calls=2, distances=5)
    costs.charge(calls=100)                      # no scope open: charged nowhere
    assert (outer["calls"], outer["distances"], inner["calls"], inner["distances"]) == (1, 0, 2, 5)
