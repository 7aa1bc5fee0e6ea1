"""scripts/record.py: the chunks to record, in order, and a restart skips the finished ones."""

import json
from pathlib import Path

import yaml

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "record.py"


def test_the_unrecorded_scenarios_first_then_the_experiment_s_then_locomo(import_file):
    record = import_file("record_script", SCRIPT)
    experiment = yaml.safe_load((SCRIPT.parent.parent / "configs" / "experiment" / "real_llm.yaml").read_text())
    order = record.chunks()
    assert order[:5] == ["checker", "field_warmup", "deep_memory", "deep_memory_zh", "noisy_belief"]
    assert order[1:-1] == experiment["scenarios"] and order[-1] == "locomo_conv_26"


def test_a_restart_skips_the_chunks_that_finished(tmp_path, capsys, import_file):
    record = import_file("record_script", SCRIPT)
    for name in ("field_warmup", "deep_memory"):
        (tmp_path / f"{name}.meta.json").write_text(json.dumps({"scenario": name}))
    # nothing is run: every chunk asked for has its metadata (a missing python would fail otherwise)
    assert record.main(["--parts", str(tmp_path), "--python", "/nonexistent/python",
                        "--only", "field_warmup", "deep_memory"]) == 0
    assert capsys.readouterr().out.count("already recorded, skipped") == 2


def test_package_is_the_finished_chunks_each_scenario_s_records_named_by_it(tmp_path, import_file):
    record = import_file("record_script", SCRIPT)
    parts, out = tmp_path / "parts", tmp_path / "packaged.jsonl"
    parts.mkdir()
    chunk = {"checker": [{"key": "c", "n": 0}],
             "field_warmup": [{"key": "k1", "n": 1}, {"key": "shared", "n": 2}],
             "deep_memory": [{"key": "shared", "n": 3, "scenario": "deep_memory"}],
             "noisy_belief": [{"key": "k9", "n": 9}]}            # no .meta.json: an unfinished chunk
    for name, rows in chunk.items():
        (parts / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        if name != "noisy_belief":
            (parts / f"{name}.meta.json").write_text("{}")
    out.write_text(json.dumps({"key": "old", "n": 5}) + "\n")                   # replaced as a whole
    assert record.package(parts, out) == {"chunks": ["checker", "field_warmup", "deep_memory"], "records": 4}
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["n"], r.get("scenario")) for r in rows] == [(0, None), (1, "field_warmup"), (2, "field_warmup"),
                                                          (3, "deep_memory")]
