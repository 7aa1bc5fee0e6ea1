"""Live progress (issue 29, item 1): the log's ETA follows the recent rate, a terminal shows a
bar (even one that does not report its width), and a run off a terminal prints no bar."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys

from pathlib import Path

from mtsbench.harness.progress import StepLog


def mtsbench_exe() -> list[str]:
    return [str(Path(sys.executable).parent / "mtsbench")]


def test_eta_follows_a_falling_rate():
    """1,000 steps in each of the first two 10 s intervals (100 steps/s), then 400 (40
    steps/s): the ETA is that of the recent rate (EMA, weight 0.3), not the run's average."""
    clock = iter([0.0, 0.0, 10.0, 20.0, 30.0, 40.0])
    lines: list[str] = []
    log = StepLog(10_000, every=10.0, clock=lambda: next(clock), emit=lines.append)
    log.phase("scenario a")
    for n in (1000, 1000, 400, 400):
        log.update(n)
    # rates: 100, 100, 0.3*40+0.7*100 = 82, 0.3*40+0.7*82 = 69.4
    # ETAs: 8000/100 = 80 s, 7600/82 = 92.68 s, 7200/69.4 = 103.75 s
    assert lines[1:] == ["steps 1000/10000 (10%), 100.0 steps/s, ETA 0:01:30",
                         "steps 2000/10000 (20%), 100.0 steps/s, ETA 0:01:20",
                         "steps 2400/10000 (24%), 82.0 steps/s, ETA 0:01:33",
                         "steps 2800/10000 (28%), 69.4 steps/s, ETA 0:01:44"]
    # the run-average rate said 100, 100, 80, 70 steps/s (ETA 0:01:20, 0:01:20, 0:01:35, 0:01:43)


def test_a_run_off_a_terminal_prints_no_bar(cli, tmp_path):
    done = cli("run", "generate.days=3", f"hydra.run.dir={tmp_path / 'r'}")
    assert done.returncode == 0, done.stderr
    assert "step/s" not in done.stderr and "%|" not in done.stderr, done.stderr
    assert "\r" not in done.stderr and "\r" not in done.stdout
    assert "steps" in (tmp_path / "r" / "mtsbench.log").read_text()       # the log as ever


def test_a_terminal_without_a_width_shows_the_bar(tmp_path):
    """A fresh pty reports 0 columns (as a tool's or an editor's console may): tqdm alone
    prints nothing there; the run's bar falls back to 80 columns."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([*mtsbench_exe(), "run", "generate.days=3", f"hydra.run.dir={tmp_path / 'r'}"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, cwd=tmp_path,
                            env=env)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:          # the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0, out
    text = out.decode("utf-8", "replace")
    assert "step/s" in text or "?step/s" in text, text
    assert "gen_en_3d_s0" in text, text
