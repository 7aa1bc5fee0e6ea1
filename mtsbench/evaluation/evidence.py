"""Evidence recall@k at several depths, per probe and per category (DESIGN §5).

For a probe with evidence steps E (its ``recall``) and ranking r_1, r_2, ... (its search
ranked ``max(k, max depth)`` deep over the memories that search scored; only its own top
k are recalled, so the depths change no memory dynamics)::

    recall@d      = |{e in E : e in earned(r_i) for some i <= d}| / |E|
    prov_recall@d = |{e in E : e in provenance(r_i) for some i <= d}| / |E|

``earned(r)`` is the part of r's provenance that r's text carries (``mtsbench.evaluation.credit``:
at least ``evaluation.earned_share`` of the step's content words); ``recall@d`` is the
headline, ``prov_recall@d`` the provenance-only figure reported before (a summary that
keeps a few words of each turn was credited with every turn). A system that cannot show
its memories' texts (no ``context_texts``) has no earned figure.

**Chance baseline** (``chance_recall@d``, ``chance_recall@Bt``): the same ranking, earned
credit, scored against |E| steps drawn at random from the steps observed before the probe
(mean of ``CHANCE_DRAWS`` seeded draws): what coverage alone buys. A ranking that lists
many distinct turns finds random evidence too.

and, with sessions S_1..S_m (``recall_sessions``), ``session_recall@d`` = the share of
sessions with at least one step found among the top d (and ``session_recall@Bt`` within a
budget). A ranking shorter than d (the search scored fewer memories) simply finds nothing
below its end.

**Any and all evidence** (earned credit, at every depth and budget): ``recall_any@c`` = 1
if some evidence step is found within the cut-off c, else 0; ``recall_all@c`` = 1 if every
one is (a question that needs both of two statements, or every event of an ordering).

**Evidence roles** (``expect.recall_roles``: role -> steps, in the data set's order, e.g.
BEAM's ``original_info`` then ``updated_info``): with rank(R) the best rank of a role's
steps and c the memories a budget keeps, ``later_above@Bt`` = 1 if rank(last role) <
rank(first role), 0.5 on a tie (one memory holds both), 0 otherwise — defined only when
both are within c (else empty): does the updated statement rank above the stale one when
an answerer sees both? ``later_wins@Bt`` is the unconditional view: 1 if the last role is
within c and above the first or the first is not within c (0.5 on a tie), else 0.

**Recall at a context budget** B tokens (``recall@Bt``, ``evaluation.recall_at_tokens``,
default 256, 512, 1024, 2048) compares systems at equal context instead of equal k: walk
the ranking best first, adding each memory's text length in tokens, and keep the memories
while the running total stays within B (the first memory that would overflow ends the
walk); recall@Bt is the share of evidence steps some kept memory earns. At equal k a
summary that stands for 8 turns counts up to 8 hits for one slot; at equal budget it pays
for its length. The ranking is saved ``evaluation.rank_to`` deep (default 100; at least
the largest depth); a budget larger than that ranking holds is counted on what it holds.

Aggregates are means over the probes that have evidence; abstaining probes and probes
without evidence count in ``probes`` and ``scored`` (mean memories scored per probe) only.
``config.evaluation.recall_at`` lists the depths (``configs/config.yaml`` sets the defaults).

**The measures are a registry, not a list**: every column of metrics.csv and every row or
column of a report that shows evidence recall is generated from the depths and budgets
configured (``cut_columns``; a finished run's are in its summary.json, ``cuts_of_summary``);
``headline_budget`` picks the budget a report compares configurations at.

**False recall of abstaining probes.** An abstaining probe (``abstain: true``: the memory
does not hold the answer) has no evidence to find; what it can get wrong is to return
something confidently. Its row's ``abstain_score`` is the best score among the memories it
used (its top k; empty: no score), and::

    false_recall = |{abstaining probes p : abstain_score(p) >= evaluation.abstain_threshold}|
                   / |abstaining probes|

(``false_recall`` in each evidence block, None without abstaining probes; default
threshold 0.5). ``top_relevance`` (every probe) is the best *relevance* among the memories it used, without
any attention term, so systems that share a relevance (same embedder and ``retrieval``)
compare on it: the LoCoMo study scores abstention with it. Scores are on the system's own scale — the seed design's cosine +
0.3 * attention / 10, BM25's raw score under ``system=bm25``, a min-max sum under
``generative_agents`` — so compare false recall between configurations that share a
scoring formula, or set the threshold per formula.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..config.options import Evaluation


PROVENANCE = "recall_provenance@k"     # a probe's recall at its own k by provenance alone (mtsbench.evaluation.evaluate)


def cut_columns(depths, budgets=(), prefix: str = "") -> list[str]:
    """The recall columns of the configured cut-offs: ``recall@d`` per depth, then
    ``recall@Bt`` per budget (``prefix``: ``prov_`` or ``chance_`` for those figures).

    >>> cut_columns((3, 7), (100,)), cut_columns((3,), prefix="prov_")
    (['recall@3', 'recall@7', 'recall@100t'], ['prov_recall@3'])
    """
    return [*(f"{prefix}recall@{d}" for d in depths), *(f"{prefix}recall@{b}t" for b in budgets)]


def cuts_of_summary(summary: dict | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(depths, budgets) a finished run was evaluated at, from its summary.json (its
    ``overall.evidence`` block; none without evidence recall).

    >>> cuts_of_summary({"overall": {"evidence": {"depths": [3, 7], "budgets": [100]}}})
    ((3, 7), (100,))
    >>> cuts_of_summary({"overall": {"evidence": None}}), cuts_of_summary(None)
    (((), ()), ((), ()))
    """
    block = ((summary or {}).get("overall") or {}).get("evidence") or {}
    return tuple(int(d) for d in block.get("depths") or ()), tuple(int(b) for b in block.get("budgets") or ())


def headline_budget(budgets) -> int | None:
    """The budget a report compares configurations at: the upper median of the configured
    budgets (None without budgets).

    >>> headline_budget((256, 512, 1024, 2048)), headline_budget((300,)), headline_budget(())
    (1024, 300, None)
    """
    budgets = sorted(budgets)
    return budgets[len(budgets) // 2] if budgets else None


def columns(depths: tuple[int, ...], budgets: tuple[int, ...] = ()) -> list[str]:
    """The metrics.csv columns this module fills on probe rows."""
    cut = cut_columns(depths, budgets)
    return ["category", "abstain", *(f"recall@{d}" for d in depths), *(f"session_recall@{d}" for d in depths),
            *(f"recall@{b}t" for b in budgets), *view_columns(depths, budgets), *(f"prov_{c}" for c in cut),
            *(f"prov_session_recall@{d}" for d in depths), *(f"chance_{c}" for c in cut),
            *(["abstain_score", "top_relevance"] if depths else [])]


def view_columns(depths, budgets=()) -> list[str]:
    """The earned-credit views beside recall: any and all evidence at every cut-off, session
    recall at every budget, and the evidence roles' order at every budget.

    >>> view_columns((5,), (100,))
    ['recall_any@5', 'recall_all@5', 'recall_any@100t', 'recall_all@100t', 'session_recall@100t', 'later_above@100t', 'later_wins@100t']
    """
    names = [n for d in depths for n in (f"recall_any@{d}", f"recall_all@{d}")]
    for b in budgets:
        names += [f"recall_any@{b}t", f"recall_all@{b}t", f"session_recall@{b}t", f"later_above@{b}t",
                  f"later_wins@{b}t"]
    return names


def within_budget(tokens: list[int], budget: int) -> int:
    """How many ranked memories fit in ``budget`` tokens, taken best first.

    >>> within_budget([100, 200, 50], 300), within_budget([100, 200, 50], 299), within_budget([400], 256)
    (2, 1, 0)
    """
    spent = 0
    for n, t in enumerate(tokens):
        spent += t
        if spent > budget:
            return n
    return len(tokens)


def recall_at(ranks: list[int | None], d: int) -> float:
    """Share of 1-based ranks (None = not ranked) that are at most d.

    >>> recall_at([1, 7, None, 30], 5), recall_at([1, 7, None, 30], 10), recall_at([1, 7, None, 30], 50)
    (0.25, 0.5, 0.75)
    """
    return sum(r is not None and r <= d for r in ranks) / len(ranks)


def first_ranks(provenance: list[tuple[str, ...]], steps: tuple[str, ...]) -> dict[str, int | None]:
    """1-based rank of the first ranked memory whose provenance names each step.

    >>> first_ranks([("a",), ("b", "c"), ("a",)], ("a", "c", "z"))
    {'a': 1, 'c': 2, 'z': None}
    """
    out: dict[str, int | None] = {s: None for s in steps}
    for rank, parts in enumerate(provenance, start=1):
        for s in parts:
            if s in out and out[s] is None:
                out[s] = rank
    return out


CHANCE_DRAWS = 32


def chance_recall(ranked: list[tuple[str, ...]], pool: tuple[str, ...], n: int, cutoffs: list[int],
                  seed: int) -> list[float | None]:
    """What the same ranking recalls of evidence drawn at random: the mean, over
    ``CHANCE_DRAWS`` draws of min(n, |pool|) distinct steps of ``pool`` (the steps observed
    before the probe), of the share whose first rank is within each cut-off (the number of
    memories kept: a depth, or what fits a budget). Seeded by ``seed``: same inputs, same value.

    >>> chance_recall([("a",), ("b",)], ("a", "b", "c", "d"), 4, [1, 2, 4], seed=0)
    [0.25, 0.5, 0.5]
    >>> chance_recall([("a",)], (), 2, [5], seed=0)
    [None]
    """
    if not pool or n <= 0:
        return [None for _ in cutoffs]
    first = first_ranks(ranked, pool)
    ranks = np.array([np.inf if first[s] is None else first[s] for s in pool], dtype=float)
    draws = np.argsort(np.random.default_rng(seed).random((CHANCE_DRAWS, len(pool))), axis=1)[:, :min(n, len(pool))]
    got = ranks[draws]
    return [float(np.mean(got <= c)) for c in cutoffs]


def later_above(first: int | None, later: int | None, cut: int) -> float | None:
    """Whether the later role's best rank is above the first role's, both within ``cut``:
    1, 0, 0.5 for a tie (one memory holds both), None unless both are within ``cut``.

    >>> later_above(4, 2, 5), later_above(2, 4, 5), later_above(3, 3, 5), later_above(None, 2, 5), later_above(2, 7, 5)
    (1.0, 0.0, 0.5, None, None)
    """
    if first is None or later is None or first > cut or later > cut:
        return None
    return 1.0 if later < first else 0.5 if later == first else 0.0


def later_wins(first: int | None, later: int | None, cut: int) -> float:
    """Whether the later role is within ``cut`` and above the first (or the first is not
    within ``cut``): 1, 0, 0.5 for a tie.

    >>> later_wins(None, 2, 5), later_wins(9, 2, 5), later_wins(4, 2, 5), later_wins(2, 4, 5), later_wins(2, None, 5)
    (1.0, 1.0, 1.0, 0.0, 0.0)
    """
    if later is None or later > cut:
        return 0.0
    if first is None or first > cut:
        return 1.0
    return 1.0 if later < first else 0.5 if later == first else 0.0


def _best(ranks: dict[str, int | None], steps) -> int | None:
    return min((ranks[s] for s in steps if ranks.get(s) is not None), default=None)


def _recall_fields(step, ranked: list[tuple[str, ...]] | None, depths, kept: list[int], budgets,
                   prefix: str) -> dict:
    """recall@d, session_recall@d and recall@Bt of one crediting of the ranking (None: unknown);
    for earned credit (``prefix`` "") also the any/all views, session recall at each budget and,
    with evidence roles, ``later_above@Bt`` and ``later_wins@Bt`` (module docstring)."""
    ranks = None if ranked is None else first_ranks(ranked, step.expect.recall)
    sessions = step.expect.recall_sessions
    session_ranks = []
    if sessions and ranked is not None:
        every = first_ranks(ranked, tuple(s for _, group in sessions for s in group))
        session_ranks = [_best(every, group) for _, group in sessions]
    roles = step.expect.recall_roles if ranks and len(step.expect.recall_roles) >= 2 else ()
    role_ranks = [_best(ranks, steps) for _, steps in roles]
    values = list(ranks.values()) if ranks else []

    def share(found: list, cut: int) -> float | None:
        return round(recall_at(found, cut), 4) if found else None

    out: dict = {}
    for d in depths:
        out[f"{prefix}recall@{d}"] = share(values, d)
        out[f"{prefix}session_recall@{d}"] = share(session_ranks, d)
    for b, n in zip(budgets, kept):
        out[f"{prefix}recall@{b}t"] = share(values, n)
    if prefix:
        return out
    for name, cut in [(str(d), d) for d in depths] + [(f"{b}t", n) for b, n in zip(budgets, kept)]:
        found = share(values, cut)
        out[f"recall_any@{name}"] = None if found is None else float(found > 0)
        out[f"recall_all@{name}"] = None if found is None else float(found == 1)
    for b, n in zip(budgets, kept):
        out[f"session_recall@{b}t"] = share(session_ranks, n)
        out[f"later_above@{b}t"] = later_above(role_ranks[0], role_ranks[-1], n) if roles else None
        out[f"later_wins@{b}t"] = later_wins(role_ranks[0], role_ranks[-1], n) if roles else None
    return out


def probe_fields(step, provenance: list[tuple[str, ...]], depths: tuple[int, ...], tokens: list[int] = (),
                 budgets: tuple[int, ...] = (), used_scores: list[float] = (),
                 earned: list[tuple[str, ...]] | None = None, pool: tuple[str, ...] = (), seed: int = 0,
                 used_relevance: list[float] = ()) -> dict:
    """The evidence columns of one probe row, from its ranking's provenance, earned steps
    (``mtsbench.evaluation.credit``; None: the system showed no texts, so the earned columns are
    empty) and token lengths (best first); ``used_scores``: the scores of the memories it
    used (its top k), whose best is an abstaining probe's ``abstain_score``; ``pool`` and
    ``seed``: the steps and seed of the chance baseline (``chance_recall``, on earned credit);
    ``used_relevance``: the used memories' relevance without any attention term, whose best
    is ``top_relevance`` (every probe: comparable across systems that share a relevance)."""
    out: dict = {"category": step.category, "abstain": True if step.abstain else None}
    kept = [within_budget(list(tokens), b) for b in budgets]
    out.update(_recall_fields(step, earned, depths, kept, budgets, ""))
    prov = _recall_fields(step, provenance, depths, kept, budgets, "prov_")
    out.update(prov)
    cuts = [*depths, *kept]
    names = [*(f"chance_recall@{d}" for d in depths), *(f"chance_recall@{b}t" for b in budgets)]
    chance = chance_recall(earned, pool, len(step.expect.recall), cuts, seed) \
        if earned is not None and step.expect.recall else [None] * len(cuts)
    out.update({name: None if c is None else round(c, 4) for name, c in zip(names, chance)})
    if depths:
        out["abstain_score"] = round(float(max(used_scores)), 6) if step.abstain and len(used_scores) else None
        out["top_relevance"] = round(float(max(used_relevance)), 6) if len(used_relevance) else None
    return out


def _mean(values: pd.Series) -> float | None:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return None if values.empty else round(float(values.mean()), 4)


def false_recall(probes: pd.DataFrame, threshold: float = Evaluation.abstain_threshold) -> float | None:
    """Share of the abstaining probes whose ``abstain_score`` is at least ``threshold``
    (None without abstaining probes or without the column; a probe that returned nothing
    has no score: not a false recall).

    >>> f = pd.DataFrame({"abstain": [True, True, None, True], "abstain_score": [0.7, 0.2, 0.9, None]})
    >>> false_recall(f, 0.5), false_recall(f, 0.1), false_recall(f.iloc[2:3], 0.5)
    (0.3333, 0.6667, None)
    """
    abstain = probes["abstain"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    if not abstain.any():
        return None
    if "abstain_score" not in probes:             # a table written before the column existed
        return None
    scores = pd.to_numeric(probes["abstain_score"], errors="coerce").to_numpy(dtype=float)[abstain]
    return round(float(np.mean(np.nan_to_num(scores, nan=-np.inf) >= threshold)), 4)


def _block(probes: pd.DataFrame, depths: tuple[int, ...], budgets: tuple[int, ...] = (),
           threshold: float = Evaluation.abstain_threshold) -> dict:
    first = f"prov_recall@{depths[0]}" if f"prov_recall@{depths[0]}" in probes else f"recall@{depths[0]}"
    has = pd.to_numeric(probes[first], errors="coerce").notna()
    abstain = probes["abstain"].astype("boolean").fillna(False)
    out = {"probes": int(len(probes)), "with_evidence": int(has.sum()), "abstain": int(abstain.sum()),
           "false_recall": false_recall(probes, threshold), "scored": _mean(probes["scored"]),
           **{c: _mean(probes[c]) if c in probes else None for c in ("recall", PROVENANCE)}}
    names = [*(f"recall@{d}" for d in depths), *(f"session_recall@{d}" for d in depths),
             *(f"recall@{b}t" for b in budgets), *view_columns(depths, budgets)]
    cut = cut_columns(depths, budgets)
    for c in [*names, *(f"prov_{c}" for c in cut), *(f"prov_session_recall@{d}" for d in depths),
              *(f"chance_{c}" for c in cut)]:
        out[c] = _mean(probes[c]) if c in probes else None
    return out


def summarize(frame: pd.DataFrame, depths: tuple[int, ...], budgets: tuple[int, ...] = (),
              abstain_threshold: float | None = None) -> dict | None:
    """Evidence recall of a metrics table's probes: overall, ``by_category`` and, when the table
    holds two data sets or more (its ``dataset`` column: imported LoCoMo and BEAM, the bundled
    scenarios, ...), ``by_dataset`` (None without depths); ``false_recall`` of the abstaining
    probes at ``abstain_threshold`` (None: the default). Each block also has ``recall``, earned
    recall at each probe's own k, and ``recall_provenance@k``."""
    if not depths or f"recall@{depths[0]}" not in frame:
        return None
    threshold = Evaluation.abstain_threshold if abstain_threshold is None else float(abstain_threshold)
    probes = frame[frame["check"] == "probe"]
    budgets = tuple(b for b in budgets if f"recall@{b}t" in frame)
    out = {"depths": list(depths), **({"budgets": list(budgets)} if budgets else {}),
           "abstain_threshold": threshold, **_block(probes, depths, budgets, threshold), "by_category": {}}
    categories = probes["category"].dropna()
    for category in sorted(set(categories.astype(str))):
        out["by_category"][category] = _block(probes[probes["category"].astype(str) == category], depths, budgets,
                                              threshold)
    names = sorted(set(probes["dataset"].dropna().astype(str))) if "dataset" in probes else []
    if len(names) > 1:
        out["by_dataset"] = {name: _block(probes[probes["dataset"].astype(str) == name], depths, budgets, threshold)
                             for name in names}
    return out


SATURATED = ("every recall is at its ceiling (1.000): these probes are too easy to show what a mechanism "
             "does to recall, so an ablation can differ only in cost and expectations; add probes that can "
             "fail (a generated multi-week dialogue: mtsbench generate; imported data: docs/datasets.md)")


def saturated(values) -> bool:
    """Whether every known recall figure is 1 (at least one known): recall cannot separate.

    >>> saturated([1.0, 1.0, None]), saturated([1.0, 0.95]), saturated([None])
    (True, False, False)
    """
    known = [float(v) for v in values if v is not None and v == v]
    return bool(known) and all(v >= 1.0 for v in known)


def saturation_line(evidence: dict | None) -> str | None:
    """The warning of a run whose earned recall (at k, every depth and budget) is all 1."""
    if not evidence or not evidence.get("with_evidence"):
        return None
    keys = ["recall", *cut_columns(evidence["depths"], evidence.get("budgets", []))]
    return f"warning: {SATURATED}" if saturated([evidence.get(k) for k in keys]) else None


def false_recall_line(evidence: dict) -> str | None:
    """One sentence on the abstaining probes' false recall (None without abstaining probes)."""
    if evidence.get("false_recall") is None:
        return None
    return (f"false recall of the {evidence['abstain']} abstaining probes: {evidence['false_recall']:.3f} "
            f"(share whose top k holds a memory scoring >= {evidence['abstain_threshold']:g})")


def table_rows(evidence: dict, prefix: str = "") -> tuple[list[str], list[list[str]]]:
    """Header and rows (each category, then ``all``, then ``all: DATASET`` for each data set
    when there are several: never pooled alone) of the evidence recall table: earned credit
    (``prefix`` ""), provenance-only (``prov_``) or the chance baseline (``chance_``)."""
    depths, budgets = evidence["depths"], evidence.get("budgets", [])
    sessions = prefix != "chance_" and any(evidence.get(f"{prefix}session_recall@{d}") is not None for d in depths)
    own = {"": "recall", "prov_": PROVENANCE}.get(prefix)      # recall at each probe's own k
    head = ["category", "probes", "evidence", "abstain", *(["R@k"] if own else []), *(f"R@{d}" for d in depths),
            *(f"sR@{d}" for d in depths if sessions), *(f"R@{b}t" for b in budgets), "scored"]

    def row(name, block):
        cells = [name, block["probes"], block["with_evidence"], block["abstain"], *([block.get(own)] if own else []),
                 *(block.get(f"{prefix}recall@{d}") for d in depths),
                 *(block.get(f"{prefix}session_recall@{d}") for d in depths if sessions),
                 *(block.get(f"{prefix}recall@{b}t") for b in budgets), block["scored"]]
        return ["-" if c is None else f"{c:.3f}" if isinstance(c, float) else str(c) for c in cells]

    rows = [row(c, b) for c, b in evidence["by_category"].items()] + [row("all", evidence)]
    rows += [row(f"all: {name}", b) for name, b in (evidence.get("by_dataset") or {}).items()]
    return head, rows


def _all_line(evidence: dict, prefix: str) -> str:
    depths, budgets = evidence["depths"], evidence.get("budgets", [])
    cells = [(f"R@{d}", evidence.get(f"{prefix}recall@{d}")) for d in depths] + \
        [(f"R@{b}t", evidence.get(f"{prefix}recall@{b}t")) for b in budgets]
    return "  ".join(f"{n} {'-' if v is None else f'{v:.3f}'}" for n, v in cells)


def console(evidence: dict | None) -> str:
    """Evidence recall@k per category (earned credit) and memories scored per probe, aligned
    for a terminal, with the chance baseline and the provenance-only figures of all probes."""
    if not evidence or not evidence["probes"]:
        return ""
    head, rows = table_rows(evidence)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [head, *rows]]
    note = ("evidence recall@k, earned credit (R@k: share of evidence steps whose content a memory in the top k "
            "carries, at each probe's own k and at 5, 10, ...; sR@k: of evidence sessions; R@Bt: within a context of "
            "B tokens) and memories scored per probe:")
    extra = false_recall_line(evidence)
    tail = [f"chance (same rankings, random evidence):  {_all_line(evidence, 'chance_')}",
            f"provenance-only credit (older figures):   {_all_line(evidence, 'prov_')}"]
    ceiling = saturation_line(evidence)
    return "\n".join([*([extra] if extra else []), note, *lines, *tail, *([ceiling] if ceiling else [])])


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def markdown(evidence: dict | None) -> list[str]:
    """The report.md section (empty without probes)."""
    if not evidence or not evidence["probes"]:
        return []
    ceiling = saturation_line(evidence)
    lines = ["## Evidence recall", "", *([f"**{ceiling[len('warning: '):].capitalize()}.**", ""] if ceiling else []),
             "Share of each probe's evidence steps found in the top k of its ranking (`R@k`: at the probe's own "
             "k, the headline `recall`, and at fixed depths `R@5`, ...; `sR@k` for "
             "evidence sessions; `R@Bt` within a context budget of B tokens, the fair view when memories "
             "differ in size), mean over probes with evidence; `all: NAME` rows keep each data set apart when "
             "the run mixes several; `scored` = memories scored per probe; "
             "abstaining probes count in `probes` and `scored` only. A memory counts for an evidence step "
             "only if its provenance names the step and its text holds at least `evaluation.earned_share` "
             "(default 0.5) of the step's content words (earned credit, `mtsbench.evaluation.credit`).", "", *_md_table(*table_rows(evidence)), "",
             "**Chance baseline** — the same rankings scored against evidence steps drawn at random from the "
             "steps observed before each probe (what coverage alone buys):", "",
             *_md_table(*table_rows(evidence, "chance_")), "",
             "**Provenance-only credit** (any memory whose provenance names the step; the figure reported "
             "before earned credit, kept for comparison):", "", *_md_table(*table_rows(evidence, "prov_"))]
    extra = false_recall_line(evidence)
    return lines + ([""] + [extra[0].upper() + extra[1:] + "."] if extra else []) + [""]
