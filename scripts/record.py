"""Record the packaged model's answers in chunks that resume: one cassette per scenario.

    python scripts/record.py [--parts recordings] [--commit] [--python PY] [--only NAME ...]
    python scripts/record.py --package [--parts recordings]
    python scripts/record.py --parts NEW --replay-first CASSETTE --only NAME ...   # re-record after a change

``--replay-first CASSETTE`` (``llm.replay_first``) answers every request an earlier cassette holds from
it and asks the model only the others: after a change that alters some prompts (memory passing other
associations into a label's prompt), a re-recording costs the new requests only. Record into a fresh
``--parts`` folder, then move the chunks into ``recordings/`` and ``--package``.

Each chunk is one scenario, recorded with ``llm=local llm.threads=1 llm.on_failure=skip`` under
``nice -n 19`` (the machine's other work keeps the CPU) into ``PARTS/NAME.jsonl``. A chunk is
written to ``NAME.jsonl.part`` and renamed when its run ends, with ``NAME.meta.json`` beside it
(calls, failures, minutes, exit code, the command) once the run ends with exit 0 (or 3: more
failed calls than ``llm.max_failure_rate``, a finished run all the same); a restart skips every chunk that has its
``.meta.json`` and records an interrupted one (a ``.part`` left behind) again from the start.
With ``--commit`` each finished chunk is committed at once (``git commit --only`` of its two
files: nothing else staged is taken along).

The chunks live in ``recordings/``, not in ``cassettes/``: everything in ``cassettes/`` ships
inside the wheel, and neither the chunks nor the LoCoMo one (non-commercial licence) should
until they are merged into a packaged cassette.

The chunks, in order (``CHUNKS``): the bundled scenarios the packaged cassette lacks, the ten
of ``configs/experiment/real_llm.yaml``, then the first LoCoMo conversation
(``locomo_conv_26``), imported from ``$LOCOMO`` (the path of LoCoMo's ``locomo10.json``; without
it that chunk is skipped)
into a temporary folder. Its cassette quotes the conversation's turns in every prompt, so it
is part of the data set (CC BY-NC 4.0, ``PARTS/LOCOMO-LICENSE.md`` beside it says so): it stays
on the machine that recorded it, never committed (``.gitignore``; ``--commit`` leaves it out).
LoCoMo is recorded for its attention labels and summaries (``ablate=inference``: no infer
calls; a LoCoMo conversation has 419 turns).

Replay a chunk with ``mtsbench run llm=replay llm.cassette=PARTS/NAME.jsonl scenarios=[NAME]``.

The first chunk, ``checker``, is not a scenario: it records the component checker's calls
(``mtsbench.evaluation.checks.check_llm``: one example call per task, outside any scenario), which the
contract tests replay with ``llm=recorded``.

``--package`` rebuilds the packaged cassette (``PACKAGED``, what ``llm=recorded`` replays) from
the finished chunks (``package``) and nothing else: every record of each chunk but LoCoMo's (its
licence), a scenario's named by its scenario (``"scenario"``: a record written before records
carried it gets its chunk's name).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
NEW = ["field_warmup", "deep_memory", "deep_memory_zh", "noisy_belief"]
LOCOMO = "locomo_conv_26"
CHECKER = "checker"     # the component checker's calls (mtsbench.evaluation.checks.check_llm), outside any scenario
CHECK_LLM = ("import sys; from hydra.utils import instantiate; from mtsbench.evaluation.checks import check_llm; "
             "from mtsbench.config.composition import compose; "
             "check_llm(instantiate(compose(sys.argv[1:])[0].llm))")
CLI = ["-P", "-c", "import sys; from mtsbench.cli import main; sys.exit(main())"]   # `mtsbench` with a given python
OVERRIDES = ["llm=local", "llm.threads=1", "llm.on_failure=skip"]
LICENSE = """# LoCoMo cassettes

`locomo_conv_26.jsonl` holds the requests mtsbench sent about the first conversation of LoCoMo
(locomo10.json, Maharana et al. 2024, https://github.com/snap-research/locomo) and the answers of
Qwen2.5-Coder-1.5B-Instruct Q4_K_M. The prompts quote the conversation's turns, so this file
carries part of the data set: it is under the data set's licence, **CC BY-NC 4.0**
(attribution, non-commercial use only). Neither it nor the data set file is committed to the
repository.
"""


def chunks() -> list[str]:
    """The scenarios to record, in order (module docstring)."""
    experiment = yaml.safe_load((ROOT / "configs" / "experiment" / "real_llm.yaml").read_text(encoding="utf-8"))
    return list(dict.fromkeys([CHECKER] + NEW + list(experiment["scenarios"]) + [LOCOMO]))


def locomo_file(tmp: Path, python: str) -> Path:
    """The first LoCoMo conversation as a scenario file in ``tmp`` (imported once)."""
    target = tmp / f"{LOCOMO}.yaml"
    if not target.is_file():
        source = os.environ["LOCOMO"]
        subprocess.run([python, *CLI, "import",
                        "locomo", source, "-o", str(tmp), "--limit", "1"], check=True, stdout=subprocess.DEVNULL)
    return target


def record(name: str, parts: Path, python: str, tmp: Path, replay_first: str | None = None) -> dict:
    """Record one chunk into ``parts/NAME.jsonl`` (via ``.part``); its metadata."""
    part = parts / f"{name}.jsonl.part"
    part.unlink(missing_ok=True)                       # an interrupted chunk starts again
    scenario, extra = name, [f"llm.replay_first={replay_first}"] if replay_first else []
    if name == LOCOMO:
        scenario, extra = str(locomo_file(tmp, python)), [*extra, "ablate=inference"]
    run_dir = tmp / "runs" / name
    cmd = ["nice", "-n", "19", python, *CLI,
           "run", *OVERRIDES, *extra, f"llm.record={part}", f"scenarios=[{scenario}]", f"hydra.run.dir={run_dir}"]
    if name == CHECKER:
        cmd = ["nice", "-n", "19", python, "-P", "-c", CHECK_LLM, *OVERRIDES, f"llm.record={part}"]
    began = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    minutes = round((time.monotonic() - began) / 60, 1)
    records = [json.loads(line) for line in part.read_text(encoding="utf-8").splitlines() if line.strip()] \
        if part.is_file() else []
    meta = {"scenario": name, "exit": done.returncode, "minutes": minutes, "requests": len(records),
            "failed_requests": sum("error" in r for r in records),
            "command": " ".join(["mtsbench", *cmd[cmd.index("run"):]] if name != CHECKER else
                                ["python -c CHECK_LLM", *cmd[-len(OVERRIDES) - 1:]]).replace(str(tmp), "$TMP")
                                                                 .replace(f"{ROOT}/", ""),
            "stderr": done.stderr.strip().splitlines()[-3:]}
    summary = run_dir / "summary.json"
    if summary.is_file():
        s = json.loads(summary.read_text(encoding="utf-8"))["overall"]
        meta.update(calls=s.get("llm_calls"), failures=s.get("llm_failures"))
    if name == CHECKER and done.returncode == 0:
        meta.update(calls=len(records), failures=meta["failed_requests"])
    return meta


PACKAGED = ROOT / "cassettes" / "qwen2.5-coder-1.5b-instruct-q4_k_m.jsonl"


def package(parts: Path, out: Path = PACKAGED) -> dict:
    """Rebuild ``out`` from the finished chunks in ``parts`` (module docstring); the counts."""
    from mtsbench.llm.cassette import read

    names = [n for n in chunks() if n != LOCOMO and (parts / f"{n}.meta.json").is_file()]
    records = [r if "scenario" in r or n == CHECKER else {**r, "scenario": n}
               for n in names for r in read(parts / f"{n}.jsonl")]
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return {"chunks": names, "records": len(records)}


def commit(paths: list[Path], message: str) -> None:
    """Commit exactly ``paths`` (``git commit --only``), retrying while another git holds the index."""
    rel = [str(p.relative_to(ROOT)) for p in paths]
    for attempt in range(10):
        add = subprocess.run(["git", "add", "--", *rel], cwd=ROOT, capture_output=True, text=True)
        done = add.returncode == 0 and subprocess.run(
            ["git", "commit", "-q", "--only", "-m", message, "--", *rel], cwd=ROOT, capture_output=True,
            text=True).returncode == 0
        if done:
            return
        time.sleep(5 + attempt)
    print(f"record: could not commit {', '.join(rel)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=str(ROOT / "recordings"), help="folder of the chunk cassettes")
    parser.add_argument("--python", default=sys.executable, help="the interpreter with mtsbench[local] installed")
    parser.add_argument("--only", nargs="*", help="record only these chunks (default: all, in order)")
    parser.add_argument("--commit", action="store_true", help="commit each finished chunk")
    parser.add_argument("--replay-first", help="a cassette whose answers are reused: only new requests reach the model")
    parser.add_argument("--package", action="store_true", help="rebuild the packaged cassette from the chunks")
    ns = parser.parse_args(argv)
    parts = Path(ns.parts).resolve()
    if ns.package:
        print(f"record: {PACKAGED.relative_to(ROOT)} rebuilt: {json.dumps(package(parts))}")
        return 0
    parts.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mtsbench-record-") as t:
        for name in ns.only or chunks():
            if name == LOCOMO and not os.environ.get("LOCOMO"):
                print(f"record: {name} skipped: set LOCOMO=PATH to LoCoMo's locomo10.json", flush=True)
                continue
            meta_file = parts / f"{name}.meta.json"
            if meta_file.is_file():
                print(f"record: {name} already recorded, skipped", flush=True)
                continue
            print(f"record: {name} ...", flush=True)
            meta = record(name, parts, ns.python, Path(t), ns.replay_first)
            if meta["exit"] not in (0, 3) or meta.get("calls") is None:    # 3: too many failed calls, but done
                print(f"record: {name} did not finish (exit {meta['exit']}: {' '.join(meta['stderr'])}); "
                      "a restart records it again", file=sys.stderr, flush=True)
                continue
            cassette = parts / f"{name}.jsonl"
            if (parts / f"{name}.jsonl.part").is_file():
                os.replace(parts / f"{name}.jsonl.part", cassette)
            meta_file.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
            print(f"record: {name} done: {json.dumps({k: v for k, v in meta.items() if k != 'stderr'})}", flush=True)
            files = [cassette, meta_file] if cassette.is_file() else [meta_file]
            if name == LOCOMO:               # the data set's text: kept here, never committed
                (parts / "LOCOMO-LICENSE.md").write_text(LICENSE, encoding="utf-8")
            elif ns.commit:
                commit(files, f"Recording: {name} with llm=local ({meta.get('calls')} calls, "
                              f"{meta.get('failures')} failed, {meta['minutes']} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
