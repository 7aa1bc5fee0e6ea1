"""Answers scored end to end (issue 15, item 5): the ``answer`` config node.

With ``answer.enabled`` a probe that carries a gold ``answer`` (the LoCoMo and LongMemEval
importers keep it) is scored on what it retrieved, right after the probe, from the texts of
the memories it used (its context, at most k), each text once (``distinct_context``: a
summary stored four times fills one place, and the places it frees go to the next memories
of the ranking within the used memories' token budget):

- ``answer_proxy`` — **an LLM-free proxy, not an answer score**: the share of the gold
  answer's content tokens that occur in the context,
  ``|content(gold) ∩ tokens(context)| / |content(gold)|`` (tokens as for F1 below, content =
  not in ``FUNCTION_WORDS``; in Chinese every CJK character is a token). It says whether the
  answer *could* be read off the retrieved memories. Computed for every backend, the mock
  included (it costs no call).
- ``answer_f1`` — the backend's ``answer`` task answers the question from the context; the
  SQuAD token F1 against the gold answer (the LoCoMo paper's metric)::

      P = |common| / |tokens(answer)|,  R = |common| / |tokens(gold)|,  F1 = 2PR / (P + R)

  with ``common`` the multiset intersection of the two token lists, and F1 = 1 when both
  are empty. Normalisation (SQuAD's): lower case, punctuation removed, the articles a, an,
  the dropped, whitespace split; Chinese text (any CJK character in it) is split into
  characters, CJK punctuation removed, Latin words kept whole. Only a backend with an
  ``answer`` task answers (``openai``, ``local``, ``replay``); the mock has none, so
  ``answer_f1`` stays empty with it: the proxy stands in.
- ``judge`` — with ``answer.judge`` also, the backend's ``judge_answer`` task (LLM-as-judge,
  as Mem0 and Zep report J-scores) says whether the answer states what the gold one does:
  1 or 0.

The answer and judge calls are metered like every task (``by_task.answer``,
``by_task.judge_answer``) and count in the probe step's own LLM cost. Off by default: the
bundled runs and their cost do not change.

``budget`` (tokens; null: the k memories the probe used) makes the context the ranking's
memories best first while their tokens fit in it, each text once, the first that would
overflow ending the walk -- the context ``recall@Bt`` scores, so that systems whose memories
differ in length answer from the same amount of text. ``categories`` (empty: all) answers
only the probes of those categories (a real model's answers cost seconds each). The
answerer is the system's LLM; ``llm=routed`` sends only the answer and judge calls to a
model (``mtsbench.llm.routed``).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from ..core.costs import scope
from ..llm.heuristics import FUNCTION_WORDS
from ..core.params import Count, Text, declared

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CJK = re.compile(r"[\u3400-\u9fff]")
_PUNCT = set(string.punctuation)


def _is_punct(ch: str) -> bool:
    return ch in _PUNCT or unicodedata.category(ch).startswith("P")


class _DropPunctuation(dict):
    """A ``str.translate`` table that deletes punctuation: each character is classified once
    (``_is_punct``) and cached, so translating runs at C speed on characters seen before."""

    def __missing__(self, code: int):
        self[code] = value = None if _is_punct(chr(code)) else code
        return value


_DROP_PUNCTUATION = _DropPunctuation()


def tokens(text: str) -> list[str]:
    """SQuAD-normalised tokens (module docstring); CJK text as characters.

    >>> tokens("The Cat's  hat!"), tokens("他养了一只猫，叫 Vessa。")
    (['cats', 'hat'], ['他', '养', '了', '一', '只', '猫', '叫', 'vessa'])
    """
    text = str(text).lower().translate(_DROP_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    out: list[str] = []
    for word in text.split():
        if _CJK.search(word):
            out += re.findall(r"[\u3400-\u9fff]|[^\u3400-\u9fff]+", word)
        else:
            out.append(word)
    return out


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 of ``prediction`` against ``gold`` (module docstring).

    >>> token_f1("a red bicycle", "The red bike"), token_f1("Vessa", "vessa."), token_f1("", "")
    (0.5, 1.0, 1.0)
    """
    p, g = tokens(prediction), tokens(gold)
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return round(2 * precision * recall / (precision + recall), 4)


def context_proxy(context: Sequence[str], gold: str) -> float | None:
    """The answer proxy: the share of the gold answer's content tokens found in ``context``
    (None when the gold answer has no content token).

    >>> context_proxy(["Kim's cat is called Vessa.", "Kim lives in Oslo."], "Vessa, in Oslo")
    1.0
    >>> context_proxy(["Kim lives in Oslo."], "Vessa in Bergen"), context_proxy(["x"], "the")
    (0.0, None)
    """
    want = [t for t in tokens(gold) if t not in FUNCTION_WORDS]
    if not want:
        return None
    have = set(t for text in context for t in tokens(text))
    return round(sum(t in have for t in want) / len(want), 4)


@declared(node="answer")
@dataclass(frozen=True)
class Answering:
    """The ``answer`` config node: score probes' answers (``enabled``), and judge them too."""

    enabled: bool = False
    judge: bool = False
    budget: Count | None = None            # tokens of context (null: the k memories the probe used)
    categories: list[Text] = field(default_factory=list)     # answer only these categories' probes (empty: all)

    @classmethod
    def from_config(cls, node) -> "Answering":
        """The node's settings (all off when it is missing); a one-line ConfigError on a bad value."""
        from omegaconf import OmegaConf

        return cls(**({} if node is None else OmegaConf.to_container(node) if OmegaConf.is_config(node)
                      else dict(node)))

    def wants(self, step) -> bool:
        """Is ``step`` (a probe) one to answer: enabled, and of a listed category when any is listed?"""
        return self.enabled and (not self.categories or getattr(step, "category", None) in self.categories)


def score_probe(llm, question: str, gold: str | None, context: Sequence[str], language: str = "en",
                judge: bool = False) -> dict:
    """The answer fields of one probe: ``answer`` (the model's, or None), ``answer_f1``,
    ``answer_proxy`` and ``judge`` (None where not computed; see the module docstring).
    ``llm`` answers only if it has an ``answer`` task; a failed call leaves None."""
    out = {"answer": None, "answer_f1": None, "answer_proxy": None, "judge": None}
    if gold is None or not str(gold).strip():
        return out
    gold = str(gold)
    out["answer_proxy"] = context_proxy(context, gold)
    if llm is None or not callable(getattr(llm, "answer", None)):
        return out
    reply = llm.answer(question, list(context), language)
    if reply is None:
        return out
    out["answer"], out["answer_f1"] = reply, token_f1(reply, gold)
    if judge:
        verdict = llm.judge_answer(question, gold, reply, language)
        out["judge"] = None if verdict is None else float(verdict)
    return out


def distinct_context(texts: Sequence[str], used: int, tokens: Sequence[int] = (),
                     budget: int | None = None) -> list[str]:
    """A probe's context from its ranking's ``texts`` (best first): each text once (whitespace
    collapsed to compare), at most ``used`` of them, and no more tokens than the first ``used``
    memories had (``tokens``, per ranked memory; none given: no budget) -- or, given a
    ``budget``, no more tokens than it.

    >>> distinct_context(["A summary.", "A  summary.", "Kim lives in Oslo.", "A summary.", "Kim has a cat."], 4)
    ['A summary.', 'Kim lives in Oslo.', 'Kim has a cat.']
    >>> distinct_context(["a", "a", "b", "c c c c"], 2, [1, 1, 1, 4])
    ['a', 'b']
    >>> distinct_context(["a", "a", "b", "c c c c", "d"], 5, [1, 1, 1, 4, 1], budget=5)   # c would overflow: the walk ends
    ['a', 'b']
    """
    if budget is None:
        budget = sum(tokens[:used]) if len(tokens) >= used else None
    out: list[str] = []
    seen: set[str] = set()
    spent = 0
    for i, text in enumerate(texts):
        if len(out) == used:
            break
        key = " ".join(str(text).split())
        if key in seen:
            continue
        cost = tokens[i] if budget is not None else 0
        if budget is not None and spent + cost > budget:
            break
        seen.add(key)
        spent += cost
        out.append(text)
    return out


COLUMNS = ("answer_f1", "answer_proxy", "judge")     # per probe, in metrics.csv when any probe has them


def answer_step(system, step, outcome, answering: Answering, language: str = "en") -> None:
    """Score a probe's answer into ``outcome.answer`` (``score_probe``'s fields), from the texts
    of the memories it used (``system.context_texts``) with the system's ``answer_llm``; the
    calls' cost (charged to a cost scope around them, ``mtsbench.core.costs``) is added to the
    step's own. Nothing without a gold ``answer`` on the step, with answering off, or for a
    system that cannot give its memories' texts."""
    gold = getattr(step, "answer", None)
    r = outcome.ranking
    texts_of = getattr(system, "context_texts", None)
    if not answering.wants(step) or gold is None or r is None or texts_of is None:
        return
    used = min(step.expect.k, len(r.ids)) if r.used is None else r.used
    llm = getattr(system, "answer_llm", None)
    if answering.budget is not None:
        context = distinct_context(texts_of(r.ids), len(r.ids), r.tokens, answering.budget)
    else:
        context = distinct_context(texts_of(r.ids), used, r.tokens)
    with scope() as spent:        # the answer and judge calls, charged to the probe
        outcome.answer = score_probe(llm, step.text, gold, context, language, answering.judge)
    c = outcome.cost
    c.llm_calls += spent["calls"]
    c.tokens += spent["tokens"]
    c.prompt_tokens += spent["prompt_tokens"]
    c.completion_tokens += spent["completion_tokens"]
    c.llm_retries += spent["retries"]
    c.llm_failures += spent["failures"]


def summarize(rows) -> dict | None:
    """The answer block of ``summary.json``: the probes scored, the mean ``answer_f1``, the
    mean ``answer_proxy`` (the LLM-free proxy) and the judge's accuracy; None when no probe
    was scored (answering off, or no probe with a gold answer)."""
    import pandas as pd

    if "answer_proxy" not in rows:
        return None
    probes = rows[rows["check"] == "probe"]
    scored = probes[probes[[c for c in COLUMNS if c in probes]].notna().any(axis=1)]
    if scored.empty:
        return None

    def mean(column: str) -> float | None:
        if column not in scored:
            return None
        values = pd.to_numeric(scored[column], errors="coerce").dropna()
        return None if values.empty else round(float(values.mean()), 4)

    return {"probes": int(len(scored)), "answer_f1": mean("answer_f1"), "answer_proxy": mean("answer_proxy"),
            "judge": mean("judge")}
