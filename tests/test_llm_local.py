"""``llm=local``: the packaged model assembled from its chunks, the one-line errors, the requests
it sends (attached to the fake server), and — with the ``local`` extra installed — the real
llama.cpp server: started, failing in one line, stopped with its parent, and one scenario
run through the CLI.

The tests marked ``slow`` load the real model (seconds to minutes on 2 cores) and run only
when asked for: ``pytest -m slow tests/test_llm_local.py`` (skipped as well when the
runtime or the model is not installed). ``MTSBENCH_LOCAL_MODEL=FILE.gguf`` serves another
GGUF in them.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from mtsbench.errors import ConfigError, LLMError
from mtsbench.llm.local import model as local_model
from mtsbench.llm.local import server as local_server
from mtsbench.llm.base import Association, Fact, Item
from mtsbench.llm.local import LocalLLM, Packaged, Server, assemble
from mtsbench.llm.testing import FakeOpenAI

RUNTIME = importlib.util.find_spec(local_server.RUNTIME) is not None
needs_runtime = pytest.mark.skipif(not RUNTIME, reason=f"optional: {local_server.RUNTIME} (pip install 'mtsbench[local]')")


def real_model() -> Path | None:
    """A GGUF to serve in the slow tests: MTSBENCH_LOCAL_MODEL, else the packaged model if installed."""
    if os.environ.get("MTSBENCH_LOCAL_MODEL"):
        return Path(os.environ["MTSBENCH_LOCAL_MODEL"])
    try:
        return assemble()
    except LLMError:
        return None


@pytest.fixture
def model():
    """The real model for a slow test; skips unless ``-m slow`` selected it and it is installed."""
    # opt-in only: a plain `pytest` (make test) never loads a model, even with the extra installed
    path = real_model() if RUNTIME else None
    if path is None:
        pytest.skip("optional: the local extra (runtime and model) is not installed")
    return path


def opted_in(request) -> None:
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("slow: run with -m slow")


# -- the packaged model: chunks joined once, in order, into the cache -----------------------------
@pytest.fixture
def chunked(tmp_path, monkeypatch):
    """A fake packaged model of three chunk packages on sys.path."""
    site = tmp_path / "site"
    blobs = [b"GGUF" + bytes([i]) * 1000 for i in range(3)]
    parts = []
    for i, blob in enumerate(blobs, 1):
        pkg = site / f"fake_model_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
        parts.append((f"fake_model_part{i}", f"data/part{i:02d}.bin"))
    monkeypatch.syspath_prepend(str(site))
    spec = Packaged("fake.gguf", sum(map(len, blobs)), hashlib.sha256(b"".join(blobs)).hexdigest(), tuple(parts),
                    "mtsbench[local]")
    monkeypatch.setitem(local_model.PACKAGED, "fake", spec)
    return b"".join(blobs), site


def test_the_packaged_model_is_joined_once_into_the_cache(chunked, tmp_path):
    joined, _ = chunked
    path = assemble("fake", str(tmp_path / "cache"))
    assert path == tmp_path / "cache" / "models" / "fake.gguf" and path.read_bytes() == joined
    stamp = path.stat().st_mtime_ns
    assert assemble("fake", str(tmp_path / "cache")).stat().st_mtime_ns == stamp     # not joined again
    path.write_bytes(b"truncated")
    assert assemble("fake", str(tmp_path / "cache")).read_bytes() == joined            # a bad size is rebuilt
    assert [p.name for p in path.parent.iterdir()] == ["fake.gguf"]                  # no temporary left


def test_the_joined_file_s_sha256_is_checked(chunked, tmp_path, monkeypatch):
    joined, site = chunked
    path = assemble("fake", str(tmp_path / "cache"))
    path.write_bytes(joined[:-1] + b"X")                                                # same size, other bytes
    os.utime(path, ns=(0, 0))                                                          # surely another mtime
    assert assemble("fake", str(tmp_path / "cache")).read_bytes() == joined            # a bad cached file is rebuilt
    (site / "fake_model_part3" / "data" / "part03.bin").write_bytes(joined[-1004:-1] + b"X")   # a corrupt chunk
    path.unlink()
    with pytest.raises(LLMError) as e:
        assemble("fake", str(tmp_path / "cache"))
    line = str(e.value)
    assert "\n" not in line and str(path) in line and "has sha256" in line and local_model.PACKAGED["fake"].sha256 in line
    assert list(path.parent.iterdir()) == []                                           # nothing put in place


def test_the_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MTSBENCH_CACHE", str(tmp_path / "c"))
    assert local_model.cache_dir() == tmp_path / "c" and local_model.cache_dir(str(tmp_path / "d")) == tmp_path / "d"
    monkeypatch.delenv("MTSBENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert local_model.cache_dir() == tmp_path / "x" / "mtsbench"


def test_a_missing_part_or_model_is_one_line(chunked, tmp_path):
    _, site = chunked
    (site / "fake_model_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(LLMError) as e:
        assemble("fake", str(tmp_path / "cache"))
    assert "fake_model_part2 is not installed" in str(e.value) and "mtsbench[local]" in str(e.value)
    with pytest.raises(LLMError, match="not a packaged model"):
        assemble("nonesuch", str(tmp_path / "cache"))
    llm = LocalLLM(model_path=str(tmp_path / "nothing.gguf"))
    with pytest.raises(LLMError, match="llm.model_path=.* is not a file") as e:
        llm.rate_attention(Item("x", "say", "s0"), [])
    assert "\n" not in str(e.value)


def test_a_missing_runtime_is_one_line(monkeypatch, tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(local_server, "RUNTIME", "no_such_runtime_module")
    with pytest.raises(LLMError, match=r"runtime no_such_runtime_module is not installed \(pip install "
                                       r"'mtsbench\[local\]'\)"):
        LocalLLM(model_path=str(gguf)).summarize([Item("hello", "say", "s0")])


def test_bad_launch_settings_are_one_line(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match=r"^threads: expected an integer from 1 to 1024, got 0$"):
        LocalLLM(model_path=str(gguf), threads=0)         # refused where it is built, not at the first call
    with pytest.raises(ConfigError, match=r"^ctx_size: expected an integer >= 256, got 8$"):
        LocalLLM(model_path=str(gguf), ctx_size=8)


# -- the requests: the task's schema enforced, temperature 0, the seed ---------------------------
def test_every_task_goes_to_the_openai_backend_with_its_schema_at_temperature_zero(tmp_path):
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI() as server:
        llm = LocalLLM(server_url=server.url, seed=7, record=str(cassette))
        assert llm.requires == () and LocalLLM().requires == (local_server.RUNTIME,)
        score = llm.rate_attention(Item("Milk on the table", "perceive", "s1"), [Association("Allergic", 8.0, 0.5)])
        assert 0 <= score <= 10 and llm.meter.calls == 1
        bodies = [body for _, body in server.requests]
    assert [b["response_format"]["type"] for b in bodies] == ["json_schema"]
    assert bodies[0]["temperature"] == 0.0 and bodies[0]["seed"] == 7 and bodies[0]["max_tokens"] == 512
    line = json.loads(cassette.read_text().splitlines()[0])
    assert line["model"] == local_model.DEFAULT_MODEL and line["task"] == "rate_attention"   # replayable: llm=replay


def test_a_copy_leaves_the_client_out_and_only_chat_tasks_are_forwarded():
    with FakeOpenAI() as server:
        llm = LocalLLM(server_url=server.url)
        fact = Fact("k", True, "t", 0.5)
        assert llm.judge_relation(fact, fact).label in ("same", "contradicts", "unrelated")
        twin = copy.deepcopy(llm)
    assert "chat_" in vars(llm) and "chat_" not in vars(twin) and twin.meter.calls == 1
    with pytest.raises(AttributeError):
        llm.no_such_task  # noqa: B018
    with pytest.raises(AttributeError):
        llm._send  # noqa: B018


# -- the real server (the runtime installed) ----------------------------------------------------
@needs_runtime
def test_a_file_that_is_no_model_fails_in_one_line(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all" * 100)
    with pytest.raises(LLMError) as e:
        Server(bad, 1, 512, 60).start()
    message = str(e.value)
    assert "\n" not in message and "the server exited with code" in message and "bad.gguf" in message
    log = Path(message.rsplit("(log ", 1)[1].rstrip(")"))
    assert log.is_file() and "Failed to init server" in log.read_text()        # kept: the message names it
    log.unlink()


@pytest.mark.slow
def test_the_server_starts_answers_within_the_schema_and_stops(request, model):
    opted_in(request)
    with LocalLLM(model_path=str(model), threads=1, seed=0) as llm:
        score = llm.rate_attention(Item("A glass of milk is on the table.", "perceive", "s0"),
                                   [Association("The user is allergic to milk", 8.0, 0.5)])
        assert 0 <= score <= 10 and llm.meter.by_task["rate_attention"]["failures"] == 0
        server = local_server._SERVERS[llm.server_key_]
        assert server.alive and server.url.startswith("http://127.0.0.1:") and server.load_seconds > 0
    assert not server.alive and local_server._SERVERS == {}


SCRIPT = """
import sys, time
from mtsbench.llm.local import LocalLLM
from mtsbench.llm.local.server import _SERVERS
llm = LocalLLM(model_path=sys.argv[1], threads=1)
llm._chat()
server = next(iter(_SERVERS.values()))
print(server.proc.pid, server.log, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_no_server_outlives_its_run(request, model, how):
    """Ctrl-C stops the server in order (atexit); even a SIGKILLed parent leaves none (stdin EOF)."""
    opted_in(request)
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SCRIPT), str(model)], stdout=subprocess.PIPE,
                              text=True)
    try:
        pid, log = parent.stdout.readline().split()
        child = int(pid)
        os.kill(parent.pid, how)
        parent.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _running(child):
            time.sleep(0.2)
        assert not _running(child), f"the server {child} outlived its parent"
        assert not Path(log).exists(), "the server's log is removed on a clean stop"
    finally:
        parent.kill()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_a_scenario_runs_end_to_end_against_the_real_model(request, model, cli, tmp_path):
    opted_in(request)
    out = tmp_path / "run"
    cassette = tmp_path / "real.jsonl"
    # the plumbing is under test, not the model: a call the model botches (the 0.5B model can loop
    # inside a JSON string until max_tokens) is skipped and counted rather than stopping the run
    r = cli("run", "scenarios=[cold_then_fever]", "llm=local", f"llm.model_path={model}", "llm.threads=1",
            "llm.on_failure=skip", "llm.max_failure_rate=1", f"llm.record={cassette}", f"hydra.run.dir={out}",
            timeout=3600)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    llm = summary["scenarios"]["cold_then_fever"]["llm"]
    assert llm["calls"] >= 10 and llm["failures"] <= llm["calls"] // 4, llm
    replayed = cli("run", "scenarios=[cold_then_fever]", "llm=replay", f"llm.cassette={cassette}",
                   f"hydra.run.dir={tmp_path / 'replay'}")
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    live, again = (pd.read_csv(d / "metrics.csv").drop(columns="latency_ms") for d in (out, tmp_path / "replay"))
    pd.testing.assert_frame_equal(live, again)                       # the cassette replays the live run
