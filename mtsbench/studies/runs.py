"""What every study shares: its plan, its imports, and running its configurations.

A study (``mtsbench.studies.locomo``, ``mtsbench.studies.beam``) is a plan — a YAML of data
variants and named runs, each ``mtsbench run`` with overrides — executed with the
``mtsbench`` command of this environment into ``WORK/runs/NAME`` and reported from the saved
results only. A data variant is imported once per input file and flags (``import_variant``);
a run is kept when its folder holds a complete run of the same command by the same code
(``execute``), so a stopped study resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml


def load_plan(path: Path, only: list[str] | None = None) -> dict:
    """The plan at ``path``; ``only``: keep these runs and the runs they compare with (``base``)."""
    plan = yaml.safe_load(path.read_text(encoding="utf-8"))
    names = [r["name"] for r in plan["runs"]]
    if len(set(names)) != len(names):
        raise SystemExit(f"{path}: runs: names repeat")
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise SystemExit(f"--only: no run named {', '.join(unknown)} in {path}")
        keep = set(only) | {r.get("base") for r in plan["runs"] if r["name"] in only} - {None}
        plan["runs"] = [r for r in plan["runs"] if r["name"] in keep]
    return plan


def mtsbench_exe() -> list[str]:
    """The ``mtsbench`` command of this interpreter's environment."""
    exe = Path(sys.executable).with_name("mtsbench")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mtsbench"]


def import_variant(importer: str, data: Path, folder: Path, flags: list[str]) -> Path:
    """``mtsbench import IMPORTER DATA -o FOLDER FLAGS``, kept when ``folder`` was imported
    from the same input (path, size) with the same flags."""
    stamp = folder / ".imported"
    key = json.dumps({"file": str(data.resolve()), "size": _size(data), "flags": flags})
    if not (stamp.exists() and stamp.read_text() == key):
        shutil.rmtree(folder, ignore_errors=True)
        done = subprocess.run([*mtsbench_exe(), "import", importer, str(data), "-o", str(folder), *flags],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"mtsbench import {importer} {data} {' '.join(flags)}: {done.stderr.strip()}")
        stamp.write_text(key)
    return folder


def _size(path: Path) -> int:
    """A file's size, or the total size of a folder's files (what an import was made from)."""
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def code_hash() -> str:
    """A digest of the installed package's Python files and configs (the studies' own code aside:
    a report change re-runs nothing): a kept run must come from this code."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".yaml")
                       and not {"__pycache__", "studies"} & set(p.relative_to(root).parts)):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def execute(name: str, cmd: list[str], out: Path, code: str = "") -> tuple[str, float, str]:
    """Run one configuration unless ``out`` holds a complete run of the same command by the
    same code (``code_hash``); returns (name, wall seconds, status)."""
    stamp = out / ".study-command.json"
    summary = out / "summary.json"
    if stamp.exists() and summary.exists() and json.loads(stamp.read_text()) == [code, *cmd[1:]] \
            and json.loads(summary.read_text()).get("status") == "complete":
        return name, json.loads((out / ".study-wall.json").read_text()), "kept"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["(no output)"]
        return name, wall, f"failed (exit {done.returncode}): {last[0]}"
    out.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps([code, *cmd[1:]]))
    (out / ".study-wall.json").write_text(json.dumps(round(wall, 1)))
    return name, wall, "ran"


def execute_all(jobs: list[tuple[str, list[str], Path]], parallel: int) -> list[str]:
    """``execute`` every (name, command, folder), ``parallel`` at a time, printing each as it
    ends; returns the names of the runs that failed."""
    code = code_hash()
    failed = []
    with ThreadPoolExecutor(max(1, parallel)) as pool:
        for name, wall, status in pool.map(lambda j: execute(*j, code), jobs):
            print(f"{name}: {status} ({wall:.0f} s)", flush=True)
            if status.startswith("failed"):
                failed.append(name)
    return failed


def inputs_missing(given: list[tuple[str, Path | None, str]]) -> bool:
    """Print the one-line error for the first (flag, path, ``"folder"`` or ``"file"``) whose
    path is given but is not one, and say so (False: every given input is there)."""
    for flag, path, kind in given:
        if path is not None and not (path.is_dir() if kind == "folder" else path.is_file()):
            print(f"{flag} {path}: no such {kind} (see docs/datasets.md)", file=sys.stderr)
            return True
    return False


def report(write, out: Path, started: float) -> int:
    """Call ``write()`` (a study's report into ``out``): exit 2 with its one line on a
    ``ReportError``, else print where it wrote and how long the study took; the exit code."""
    from ..errors import ReportError

    try:
        write()
    except ReportError as e:
        print(f"mtsbench: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out / 'report.md'}, {out / 'summary.csv'} and figures in {out} "
          f"({time.perf_counter() - started:,.0f} s)")
    return 0
