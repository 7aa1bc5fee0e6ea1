"""Mutation testing of the seed design with the behaviour suite as the test (issue 53; ``make mutants``).

The tool is cosmic-ray (extra ``mutation``): it takes any test command, so the test is the user's
own offline suite -- ``mtsbench check`` on the bundled scenarios, then ``mtsbench check --matrix
--embedder hashing`` -- not the unit tests; it mutates files on disk (here a scratch copy of the
source, so the repository is never touched) and keeps its session in SQLite, whose ``exec`` runs
only what is still pending: a stopped run resumes where it stopped. docs/plugins.md argues the
choice against mutmut 3.

Subcommands (each prints what it does; paths are relative to the repository):

``run [--modules PATH ...] [--work DIR] [--sample N [--seed S]]``
    Copy ``mtsbench/``, ``configs/``, ``scenarios/``, ``cassettes/`` to ``DIR/src`` (kept: a second
    run resumes), write ``DIR/cosmic-ray.toml`` from ``experiments/mutation/cosmic-ray.toml``, create
    the session (``cosmic-ray init``) and filter it once: the operators the config leaves out
    (``cr-filter-operators``), then every mutant on a line the suite never runs (measured by
    running the suite once under coverage: this also proves the unmutated suite passes), then,
    with ``--sample N``, all but a stratified random sample of N of the rest (``sample``: each
    module's share of N in proportion to its mutants, drawn with a seeded generator; the sample
    is part of the session, so a resumed run keeps it). Then ``cosmic-ray exec`` and ``report``
    (with a sample, the kill rate is an estimate: its 95% Wilson interval is given). Default
    modules: ``mechanisms/``, ``memory/``, ``processes/`` and ``systems/mts/`` (the design's system).
``rerun [--work DIR] [--modules PATH ...]``
    Run the session's survivors and pending mutants again against the current suite (after checks
    were added): a fresh copy of the source in ``DIR/rerun/src``, a session ``DIR/rerun/session.sqlite``
    over the same modules that keeps only the mutants (by id) that survived or were pending in
    ``DIR``'s session (the others skipped: a check added later cannot revive a killed mutant, as
    the suite only grows); resumable as ``run`` (so its copy is kept: delete ``DIR/rerun`` to rerun
    against checks added since). ``report`` then takes each mutant's outcome from
    the rerun where it ran there (a mutant whose module changed since has a new id and keeps its
    first outcome; the report counts them).
``suite [--src DIR]``
    The test command cosmic-ray runs per mutant: the bundled checks, then the matrix on hashing one
    mechanism at a time, stopping at the first failure (exit 1) -- the same verdict as the two
    commands' exit codes, sooner for a killed mutant.
``report [--work DIR] [--out DIR] [--partial TEXT]``
    ``report.md`` and ``mutants.csv`` from the session and the triage (``experiments/mutation/
    triage.yaml``): generated, filtered, killed, survived, pending; every survivor with its triage
    (``equivalent: REASON``, ``killed_by: CHECK`` or ``not_chosen: REASON`` -- code of an option the
    suite never chooses that runs at import, e.g. a decorator of another option's class, which the
    coverage filter cannot tell from code the suite uses) or "untriaged"; the kill rate over the
    non-equivalent mutants of the code the suite runs.

A mutant's id is ``MODULE:LINE:COLUMN:OPERATOR#OCCURRENCE`` (stable while the module is unchanged),
the key of ``triage.yaml``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "experiments" / "mutation" / "cosmic-ray.toml"
TRIAGE = REPO / "experiments" / "mutation" / "triage.yaml"
MODULES = ["mtsbench/mechanisms", "mtsbench/memory", "mtsbench/processes", "mtsbench/systems/mts"]
COPIED = ("mtsbench", "configs", "scenarios", "cassettes")
NOT_RUN = "not run by the behaviour suite"
NOT_SAMPLED = "not in the sample"
NOT_RERUN = "killed in the first pass, or outside it"


def bin_path(name: str) -> str:
    """A console script installed beside this interpreter (cosmic-ray, cr-filter-operators)."""
    return str(Path(sys.executable).with_name(name))


# -- the test command -------------------------------------------------------------------------------
def suite(src: Path | None) -> int:
    """The behaviour suite against the ``mtsbench`` in ``src`` (else the installed one); 0 when it passes."""
    if src is not None:
        sys.path.insert(0, str(src))
    from mtsbench.cli import main as cli
    from mtsbench.scenario.catalog import bundled_dir
    from mtsbench.studies import behaviour

    if cli(["check", str(bundled_dir())]) != 0:
        return 1
    with tempfile.TemporaryDirectory(prefix="mtsbench-mutant-") as folder:
        for m in behaviour.MECHANISMS:
            if behaviour.check([], Path(folder) / m, keep=False, embedders=["hashing"], mechanisms=[m]) != 0:
                return 1
    return 0


# -- preparing and running a session ------------------------------------------------------------------
def prepare(work: Path, modules: list[str]) -> tuple[Path, Path, Path]:
    """(src, config, session) of the run in ``work``: the scratch copy and config made if missing."""
    src, config, session = work / "src", work / "cosmic-ray.toml", work / "session.sqlite"
    if not src.exists():
        src.mkdir(parents=True)
        for name in COPIED:
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        print(f"copied {', '.join(COPIED)} to {src}")
    test = f"{sys.executable} -P {Path(__file__).resolve()} suite --src {src.resolve()}"
    text = TEMPLATE.read_text(encoding="utf-8").replace("@MODULES@", json.dumps(modules)).replace("@TEST@", test)
    config.write_text(text, encoding="utf-8")
    return src, config, session


def covered_lines(src: Path, work: Path) -> dict[str, set[int]]:
    """module path (relative to ``src``) -> the lines the unmutated suite runs; exits if it fails."""
    data = work / "coverage.json"
    if not data.exists():
        rc = work / ".coveragerc"
        rc.write_text(f"[run]\nsource = {src / 'mtsbench'}\nparallel = false\n", encoding="utf-8")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-P", "-m", "coverage", "run", f"--rcfile={rc}",
                               f"--data-file={work / '.coverage'}", str(Path(__file__).resolve()), "suite",
                               "--src", str(src.resolve())], cwd=work)
        if done.returncode != 0:
            raise SystemExit("the behaviour suite fails without any mutant: fix that first")
        print(f"baseline: the suite passes unmutated in {time.perf_counter() - started:.0f} s (under coverage)")
        subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={work / '.coverage'}", "-o",
                        str(data), "-q"], cwd=work, check=True)
    files = json.loads(data.read_text(encoding="utf-8"))["files"]
    out = {}
    for path, info in files.items():
        full = Path(path) if Path(path).is_absolute() else work / path
        rel = full.resolve().relative_to(src.resolve()).as_posix()
        out[rel] = set(info["executed_lines"])
    return out


def skip_pending(session: Path, reason: str, to_skip) -> int:
    """Mark the pending mutants ``to_skip(items)`` names (their job ids) skipped, with ``reason`` as
    the output the report reads; how many."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        skipped = to_skip(list(db.pending_work_items))
        if skipped:
            db.set_multiple_results(skipped, WorkResult(output=reason, worker_outcome=WorkerOutcome.SKIPPED))
    return len(skipped)


def filter_not_run(session: Path, covered: dict[str, set[int]]) -> int:
    """Mark every pending mutant on a line the suite never runs as skipped (``NOT_RUN``); how many."""
    def outside(items):
        return [i.job_id for i in items
                if i.mutations[0].start_pos[0] not in covered.get(Path(i.mutations[0].module_path).as_posix(), set())]
    return skip_pending(session, NOT_RUN, outside)


def sample(modules: list[str], n: int, seed: int) -> list[int]:
    """Indices into ``modules`` (each pending mutant's module) of a stratified random sample of
    ``n``: each module's share in proportion to its mutants (largest remainders, so the shares
    add up to ``n``), drawn without replacement by ``numpy.random.default_rng(seed)``; sorted.

    >>> mods = ["a"] * 6 + ["b"] * 3 + ["c"]
    >>> picked = sample(mods, 5, seed=0)
    >>> [sum(mods[i] == m for i in picked) for m in "abc"]     # shares 3.0, 1.5, 0.5: ties to the first
    [3, 2, 0]
    >>> picked == sample(mods, 5, seed=0), len(sample(mods, 50, seed=0))
    (True, 10)
    """
    import numpy as np

    if n >= len(modules):
        return list(range(len(modules)))
    names = sorted(set(modules))
    counts = np.array([modules.count(m) for m in names])
    exact = n * counts / counts.sum()
    shares = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - shares), kind="stable")[: n - shares.sum()]:
        shares[i] += 1
    rng = np.random.default_rng(seed)
    picked = []
    for name, share in zip(names, shares):
        members = [i for i, m in enumerate(modules) if m == name]
        picked += [members[j] for j in rng.choice(len(members), size=int(share), replace=False)]
    return sorted(picked)


def filter_sample(session: Path, n: int, seed: int) -> int:
    """Mark every pending mutant outside a stratified sample of ``n`` (``sample``) skipped
    (``NOT_SAMPLED``); how many."""
    def unsampled(items):
        items = sorted(items, key=lambda item: mutant_id(item.mutations[0]))
        keep = set(sample([Path(i.mutations[0].module_path).as_posix() for i in items], n, seed))
        return [item.job_id for k, item in enumerate(items) if k not in keep]
    return skip_pending(session, NOT_SAMPLED, unsampled)


def execute(src: Path, config: Path, session: Path, work: Path) -> None:
    """``cosmic-ray exec`` of what is pending; its wall time appended to ``work/exec_seconds.txt``."""
    started = time.perf_counter()
    try:        # stopped (Ctrl-C, SIGTERM) or not, the time spent counts: the report's per-mutant estimate
        subprocess.run([bin_path("cosmic-ray"), "exec", str(config.resolve()), str(session.resolve())], cwd=src)
    finally:
        with (work / "exec_seconds.txt").open("a") as f:
            f.write(f"{time.perf_counter() - started:.0f}\n")


def init(src: Path, config: Path, session: Path) -> None:
    """Create the session and leave out the operators the config excludes."""
    subprocess.run([bin_path("cosmic-ray"), "init", str(config.resolve()), str(session.resolve())], cwd=src, check=True)
    subprocess.run([bin_path("cr-filter-operators"), str(session.resolve()), str(config.resolve())], cwd=src,
                   check=True)


def rerun(work: Path, modules: list[str]) -> None:
    """The survivors and pending mutants of ``work``'s session run again against the current suite
    (module docstring, ``rerun``)."""
    first = work / "session.sqlite"
    if not first.exists():
        raise SystemExit(f"{first}: no session to rerun; make one with run first")
    again = {r["id"] for r in outcomes(first) if r["outcome"] in ("survived", "pending")}
    folder = work / "rerun"
    src, config, session = prepare(folder, modules)
    if not session.exists():
        covered_lines(src, folder)              # the unmutated suite must pass
        init(src, config, session)
        skipped = skip_pending(session, NOT_RERUN,
                               lambda items: [i.job_id for i in items if mutant_id(i.mutations[0]) not in again])
        print(f"rerunning {len(again)} survivors and pending mutants ({skipped} others skipped)")
    execute(src, config, session, folder)


def run(work: Path, modules: list[str], n: int | None = None, seed: int = 0) -> None:
    src, config, session = prepare(work, modules)
    chosen, wanted = work / "sample.json", None if n is None else {"n": n, "seed": seed}
    made = json.loads(chosen.read_text()) if chosen.exists() else None
    if session.exists() and made != wanted:
        raise SystemExit(f"{session}: this session was made with {made or 'no sample'}; run it again alike to "
                         f"resume it, or use another --work")
    if not session.exists():
        covered = covered_lines(src, work)      # first: a suite that fails leaves no half-made session
        init(src, config, session)
        print(f"{filter_not_run(session, covered)} mutants on lines the suite never runs: skipped")
        if wanted is not None:
            chosen.write_text(json.dumps(wanted))
            print(f"{filter_sample(session, n, seed)} mutants outside a stratified sample of {n} (seed {seed}): skipped")
    execute(src, config, session, work)


# -- the report -------------------------------------------------------------------------------------
def mutant_id(m) -> str:
    line, col = m.start_pos
    module = Path(m.module_path).as_posix()
    return f"{module}:{line}:{col}:{m.operator_name.removeprefix('core/')}#{m.occurrence}"


def outcomes(session: Path) -> list[dict]:
    """One row per mutant: id, module, line, operator, outcome (killed, survived, filtered, not run,
    not sampled, incompetent, pending) and the diff of the mutation when it ran."""
    from cosmic_ray.work_db import WorkDB, use_db

    rows = []
    with use_db(str(session), WorkDB.Mode.open) as db:
        results = dict(db.results)
        for item in db.work_items:
            m, r = item.mutations[0], results.get(item.job_id)
            if r is None:
                outcome = "pending"
            elif r.worker_outcome.value == "skipped":
                outcome = {NOT_RUN: "not run", NOT_SAMPLED: "not sampled"}.get(r.output, "filtered")
            elif r.test_outcome is None:
                outcome = "incompetent"
            else:
                outcome = r.test_outcome.value
            rows.append({"id": mutant_id(m), "module": Path(m.module_path).as_posix(), "line": m.start_pos[0],
                         "operator": m.operator_name.removeprefix("core/"), "outcome": outcome,
                         "diff": (r.diff or "") if r is not None else ""})
    return sorted(rows, key=lambda r: (r["module"], r["line"], r["id"]))


KINDS = ("equivalent", "killed_by", "not_chosen")


def wilson(k: int, n: int, z: float = 1.96) -> str:
    """The Wilson score interval of a proportion k/n, in percent.

    >>> wilson(18, 20)
    '[69.9, 97.2]'
    """
    p = k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5 / (1 + z * z / n)
    return f"[{100 * (centre - half):.1f}, {100 * (centre + half):.1f}]"


def load_triage(path: Path) -> dict[str, dict]:
    """``triage.yaml``: mutant id -> ``{equivalent: REASON}``, ``{killed_by: CHECK}`` or ``{not_chosen: REASON}``;
    one-line errors."""
    import yaml

    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: expected a mapping of mutant id to {{equivalent: REASON}} or {{killed_by: CHECK}}")
    for key, value in data.items():
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in KINDS:
            raise SystemExit(f"{path}: {key}: expected {{equivalent: REASON}} or {{killed_by: CHECK}} or "
                             f"{{not_chosen: REASON}}, got {value!r}")
    return data


def merge_rerun(rows: list[dict], session: Path) -> dict[str, int]:
    """Each survivor or pending mutant of ``rows`` that the rerun ``session`` ran takes its outcome
    there (marked ``rerun``); counts: ran again, survivors killed now, still waiting in the rerun
    (an interrupted rerun: they keep their first outcome), first-pass mutants the rerun could not
    find (their module changed, so their id did)."""
    if not session.exists():
        return {}
    latest = {r["id"]: r for r in outcomes(session)}
    counts = {"ran again": 0, "survivors killed now": 0, "still waiting in the rerun": 0, "not found in the rerun": 0}
    for r in rows:
        if r["outcome"] not in ("survived", "pending"):
            continue
        new = latest.get(r["id"])
        if new is None:
            counts["not found in the rerun"] += 1
        elif new["outcome"] == "pending":
            counts["still waiting in the rerun"] += 1
        elif new["outcome"] in ("killed", "survived", "incompetent"):
            counts["ran again"] += 1
            counts["survivors killed now"] += r["outcome"] == "survived" and new["outcome"] == "killed"
            r.update(outcome=new["outcome"], diff=new["diff"], rerun=True)
    return counts


def exec_seconds(work: Path) -> list[float]:
    """The wall times ``execute`` appended in ``work``."""
    path = work / "exec_seconds.txt"
    return [float(x) for x in path.read_text().split()] if path.exists() else []


def report(work: Path, out: Path, partial: str | None) -> None:
    rows = outcomes(work / "session.sqlite")
    ran_first = sum(r["outcome"] in ("killed", "survived", "incompetent") for r in rows)
    again = merge_rerun(rows, work / "rerun" / "session.sqlite")
    triage = load_triage(TRIAGE)
    counts = {k: sum(r["outcome"] == k for r in rows) for k in
              ("killed", "survived", "incompetent", "not run", "not sampled", "filtered", "pending")}
    survivors = [r for r in rows if r["outcome"] == "survived"]
    equivalent = [r for r in survivors if "equivalent" in triage.get(r["id"], {})]
    killed_by = [r for r in survivors if "killed_by" in triage.get(r["id"], {})]
    not_chosen = [r for r in survivors if "not_chosen" in triage.get(r["id"], {})]
    untriaged = [r for r in survivors if r["id"] not in triage]
    judged = counts["killed"] + counts["survived"] - len(equivalent) - len(not_chosen)
    killed = counts["killed"] + len(killed_by)      # by the suite as it ran, or by a check added since
    unconfirmed = [r for r in killed_by if r.get("rerun")]    # a check newer than the rerun's copy, or a claim to recheck
    rate = killed / judged if judged else float("nan")
    seconds, seconds_again = exec_seconds(work), exec_seconds(work / "rerun")
    ran = counts["killed"] + counts["survived"] + counts["incompetent"]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "mutants.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, ["id", "module", "line", "operator", "outcome", "rerun", "triage"])
        writer.writeheader()
        for r in rows:
            t = triage.get(r["id"], {})
            writer.writerow({**{k: r[k] for k in ("id", "module", "line", "operator", "outcome")},
                             "rerun": bool(r.get("rerun")),
                             "triage": next((f"{k}: {v}" for k, v in t.items()), "")})
    lines = ["# Mutation testing: the behaviour suite against the seed design", ""]
    if partial:
        lines += [f"**Partial run: {partial}.**", ""]
    lines += [f"Tool: cosmic-ray; test: the behaviour suite (`scripts/mutation.py suite`: the bundled checks, then "
              "`check --matrix` on hashing, no unit tests). `make mutants` writes this file.", "",
              "| mutants | count |", "|---|---|", f"| generated | {len(rows)} |",
              f"| left out by operator (`cosmic-ray.toml`) | {counts['filtered']} |",
              f"| on lines the suite never runs | {counts['not run']} |",
              *([f"| outside the stratified sample (`--sample`) | {counts['not sampled']} |"]
                if counts["not sampled"] else []),
              f"| run | {ran} |", f"| killed | {counts['killed']} |", f"| survived | {counts['survived']} |",
              f"| incompetent (the mutant could not run) | {counts['incompetent']} |",
              f"| still pending | {counts['pending']} |",
              f"| survivors triaged equivalent | {len(equivalent)} |",
              f"| survivors given a check that kills them (`killed_by`) | {len(killed_by)} |",
              *([f"| of them, survived the rerun (a check newer than its copy, killing verified by hand; or a "
                 f"claim to recheck) | {len(unconfirmed)} |"] if again else []),
              f"| survivors in an option the suite never chooses (`not_chosen`) | {len(not_chosen)} |",
              f"| survivors untriaged | {len(untriaged)} |",
              *[f"| rerun against the current suite (`rerun`): {k} | {v} |" for k, v in again.items()], "",
              f"Killed among the non-equivalent mutants run of the code the suite chooses (by the suite as it ran, "
              f"or by a check added since: `killed_by`): **{killed} of {judged}"
              f" ({100 * rate:.1f}%)**" + (f", 95% Wilson interval {wilson(killed, judged)} over the sampled code's "
                                           "mutants" if counts["not sampled"] and judged else "")
              + ("; target 90%." if judged else "."), ""]
    if seconds:
        per = sum(seconds) / max(1, ran_first)
        lines += [f"Wall time of `cosmic-ray exec`: {sum(seconds):.0f} s for {ran_first} mutants ({per:.0f} s a "
                  "mutant, machine shared).", ""]
    if seconds_again:
        lines += [f"Wall time of the rerun's `cosmic-ray exec`: {sum(seconds_again):.0f} s for {again['ran again']} "
                  f"mutants ({sum(seconds_again) / max(1, again['ran again']):.0f} s a mutant, machine shared).", ""]
    lines += ["## Survivors", "", "| mutant | triage |", "|---|---|"]
    for r in survivors:
        t = triage.get(r["id"])
        lines.append(f"| `{r['id']}` | {next((f'{k}: {v}' for k, v in t.items()), '') if t else '**untriaged**'} |")
    stale = sorted(set(triage) - {r["id"] for r in survivors})
    if stale:
        lines += ["", "Triage entries that name no survivor of this session (the code moved, or the mutant is "
                  "killed now): " + ", ".join(f"`{s}`" for s in stale)]
    not_run = {}
    for r in rows:
        if r["outcome"] == "not run":
            not_run[r["module"]] = not_run.get(r["module"], 0) + 1
    if not_run:
        lines += ["", "## Mutants on lines the suite never runs, by module", "",
                  "Options the bundled suite does not choose (other tier policies, decay curves, belief rules, "
                  "the BM25 and per-tier indexes, ...): a plug-in of these is checked by running the matrix with "
                  "it (docs/plugins.md).", "", "| module | mutants |", "|---|---|"]
        lines += [f"| `{m}` | {n} |" for m, n in sorted(not_run.items())]
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out / 'report.md'} and {out / 'mutants.csv'}: {counts['killed']} killed, {counts['survived']} "
          f"survived ({len(untriaged)} untriaged), {counts['pending']} pending")


def folder(text: str) -> Path:
    """A folder argument made absolute: the run hands it to subprocesses started in other folders."""
    return Path(text).resolve()


def parser() -> argparse.ArgumentParser:
    session = argparse.ArgumentParser(add_help=False)      # what run and report both take
    session.add_argument("--work", type=folder, default=REPO / "multirun" / "mutation")
    session.add_argument("--out", type=folder, default=REPO / "experiments" / "mutation")
    session.add_argument("--partial", help="label the report as partial, with this text")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", parents=[session], help="prepare (once), execute what is pending, report")
    p.add_argument("--modules", nargs="+", default=MODULES, help="module files or folders (default: the design's)")
    p.add_argument("--sample", type=int, help="run a stratified random sample of N of the mutants (per module)")
    p.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    p = sub.add_parser("suite", help="the test command: the behaviour suite, stopping at its first failure")
    p.add_argument("--src", type=folder, help="the folder holding the mtsbench to test (default: the installed one)")
    p = sub.add_parser("rerun", parents=[session], help="run the survivors and pending mutants again, then report")
    p.add_argument("--modules", nargs="+", default=MODULES, help="the modules of the first run (default: the design's)")
    sub.add_parser("report", parents=[session], help="report.md and mutants.csv from a session and the triage")
    return parser


def main(argv: list[str] | None = None) -> int:
    ns = parser().parse_args(argv)
    if ns.command == "suite":
        return suite(ns.src)
    if ns.command == "run":
        run(ns.work, ns.modules, ns.sample, ns.seed)
    if ns.command == "rerun":
        rerun(ns.work, ns.modules)
    report(ns.work, ns.out, ns.partial)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
