# %% [markdown]
# # mtsbench from Python: run, load, compare
#
# A notebook-style walk through the Python API (cells separated by `# %%`; open it in
# Jupyter with jupytext or VS Code, or run it as a script: `python examples/notebook.py`).
# Every frame comes from the result files of a run; nothing here re-runs a job to read it.

# %%
import tempfile
from pathlib import Path

import mtsbench

work = Path(tempfile.mkdtemp(prefix="mtsbench-notebook-"))

# %% [markdown]
# ## One run
# `mtsbench.run` takes the same overrides as the command line and returns a `Run`.

# %%
seed = mtsbench.run(["scenarios=[milk_allergy,deep_memory]"], out=work / "mts")
print(f"pass rate {seed.pass_rate}; {len(seed.probes)} probes, {len(seed.expectations)} expectations")
print(seed.probes[["scenario", "step", "recall", "scored", "recall@10", "recall@1024t"]])

# %% [markdown]
# The saved rankings (`results`) answer questions no metric column was written for —
# here, how many tokens of context each probe's first five memories hold.

# %%
probes = seed.results[seed.results["record"] == "probe"]
context = probes["ranked_tokens"].map(lambda t: int(sum(t[:5])))
print(context.describe())

# %% [markdown]
# What happened inside: the memory events (`trace.parquet`, read with `pandas.read_parquet`;
# `seed.trace` expands each event's JSON `fields` into columns) and the attention timelines
# of the memories the expectations name (`timelines.parquet`).

# %%
trace = seed.trace
print(trace["event"].value_counts().head(8))
moves = trace[trace["event"] == "moved"][["scenario", "t", "ids", "to", "why"]]
print(f"{len(moves)} tier moves; first: {moves.head(3).to_dict('records')}")
print(seed.timelines.groupby(["scenario", "memory"])[["long", "short"]].max())

# %% [markdown]
# Your own configs: a folder with the configs' layout is searched before the packaged
# one, so `long_decay/power_law.yaml` there replaces the packaged curve (the default).

# %%
mine = work / "my_configs"
(mine / "long_decay").mkdir(parents=True)
(mine / "long_decay" / "power_law.yaml").write_text(
    "_target_: mtsbench.mechanisms.decay.PowerLaw\ntau: 24\nd: 3.0\n", encoding="utf-8")
steep = mtsbench.run(["scenarios=[milk_allergy,deep_memory]"], out=work / "steep", config_dir=mine)
print(f"long attention summed over the timelines: packaged {seed.timelines['long'].sum():.1f}, "
      f"steeper decay {steep.timelines['long'].sum():.1f}")

# %% [markdown]
# ## The seed design against plain BM25 and flat retrieval
# Three runs on the same scenarios, loaded back and compared in one frame.

# %%
runs = {name: mtsbench.run([*overrides, "scenarios=[milk_allergy,deep_memory]"], out=work / name)
        for name, overrides in {"mts": [], "bm25": ["system=bm25"], "flat_rag": ["preset=flat_rag"]}.items()}
table = {name: {"pass rate": r.pass_rate, "unsupported": r.summary["overall"]["unsupported"],
                "scored per probe": r.summary["overall"]["scored"],
                "total cost per turn": r.summary["cost"]["overall"]["per_turn"]}
         for name, r in runs.items()}
import pandas as pd  # noqa: E402

print(pd.DataFrame(table).T)

# %% [markdown]
# ## A sweep
# `mtsbench run -m ...` writes one folder per job; `mtsbench.load` reads the sweep, with each
# job's overrides as columns.

# %%
import subprocess  # noqa: E402
import sys  # noqa: E402

exe = Path(sys.executable).parent / "mtsbench"
subprocess.run([str(exe), "run", "-m", "preset=mts,flat_rag", "scenarios=[milk_allergy]",
                f"hydra.sweep.dir={work / 'sweep'}"], check=True, capture_output=True)
sweep = mtsbench.load(work / "sweep")
print(sweep.summary[["job", "config", "pass_rate", "scored", "cost_per_turn"]])
print(sweep.probes.groupby("preset")["scored"].mean())
