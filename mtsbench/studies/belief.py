"""The belief study (issue 52): the design's facts, consolidation and belief rules on BEAM's changed facts.

``python -m mtsbench.studies.belief --beam DIR --work multirun/belief --out experiments/belief``
(``make belief BEAM=DIR``) imports BEAM twice into ``WORK/data`` -- as it is (the haystack, and
the targets of the systems without hints) and with ``--hints silver`` (the oracle's facts and
idle nights) -- copies the plan's targets (and the real extractor's sample) out of each, and
runs every configuration of ``belief_plan.yaml`` with ``mtsbench run`` into ``WORK/runs/NAME``
(the plan's ``warm`` runs alone first, then ``--jobs`` at a time; a run already complete for
the same command and code is kept). With ``--locomo FILE`` LoCoMo's conversations join the
haystack, as in the BEAM study.

The real model's part comes from cassettes, one per run, in ``--cassettes``
(``recordings/belief``; they quote BEAM's chats, so they stay on the machine that recorded
them, never committed):

- without ``--record`` every run replays: a run with ``qa`` answers from ``NAME.jsonl`` (the
  local model answering and judging each question of the plan's categories from the
  system's 1,024-token context), or runs without answers when the cassette is missing; a run
  with ``real: extract`` needs ``NAME.jsonl`` (the model's extraction and relation answers on
  the sample) and is left out without it. The report says which.
- ``--record`` records what is missing with ``llm=local`` (``--model``, ``--threads``; the
  model runs one run at a time, after the runs that need no model): into ``NAME.part.jsonl``,
  renamed ``NAME.jsonl`` when the run completes; a run stopped half-way resumes from what it
  had recorded, and a request another run's cassette already holds (two systems retrieving the
  same context) is answered from it (``llm.real.replay_first``). ``NAME.wall.json`` keeps the
  recording's wall time and the machine's load: the cost per request the report gives.

``--mock-only`` is the round without any model: the plan's ``embedder`` overrides (MiniLM,
hybrid retrieval) are dropped for the hashing embedder, no cassette is read or recorded (the
runs with ``qa`` run without answers; the real extractor is left out, and said); ``--sizes``
replaces the plan's haystack sizes.

The report (``mtsbench.studies.belief_report``) is computed from the saved runs and the silver
scenario files only and holds nothing of the data set. It prints where it wrote and how long it took.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import runs
from .beam import chats_folder, flat, targets_folder

PLAN = Path(__file__).with_name("belief_plan.yaml")
MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


class Cassettes:
    """Where each run's cassette is, and the overrides that replay or record it."""

    def __init__(self, folder: Path, record: bool, model: str, threads: int, server_url: str | None = None,
                 off: bool = False):
        self.folder, self.record, self.model, self.threads = folder, record and not off, model, threads
        self.server_url, self.off = server_url, off

    def final(self, name: str) -> Path:
        return self.folder / f"{name}.jsonl"

    def part(self, name: str) -> Path:
        return self.folder / f"{name}.part.jsonl"

    def recording(self, name: str) -> bool:
        """Does this run record (``--record`` and no finished cassette yet)?"""
        return self.record and not self.final(name).is_file()

    def available(self, name: str) -> bool:
        """Can the run have the model's answers (a finished cassette, or one to record)? Never
        when ``off`` (``--mock-only``)."""
        return not self.off and (self.final(name).is_file() or self.record)

    def overrides(self, name: str) -> list[str]:
        """``llm.real`` replaying the run's cassette, or the local model recording it."""
        common = ["llm.real.on_failure=skip", "llm.max_failure_rate=1.0"]   # failures are reported, not fatal
        if not self.recording(name):
            return ["llm@llm.real=replay", f"llm.real.cassette={self.final(name)}", *common]
        first = self.folder / f"{name}.first.jsonl"
        return ["llm@llm.real=local", f"llm.real.model={self.model}", f"llm.real.threads={self.threads}",
                f"llm.real.record={self.part(name)}", *common,
                *([f"llm.real.server_url={self.server_url}"] if self.server_url else []),
                *([f"llm.real.replay_first={first}"] if first.is_file() else [])]

    def before(self, name: str) -> None:
        """Before recording ``name``: what a stopped recording of it had (``NAME.resume.jsonl``) and
        every finished cassette go into ``NAME.first.jsonl``, whose requests are answered from it (a
        context two systems share is asked once; a stopped run resumes)."""
        part, resume = self.part(name), self.folder / f"{name}.resume.jsonl"
        self.folder.mkdir(parents=True, exist_ok=True)
        if part.is_file():
            with resume.open("ab") as out:
                out.write(part.read_bytes())
            part.unlink()
        done = [p for p in sorted(self.folder.glob("*.jsonl")) if p.name.count(".") == 1]
        sources = ([resume] if resume.is_file() else []) + done
        if sources:
            (self.folder / f"{name}.first.jsonl").write_bytes(b"".join(p.read_bytes() for p in sources))

    def after(self, name: str, wall: float) -> None:
        """A finished recording: ``NAME.jsonl`` and its wall time, the machine's load beside it."""
        part = self.part(name)
        if not part.is_file():
            part.write_text("")                   # the run asked the model nothing
        part.replace(self.final(name))
        for leftover in ("resume", "first"):
            (self.folder / f"{name}.{leftover}.jsonl").unlink(missing_ok=True)
        (self.folder / f"{name}.wall.json").write_text(json.dumps(
            {"wall_s": round(wall, 1), "model": self.model, "threads": self.threads,
             "load_average": [round(x, 2) for x in os.getloadavg()]}))


def command(run: dict, plan: dict, folders: dict[str, Path], out: Path, cassettes: Cassettes) -> list[str] | None:
    """The ``mtsbench run`` command of one planned run: the plan's ``common`` and ``embedder``
    overrides, then the run's own, then its cassette's (None: a ``real`` run without its cassette)."""
    sizes = ",".join(str(s) for s in run.get("sizes", plan["sizes"]))
    extra: list[str] = []
    if run.get("real") == "extract":
        if not cassettes.available(run["name"]):
            return None
        extra = cassettes.overrides(run["name"])
    elif run.get("qa") and cassettes.available(run["name"]):
        extra = [*flat(plan["qa"]), *cassettes.overrides(run["name"])]
    haystack = ",".join(str(folders[k]) for k in ("beam", "locomo") if k in folders)
    return [*runs.mtsbench_exe(), "run", f"scenarios=[{folders[run['data']]}]", f"haystack.sources=[{haystack}]",
            f"haystack.messages=[{sizes}]", *flat(plan.get("common", [])), *flat(plan.get("embedder", [])),
            *flat(run["overrides"]), *extra, f"hydra.run.dir={out}"]


def data_folders(args, plan: dict) -> dict[str, Path]:
    """The imports (BEAM as it is and with silver hints; LoCoMo when given) and the target folders."""
    data = args.work / "data"
    chats = chats_folder(args.beam, args.work)
    folders = {"beam": runs.import_variant("beam", chats, data / "beam", []),
               "beam_silver": runs.import_variant("beam", chats, data / "beam_silver", ["--hints", "silver"])}
    if args.locomo is not None:
        folders["locomo"] = runs.import_variant("locomo", args.locomo, data / "locomo", [])
    folders["default"] = targets_folder(folders["beam"], args.work, plan["targets"], "targets")
    folders["silver"] = targets_folder(folders["beam_silver"], args.work, plan["targets"], "targets_silver")
    folders["sample"] = targets_folder(folders["beam_silver"], args.work, plan["targets"], "targets_sample",
                                       list(plan["sample"]))
    return folders


def run_all(plan: dict, folders: dict[str, Path], work: Path, cassettes: Cassettes, jobs: int) -> list[str]:
    """Every planned run (the warm ones first, then the others ``jobs`` at a time, then those that
    record, one at a time); the names of those that failed."""
    def job(r: dict) -> tuple[str, list[str], Path]:
        out = work / "runs" / r["name"]
        return r["name"], command(r, plan, folders, out, cassettes), out

    planned = []
    for r in plan["runs"]:
        if command(r, plan, folders, work / "runs" / r["name"], cassettes) is None:
            why = "--mock-only" if cassettes.off else \
                f"no cassette {cassettes.final(r['name'])}: record it with --record"
            print(f"{r['name']}: left out ({why})")
        else:
            planned.append(r)
    model = [r for r in planned if (r.get("qa") or r.get("real")) and cassettes.recording(r["name"])]
    warm = [r for r in planned if r["name"] in plan.get("warm", []) and r not in model]
    failed = runs.execute_all([job(r) for r in warm], 1)
    failed += runs.execute_all([job(r) for r in planned if r not in warm and r not in model], jobs)
    for r in model:
        cassettes.before(r["name"])          # before its command: a stopped recording is asked again first
        started = time.perf_counter()
        done = runs.execute_all([job(r)], 1)
        failed += done
        if not done:
            cassettes.after(r["name"], time.perf_counter() - started)
    return failed


def adjusted(plan: dict, sizes: list[int] | None, mock_only: bool) -> dict:
    """The plan with ``sizes`` for its haystack sizes (when given; a run's own ``sizes`` stay)
    and, for ``--mock-only``, without its ``embedder`` overrides: the hashing embedder with
    dense retrieval, the configuration's defaults. ``mock_only`` is kept for the report.

    >>> p = adjusted({"sizes": [0, 10000], "embedder": ["embedder=x"], "runs": []}, [0], True)
    >>> p["sizes"], p["embedder"], p["mock_only"]
    ([0], [], True)
    """
    plan = {**plan, "mock_only": mock_only}
    if sizes:
        plan["sizes"] = list(sizes)
    if mock_only:
        plan["embedder"] = []
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.belief", description=__doc__.split("\n")[0])
    parser.add_argument("--beam", type=Path, required=True, help="BEAM's chats: a folder in the authors' layout")
    parser.add_argument("--locomo", type=Path, help="LoCoMo's locomo10.json: joins the haystack (optional)")
    parser.add_argument("--work", type=Path, default=Path("multirun/belief"), help="imported data and raw runs")
    parser.add_argument("--out", type=Path, default=Path("experiments/belief"), help="report, tables, figures")
    parser.add_argument("--cassettes", type=Path, default=Path("recordings/belief"),
                        help="the real model's cassettes, one per run (never committed: they quote BEAM)")
    parser.add_argument("--record", action="store_true", help="record the missing cassettes with llm=local")
    parser.add_argument("--model", default=MODEL, help=f"the local model that records (default {MODEL})")
    parser.add_argument("--threads", type=int, default=1, help="its CPU threads (default 1: a shared machine)")
    parser.add_argument("--server-url", help="record from a server already running (llm.real.server_url)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time that need no model (default 2)")
    parser.add_argument("--plan", type=Path, default=PLAN, help="the plan (default: the packaged belief_plan.yaml)")
    parser.add_argument("--only", nargs="*", help="run only these planned runs (and their bases)")
    parser.add_argument("--sizes", type=int, nargs="+", help="haystack sizes instead of the plan's")
    parser.add_argument("--mock-only", action="store_true",
                        help="no model and no MiniLM: the hashing embedder (the plan's `embedder` dropped), no "
                             "cassette read or recorded (the qa runs run without answers, the real extractor is "
                             "left out)")
    parser.add_argument("--report-only", action="store_true", help="report from the runs already in --work")
    args = parser.parse_args(argv)
    if runs.inputs_missing([("--beam", args.beam, "folder"), ("--locomo", args.locomo, "file")]):
        return 2
    from .belief_tables import write_report

    started = time.perf_counter()
    plan = adjusted(runs.load_plan(args.plan, only=args.only), args.sizes, args.mock_only)
    cassettes = Cassettes(args.cassettes, args.record, args.model, args.threads, args.server_url, args.mock_only)
    if not args.report_only:
        folders = data_folders(args, plan)
        failed = run_all(plan, folders, args.work, cassettes, args.jobs)
        if failed:
            print(f"{len(failed)} run(s) failed: {', '.join(failed)}; no report written", file=sys.stderr)
            return 1
    return runs.report(lambda: write_report(plan, args.work, args.out, args.cassettes), args.out, started)


if __name__ == "__main__":
    sys.exit(main())
