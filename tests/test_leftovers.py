"""``mtsbench check`` without ``--out`` and ``mtsbench.run()`` without ``out`` leave nothing
in the temporary folder (issue 29, item 3); with an output folder the outputs stay."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import mtsbench

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "milk_allergy.yaml"


def test_check_without_out_leaves_no_folder(cli, tmp_path):
    temp = tmp_path / "temp"
    temp.mkdir()
    done = cli("check", SCENARIO, env={"TMPDIR": str(temp)})
    assert done.returncode == 0, done.stderr
    assert "outputs not kept (--out DIR keeps them)" in done.stdout, done.stdout
    assert list(temp.iterdir()) == []


def test_check_with_out_keeps_it(cli, tmp_path):
    done = cli("check", SCENARIO, "--out", tmp_path / "kept")
    assert done.returncode == 0, done.stderr
    assert f"outputs in {tmp_path / 'kept'}" in done.stdout
    assert (tmp_path / "kept" / "summary.json").is_file()


def test_run_without_out_leaves_no_folder_and_keeps_the_tables(tmp_path, monkeypatch):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    run = mtsbench.run([f"scenarios=[{SCENARIO}]"])
    assert list(temp.iterdir()) == []
    assert len(run.probes) > 0 and run.summary["overall"]["pass_rate"] == pytest.approx(1.0)
    assert run.results is not None and run.timelines is not None and run.trace is not None
