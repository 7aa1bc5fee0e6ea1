"""End to end through the CLI: record against a fake server, replay with it gone, no key leaks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from mtsbench.evaluation.evaluate import WALL_CLOCK_COLUMNS
from mtsbench.llm.testing import FakeOpenAI

SECRET = "sk-mtsbench-test-9d41f07c2b"
MTSBENCH = Path(sys.executable).parent / "mtsbench"


def mtsbench(*args, cwd):
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    return subprocess.run([str(MTSBENCH), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_record_then_replay_offline_gives_identical_metrics_and_no_file_holds_the_key(tmp_path):
    cassette, recorded, replayed = tmp_path / "llm.jsonl", tmp_path / "rec", tmp_path / "rep"
    with FakeOpenAI() as server:
        r = mtsbench("run", "llm=openai", f"llm.base_url={server.url}", "llm.model=any", "llm.max_retries=0",
                     f"llm.record={cassette}", "scenarios=[milk_allergy]", f"hydra.run.dir={recorded}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        url = server.url
    assert server.requests and all(h["authorization"] == f"Bearer {SECRET}" for h, _ in server.requests)
    r = mtsbench("run", "llm=replay", f"llm.cassette={cassette}", "scenarios=[milk_allergy]",
                 f"hydra.run.dir={replayed}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr

    frames = [pd.read_csv(d / "metrics.csv") for d in (recorded, replayed)]
    assert frames[0]["llm_calls"].sum() > 0
    pd.testing.assert_frame_equal(*(f.drop(columns=WALL_CLOCK_COLUMNS) for f in frames))
    llm = [json.loads((d / "summary.json").read_text())["scenarios"]["milk_allergy"]["llm"]
           for d in (recorded, replayed)]
    assert llm[0] == llm[1] and llm[0]["calls"] == len(server.requests)
    assert llm[0]["by_task"]["rate_attention"]["prompt_tokens"] > 0

    files = [p for d in (recorded, replayed) for p in d.rglob("*") if p.is_file()] + [cassette]
    assert any(p.parent.name == ".hydra" for p in files) and len(files) > 10
    contents = {p: p.read_bytes() for p in files}
    assert url.encode() in contents[recorded / ".hydra" / "config.yaml"]   # the search does read the dumps
    assert [p for p, data in contents.items() if SECRET.encode() in data] == []
