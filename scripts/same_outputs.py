"""Same outputs before and after a refactor: run a fixed set of runs with two installs and compare.

    python scripts/same_outputs.py VENV [--quick] [--only NAME,NAME] [--reference]

Environment: ``SAME_OUTPUTS_DIR`` (default ``./same-outputs``) holds the inputs, the reference
outputs (``main/``) and each compared install's outputs (``runs/``); ``LOCOMO`` (LoCoMo's
``locomo10.json``, optional: without it the two LoCoMo runs are skipped).

First make the reference with the old code (a worktree of the old commit, ``make install``
there): ``python scripts/same_outputs.py OLD/.venv --reference``; then compare the new:
``python scripts/same_outputs.py .venv``. Each run's ``metrics.csv`` (minus ``latency_ms``),
``summary.json`` (minus timing keys), ``trace.parquet``, ``timelines.parquet`` and
``results.parquet`` (minus ``latency_ms``) must be equal; one line per run, SAME or DIFF
(and where); exit 0 when all are the same. The runs: the bundled scenarios (default, two
presets, bm25, reply + hybrid), a generated 3-day dialogue on a pre-loaded store, the first
60 days of the bench's generated year (280 turns a day, d256: about 1 min a run), one
imported LoCoMo conversation (probes and reply workloads) and the committed experiments'
sweeps (``--quick`` leaves the sweeps out). Used for issue 26 (every refactor of that round
compared SAME on all 13 runs) and issue 38 (14 runs). Do not reinstall either venv while it
runs: a sweep's workers import lazily and fail.
"""
import json, os, subprocess, sys, hashlib
from pathlib import Path

LOCOMO = os.environ.get("LOCOMO", "")
BASE = Path(os.environ.get("SAME_OUTPUTS_DIR", "same-outputs")).absolute()
GEN = BASE / "inputs" / "gen3.yaml"
LOCO = BASE / "inputs" / "locomo"

RUNS = {  # name: (argv after `mtsbench`, is_sweep)
    "default": (["run"], False),
    "flat_rag": (["run", "preset=flat_rag"], False),
    "memoryos": (["run", "preset=memoryos"], False),
    "bm25": (["run", "system=bm25"], False),
    "reply_hybrid": (["run", "workload=reply", "retrieval=hybrid"], False),
    "gen3_preload": (["run", f"scenarios=[{GEN}]", "preload.memories=2000"], False),
    # the bench's generated year (test_year), its first 60 days: graph tiers, shared nodes, rebalances
    "gen60_d256": (["run", "generate.days=60", "generate.turns_per_day=280", "embedder.dim=256"], False),
    "locomo_conv26": (["run", f"scenarios=[{LOCO}/locomo_conv_26.yaml]"], False),
    "locomo_conv26_reply": (["run", f"scenarios=[{LOCO}/locomo_conv_26.yaml]", "workload=reply", "retrieval=hybrid"], False),
    "exp_ablation": (["run", "-m", "experiment=ablation"], True),
    "exp_presets": (["run", "-m", "experiment=presets"], True),
    "exp_belief_rules": (["run", "-m", "experiment=belief_rules"], True),
    "exp_workload_cost": (["run", "-m", "experiment=workload_cost"], True),
    "exp_real_llm": (["run", "-m", "experiment=real_llm"], True),
}
TIMING = ("seconds", "elapsed", "wall", "latency", "duration", "started", "finished", "eta", "rate")


def inputs(venv):
    (BASE / "inputs").mkdir(parents=True, exist_ok=True)
    mts = f"{venv}/bin/mtsbench"
    if not GEN.exists():
        subprocess.run([mts, "generate", "--days", "3", "--out", str(GEN)], check=True)
    if not LOCO.exists() and LOCOMO and os.path.exists(LOCOMO):
        subprocess.run([mts, "import", "locomo", LOCOMO, "-o", str(LOCO)], check=True)


def run(venv, name, out):
    argv, sweep = RUNS[name]
    key = "hydra.sweep.dir" if sweep else "hydra.run.dir"
    out.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([f"{venv}/bin/mtsbench", *argv, f"{key}={out}"], capture_output=True, text=True)
    return p.returncode, (p.stderr.strip().splitlines() or [""])[-1]


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not any(t in k.lower() for t in TIMING)}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def frame_text(venv_py, path):
    code = ("import sys,pandas as pd;d=pd.read_parquet(sys.argv[1]);"
            "d=d.drop(columns=[c for c in d.columns if 'latency' in c]);"
            "sys.stdout.write(d.to_csv(index=False))")
    return subprocess.run([venv_py, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout


def csv_text(path):
    import csv
    rows = list(csv.reader(open(path)))
    if not rows:
        return ""
    keep = [i for i, c in enumerate(rows[0]) if "latency" not in c]
    return "\n".join(",".join(r[i] for i in keep if i < len(r)) for r in rows)


def run_dirs(root):
    return sorted(p.parent for p in Path(root).rglob("summary.json"))


def compare(ref, new, venv_py):
    diffs = []
    a, b = run_dirs(ref), run_dirs(new)
    ra, rb = [str(p.relative_to(ref)) for p in a], [str(p.relative_to(new)) for p in b]
    if ra != rb:
        return [f"run folders differ: {ra} vs {rb}"]
    for pa, pb in zip(a, b):
        rel = pa.relative_to(ref)
        if csv_text(pa / "metrics.csv") != csv_text(pb / "metrics.csv"):
            diffs.append(f"{rel}/metrics.csv")
        if strip(json.load(open(pa / "summary.json"))) != strip(json.load(open(pb / "summary.json"))):
            diffs.append(f"{rel}/summary.json")
        for f in ("trace.parquet", "timelines.parquet", "results.parquet"):
            if (pa / f).exists() != (pb / f).exists():
                diffs.append(f"{rel}/{f} presence")
            elif (pa / f).exists() and frame_text(venv_py, pa / f) != frame_text(venv_py, pb / f):
                diffs.append(f"{rel}/{f}")
    return diffs


def main():
    args = sys.argv[1:]
    venv = os.path.abspath(args[0])
    reference = "--reference" in args
    names = list(RUNS)
    if "--quick" in args:
        names = [n for n in names if not RUNS[n][1]]
    if "--only" in args:
        names = args[args.index("--only") + 1].split(",")
    if not LOCOMO or not os.path.exists(LOCOMO):
        names = [n for n in names if not n.startswith("locomo")]
    inputs(venv)
    tag = "main" if reference else hashlib.md5(venv.encode()).hexdigest()[:8] + "-" + Path(venv).parent.name
    root = BASE / ("main" if reference else f"runs/{tag}")
    bad = 0
    for n in names:
        out = root / n
        if out.exists():
            subprocess.run(["rm", "-rf", str(out)])
        rc, last = run(venv, n, out)
        if reference:
            print(f"{n}: exit {rc} {last if rc else ''}", flush=True)
            continue
        diffs = compare(BASE / "main" / n, out, f"{venv}/bin/python") if rc == 0 else [f"exit {rc}: {last}"]
        bad += bool(diffs)
        print(f"{n}: {'SAME' if not diffs else 'DIFF ' + '; '.join(diffs[:6])}", flush=True)
    if not reference:
        print("ALL SAME" if not bad else f"{bad} of {len(names)} runs differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
