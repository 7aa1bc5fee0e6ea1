"""Sweeps that survive a dead worker (issue 16, item 4): a worker killed outright (SIGKILL)
fails only its job, recorded like a failed job; the other jobs complete; ``mtsbench report``
lists every job — ok, failed, interrupted, never started; ``--resume`` re-runs only the jobs
not complete."""

import json

from mtsbench.report.jobs import find_jobs, job_status

KILLER = '''
import os, signal
from mtsbench.systems.base import Outcome, PlainSystem, Ranking


class Killer(PlainSystem):
    """A system whose worker process dies (SIGKILL) when its seed is the environment's
    KILL_SEED; every start is logged to ``log`` (its seed)."""

    def __init__(self, seed: int = 0, log: str | None = None):
        self.seed = seed
        self.log = log

    def start(self, ctx):
        with open(self.log, "a") as f:
            f.write(f"{self.seed}\\n")
        if str(self.seed) == os.environ.get("KILL_SEED"):
            os.kill(os.getpid(), signal.SIGKILL)

    def observe(self, obs):
        return Outcome()

    def retrieve(self, q):
        return Outcome(ranking=Ranking([], [], [], []))
'''


def _plugin(tmp_path):
    (tmp_path / "plugin" / "configs" / "system").mkdir(parents=True)
    (tmp_path / "plugin" / "killer_system.py").write_text(KILLER)
    (tmp_path / "plugin" / "configs" / "system" / "killer.yaml").write_text(
        f"_target_: killer_system.Killer\nseed: ${{seed}}\nlog: {tmp_path / 'starts.log'}\n")
    return {"PYTHONPATH": str(tmp_path / "plugin")}


def test_a_killed_worker_fails_only_its_job_and_resume_reruns_it(cli, tmp_path):
    env = _plugin(tmp_path)
    sweep = tmp_path / "sweep"
    args = ["--config-dir", tmp_path / "plugin" / "configs", "system=killer", "seed=0,1,2",
            "scenarios=[milk_allergy]"]
    r = cli("run", "-m", *args, f"hydra.sweep.dir={sweep}", env=env | {"KILL_SEED": "1"})
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "TerminatedWorkerError" not in r.stderr
    assert "job 1 failed: the worker process running job 1 died (exit code SIGKILL" in r.stderr
    assert "3 jobs done; 1 failed: 1" in r.stderr
    assert [job_status(sweep / str(n)) for n in range(3)] == ["ok", "failed", "ok"]
    failure = json.loads((sweep / "1" / "failure.json").read_text())
    assert failure["type"] == "WorkerDied" and "SIGKILL" in failure["error"]
    r = cli("report", sweep, "--out", tmp_path / "report")
    assert r.returncode == 0, r.stderr
    jobs = find_jobs(sweep)
    assert [j.status for j in jobs] == ["ok", "failed", "ok"] and "died" in jobs[1].error
    assert sorted((tmp_path / "starts.log").read_text().split()) == ["0", "1", "2"]
    # resume: the same sweep, the worker no longer killed; only job 1 runs again
    r = cli("run", "-m", "--config-dir", tmp_path / "plugin" / "configs", "--resume", sweep, env=env)
    assert r.returncode == 0, r.stderr
    assert "resuming: 2 complete, 1 to run" in r.stderr
    starts = (tmp_path / "starts.log").read_text().split()
    assert sorted(starts) == ["0", "1", "1", "2"]                     # jobs 0 and 2 were not re-run
    assert [job_status(sweep / str(n)) for n in range(3)] == ["ok", "ok", "ok"]
    assert not (sweep / "1" / "failure.json").exists()


def _job(d, status=None, failure=None, done=1, planned=2):
    d.mkdir(parents=True)
    if failure is not None:
        (d / "failure.json").write_text(json.dumps({"error": failure}))
    if status is not None:
        summary = {"status": status, "scenarios_done": ["a"][:done], "scenarios_planned": ["a", "b"][:planned]}
        if status == "complete":
            summary |= {"overall": {"checks": 1, "passed": 1}, "scenarios": {"a": {"checks": 1, "passed": 1}}}
        if status == "interrupted":
            summary["stopped"] = {"signal": "SIGINT", "scenario": "b"}
        (d / "summary.json").write_text(json.dumps(summary))


def test_report_lists_every_job_of_the_sweep(tmp_path):
    sweep = tmp_path / "sweep"
    _job(sweep / "0", "complete", done=2)
    _job(sweep / "1", "failed", failure="LLM task infer failed: HTTP 500")
    _job(sweep / "2", "interrupted")
    _job(sweep / "3")                                  # started, killed before any scenario finished
    (sweep / "multirun.yaml").write_text("hydra: {}\n")
    (sweep / "jobs.json").write_text(json.dumps([{"num": n, "overrides": [f"seed={n}"]} for n in range(6)]))
    jobs = find_jobs(sweep)
    assert [(j.num, j.status) for j in jobs] == [(0, "ok"), (1, "failed"), (2, "interrupted"), (3, "interrupted"),
                                                 (4, "never started"), (5, "never started")]
    assert jobs[2].error == "interrupted by SIGINT after 1 of 2 scenarios"
    assert jobs[4].error == "never started" and jobs[4].overrides == ["seed=4"]


def test_the_sweeps_last_line_names_the_jobs_that_failed_or_missed_an_expectation(tmp_path, capsys):
    """Issue 29: "115 of 116 expectations passed" said not which job; the line names each
    failed job (number, overrides, failure.json) and each job with a failed expectation."""
    from omegaconf import OmegaConf

    from mtsbench.harness.sweep import SweepSummary

    sweep = tmp_path / "sweep"
    _job(sweep / "0", "complete", done=2)
    _job(sweep / "1", "failed", failure="LLM task infer failed: HTTP 500")
    _job(sweep / "2", "complete", done=2)
    summary = json.loads((sweep / "2" / "summary.json").read_text())
    summary["overall"] = {"checks": 4, "passed": 3}
    (sweep / "2" / "summary.json").write_text(json.dumps(summary))
    (sweep / "jobs.json").write_text(json.dumps([{"num": n, "overrides": [f"seed={n}", "ablate=tiers"]}
                                                 for n in range(3)]))
    SweepSummary().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}}))
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"mtsbench: 3 jobs done; 1 failed: 1 (seed=1 ablate=tiers; {sweep / '1' / 'failure.json'}); "
                           f"4 of 5 expectations passed in the 2 jobs complete; expectations not met in job "
                           f"2 (seed=2 ablate=tiers; 3 of 4 passed; {sweep / '2' / 'report.md'}); report: "), line
    assert "\n" not in line
