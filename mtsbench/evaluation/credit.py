"""Evidence credit that a memory's text earns (issue 25, item 0).

Provenance alone over-credits: a summary lists every turn it summarized, though its text
may keep a few words of each. A ranked memory m **earns** an evidence step s only when s
is in m's provenance *and* m's text carries at least ``share`` of s's content words::

    carried(m, s) = |W(text_m) ∩ W(text_s)| / |W(text_s)|
    earned(m)     = {s in provenance(m) : carried(m, s) >= share}     (share: evaluation.earned_share)

with W(x) the set of x's content tokens: ``mtsbench.evaluation.answer.tokens`` (SQuAD normalisation —
lower case, punctuation and articles dropped; Chinese split into characters) minus
``FUNCTION_WORDS``. No stemming: "went" and "attended" share nothing. A step whose text has
no content token (or that has no text) is carried by any memory naming it. Steps outside
the scenario (pre-loaded memories' ``preload``) are never earned.

What this means for the kinds of memory (tested on hand-made cases): a verbatim turn
carries all of it (1.0); a summary made of each turn's first sentence carries a one-
sentence turn, and usually not a longer one; a fact extracted from the turn earns it when
it restates at least half the turn's content words; a memory whose provenance names the
turn but whose text is about something else earns nothing.

Recall computed from ``earned`` is the headline (``recall@k``, ``recall@Bt``); recall from
provenance alone stays in ``prov_recall@k`` so older results remain comparable.
"""

from __future__ import annotations

from ..config.options import Evaluation
from ..llm.heuristics import FUNCTION_WORDS
from .answer import tokens

__all__ = ["EvidenceCredit", "carried", "content_words"]


def content_words(text: str | None) -> frozenset[str]:
    """The content tokens of ``text`` (module docstring).

    >>> sorted(content_words("Ana: I joined the chess club downtown!"))
    ['ana', 'chess', 'club', 'downtown', 'joined']
    >>> sorted(content_words("他对牛奶过敏"))
    ['他', '奶', '对', '敏', '牛', '过']
    """
    return frozenset(t for t in tokens(text or "") if t not in FUNCTION_WORDS)


def carried(memory_words: frozenset[str], step_words: frozenset[str]) -> float:
    """The share of a step's content words that a memory's text holds (1 for a step without any).

    >>> carried(frozenset({"a", "b"}), frozenset({"a", "b", "c", "d"})), carried(frozenset(), frozenset())
    (0.5, 1.0)
    """
    return len(memory_words & step_words) / len(step_words) if step_words else 1.0


class EvidenceCredit:
    """Which of a ranked memory's provenance steps its text earns.

    ``texts``: step id -> the step's text (the scenario's observed steps); ``share``: the
    least share of a step's content words the memory text must hold. Word sets are computed
    once per step and once per distinct memory text, on first use (a memory is ranked by
    many probes: tokenizing its text again for each was most of an evaluated run's time).

    >>> credit = EvidenceCredit({"t1": "Mel: I adopted a puppy named Oscar.", "t2": "Mel: Nice weather today."})
    >>> credit.earned("Mel adopted a puppy, Oscar.", ("t1", "t2"))
    ('t1',)
    >>> credit.earned("Something else entirely.", ("t1",)), credit.earned("x", ("preload",))
    ((), ())
    """

    def __init__(self, texts: dict[str, str], share: float = Evaluation.earned_share):
        self.texts = texts
        self.share = share
        self.words_: dict[str, frozenset[str]] = {}
        self.memory_words_: dict[str, frozenset[str]] = {}

    def _words(self, step: str) -> frozenset[str] | None:
        if step not in self.words_:
            if step not in self.texts:
                return None
            self.words_[step] = content_words(self.texts[step])
        return self.words_[step]

    def earned(self, text: str, provenance: tuple[str, ...]) -> tuple[str, ...]:
        """The steps of ``provenance`` that ``text`` carries (module docstring), in order."""
        have = self.memory_words_.get(text)
        if have is None:
            have = self.memory_words_[text] = content_words(text)
        out = []
        for step in provenance:
            words = self._words(step)
            if words is not None and carried(have, words) >= self.share:
                out.append(step)
        return tuple(out)

    def ranking(self, texts: list[str], provenance: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """``earned`` of each ranked memory (``texts`` and ``provenance`` aligned)."""
        return [self.earned(t, tuple(p)) for t, p in zip(texts, provenance)]
