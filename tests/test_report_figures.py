"""`mtsbench report` on a real seeded two-key sweep: seeds pooled with 95% bootstrap
intervals, the figures, and report.html opened in headless Chromium."""

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mtsbench.report.intervals import bootstrap
from mtsbench.report.timeplots import by_tier


def _mtsbench(*args, timeout=600):
    exe = Path(sys.executable).parent / "mtsbench"
    return subprocess.run([str(exe) if exe.exists() else "mtsbench", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """8 jobs: belief x conflict (a two-key grid), each with seeds 0 and 1 of a noisy mock LLM."""
    d = tmp_path_factory.mktemp("sweep") / "multirun"
    r = _mtsbench("run", "-m", "scenarios=[contradiction,milk_allergy]", "llm.noise=0.3", "seed=0,1", "belief=ema,nars",
                  "conflict=weaker_loses,newest_wins", f"hydra.sweep.dir={d}")
    assert r.returncode == 0, r.stderr
    return d


@pytest.fixture(scope="module")
def report(sweep, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    r = _mtsbench("report", sweep, "--out", out)
    assert r.returncode == 0, r.stderr
    assert "8 jobs, 4 configurations, 0 failed" in r.stdout
    return out


def _metrics(sweep, job):
    return pd.read_csv(sweep / str(job) / "metrics.csv")


def test_seeds_pool_into_one_row_per_configuration(sweep, report):
    summary = pd.read_csv(report / "summary.csv", dtype={"jobs": str})
    assert list(summary["config"]) == ["belief=ema conflict=weaker_loses", "belief=ema conflict=newest_wins",
                                       "belief=nars conflict=weaker_loses", "belief=nars conflict=newest_wins"]
    assert list(summary["seeds"]) == [2, 2, 2, 2] and list(summary["jobs"]) == ["0 4", "1 5", "2 6", "3 7"]
    for _, row in summary.iterrows():
        frames = [_metrics(sweep, int(j)) for j in row["jobs"].split()]
        passed = [f[(f["check"] != "probe") & f["passed"].notna()]["passed"].astype(str).eq("True").mean()
                  for f in frames]
        assert row["pass_rate"] == pytest.approx(np.mean(passed), abs=1e-4)       # mean of the seeds' means
        for column in ("pass_rate", "recall", "recall@10", "recall@1024t", "scored", "tokens", "cost_per_turn"):
            assert row[f"{column}_lo"] <= row[column] <= row[f"{column}_hi"], column
    # a per-run number varies between the two seeds of a noisy LLM: its interval (scenarios resampled
    # within each seed) holds both seeds' totals
    tokens = [json.loads((sweep / j / "summary.json").read_text())["overall"]["tokens"] for j in ("0", "4")]
    assert min(tokens) < max(tokens)
    assert summary["tokens_lo"].iloc[0] <= min(tokens) and max(tokens) <= summary["tokens_hi"].iloc[0]


def test_intervals_are_deterministic_and_match_the_bootstrap(sweep, report, tmp_path):
    again = tmp_path / "again"
    assert _mtsbench("report", sweep, "--out", again).returncode == 0
    assert (again / "summary.csv").read_bytes() == (report / "summary.csv").read_bytes()
    row = pd.read_csv(report / "summary.csv").iloc[2]
    groups = [pd.to_numeric(_metrics(sweep, j).query("check == 'probe'")["scored"]) for j in (2, 6)]
    mean, lo, hi = bootstrap(groups)
    assert (row["scored"], row["scored_lo"], row["scored_hi"]) == pytest.approx((mean, lo, hi), abs=1e-4)


def test_report_md_gives_intervals_ties_and_every_figure(report):
    text = (report / "report.md").read_text()
    assert re.search(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", text), "no 'mean [lo, hi]' in the tables"
    assert "## Best configurations (paired tests)" in text and "intervals overlap" not in text.split("## Best")[1]
    assert re.search(r"- \*\*earned recall@k\*\*: (best|highest mean|every configuration has the same value)", text)
    expected = ["pareto_total.png", "pareto_scored.png", "pareto_tokens.png", "recall_curves.png", "heatmaps.png",
                "pass_matrix.png", "llm_cost.png", "tier_occupancy.png", "beliefs.png", "timeline_milk_allergy.png"]
    for png in expected:
        assert (report / png).stat().st_size > 5000 and f"]({png})" in text, png
    drawn = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert sorted(drawn) == sorted(p.name for p in report.glob("*.png"))


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def render(page: Path, profile: Path) -> tuple[str, dict | None, str]:
    """Open ``page`` in headless Chromium: (data-status, the status JSON, Chromium's log)."""
    exe = chromium()
    if exe is None:
        pytest.skip("chromium not found")
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--enable-logging=stderr",
                        "--v=0", "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180)
    m = re.search(r'<div id="report-status"[^>]*?data-status="(\w+)"[^>]*>([^<]*)</div>', r.stdout)
    assert m, f"no status in the dumped DOM (exit {r.returncode}): {r.stderr[-2000:]}"
    return m.group(1), json.loads(m.group(2)) if m.group(2) else None, r.stderr


def test_html_report_renders_in_chromium_with_every_figure(report, tmp_path):
    page = report / "report.html"
    html = page.read_text()
    assert "src=\"http" not in html and "<link" not in html                 # one self-contained file
    status, detail, log = render(page, tmp_path / "profile")
    pngs = len(list(report.glob("*.png")))
    assert status == "ok", detail
    assert detail == {"images": pngs, "broken": [], "errors": [], "sort": True}
    assert "Uncaught" not in log


def test_the_chromium_check_sees_a_broken_page(report, tmp_path):
    """The same check fails on a page with a script error and an image that does not decode."""
    page = tmp_path / "broken.html"
    html = (report / "report.html").read_text()
    html = html.replace("data:image/png;base64,", "data:image/png;base64,AAAA", 1)
    page.write_text(html.replace("</body>", "<script>undefinedFunction();</script></body>"))
    status, detail, _ = render(page, tmp_path / "profile")
    assert status == "error" and detail["errors"] and len(detail["broken"]) == 1


def test_single_run_report_has_intervals_and_html(report, sweep, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(sweep / "0", run)
    (run / "report.md").unlink()
    assert _mtsbench("report", run).returncode == 0
    text = (run / "report.md").read_text()
    assert text.startswith("# mtsbench run report") and "## Intervals" in text
    assert "timeline_milk_allergy.png" in text and (run / "report.html").stat().st_size > 10000


def test_tier_occupancy_frame_pads_rows_without_a_pandas_deprecation():
    """Days before the store filled its last tier give shorter rows; the frame counts those
    tiers 0 and is built without the ragged-rows deprecation (an error in pandas 4)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide = by_tier([[5], [4, 2], [3, 2, 1]], [0.0, 1.0, 2.0])
    assert wide.to_numpy().tolist() == [[5, 0, 0], [4, 2, 0], [3, 2, 1]]
    assert wide.index.tolist() == [0.0, 1.0, 2.0]
