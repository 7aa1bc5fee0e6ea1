"""Profile a lifetime haystack: where a message's time goes as the store grows.

    python scripts/profile_lifetime.py --data DIR [--case NAME,NAME] [--sizes 1000,10000,30000,all]
                                       [--window 500] [--out DIR] [--dump DIR]
    make profile-lifetime DATA=DIR

``DIR`` holds imported scenarios (``mtsbench import beam CHATS -o DIR/beam`` and ``mtsbench import
locomo FILE -o DIR/locomo``, as ``make beam`` writes under multirun/beam/data): every BEAM chat and
LoCoMo conversation but BEAM's 100K chats (the BEAM study's targets) is the haystack, laid out as a run
with ``haystack.sources=[DIR/beam,DIR/locomo]`` lays it out (``mtsbench.harness.haystack``). Each case
drives it through one system, in this process, as ``mtsbench run`` does under ``workload=reply``
(every user turn retrieves), and:

- times every message unprofiled except in the profiled windows: ms per message per block of 1,000
  messages (the issue-50 ratio: the last 8,000 messages against messages 1,000-9,000);
- profiles (cProfile) the ``--window`` messages before each size, summarised per mechanism and per
  kind of work as ``scripts/profile_steps.py`` does;
- counts per window what the design did: tier moves, encoder calls and texts encoded (cache misses
  only), lexical postings written and compactions, rebalances.

Cases: ``hashing-hybrid`` (the defaults, ``retrieval=hybrid``), ``minilm-hybrid`` (MiniLM with
``embedder.threads=2``; skipped without sentence-transformers), ``flat-minilm`` and ``bm25`` for
comparison. Writes OUT/lifetime.json and OUT/lifetime.md (OUT: benchmarks/results), keeping the
saved cases not run.
"""

from __future__ import annotations

import argparse, cProfile, datetime, importlib.util, json, multiprocessing, sys, time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_steps import MECHANISMS, summarise, table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REPLY = ["workload=reply"]
MINILM = ["embedder=sentence_transformers", "embedder.threads=2"]
CASES = {"hashing-hybrid": ["retrieval=hybrid", *REPLY],
         "minilm-hybrid": [*MINILM, "retrieval=hybrid", *REPLY],
         "flat-minilm": ["preset=flat_rag", *MINILM, "retrieval=hybrid", *REPLY],
         "bm25": ["system=bm25", "system.context=2", "system.self_weight=2", "system.stemmer=english", *REPLY]}
BLOCK = 1000
# profile_steps' entry points, the reply searches as this script calls them, and rebalancing's parts
ENTRIES = [*MECHANISMS,
           ("workload=reply retrieval", "systems/mts/system.py", "retrieve", ("profile_lifetime.py", "one_step")),
           ("rebalance: which memories to check (Tiering.to_check)", "memory/tiering.py", "to_check"),
           ("rebalance: due times (Tiering.schedule)", "memory/tiering.py", "schedule"),
           ("lexical index: postings filed (LexicalTiers._file)", "memory/lexical.py", "_file"),
           ("lexical index: queries (LexicalTiers.lexical)", "memory/lexical.py", "lexical")]


class Counting:
    """Wraps an embedder's ``embed`` (every call, cache hits included) and ``_encode`` (the model
    call behind a cache: misses only), counting calls and texts."""

    def __init__(self, embedder):
        self.counts = Counter()
        for method in ("embed", "_encode"):
            inner = getattr(embedder, method, None)
            if inner is not None:
                setattr(embedder, method, self._counted(method.strip("_"), inner))

    def _counted(self, name, inner):
        def call(texts):
            self.counts[f"{name}_calls"] += 1
            self.counts[f"{name}_texts"] += len(texts)
            self.counts[f"{name}_chars"] += sum(len(t) for t in texts)
            return inner(texts)
        return call

    def snapshot(self) -> dict:
        return {k: self.counts[f"{m}_{k2}"] for m in ("embed", "encode") for k2 in ("calls", "texts", "chars")
                for k in [f"{m}_{k2}"]}


class Moves:
    """Tier moves from the trace's ``moved`` events, by cause; ``back_after_promotion``: moves of
    a memory whose previous move was a promotion (the promote/demote ping-pong), and of those
    ``back_within_1h``: within one simulated hour of the promotion (flapping at a border, rather
    than short-term attention decaying as the design means it to)."""

    def __init__(self):
        self.counts = Counter()
        self.last: dict[int, tuple[str, float]] = {}

    def count(self, event: dict) -> None:
        why, t = event["why"], float(event["t"])
        self.counts["tier_moves"] += len(event["ids"])
        self.counts[f"moves_{why}"] += len(event["ids"])
        for i in event["ids"]:
            before, at = self.last.get(i, ("", 0.0))
            if why != "promoted" and before == "promoted":
                self.counts["moves_back_after_promotion"] += 1
                self.counts["moves_back_within_1h"] += t - at <= 3600.0
            self.last[i] = (why, t)

    def snapshot(self) -> dict:
        keys = ("tier_moves", "moves_promoted", "moves_rebalance", "moves_back_after_promotion",
                "moves_back_within_1h", "rebalances")
        return {k: self.counts[k] for k in keys}


def lexical_work(system) -> dict:
    index = getattr(getattr(system, "memory_", None), "index", None)
    work = getattr(index, "lexical_work_", None)
    return {} if work is None else {"postings_written": work.postings_written, "compactions": work.compactions}


def memories(system) -> int | None:
    memory = getattr(system, "memory_", None)
    return memory.store.size if memory is not None else getattr(system, "memories_count", lambda: None)()


def window_counts(before: dict, after: dict, messages: int) -> dict:
    return {k: round((after[k] - before.get(k, 0)) / messages, 3) for k in after}


def one_step(system, workload, step, drive) -> None:
    """A haystack step as ``mtsbench run`` drives it: the step, then its reply search if the
    workload asks (its own frame, so that the profile names it as the searches' caller)."""
    query = workload.reply(step, drive(system, step, 0))
    if query is not None:
        system.retrieve(query)


def drive_case(name: str, data: Path, sizes: list, window: int, dump: Path | None) -> dict:
    from mtsbench.config.composition import compose
    from mtsbench.core.params import build
    from mtsbench.harness.haystack import Haystack, HaystackOptions
    from mtsbench.harness.runner import drive, one_blas_thread
    from mtsbench.scenario.loader import load_scenario
    from mtsbench.scenario.model import OBSERVED_KINDS, RUNNING, Scenario
    from mtsbench.systems.base import Context

    overrides = CASES[name]
    cfg, _ = compose(overrides)
    sources = [load_scenario(p) for p in sorted((data / "beam").glob("*.yaml")) + sorted((data / "locomo").glob("*.yaml"))]
    targets = [s for s in sources if s.id.startswith("beam_100k_")]
    hay = Haystack.build(sources, targets, HaystackOptions(messages=sizes))
    steps = hay.steps[: hay.cut(hay.sizes[-1])]
    ends = set(hay.sizes)
    profiled_from = {n - window for n in hay.sizes if n >= window}
    system = build(cfg.system, "system")
    started = time.perf_counter()
    with one_blas_thread():
        system.start(Context("haystack", "en", hay.start, hay.texts))
    start_s = time.perf_counter() - started
    memory = getattr(system, "memory_", None)
    counting = Counting(memory.embedder if memory is not None else getattr(system, "embedder_", None))
    workload = build(cfg.workload, "workload")
    token = RUNNING.set(Scenario("haystack", "haystack", "en", hay.start, (), hay.steps))
    take = getattr(system, "take_trace", None)
    blocks: dict[int, list[float]] = {}         # block -> [unprofiled seconds, unprofiled messages]
    windows, prof, seen, moves, base = [], None, 0, Moves(), {}
    try:
        with one_blas_thread():
            for step in steps:
                observed = step.kind in OBSERVED_KINDS
                if observed and seen in profiled_from:
                    prof, base = cProfile.Profile(), {**counting.snapshot(), **lexical_work(system),
                                                      **moves.snapshot(), "at": seen}
                    prof_started = time.perf_counter()
                    prof.enable()
                t0 = time.perf_counter()
                one_step(system, workload, step, drive)
                dt = time.perf_counter() - t0
                if take is not None:
                    for e in take(0):
                        if e["event"] == "moved":
                            moves.count(e)
                        elif e["event"] == "rebalanced":
                            moves.counts["rebalances"] += 1
                if observed:
                    seen += 1
                    if prof is None:
                        b = blocks.setdefault((seen - 1) // BLOCK, [0.0, 0])
                        b[0] += dt
                        b[1] += 1
                if prof is not None and seen in ends:
                    prof.disable()
                    wall = time.perf_counter() - prof_started
                    n = seen - base.pop("at")
                    after = {**counting.snapshot(), **lexical_work(system), **moves.snapshot()}
                    summary = summarise(prof, f"{name}: haystack messages {seen - n:,}-{seen:,}", wall, ENTRIES)
                    summary |= {"messages": n, "ms_per_message": round(1000 * wall / n, 2),
                                "per_message": window_counts(base, after, n),
                                "memories": memories(system)}
                    if dump:
                        dump.mkdir(parents=True, exist_ok=True)
                        prof.dump_stats(dump / f"{name}-{seen}.prof")
                    windows.append(summary)
                    print(f"  {name} at {seen:,}: {summary['ms_per_message']} ms/message profiled", flush=True)
                    prof = None
    finally:
        RUNNING.reset(token)
    per_block = {k: round(1000 * s / m, 2) for k, (s, m) in sorted(blocks.items()) if m}
    return {"overrides": overrides, "date": datetime.date.today().isoformat(), "start_s": round(start_s, 1),
            "messages": seen, "wall_s": round(time.perf_counter() - started, 1),
            "ms_per_message_by_block": per_block, "flatness": flatness(per_block, seen), "windows": windows}


def flatness(per_block: dict, total: int) -> dict:
    """Issue 50's ratio: ms/message over the last 8,000 messages / over messages 1,000-9,000
    (unprofiled blocks only)."""
    def mean(keys):
        got = [per_block[k] for k in keys if k in per_block]
        return sum(got) / len(got) if got else None
    early, late = mean(range(1, 9)), mean(range(total // BLOCK - 8, total // BLOCK + 1))
    return {"early_ms": early and round(early, 2), "late_ms": late and round(late, 2),
            "ratio": round(late / early, 2) if early and late else None}


def markdown(cases: dict) -> str:
    parts = ["# A lifetime's profile: where a haystack message's time goes\n\nWritten by "
             "`python scripts/profile_lifetime.py` (`make profile-lifetime DATA=DIR`; its docstring says what it "
             "runs). Unprofiled ms per message by block of 1,000 messages, and cProfile over a window before each "
             "size (cProfile inflates code that makes many small calls: read the shares more than the seconds).",
             table(["case", "overrides", "messages", "wall s", "start s", "ms/msg 1k-9k", "ms/msg last 8k", "ratio"],
                   [[n, " ".join(c["overrides"]), c["messages"], c["wall_s"], c["start_s"],
                     c["flatness"]["early_ms"], c["flatness"]["late_ms"], c["flatness"]["ratio"]]
                    for n, c in cases.items()])]
    for name, c in cases.items():
        blocks = ", ".join(f"{int(k) + 1}k {v}" for k, v in c["ms_per_message_by_block"].items()
                           if int(k) % 5 == 0 or int(k) < 3)
        parts.append(f"## {name}\n\n`{' '.join(c['overrides'])}`, measured {c['date']}. Unprofiled ms/message "
                     f"by block (every fifth): {blocks}.")
        for w in c["windows"]:
            pct = lambda s: f"{100 * s / w['seconds']:.1f}%"  # noqa: E731
            counts = ", ".join(f"{k} {v}" for k, v in w["per_message"].items())
            parts += [f"### {w['what']}\n\n{w['ms_per_message']} ms/message profiled, {w['memories']} memories. "
                      f"Per message: {counts}.",
                      table(["entry point (inclusive, overlapping)", "s", "share", "calls"],
                            [[m["mechanism"], m["seconds"], pct(m["seconds"]), m["calls"]] for m in w["mechanisms"]]),
                      table(["kind of work (exclusive)", "s", "share"], [[k, s, pct(s)] for k, s in w["kinds"].items()]),
                      table(["function", "calls", "own s", "cumulative s"],
                            [[f"`{t['function']}`", t["calls"], t["tottime"], t["cumtime"]] for t in w["top"][:10]])]
    return "\n\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="imported scenarios: DATA/beam and DATA/locomo")
    parser.add_argument("--case", default="hashing-hybrid,minilm-hybrid", help=f"of {','.join(CASES)}")
    parser.add_argument("--sizes", default="1000,10000,30000,all")
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--dump", type=Path, help="also keep each raw profile as DUMP/CASE-SIZE.prof")
    args = parser.parse_args()
    names = args.case.split(",")
    if unknown := set(names) - set(CASES):
        parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; known: {', '.join(CASES)}")
    for sub in ("beam", "locomo"):
        if not any((args.data / sub).glob("*.yaml")):
            parser.error(f"--data {args.data}: no imported scenarios in {args.data / sub}")
    sizes = [s if s == "all" else int(s) for s in args.sizes.split(",")]
    saved = args.out / "lifetime.json"
    cases = json.loads(saved.read_text()) if saved.exists() else {}
    for name in names:
        if "sentence_transformers" in " ".join(CASES[name]) and importlib.util.find_spec("sentence_transformers") is None:
            print(f"{name}: skipped: sentence_transformers is not importable (pip install 'mtsbench[st]')")
            continue
        print(f"{name}: driving the haystack ...", flush=True)
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:   # a fresh interpreter
            cases[name] = pool.submit(drive_case, name, args.data, sizes, args.window, args.dump).result()
        print(f"{name}: {cases[name]['wall_s']} s, flatness {cases[name]['flatness']}", flush=True)
        args.out.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps(cases, indent=2) + "\n")
        (args.out / "lifetime.md").write_text(markdown(cases))
    print(f"wrote {saved} and {args.out / 'lifetime.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
