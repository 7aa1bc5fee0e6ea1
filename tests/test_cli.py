"""The CLI end to end, on the real scenario files, from a temporary working directory."""

import json
from pathlib import Path

import pandas as pd

from mtsbench.evaluation.evaluate import COLUMNS, WALL_CLOCK_COLUMNS
from mtsbench.outputs.stream import trace_events

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
DESIGN_COLUMNS = ["scenario", "step", "kind", "check", "passed", "value", "expected", "k", "recall",
                  "scored", "tiers_searched", "llm_calls", "tokens", "latency_ms"]


def test_check_passes_on_bundled_scenarios(cli):
    r = cli("check", SCENARIOS)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "expectations passed" in r.stdout


def test_common_sense_ablation_fails_the_attention_expectation(cli):
    r = cli("check", SCENARIOS / "milk_allergy.yaml", "attention=common_sense")
    assert r.returncode == 1
    failed = [line for line in r.stdout.splitlines() if line.startswith("| milk_allergy")]
    assert len(failed) == 1 and "| milk | attention |" in failed[0]


def test_run_writes_every_output(cli, tmp_path):
    out = tmp_path / "job"
    r = cli("run", "scenarios=[milk_allergy,milk_allergy_zh]", f"hydra.run.dir={out}")
    assert r.returncode == 0, r.stderr
    assert str(out / "report.md") in r.stdout
    metrics = pd.read_csv(out / "metrics.csv")
    assert set(DESIGN_COLUMNS) <= set(metrics.columns)
    probes = metrics[metrics["check"] == "probe"]
    assert len(probes) == 2 and (probes["scored"] > 0).all()
    assert set(metrics["scenario"]) == {"milk_allergy", "milk_allergy_zh"}
    summary = json.loads((out / "summary.json").read_text())
    for part in [summary["overall"], *summary["scenarios"].values()]:
        assert {"checks", "passed", "recall", "scored", "llm_calls", "tokens"} <= set(part)
    assert summary["overall"]["llm_calls"] > 0 and summary["overall"]["tokens"] > 0
    events = trace_events(out)                     # trace.parquet, one dict per event
    assert {"created", "scored", "recalled", "retrieval"} <= {e["event"] for e in events}
    assert (out / ".hydra" / "config.yaml").exists()
    assert "# mtsbench run report" in (out / "report.md").read_text()


def test_same_config_and_seed_give_identical_metrics(cli, tmp_path):
    frames = []
    for name in ("a", "b"):
        r = cli("run", "llm.noise=0.2", "seed=7", f"hydra.run.dir={tmp_path / name}")
        assert r.returncode == 0, r.stderr
        frames.append(pd.read_csv(tmp_path / name / "metrics.csv").drop(columns=WALL_CLOCK_COLUMNS))
    pd.testing.assert_frame_equal(*frames)
    r = cli("run", "llm.noise=0.2", "seed=8", f"hydra.run.dir={tmp_path / 'c'}")
    other = pd.read_csv(tmp_path / "c" / "metrics.csv").drop(columns=WALL_CLOCK_COLUMNS)
    assert not other.equals(frames[0])   # the seed reaches the noise


def test_validate_and_scenarios_commands(cli):
    r = cli("validate", SCENARIOS, REPO / "tests" / "data" / "valid")
    n_files = len(list(SCENARIOS.glob("*.yaml"))) + len(list((REPO / "tests" / "data" / "valid").glob("*.yaml")))
    assert r.returncode == 0 and r.stdout.count("ok  ") == n_files
    r = cli("validate", REPO / "tests" / "data" / "malformed" / "two_kinds.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "has both 'say' and 'probe'" in r.stderr
    r = cli("scenarios")
    assert r.returncode == 0 and "milk_allergy_zh" in r.stdout and "days" in r.stdout.splitlines()[0]


def test_bad_input_is_one_line_never_a_traceback(cli, tmp_path):
    bad = REPO / "tests" / "data" / "malformed" / "backwards.yaml"
    for args in [("check", bad), ("run", f"scenarios=[{bad}]", f"hydra.run.dir={tmp_path / 'x'}"),
                 ("check", "attention=comon_sense"), ("run", "scenarios=[milk_alergy]"), ("chek",),
                 ("run", "llm=openai", "llm.model=x", f"hydra.run.dir={tmp_path / 'y'}"),
                 ("check", "llm=openai", "llm.model=x"), ("run", "-m", "--cfg", "job")]:
        r = cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr
    assert not (tmp_path / "x" / "metrics.csv").exists()   # nothing partial presented as done
    assert "did you mean 'common_sense'" in cli("check", "attention=comon_sense").stderr
    assert "did you mean 'milk_allergy'" in cli("run", "scenarios=[milk_alergy]").stderr
    assert "llm.base_url is not set" in cli("check", "llm=openai", "llm.model=x").stderr


def test_metrics_columns_are_the_documented_ones():
    assert set(DESIGN_COLUMNS) <= set(COLUMNS)


def test_version_and_progress_lines_in_the_run_log(cli, tmp_path):
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("mtsbench ")
    out = tmp_path / "run"
    r = cli("run", "scenarios=[milk_allergy]", "preload.memories=500", f"hydra.run.dir={out}")
    assert r.returncode == 0, r.stderr
    log = (out / "mtsbench.log").read_text()
    assert "scenario milk_allergy: building the system, pre-loading 500 memories" in log
    assert "scenario milk_allergy: built in" in log and "faiss.loader" not in log
