"""Realistic one-line mutants, each judged by the user's own offline suite (issue 53).

Each mutant below is a bug a developer could commit in one line. None is in the package: this
script copies the *installed* ``mtsbench`` into a temporary folder, applies one mutant there,
puts that copy first on ``PYTHONPATH`` and runs the behaviour suite as a user does:

    mtsbench check <the bundled scenarios>             (exit 1: an expectation failed)
    mtsbench check --matrix --embedder hashing         (exit 1: a cell failed or detection fell
                                                        below a mechanism's floor)

A mutant is *caught* when either exits non-zero (2, a crash, is reported apart: it is caught,
but by accident). The table goes to ``--out`` (``experiments/mutation/realistic.md``) with the
wall time; ``--only ID`` runs some of them. Run ``make install`` first: the installed package
is what is mutated. Each mutant takes the suite's time (about 20 s of CPU on hashing).

    .venv/bin/python scripts/realistic_mutants.py [--only ID ...] [--out experiments/mutation/realistic.md]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple


class Mutant(NamedTuple):
    id: str
    file: str           # inside the package
    old: str            # one line's text, found exactly once
    new: str
    what: str


MUTANTS = [
    Mutant("arousal_radius_ignored", "mechanisms/arousal.py", "within = z >= self.r", "within = np.isfinite(z)",
           "regional arousal ignores its radius: every candidate neighbour counts"),
    Mutant("rebalance_off_by_one", "memory/tiering.py", "movable = current < self.policy.n_tiers - 1",
           "movable = current < self.policy.n_tiers - 2",
           "incremental rebalance never schedules the next-to-last tier: it never sinks to the bottom"),
    Mutant("attention_term_weak", "memory/retrieval.py",
           "return self.relevance_weight * relevance + self.attention_weight * attention / 10.0",
           "return self.relevance_weight * relevance + self.attention_weight * attention / 100.0",
           "the attention term of the retrieval score ten times too weak"),
    Mutant("decay_exponent_wrong", "mechanisms/decay.py", "return (1.0 + np.maximum(dt, 0.0) / self.tau) ** (-self.d)",
           "return (1.0 + np.maximum(dt, 0.0) / self.tau) ** (-2 * self.d)",
           "the power law's exponent doubled: long-term attention fades as t^-0.6, not t^-0.3"),
    Mutant("hysteresis_sign_flipped", "mechanisms/tiers.py",
           "up = tiers_by_cutoffs(attention - self.hysteresis, self.cutoffs)",
           "up = tiers_by_cutoffs(attention + self.hysteresis, self.cutoffs)",
           "hysteresis sign flipped on the way up: a memory is promoted before it clears a cut-off"),
    Mutant("belief_replaced", "mechanisms/belief.py", "return ema(b, w_plus, w_minus, estimate, self.eta)",
           "return replace(b, w_plus, w_minus, estimate)",
           "belief damping replaced by replacement: the newest estimate wins"),
    Mutant("depth_off_by_one", "mechanisms/depth.py",
           "return max(1, min(n_tiers, math.ceil(motivation * n_tiers - 1e-9)))",
           "return max(1, min(n_tiers, math.ceil(motivation * n_tiers - 1e-9) + 1))",
           "depth off by one: every motivation searches one tier deeper"),
    Mutant("fan_effect_dropped", "mechanisms/arousal.py",
           "spread = np.maximum(0.0, self.strength - np.log(np.maximum(fan, 1))) / self.strength",
           "spread = 1.0", "arousal's fan effect dropped: a hub floods its neighbours"),
    Mutant("long_gain_is_short", "memory/attention.py",
           "store.long_v[ids] = long = boost(long, self.long_gain, self.cap)",
           "store.long_v[ids] = long = boost(long, self.short_gain, self.cap)",
           "a recall adds the short-term gain to the long-term part"),
    Mutant("ttl_weight_slow", "mechanisms/accumulate.py", "return np.exp(-3.0 * age / ttl) if decay else np.ones_like(age)",
           "return np.exp(-1.0 * age / ttl) if decay else np.ones_like(age)",
           "impressions fade three times too slowly over their TTL"),
    Mutant("weaker_loses_inverted", "mechanisms/conflict.py", "new_loses = b_new <= b_old", "new_loses = b_new >= b_old",
           "a contradiction: the stronger side loses"),
    Mutant("perceived_arousal_off", "memory/memory.py", 'if not getattr(self.arousal, "perceived", False):',
           'if getattr(self.arousal, "perceived", False):', "the item just perceived no longer arouses its field"),
]


def installed_package() -> Path:
    out = subprocess.run([sys.executable, "-P", "-c", "import mtsbench, pathlib; print(pathlib.Path(mtsbench.__file__).parent)"],
                         capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return Path(out.stdout.strip())


def apply(mutant: Mutant, package: Path, root: Path) -> Path:
    """A copy of ``package`` under ``root`` with ``mutant`` applied (its line found exactly once)."""
    copy = root / "mtsbench"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / mutant.file
    text = path.read_text(encoding="utf-8")
    if text.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.id}: '{mutant.old}' found {text.count(mutant.old)} times in {mutant.file}; "
                         "expected exactly once (the package changed: update the mutant)")
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    return copy


def suite(root: Path, bundled: Path, work: Path) -> dict[str, int]:
    """Exit codes of the two commands with ``root`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    run = [sys.executable, "-c", "import sys; from mtsbench.cli import main; sys.exit(main(sys.argv[1:]))"]
    codes = {}
    for name, args in (("check", ["check", str(bundled)]),
                       ("matrix", ["check", "--matrix", "--embedder", "hashing", "--out", str(work / "matrix")])):
        done = subprocess.run([*run, *args], env=env, cwd=work, capture_output=True, text=True)
        (work / f"{name}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
        codes[name] = done.returncode
    return codes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="run these mutants only")
    parser.add_argument("--out", type=Path, help="write the table here (markdown)")
    parser.add_argument("--keep", type=Path, help="keep each mutant's logs and matrix in this folder")
    ns = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not ns.only or m.id in ns.only]
    package = installed_package()
    bundled = package / "scenarios"
    lines = ["| mutant | what | check scenarios/ | check --matrix | caught | wall s |", "|---|---|---|---|---|---|"]
    caught = 0
    for mutant in chosen:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.id}-") as tmp:
            root = Path(tmp)
            apply(mutant, package, root / "src")
            work = root / "work"
            work.mkdir()
            codes = suite(root / "src", bundled, work)
            if ns.keep:
                shutil.copytree(work, ns.keep / mutant.id, dirs_exist_ok=True)
        wall = time.perf_counter() - started
        hit = any(codes.values())
        crash = 2 in codes.values()
        caught += hit
        verdict = "yes (a crash)" if crash else "yes" if hit else "**no**"
        line = f"| `{mutant.id}` | {mutant.what} | {codes['check']} | {codes['matrix']} | {verdict} | {wall:.0f} |"
        print(line, flush=True)
        lines.append(line)
    lines.append("")
    lines.append(f"{caught} of {len(chosen)} caught by the exit codes of `mtsbench check` and `mtsbench check --matrix "
                 "--embedder hashing`.")
    if ns.out:
        ns.out.parent.mkdir(parents=True, exist_ok=True)
        ns.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(lines[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
