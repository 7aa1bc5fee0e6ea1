"""Profile the real workloads with cProfile: where the time goes, per mechanism and per kind of work.

    python scripts/profile_steps.py [--only NAME,NAME] [--locomo FILE] [--out DIR] [--dump DIR]
    make profile LOCOMO=FILE

Cases, each in a fresh interpreter: ``mts-100k``, ``mts-1m``, ``flat-100k``: the dialogue of
benchmarks/test_scale.py (its DIALOGUE and OVERRIDES, workload=probes) on a store pre-loaded with
100k / 1M memories, preset mts or flat_rag, the steps profiled (not the pre-load);
``locomo-hashing``: ``mtsbench run`` (its CLI entry, in this process) over LoCoMo's conv-26 on the
defaults (mts, hashing embedder), imports, config composition, evaluation and outputs included;
``locomo-minilm-reply``: the same with ``embedder=sentence_transformers retrieval=hybrid
workload=reply``, its second run profiled (the first, unprofiled, warms the embedding cache).

``--locomo`` (default $MTSBENCH_LOCOMO): LoCoMo's locomo10.json, imported into a temporary folder;
without it the LoCoMo cases are skipped, and the MiniLM one without sentence-transformers (the
reason printed). Writes OUT/profile.json and OUT/profile.md (OUT: benchmarks/results), keeping the
saved summaries of cases not run; ``--dump DIR`` keeps each raw profile as DIR/NAME.prof.
"""

from __future__ import annotations

import argparse, contextlib, cProfile, datetime, importlib.util, io, json, multiprocessing, os, pstats, re, shutil
import subprocess, sys, tempfile, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
EXE = str(Path(sys.executable).with_name("mtsbench"))
MINILM = ["embedder=sentence_transformers", "retrieval=hybrid", "workload=reply"]
CASES = {"mts-100k": ("mts", 100_000), "mts-1m": ("mts", 1_000_000), "flat-100k": ("flat_rag", 100_000),
         "locomo-hashing": [], "locomo-minilm-reply": MINILM}
# The design's entry points: label, file, function(s)[, (caller file, caller)]. Their times are inclusive.
MECHANISMS = [
    ("imports (module loading)", "<frozen importlib._bootstrap>", "_find_and_load"),
    ("preflight: compose + check the config", "harness/preflight.py", "check_run"),
    ("Hydra config composition (every call)", "hydra/_internal/hydra.py", "compose_config"),
    ("config validation (rules.validate)", "config/rules.py", "validate"),
    ("loading the scenarios", "harness/runner.py", "load_all"),
    ("building the system", "harness/runner.py", "build_system"),
    ("steps: drive() (every scenario step)", "harness/runner.py", "drive"),
    ("workload=reply retrieval", "systems/mts/system.py", "retrieve", ("harness/runner.py", "_run_scenario")),
    ("perception: store a turn", "processes/perceive.py", "store"),
    ("labelling (association search, rating)", "processes/labelling.py", "label"),
    ("retrieval search (Memory.search, all callers)", "memory/memory.py", "search"),
    ("recall: boost, arouse, promote", "memory/memory.py", "recall"),
    ("attend: arousal on perception", "memory/memory.py", "attend"),
    ("arousal (Memory.arouse, all callers)", "memory/memory.py", "arouse"),
    ("promotion (Memory._promote)", "memory/memory.py", "_promote"),
    ("rebalance / tiering (Memory.rebalance)", "memory/memory.py", "rebalance"),
    ("tier moves (Memory._move, all callers)", "memory/memory.py", "_move"),
    ("writing a memory (Memory.remember)", "memory/memory.py", "remember"),
    ("embedding (Memory.embed)", "memory/memory.py", "embed"),
    ("summaries (Summarizer.flush)", "processes/summarize.py", "flush"),
    ("consolidation (Consolidator.run)", "processes/consolidation.py", "run"),
    ("inference (Inferrer.observe)", "processes/inference.py", "observe"),
    ("events (EventTracker.tag)", "processes/events.py", "tag"),
    ("LLM calls (every task; the mock)", "llm/tasks/__init__.py", "method"),
    ("earned credit per probe", "evaluation/credit.py", "ranking"),
    ("timelines (Timeline.sample)", "outputs/timelines.py", "sample"),
    ("writing outputs (RunWriter.stream/add/finish)", "outputs/stream.py", ("stream", "add", "finish")),
    ("evaluation: metrics, summary, report", "harness/finish.py", "evaluate_dir"),
]
SHORT = re.compile(r".*/(site-packages|python3[.]\d+)/")     # a function's file, from its package or stdlib folder
KNOWN_C = {"numpy": "numpy C functions", "faiss": "faiss C (swig)", "_imp": "import machinery",
           "marshal": "import machinery"}


def kind(file: str, name: str) -> str:
    """The kind of work of one profiled function (where its exclusive time goes)."""
    if file == "~":          # a C function; its module from cProfile's name: <built-in method numpy.array>
        top = re.search(r"(?:method |of ')([A-Za-z_]\w*)\.", name)
        top = top.group(1) if top else "builtins"
        return KNOWN_C.get(top) or ("builtins, stdlib C (isinstance, dict, str...)"
                                    if top in sys.stdlib_module_names else f"other libraries' C: {top}")
    if file.startswith(("<frozen importlib", "<frozen zipimport")) or name == "<module>":
        return "import machinery"
    if "site-packages/" not in file:        # the standard library, or generated code (<string>)
        return "Python: stdlib, generated"
    rel = file.split("site-packages/")[-1]
    top = rel.split("/")[0].removesuffix(".py")
    if top == "numpy":
        return "numpy Python wrappers (numpy/_core)" if rel.startswith("numpy/_core/") else "numpy Python (lib...)"
    return {"mtsbench": "mtsbench Python", "faiss": "faiss Python wrappers"}.get(top, f"other libraries' Python: {top}")


def summarise(prof: cProfile.Profile, what: str, total: float, mechanisms=None) -> dict:
    """One case's summary; ``total``: the wall seconds of the profiled code; ``mechanisms``: the
    entry points (default ``MECHANISMS``)."""
    stats = pstats.Stats(prof).stats          # {(file, line, name): (cc, nc, tt, ct, callers)}

    def inclusive(file, names, caller=None) -> tuple[float, int]:
        hits = [v for f, v in stats.items() if f[0].endswith(file) and f[2] in names]
        if caller:      # only the calls from this caller
            hits = [e for v in hits for c, e in v[4].items() if c[0].endswith(caller[0]) and c[2] == caller[1]]
        return sum(v[3] for v in hits), sum(v[0] for v in hits)

    entries, mechanisms = mechanisms or MECHANISMS, []
    for label, file, names, *caller in entries:
        seconds, calls = inclusive(file, (names,) if isinstance(names, str) else names, *caller)
        if calls:
            mechanisms.append({"mechanism": label, "seconds": round(seconds, 3), "calls": calls})
    kinds, areas = {}, {}
    for (file, line, name), (cc, nc, tt, ct, callers) in stats.items():
        k = kind(file, name)
        kinds[k] = kinds.get(k, 0.0) + tt
        if k == "mtsbench Python":
            area = file.split("site-packages/mtsbench/")[-1].split("/")[0].removesuffix(".py")
            areas[area] = areas.get(area, 0.0) + tt
    kinds = {k: s for k, s in kinds.items() if s >= 0.0005}       # a millisecond or more
    small = {k: s for k, s in kinds.items() if k.startswith("other libraries") and s < 0.005 * total}
    kinds = {k: s for k, s in kinds.items() if k not in small}
    kinds |= {f"other libraries, {len(small)} each < 0.5%": sum(small.values())} if small else {}
    kinds["profiler bookkeeping (not attributed)"] = total - sum(v[2] for v in stats.values())
    steps = inclusive("harness/runner.py", ("drive",))[1]
    step_s = sum(m["seconds"] for m in mechanisms if m["mechanism"].startswith(("steps:", "workload=reply")))
    ordered = lambda d: {k: round(v, 3) for k, v in sorted(d.items(), key=lambda kv: -kv[1])}  # noqa: E731
    return {"what": what, "date": datetime.date.today().isoformat(), "seconds": round(total, 3), "steps": steps,
            "ms_per_step": round(1000 * step_s / steps, 3) if steps else None,
            "calls_per_step": round(sum(v[1] for v in stats.values()) / steps) if steps else None,
            "mechanisms": mechanisms, "kinds": ordered(kinds), "mtsbench_by_area": ordered(areas),
            "top": [{"function": name if file == "~" else f"{SHORT.sub('', file)}:{line}({name})",
                     "calls": v[1], "primitive": v[0], "tottime": round(v[2], 3), "cumtime": round(v[3], 3)}
                    for (file, line, name), v in sorted(stats.items(), key=lambda kv: -kv[1][2])[:15]]}


def dialogue(preset: str, n: int) -> tuple[cProfile.Profile, float, str]:
    """The bench's dialogue on a pre-loaded store: benchmarks/test_scale.py's ``Case``, built
    and pre-loaded as the bench does, its steps profiled."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from test_scale import DIALOGUE, OVERRIDES, Case
    from mtsbench.harness.runner import one_blas_thread
    from mtsbench.scenario.generate import write
    from mtsbench.scenario.loader import load_scenario

    prof, case = cProfile.Profile(), Case(preset, n, "probes")
    with tempfile.TemporaryDirectory() as folder, one_blas_thread():
        scenario = load_scenario(write(DIALOGUE, Path(folder)))
        case.build(scenario)
        prof.enable()
        case.run(scenario.steps)
        prof.disable()
    return prof, case.seconds[0], \
        f"bench dialogue, preset={preset}, {n:,} memories pre-loaded, {' '.join(OVERRIDES)}: the steps only"


def locomo(folder: str, overrides: list[str]) -> tuple[cProfile.Profile, float, str]:
    """``mtsbench run`` over conv-26 in this process (after a first, unprofiled run when ``overrides``)."""
    from mtsbench.cli import main

    args = ["run", f"scenarios=[{folder}/locomo_conv_26.yaml]", *overrides]
    what = f"mtsbench run (in process) over LoCoMo conv-26, {' '.join(overrides) or 'the defaults (mts, hashing)'}"
    prof, out = cProfile.Profile(), tempfile.mkdtemp(prefix="profile-")
    try:
        if overrides:       # the embedding cache warmed by a first run, in its own process
            subprocess.run([EXE, *args, f"hydra.run.dir={out}/warm"],
                           check=True, capture_output=True)
            what += "; the second run profiled (the first, unprofiled, warmed the embedding cache)"
        with contextlib.redirect_stdout(io.StringIO()):
            started = time.perf_counter()
            prof.enable()
            code = main([*args, f"hydra.run.dir={out}/run"])
            prof.disable()
            wall = time.perf_counter() - started
        if code:
            raise RuntimeError(f"mtsbench {' '.join(args)} exited with {code}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return prof, wall, what


def run_case(name: str, folder: str, dump: str | None) -> dict:
    spec = CASES[name]
    prof, wall, what = dialogue(*spec) if isinstance(spec, tuple) else locomo(folder, spec)
    if dump:
        Path(dump).mkdir(parents=True, exist_ok=True)
        prof.dump_stats(Path(dump) / f"{name}.prof")
    return summarise(prof, what, wall)


def table(header: list[str], rows: list[list]) -> str:
    from mtsbench.report.markdown import table as markdown_table

    return markdown_table(pd.DataFrame(rows, columns=header, dtype=object), header)


def markdown(cases: dict) -> str:
    parts = ["# Profiles: where the time goes\n\nWritten by `python scripts/profile_steps.py` (`make profile "
             "LOCOMO=FILE`; its docstring says what each case runs). cProfile's overhead inflates code that makes "
             "many small calls (the unprofiled ms/step of the bench's cases are in scale.md): read the shares "
             "more than the seconds. **Per mechanism**: the inclusive "
             "(cumulative) time of the design's entry points, as a share of the profiled wall time; entry points "
             "nest (arousal runs within recall and attend, labelling within perception, everything within "
             "drive), so the shares overlap and do not add up. **Per kind of work**: exclusive (own) time, which "
             "adds up to the total; numpy's ufuncs and operators (`a @ b`, `x + y`) are no functions to cProfile, "
             "so their C time counts as the own time of the Python function using them.",
             table(["case", "profiled s", "steps", "ms/step", "Python calls/step", "measured"],
                   [[n, c["seconds"], c["steps"] or "", c["ms_per_step"] or "", c["calls_per_step"] or "", c["date"]]
                    for n, c in cases.items()])]
    for name, c in cases.items():
        pct = lambda s: f"{100 * s / c['seconds']:.1f}%"  # noqa: E731
        per_step = f", {c['steps']} steps, {c['ms_per_step']} ms/step, {c['calls_per_step']:,} Python calls per step"
        areas = ", ".join(f"{a} {pct(s)}" for a, s in c["mtsbench_by_area"].items() if s >= 0.005 * c["seconds"])
        parts += [f"## {name}\n\n{c['what']}. {c['seconds']} s profiled{per_step if c['steps'] else ''}.",
                  "Per mechanism (inclusive, overlapping):\n\n" + table(["entry point", "s", "share", "calls"], [
                      [m["mechanism"], m["seconds"], pct(m["seconds"]), m["calls"]] for m in c["mechanisms"]]),
                  "Per kind of work (exclusive):\n\n" + table(["kind", "s", "share"], [
                      [k, s, pct(s)] for k, s in c["kinds"].items()]) + f"\n\nmtsbench's own time by subpackage: {areas}.",
                  "Top 15 functions by own time:\n\n" + table(["function", "calls", "own s", "cumulative s"], [
                      [f"`{t['function']}`", t["calls"] if t["calls"] == t["primitive"] else
                       f"{t['calls']}/{t['primitive']}", t["tottime"], t["cumtime"]] for t in c["top"]])]
    return "\n\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help=f"comma-separated cases (default: all of {','.join(CASES)})")
    parser.add_argument("--locomo", default=os.environ.get("MTSBENCH_LOCOMO"), help="LoCoMo's locomo10.json")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--dump", help="also keep each raw profile as DUMP/NAME.prof")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    if unknown := set(names) - set(CASES):
        parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; known: {', '.join(CASES)}")
    if args.locomo and not Path(args.locomo).is_file():
        parser.error(f"--locomo {args.locomo}: no such file")
    saved = args.out / "profile.json"
    cases = json.loads(saved.read_text()) if saved.exists() else {}
    with tempfile.TemporaryDirectory(prefix="locomo-") as folder:
        if args.locomo and any(not isinstance(CASES[n], tuple) for n in names):
            subprocess.run([EXE, "import", "locomo", args.locomo,
                            "-o", folder], check=True, capture_output=True)
        for name in names:
            if not isinstance(CASES[name], tuple) and not args.locomo:
                print(f"{name}: skipped: no LoCoMo file (--locomo FILE, or MTSBENCH_LOCOMO: LoCoMo's locomo10.json)")
                continue
            if CASES[name] == MINILM and importlib.util.find_spec("sentence_transformers") is None:
                print(f"{name}: skipped: sentence_transformers is not importable (pip install 'mtsbench[st]')")
                continue
            print(f"{name}: profiling ...", flush=True)
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:   # a fresh interpreter
                cases[name] = pool.submit(run_case, name, folder, args.dump).result()
            print(f"{name}: {cases[name]['seconds']} s profiled", flush=True)
    cases = {n: cases[n] for n in CASES if n in cases}
    args.out.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(cases, indent=2) + "\n")
    (args.out / "profile.md").write_text(markdown(cases))
    print(f"wrote {saved} and {args.out / 'profile.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
