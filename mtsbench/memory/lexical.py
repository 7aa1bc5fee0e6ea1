"""BM25 over the tiers: an incremental inverted index with one set of postings per tier.

``LexicalTiers`` wraps a tier index (``SharedGraphIndex`` or ``TierIndexes``: every call
is forwarded to it, so the memory facade and arousal see the same index) and mirrors its
membership changes — ``add``, ``move``, ``update``, ``remove`` — in BM25 postings filed
per tier. ``lexical(tier, terms)`` scores the memories of one tier that share a term with
the query, reading only that tier's postings of the query's terms::

    bm25(q, d) = sum over the distinct terms t of q of
                 qtf(t) * idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

qtf(t): occurrences of t in the query; N: live memories; df(t): live memories holding t;
|d|: a memory's length in tokens; avgdl: the mean over the live memories. This is the
Lucene variant as ``bm25s`` computes it (``method="lucene"``; ``systems.bm25`` uses that
library): N, df and avgdl are the whole store's, so a memory scores the same in every
tier and the score equals a from-scratch ``bm25s`` index of the live memories (tested).

Why not ``bm25s`` itself here: it indexes a whole corpus at once (``systems.bm25``
rebuilds it when memories were added since the last query, O(store) per rebuild) and
always scores every document; memory here is written between every two searches and
searched one tier at a time. This index costs per insert the memory's distinct terms (one
posting each) and per query the postings of the query's terms in the tier searched:
a query's cost grows with what it touches, not with the store. Statistics (N, df,
total length) are kept as counters, so idf and avgdl are always current.

Tokens are ``tokenize`` (English words less stop words; CJK characters and adjacent
pairs), the same as ``system=bm25``.

Postings are append-only numpy-backed arrays (``array.array``) per (tier, term) holding
(memory, filing, tf). A memory's *filing* number changes each time it is filed (added,
moved, rewritten), so a posting is valid iff its filing is the memory's current one: a
move appends the memory's postings to the new tier's lists and leaves the old ones stale,
never searching a list to delete. A tier's lists are rebuilt from its valid postings once
more than half of them (and over ``compact_above``, 1,024) are stale: amortised O(1) per posting written.

Work (``lexical_work_``, ``LexicalWork``): ``postings_read`` (every posting a query reads, valid
or stale: the unit a search's ``scored`` counts), ``postings_written`` (at add, move,
rewrite and compaction), ``compactions``.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..embed.hashing import STOP_WORDS
from .index import IdMap

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")    # the hashing embedder's word pattern
_CJK = re.compile(r"[\u3400-\u9fff]")


def tokenize(text: str) -> list[str]:
    """The BM25 tokens of ``text``, in order: lower-cased words of Latin letters and digits,
    less stop words; in a run of CJK characters each character (less the stop characters)
    and each pair of adjacent characters.

    >>> tokenize("I am allergic to MILK, 2 glasses")
    ['allergic', 'milk', '2', 'glasses']
    >>> tokenize("我对牛奶过敏")
    ['对', '牛', '奶', '过', '敏', '我对', '对牛', '牛奶', '奶过', '过敏']
    """
    out: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if _CJK.match(run):
            out += [c for c in run if c not in STOP_WORDS]
            out += [a + b for a, b in zip(run, run[1:])]
        elif run not in STOP_WORDS:
            out.append(run)
    return out


def bm25_idf(df: np.ndarray, n: float) -> np.ndarray:
    """Lucene's idf: ln(1 + (N - df + 0.5) / (df + 0.5)).

    >>> bm25_idf(np.array([1, 2]), 3).round(4).tolist()
    [0.9808, 0.47]
    """
    df = np.asarray(df, dtype=float)
    return np.log1p((n - df + 0.5) / (df + 0.5))


@dataclass
class LexicalWork:
    """Lexical index work so far (see the module docstring)."""

    postings_read: int = 0
    postings_written: int = 0
    compactions: int = 0


@dataclass
class QueryTerms:
    """A query's terms known to the index (ids, occurrences) and its BM25 bound
    ``sum qtf * idf`` (no memory reaches it: the normaliser of ``relevance.Bm25``)."""

    terms: np.ndarray
    qtf: np.ndarray
    idf: np.ndarray

    @property
    def bound(self) -> float:
        return float(np.sum(self.qtf * self.idf))


class _Postings:
    """One (tier, term) list: memory ids, filing numbers and term frequencies."""

    __slots__ = ("docs", "filings", "tfs")

    def __init__(self):
        self.docs, self.filings, self.tfs = array("q"), array("q"), array("l")


class LexicalTiers:
    """A tier index with BM25 postings per tier (see the module docstring).

    >>> from mtsbench.memory.index import TierIndexes
    >>> from mtsbench.memory.store import MemoryStore
    >>> s = MemoryStore(dim=2)
    >>> ids = s.add_many(["milk allergy", "cat", "milk tea"], "turn", created=0.0, vectors=np.eye(2)[[0, 1, 1]],
    ...                  provenance=[(), (), ()])
    >>> lx = LexicalTiers(TierIndexes(2, 2), s)
    >>> lx.add(0, ids[:2], s.vectors[0:2]); lx.add(1, ids[2:], s.vectors[2:3])
    >>> q = lx.terms("milk?")
    >>> [(t, i.tolist()) for t in (0, 1) for i in [lx.lexical(t, q)[0]]]
    [(0, [0]), (1, [2])]
    >>> lx.move(np.array([2]), np.array([1]), np.array([0]), s.vectors[2:3]); lx.lexical(0, q)[0].tolist()
    [0, 2]
    >>> lx.sizes(), lx.lexical_work_.postings_written
    ([3, 0], 7)
    """

    def __init__(self, inner, store, k1: float = 1.5, b: float = 0.75, compact_above: int = 1024):
        self.inner = inner
        self.store = store
        self.k1 = k1
        self.b = b
        self.compact_above = compact_above
        self.vocab_: dict[str, int] = {}
        self.df_ = IdMap(np.int64, 0)               # term id -> live memories holding it
        self.n_docs_ = 0                            # live memories indexed
        self.total_len_ = 0                         # their summed lengths in tokens
        self.doc_terms_: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # memory -> (term ids, tfs)
        self.doc_len_ = IdMap(np.float64, 0.0)
        self.filed_ = IdMap(np.int64, -1)           # memory -> tier whose lists hold its valid postings
        self.filing_ = IdMap(np.int64, -1)          # memory -> its current filing number
        self.next_filing_ = 0
        self.postings_: list[dict[int, _Postings]] = [{} for _ in range(inner.n_tiers)]
        self.valid_ = [0] * inner.n_tiers           # valid postings per tier
        self.total_ = [0] * inner.n_tiers           # all postings per tier (valid + stale)
        self.stale_terms_: list[set[int]] = [set() for _ in range(inner.n_tiers)]   # lists holding stale postings
        self.lexical_work_ = LexicalWork()

    # -- forwarding: this is the tier index --------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def work_(self):
        return self.inner.work_

    @property
    def n_tiers(self) -> int:
        return self.inner.n_tiers

    @property
    def tiers(self):
        return self.inner.tiers

    def sizes(self) -> list[int]:
        return self.inner.sizes()

    def add(self, tier: int, ids: np.ndarray, vectors: np.ndarray) -> None:
        self.inner.add(tier, ids, vectors)
        for i in np.asarray(ids, dtype=np.int64).tolist():
            if i not in self.doc_terms_:
                self._index(i)
            self._file(i, tier)

    def move(self, ids: np.ndarray, old: np.ndarray, new: np.ndarray, vectors: np.ndarray) -> None:
        self.inner.move(ids, old, new, vectors)
        for i, t in zip(np.asarray(ids, dtype=np.int64).tolist(), np.asarray(new).tolist()):
            self._unfile(i)
            self._file(i, int(t))

    def update(self, tier: int, i: int, vector: np.ndarray) -> None:
        """Memory ``i`` was rewritten: its new text replaces the old in statistics and postings."""
        self.inner.update(tier, i, vector)
        self._unfile(i)
        self._unindex(i)
        self._index(i)
        self._file(i, tier)

    def remove(self, tier: int, i: int) -> None:
        self.inner.remove(tier, i)
        self._unfile(i)
        self._unindex(i)

    # -- statistics and postings ---------------------------------------------------------------
    def _term_ids(self, tokens: list[str], grow: bool) -> Counter:
        counts = Counter()
        for tok in tokens:
            j = self.vocab_.get(tok)
            if j is None and grow:
                j = self.vocab_[tok] = len(self.vocab_)
            if j is not None:
                counts[j] += 1
        return counts

    def _index(self, i: int) -> None:
        tokens = tokenize(self.store.text[i])
        counts = self._term_ids(tokens, grow=True)
        terms = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tfs = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
        self.doc_terms_[i] = (terms, tfs)
        self.doc_len_[np.array([i])] = len(tokens)
        self.df_[terms] = self.df_[terms] + 1
        self.n_docs_ += 1
        self.total_len_ += len(tokens)

    def _unindex(self, i: int) -> None:
        if i not in self.doc_terms_:
            return
        terms, _ = self.doc_terms_.pop(i)
        self.df_[terms] = self.df_[terms] - 1
        self.n_docs_ -= 1
        self.total_len_ -= int(self.doc_len_[np.array([i])][0])

    def _file(self, i: int, tier: int) -> None:
        terms, tfs = self.doc_terms_[i]
        f = self.next_filing_
        self.next_filing_ += 1
        lists = self.postings_[tier]
        for t, tf in zip(terms.tolist(), tfs.tolist()):
            p = lists.get(t)
            if p is None:
                p = lists[t] = _Postings()
            p.docs.append(i)
            p.filings.append(f)
            p.tfs.append(tf)
        idx = np.array([i])
        self.filed_[idx], self.filing_[idx] = tier, f
        self.valid_[tier] += len(terms)
        self.total_[tier] += len(terms)
        self.lexical_work_.postings_written += len(terms)

    def _unfile(self, i: int) -> None:
        idx = np.array([i])
        tier = int(self.filed_[idx][0])
        if tier < 0:
            return
        self.filed_[idx], self.filing_[idx] = -1, -1
        terms = self.doc_terms_[i][0]
        self.valid_[tier] -= len(terms)
        self.stale_terms_[tier].update(terms.tolist())
        stale = self.total_[tier] - self.valid_[tier]
        if stale > max(self.valid_[tier], self.compact_above):
            self._compact(tier)

    def _compact(self, tier: int) -> None:
        """Rebuild one tier's lists from their valid postings (same order, same filings). Only
        the lists a memory left since the last compaction can hold stale postings
        (``stale_terms_``); the others are kept as they are."""
        lists = self.postings_[tier]
        for t in self.stale_terms_[tier]:
            p = lists.get(t)
            if p is None:
                continue
            docs, filings = np.frombuffer(p.docs, dtype=np.int64), np.frombuffer(p.filings, dtype=np.int64)
            keep = self.filing_[docs] == filings
            if keep.all():
                continue
            if not keep.any():
                del lists[t]
                continue
            q = lists[t] = _Postings()
            q.docs.frombytes(docs[keep].tobytes())
            q.filings.frombytes(filings[keep].tobytes())
            q.tfs.extend(np.array(p.tfs, dtype=np.int64)[keep].tolist())
        self.stale_terms_[tier] = set()
        self.total_[tier] = self.valid_[tier]
        self.lexical_work_.postings_written += self.valid_[tier]
        self.lexical_work_.compactions += 1

    # -- queries -------------------------------------------------------------------------------
    def terms(self, text: str) -> QueryTerms:
        """The query's terms the store holds (df > 0), sorted by term id, with their idf now."""
        counts = self._term_ids(tokenize(text), grow=False)
        terms = np.array(sorted(counts), dtype=np.int64)
        qtf = np.array([counts[t] for t in terms.tolist()], dtype=float)
        df = self.df_[terms]
        live = df > 0
        terms, qtf, df = terms[live], qtf[live], df[live]
        return QueryTerms(terms, qtf, bm25_idf(df, self.n_docs_))

    def lexical(self, tier: int, q: QueryTerms) -> tuple[np.ndarray, np.ndarray, int]:
        """(ids sorted, BM25 scores, postings read) of the members of ``tier`` sharing a term
        with the query; reads only that tier's lists of the query's terms."""
        lists = self.postings_[tier]
        docs, contrib, read = [], [], 0
        avgdl = self.total_len_ / self.n_docs_ if self.n_docs_ else 1.0
        for t, qtf, idf in zip(q.terms.tolist(), q.qtf.tolist(), q.idf.tolist()):
            p = lists.get(t)
            if p is None:
                continue
            d = np.array(p.docs, dtype=np.int64)
            read += len(d)
            keep = self.filing_[d] == np.array(p.filings, dtype=np.int64)
            d = d[keep]
            tf = np.array(p.tfs, dtype=float)[keep]
            norm = self.k1 * (1.0 - self.b + self.b * self.doc_len_[d] / avgdl)
            docs.append(d)
            contrib.append(qtf * idf * tf / (tf + norm))
        self.lexical_work_.postings_read += read
        if not docs:
            return np.zeros(0, dtype=np.int64), np.zeros(0), read
        ids, inv = np.unique(np.concatenate(docs), return_inverse=True)
        return ids, np.bincount(inv, weights=np.concatenate(contrib), minlength=len(ids)), read


__all__ = ["tokenize", "bm25_idf", "LexicalTiers", "LexicalWork", "QueryTerms"]
