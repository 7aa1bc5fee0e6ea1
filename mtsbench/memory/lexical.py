"""BM25 over the tiers: an incremental inverted index over every memory, with a tier mark per memory.

``LexicalTiers`` wraps a tier index (``SharedGraphIndex`` or ``TierIndexes``: every call
is forwarded to it, so the memory facade and arousal see the same index) and mirrors its
membership changes — ``add``, ``move``, ``update``, ``remove`` — in BM25 postings and in a
tier mark per memory, as the shared graph marks its nodes (``memory.graph_index``).
``lexical(tier, terms)`` scores the memories of one tier that share a term with the query::

    bm25(q, d) = sum over the distinct terms t of q of
                 qtf(t) * idf(t) * tf(t, d) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

qtf(t): occurrences of t in the query; N: live memories; df(t): live memories holding t;
|d|: a memory's length in tokens; avgdl: the mean over the live memories. This is the
Lucene variant as ``bm25s`` computes it (``method="lucene"``; ``systems.bm25`` uses that
library): N, df and avgdl are the whole store's, so a memory scores the same in every
tier and the score equals a from-scratch ``bm25s`` index of the live memories (tested).

Why not ``bm25s`` itself here: it indexes a whole corpus at once and always scores every
document; memory here is written between every two searches. This index costs per insert
the memory's distinct terms (one posting each) and per query the postings of the query's
terms: a query's cost grows with what it touches, not with the store. Statistics (N, df,
total length) are kept as counters, so idf and avgdl are always current.

Tokens are ``tokenize`` (English words less stop words; CJK characters and adjacent
pairs), the same as ``system=bm25``.

**One set of postings, a tier mark per memory.** Postings are append-only arrays
(``array.array``) per term holding (memory, filing, tf), over every tier. A tier move
changes only the memory's mark (``tier_``): no posting is written, so the design's
promotions and demotions (several a message under arousal) cost O(1) each rather than one
posting per distinct term of the memory. The first ``lexical`` call of a query
(``QueryTerms``) reads its terms' postings once, scores every memory found, and keeps the
result for the query; each tier call then picks the memories marked with that tier. A
search reading several tiers thus reads each posting once (charged at its first tier call),
and a search of one tier reads the postings of the other tiers too: the price of moves that
write nothing, as a shared graph's filtered search visits nodes of other tiers.

A memory's *filing* number changes each time it is filed (added, rewritten), so a posting
is valid iff its filing is the memory's current one: a rewrite or a removal leaves the old
postings stale, never searching a list to delete. The lists holding stale postings are
rebuilt from their valid ones once more than half of all postings (and over
``compact_above``, 1,024) are stale: amortised O(1) per posting written.

Work (``lexical_work_``, ``LexicalWork``): ``postings_read`` (every posting a query reads, valid
or stale: the unit a search's ``scored`` counts), ``postings_written`` (at add, rewrite and
compaction), ``compactions``.
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
    """One term's list: memory ids, filing numbers and term frequencies."""

    __slots__ = ("docs", "filings", "tfs")

    def __init__(self):
        self.docs, self.filings, self.tfs = array("q"), array("q"), array("l")


class LexicalTiers:
    """A tier index with BM25 postings and a tier mark per memory (see the module docstring).

    >>> from mtsbench.memory.index import TierIndexes
    >>> from mtsbench.memory.store import MemoryStore
    >>> s = MemoryStore(dim=2)
    >>> ids = s.add_many(["milk allergy", "cat", "milk tea"], "turn", created=0.0, vectors=np.eye(2)[[0, 1, 1]],
    ...                  provenance=[(), (), ()])
    >>> lx = LexicalTiers(TierIndexes(2, 2), s)
    >>> lx.add(0, ids[:2], s.vectors[0:2]); lx.add(1, ids[2:], s.vectors[2:3])
    >>> q = lx.terms("milk?")
    >>> [(t, i.tolist(), read) for t in (0, 1) for i, _, read in [lx.lexical(t, q)]]
    [(0, [0], 2), (1, [2], 0)]
    >>> lx.move(np.array([2]), np.array([1]), np.array([0]), s.vectors[2:3]); lx.lexical(0, lx.terms("milk"))[0].tolist()
    [0, 2]
    >>> lx.sizes(), lx.lexical_work_.postings_written          # the move wrote no posting
    ([3, 0], 5)
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
        self.tier_ = IdMap(np.int64, -1)            # memory -> its tier (-1: not filed)
        self.filing_ = IdMap(np.int64, -1)          # memory -> its current filing number
        self.next_filing_ = 0
        self.postings_: dict[int, _Postings] = {}
        self.valid_ = 0                             # valid postings
        self.total_ = 0                             # all postings (valid + stale)
        self.stale_terms_: set[int] = set()         # lists holding stale postings
        self.hits_: tuple[QueryTerms, np.ndarray, np.ndarray] | None = None   # the last query's scored memories
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
                self._file(i)
        self.tier_[np.asarray(ids, dtype=np.int64)] = tier

    def move(self, ids: np.ndarray, old: np.ndarray, new: np.ndarray, vectors: np.ndarray) -> None:
        """Re-mark the memories ``ids`` with their ``new`` tiers: no posting changes."""
        self.inner.move(ids, old, new, vectors)
        self.tier_[np.asarray(ids, dtype=np.int64)] = np.asarray(new, dtype=np.int64)

    def update(self, tier: int, i: int, vector: np.ndarray) -> None:
        """Memory ``i`` was rewritten: its new text replaces the old in statistics and postings."""
        self.inner.update(tier, i, vector)
        self._unfile(i)
        self._unindex(i)
        self._index(i)
        self._file(i)
        self.tier_[np.array([i])] = tier

    def remove(self, tier: int, i: int) -> None:
        self.inner.remove(tier, i)
        self._unfile(i)
        self._unindex(i)
        self.tier_[np.array([i])] = -1

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
        self.hits_ = None

    def _unindex(self, i: int) -> None:
        if i not in self.doc_terms_:
            return
        terms, _ = self.doc_terms_.pop(i)
        self.df_[terms] = self.df_[terms] - 1
        self.n_docs_ -= 1
        self.total_len_ -= int(self.doc_len_[np.array([i])][0])
        self.hits_ = None

    def _file(self, i: int) -> None:
        terms, tfs = self.doc_terms_[i]
        f = self.next_filing_
        self.next_filing_ += 1
        lists = self.postings_
        for t, tf in zip(terms.tolist(), tfs.tolist()):
            p = lists.get(t)
            if p is None:
                p = lists[t] = _Postings()
            p.docs.append(i)
            p.filings.append(f)
            p.tfs.append(tf)
        self.filing_[np.array([i])] = f
        self.valid_ += len(terms)
        self.total_ += len(terms)
        self.lexical_work_.postings_written += len(terms)

    def _unfile(self, i: int) -> None:
        idx = np.array([i])
        if int(self.filing_[idx][0]) < 0:
            return
        self.filing_[idx] = -1
        terms = self.doc_terms_[i][0]
        self.valid_ -= len(terms)
        self.stale_terms_.update(terms.tolist())
        if self.total_ - self.valid_ > max(self.valid_, self.compact_above):
            self._compact()

    def _compact(self) -> None:
        """Rebuild the lists holding stale postings from their valid ones (same order, same
        filings); only the lists a memory left since the last compaction can hold any
        (``stale_terms_``), the others are kept as they are."""
        lists = self.postings_
        for t in self.stale_terms_:
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
        self.stale_terms_ = set()
        self.total_ = self.valid_
        self.lexical_work_.postings_written += self.valid_
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
        with the query. The first call for ``q`` reads the postings of its terms (every tier's)
        and keeps what it scored; a later call for the same ``q`` reads nothing more (0 read)
        as long as no memory was added, rewritten or removed since."""
        read = 0
        if self.hits_ is None or self.hits_[0] is not q:
            ids, scores, read = self._score(q)
            self.hits_ = (q, ids, scores)
        _, ids, scores = self.hits_
        mine = self.tier_[ids] == tier
        return ids[mine], scores[mine], read

    def _score(self, q: QueryTerms) -> tuple[np.ndarray, np.ndarray, int]:
        """(ids sorted, BM25 scores, postings read) of every live memory sharing a term with ``q``."""
        docs, contrib, read = [], [], 0
        avgdl = self.total_len_ / self.n_docs_ if self.n_docs_ else 1.0
        for t, qtf, idf in zip(q.terms.tolist(), q.qtf.tolist(), q.idf.tolist()):
            p = self.postings_.get(t)
            if p is None:
                continue
            d = np.frombuffer(p.docs, dtype=np.int64)
            read += len(d)
            keep = self.filing_[d] == np.frombuffer(p.filings, dtype=np.int64)
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
