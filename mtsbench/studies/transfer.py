"""The transfer study (``experiments/transfer``): do the ablations' conclusions survive a
realistic extractor, and how close is a profiled mock to the real model on scenarios it was
not fitted on.

``python -m mtsbench.studies.transfer --work DIR --out experiments/transfer [--run]``; with
``--run`` it first runs, into DIR (``make experiments`` does):

- ``sweep``: every ``ablate=`` option (configs/ablate) x ``llm=mock,profiled`` on every
  bundled scenario (``experiment=transfer``);
- ``recorded``: the real model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M), replayed: ``ablate=none``
  from the packaged cassette (``llm=recorded``) on the fourteen recorded scenarios, and each
  ablation of ``LIVE`` on the scenarios that test it, from its own cassette
  ``recordings/live/ABLATE.jsonl`` (``llm=replay``). Those cassettes are made by ``--live``
  (missing ones only; ``--live --again`` redoes them): ``llm=local`` with
  ``llm.replay_first`` = the packaged cassette, so a request the unablated recording holds
  is answered from it and only the ablation's new requests reach the model (the first
  ablations took 1 to a few dozen live calls each), every answer written to the cassette;
  the study itself then needs no model;
- ``holdout``: the clean mock and the model (replayed) on the recorded scenarios, a profile
  fitted on each half of them (``HALVES``, a scenario and its translation in the same half),
  and the profiled mock on the other half with it (``attention.draw`` random as fitted, and
  ``mean``).

Then, from the saved runs alone, it writes ``summary.csv`` (one row per ablation and LLM:
expectations it breaks and fixes against ``ablate=none`` under the same LLM, the change of
recall and of cost per turn, and whether each survives from the clean to the profiled mock
and from the profiled mock to the recording) and ``report.md`` (a hand-written ``notes.md``
there goes first). Conclusions compared: the set of expectations broken (equal sets survive),
the sign of the recall change and the sign of the cost change (a change within 1% of the
reference counts as 0).

Held-out measures, per half and pooled: agreement of pass/fail per expectation with the
model, Spearman of the observed items' attention scores with the model's, facts per
dialogue turn against the model's, and the runs' wall time.
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

import pandas as pd

from ..calibration.calibrate import spearman

HALVES = (["milk_allergy", "milk_allergy_zh", "flu_fades", "second_thought", "contradiction", "deep_memory",
           "deep_memory_zh"],
          ["cold_then_fever", "cold_then_fever_zh", "disneyland_twice", "disneyland_twice_zh", "personality",
           "field_warmup", "noisy_belief"])
RECORDED = HALVES[0] + HALVES[1]        # every bundled scenario the packaged cassette holds
TOL = 0.01
LIVE_DIR = Path("recordings/live")
LIVE = {    # ablation -> the recorded scenarios whose checks its conclusion under either mock involves
    "accumulate": ["cold_then_fever", "personality"],
    "arousal": ["field_warmup"],
    "association": ["milk_allergy", "cold_then_fever", "field_warmup"],
    "awakening": ["milk_allergy"],
    "consolidation": ["contradiction"],
    "depth": ["deep_memory", "second_thought"],
    "events": ["disneyland_twice"],
    "inference": ["cold_then_fever", "personality"],
    "long_decay": ["field_warmup", "second_thought"],
    "short_decay": ["field_warmup", "second_thought", "deep_memory"],
    "tiers": ["deep_memory", "second_thought"],
    "ttl": ["flu_fades", "personality"],
}
PACKAGED = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def _mtsbench(*args: str) -> int:
    exe = Path(sys.executable).with_name("mtsbench")
    return subprocess.run([str(exe), *args]).returncode


def record_live(again: bool = False) -> None:
    """Record ``LIVE_DIR/ABLATE.jsonl`` for every ablation of ``LIVE`` that has none (all with
    ``again``): the packaged model live, ``replay_first`` the packaged cassette (module docstring).
    A run is recorded to ``.part`` and renamed when it ends, so an interrupted one starts again."""
    LIVE_DIR.mkdir(parents=True, exist_ok=True)
    for ablate, scenarios in LIVE.items():
        done, part = LIVE_DIR / f"{ablate}.jsonl", LIVE_DIR / f"{ablate}.jsonl.part"
        if done.is_file() and not again:
            continue
        part.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            code = _mtsbench("run", "llm=local", "llm.threads=1", "llm.on_failure=skip", f"llm.replay_first={PACKAGED}",
                             f"llm.record={part}", f"ablate={ablate}", f"scenarios=[{','.join(scenarios)}]",
                             f"hydra.run.dir={tmp}/run")
        if code in (0, 3) and part.is_file():       # 3: more failed calls than allowed, a finished run all the same
            os.replace(part, done)


def run_all(work: Path) -> None:
    """Run the sweeps and the held-out runs into ``work`` (see the module docstring)."""
    _mtsbench("run", "-m", "experiment=transfer", f"hydra.sweep.dir={work}/sweep")
    _mtsbench("run", "llm=recorded", f"scenarios=[{','.join(RECORDED)}]", f"hydra.run.dir={work}/recorded/none")
    for ablate, scenarios in LIVE.items():
        if (LIVE_DIR / f"{ablate}.jsonl").is_file():
            _mtsbench("run", "llm=replay", f"llm.cassette={LIVE_DIR / f'{ablate}.jsonl'}", f"ablate={ablate}",
                      f"scenarios=[{','.join(scenarios)}]", f"hydra.run.dir={work}/recorded/{ablate}")
    h = work / "holdout"
    scen = f"scenarios=[{','.join(RECORDED)}]"
    times = {}
    for name, llm in (("mock", "mock"), ("model", "recorded")):
        start = time.perf_counter()
        _mtsbench("run", f"llm={llm}", scen, f"hydra.run.dir={h}/{name}")
        times[name] = time.perf_counter() - start
    for i, (fit_on, test_on) in enumerate((HALVES, HALVES[::-1]), 1):
        _mtsbench("calibrate", "--fit", str(h / "mock"), str(h / "model"), "-o", str(h / f"profile{i}.yaml"),
                  "--scenarios", ",".join(fit_on))
        mean = h / f"profile{i}_mean.yaml"        # the same profile, attention drawn as the bin's mean
        mean.write_text((h / f"profile{i}.yaml").read_text(encoding="utf-8").replace(
            "\n  draw: random\n", "\n  draw: mean\n"), encoding="utf-8")
        for name, llm in ((f"profiled{i}", ["llm=mock", f"llm.profile={h / f'profile{i}.yaml'}"]),
                          (f"profiled_mean{i}", ["llm=mock", f"llm.profile={mean}"]),
                          (f"mock{i}", ["llm=mock"])):
            start = time.perf_counter()
            _mtsbench("run", *llm, f"scenarios=[{','.join(test_on)}]", f"hydra.run.dir={h}/{name}")
            times[name] = time.perf_counter() - start
    (h / "times.json").write_text(json.dumps(times, indent=1), encoding="utf-8")


def _load(path: Path):
    from ..api import load
    from ..errors import ReportError

    try:
        return load(path) if (path / "summary.json").is_file() else None
    except ReportError:             # a job that did not finish (llm=recorded: a call the cassette lacks)
        return None


def _outcomes(run) -> pd.Series:
    e = run.expectations
    n = e.groupby(["scenario", "index", "check"]).cumcount()       # two checks of one kind at one step
    return pd.Series(e["passed"].fillna(False).astype(bool).to_numpy(),
                     index=[f"{s}:{i}:{st}:{c}" + (f"#{k}" if k else "")
                            for s, i, st, c, k in zip(e["scenario"], e["index"], e["step"], e["check"], n)])


def _overall(run, scenarios=None) -> dict:
    """Recall, cost per turn, passed and checks of ``run``, over ``scenarios`` only if given
    (recall weighted by each scenario's probes, cost per turn as total over turns)."""
    s = json.loads((run.path / "summary.json").read_text(encoding="utf-8"))
    if scenarios is None:
        cost = s.get("cost", {}).get("overall", {})
        return {"recall": s["overall"].get("recall"), "cost_per_turn": cost.get("per_turn"),
                "passed": s["overall"].get("passed"), "checks": s["overall"].get("checks")}
    per = [s["scenarios"][n] for n in scenarios if n in s["scenarios"]]
    cost = [s.get("cost", {}).get("scenarios", {}).get(n, {}) for n in scenarios]
    probes = sum(p.get("probes") or 0 for p in per if p.get("recall") is not None)
    turns = sum(c.get("turns") or 0 for c in cost)
    return {"recall": sum(p["recall"] * p["probes"] for p in per if p.get("recall") is not None) / probes
            if probes else None,
            "cost_per_turn": sum(c.get("total") or 0 for c in cost) / turns if turns else None,
            "passed": sum(p["passed"] for p in per), "checks": sum(p["checks"] for p in per)}


def _sign(x, ref) -> int:
    if x is None or ref is None:
        return 0
    return 0 if abs(x - ref) <= TOL * max(abs(ref), 1e-9) else (1 if x > ref else -1)


def _jobs(sweep: Path) -> dict:
    """{(ablate, llm): Run} of a sweep's finished jobs (from each job's .hydra overrides)."""
    import yaml

    out = {}
    for job in sorted(p for p in sweep.glob("*") if p.is_dir()):
        over = job / ".hydra" / "overrides.yaml"
        run = _load(job)
        if run is None or not over.is_file():
            continue
        o = dict(x.split("=", 1) for x in yaml.safe_load(over.read_text()) if "=" in x)
        if json.loads((job / "summary.json").read_text()).get("status") != "complete":
            continue
        out[(o.get("ablate", "none"), o.get("llm", "recorded" if "recorded" in str(sweep) else "mock"))] = run
    return out


def conclusions(jobs: dict, only: dict | None = None) -> pd.DataFrame:
    """One row per (ablate, llm): broken / fixed expectations and the signs of the changes
    against ``ablate=none`` under the same LLM; with ``only`` (ablation -> scenarios), each
    ablation other than ``none`` on its scenarios alone (others skipped), its reference too."""
    rows = []
    for (ablate, llm), run in sorted(jobs.items()):
        ref = jobs.get(("none", llm))
        scen = None if only is None or ablate == "none" else only.get(ablate)
        if ref is None or (only is not None and ablate != "none" and scen is None):
            continue
        a, r = _outcomes(run), _outcomes(ref)
        common = [k for k in a.index.intersection(r.index) if scen is None or k.split(":")[0] in scen]
        broken = sorted(k for k in common if r[k] and not a[k])
        fixed = sorted(k for k in common if a[k] and not r[k])
        o, ro = _overall(run, scen), _overall(ref, scen)
        rows.append({"ablate": ablate, "llm": llm, "scenarios": "all" if scen is None else " ".join(scen),
                     "passed": o["passed"], "checks": o["checks"],
                     "broken": len(broken), "fixed": len(fixed), "broken_ids": " ".join(broken),
                     "recall": o["recall"], "recall_sign": _sign(o["recall"], ro["recall"]),
                     "cost_per_turn": o["cost_per_turn"], "cost_sign": _sign(o["cost_per_turn"], ro["cost_per_turn"])})
    return pd.DataFrame(rows)


def survival(table: pd.DataFrame, src: str, dst: str) -> pd.DataFrame:
    """Per ablation, whether its conclusion under ``src`` holds under ``dst`` (broken set, recall
    sign, cost sign; ``conclusions(..., only=...)`` restricts a table to the scenarios both ran)."""
    rows = []
    for ablate, g in table.groupby("ablate"):
        s, d = g[g["llm"] == src], g[g["llm"] == dst]
        if s.empty or d.empty:
            continue
        s, d = s.iloc[0], d.iloc[0]

        bs, bd = (set(x.split()) if isinstance(x, str) else set() for x in (s["broken_ids"], d["broken_ids"]))
        rows.append({"ablate": ablate, "from": src, "to": dst, "broken_from": len(bs), "broken_to": len(bd),
                     "broken_same": bs == bd, "broken_kept": len(bs & bd),
                     "recall_sign_same": s["recall_sign"] == d["recall_sign"],
                     "cost_sign_same": s["cost_sign"] == d["cost_sign"],
                     "survives": bs == bd and s["recall_sign"] == d["recall_sign"] and s["cost_sign"] == d["cost_sign"]})
    return pd.DataFrame(rows)


def _facts_per_turn(run, scenarios) -> float:
    t, r = run.trace, run.results
    t, r = t[t["scenario"].isin(scenarios)], r[r["scenario"].isin(scenarios)]
    n = int(((t["event"] == "created") & (t["kind"] == "fact")).sum()) if "kind" in t else 0
    turns = int(((r["record"] == "observe") & r["kind"].isin(["say", "reply"])).sum())
    return round(n / turns, 4) if turns else float("nan")


def measure(run, model, scenarios) -> dict:
    """Agreement of ``run`` with ``model`` on ``scenarios``: pass/fail per expectation, Spearman
    of the observed items' attention, facts per dialogue turn (say and reply) of each."""
    a, b = _outcomes(run), _outcomes(model)
    a = a[[k.split(":")[0] in scenarios for k in a.index]]
    common = a.index.intersection(b.index)

    def obs(r):
        return r[(r["record"] == "observe") & r["score"].notna() & r["scenario"].isin(scenarios)][["scenario", "step", "score"]]

    att = obs(run.results).merge(obs(model.results), on=["scenario", "step"])
    return {"expectations": len(common), "agree": int((a[common] == b[common]).sum()),
            "agreement": round(float((a[common] == b[common]).mean()), 4) if len(common) else None,
            "attention_pairs": len(att), "spearman": spearman(att["score_x"], att["score_y"]),
            "facts_per_turn": _facts_per_turn(run, scenarios), "model_facts_per_turn": _facts_per_turn(model, scenarios)}


def holdout(h: Path, sweep_jobs: dict) -> pd.DataFrame:
    """Held-out measures of each half's profiled mock (and the clean mock) against the model,
    then in-sample for reference: the sweep's ``ablate=none`` jobs on all fourteen (the packaged
    profile was fitted on them)."""
    model = _load(h / "model")
    if model is None:
        return pd.DataFrame()
    times = json.loads((h / "times.json").read_text()) if (h / "times.json").is_file() else {}
    rows = []
    for i, test_on in enumerate((HALVES[1], HALVES[0]), 1):
        for name in (f"mock{i}", f"profiled{i}", f"profiled_mean{i}"):
            run = _load(h / name)
            if run is not None:
                wall = times.get(name)
                rows.append({"fit_on": f"half {i}", "measured_on": f"half {3 - i}", "llm": name.rstrip("12").replace("_mean", " (draw: mean)"),
                             **measure(run, model, test_on),
                             "wall_s": None if wall is None else round(wall, 2),
                             "wall_vs_mock": None if wall is None or not times.get(f"mock{i}")
                             else round(wall / times[f"mock{i}"], 2)})
    for llm in ("mock", "profiled"):
        run = sweep_jobs.get(("none", llm))
        if run is not None:
            rows.append({"fit_on": "all fourteen", "measured_on": "all fourteen (in-sample)", "llm": llm,
                         **measure(run, model, RECORDED)})
    return pd.DataFrame(rows)


def _md(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "(none)\n"
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def build(work: Path, out: Path) -> None:
    """Write ``summary.csv`` and ``report.md`` to ``out`` from the saved runs in ``work``."""
    jobs = _jobs(work / "sweep")
    rec = {(a, "recorded"): r for (a, _), r in _jobs(work / "recorded").items()}
    table = conclusions(jobs)
    model = conclusions(rec, only=LIVE)
    on_live = conclusions(jobs, only=LIVE)      # each mock's conclusions on the scenarios the model ran
    clean_prof = survival(table, "mock", "profiled")
    prof_rec = survival(pd.concat([on_live, model]), "profiled", "recorded")
    clean_rec = survival(pd.concat([on_live, model]), "mock", "recorded")
    out.mkdir(parents=True, exist_ok=True)
    surv = pd.concat([clean_prof, prof_rec, clean_rec], ignore_index=True)
    summary = pd.concat([table, model], ignore_index=True)
    for name, frame in (("survives_clean_to_profiled", clean_prof), ("survives_profiled_to_model", prof_rec),
                        ("survives_clean_to_model", clean_rec)):
        cols = frame[["ablate", "survives"]] if not frame.empty else pd.DataFrame(columns=["ablate", "survives"])
        summary = summary.merge(cols.rename(columns={"survives": name}), on="ablate", how="left")
    summary.to_csv(out / "summary.csv", index=False)
    hold = holdout(work / "holdout", jobs)
    hold.to_csv(out / "holdout.csv", index=False)
    notes = (out / "notes.md").read_text(encoding="utf-8") if (out / "notes.md").is_file() else ""
    covered = sorted(a for a, _ in rec if a != "none")
    parts = [notes, "# Transfer: clean mock, profiled mock, real model\n",
             "Generated by `python -m mtsbench.studies.transfer` from the runs in "
             f"`{work}` (module docstring: what is compared).\n",
             "## Held-out fit (fit on one half of the recorded scenarios, measured on the other)\n",
             f"Half 1: {', '.join(HALVES[0])}. Half 2: {', '.join(HALVES[1])}. Wall time: one `mtsbench run` "
             "of the half, process start included (`wall_vs_mock`: against the clean mock's run of the same half).\n",
             _md(hold),
             "## Conclusions per ablation and LLM\n",
             "broken / fixed: expectations that pass under `ablate=none` and fail under the ablation (and the "
             "reverse), same LLM; signs: change of recall and of cost per turn against `ablate=none`. `recorded` is "
             "the real model, replayed: `ablate=none` on all fourteen recorded scenarios, each ablation on the "
             "scenarios that test it (`scenarios`), recorded live with the unablated recording's answers reused.\n",
             _md(summary.drop(columns=["broken_ids"])),
             "## Does each conclusion survive?\n",
             f"The real model ran: {', '.join(covered) or 'no ablation'}. Its comparisons (to `recorded`) use each "
             "ablation's scenarios only, the mocks' conclusions restricted to the same scenarios.\n",
             _md(surv)]
    (out / "report.md").write_text("\n".join(p for p in parts if p), encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.studies.transfer", description=__doc__.split("\n")[0])
    parser.add_argument("--work", default="multirun/experiments/transfer", help="where the raw runs go")
    parser.add_argument("--out", default="experiments/transfer", help="report folder")
    parser.add_argument("--run", action="store_true", help="run the sweeps and held-out runs first")
    parser.add_argument("--live", action="store_true", help="first record the model's missing ablation cassettes "
                        "(recordings/live; needs mtsbench[local]; hours of CPU without the reused answers)")
    parser.add_argument("--again", action="store_true", help="with --live: record every ablation's cassette again")
    ns = parser.parse_args(argv)
    work, out = Path(ns.work), Path(ns.out)
    if ns.live:
        record_live(ns.again)
    if ns.run:
        run_all(work)
    build(work, out)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
