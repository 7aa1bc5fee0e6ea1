"""BM25 as an incremental inverted index (``Bm25Index``), and over the tiers (``LexicalTiers``).

``Bm25Index`` keeps the statistics of BM25 as counters and its postings in append-only
lists, so a memory is indexed in O(its distinct terms) and a query reads only the postings
of its terms: a query's work grows with what it touches, not with the store (a query whose
postings are many against the memories' id range sums them in a dense array over the range,
one vectorised pass per term, cheaper than sorting them). Its scores are those of ``bm25s``
(https://github.com/xhluca/bm25s) built from scratch over the same documents, for each of
its variants (``method``; Kamphuis et al., ECIR 2020)::

    bm25(q, d) = sum over the distinct terms t of q known to the index of
                 qtf(t) * idf(t) * tfc(tf(t, d), |d|)

    idf(t): lucene     ln(1 + (N - df + 0.5) / (df + 0.5))
            robertson  ln(max(1, (N - df + 0.5) / (df + 0.5)))
            atire      ln(N / df)
            bm25l      ln((N + 1) / (df + 0.5))
            bm25+      ln((N + 1) / df)
    tfc(tf, |d|), with n(d) = 1 - b + b * |d| / avgdl:
            lucene, robertson  tf / (tf + k1 * n(d))
            atire              (k1 + 1) * tf / (tf + k1 * n(d))
            bm25l              (k1 + 1) * (c + delta) / (k1 + c + delta),  c = tf / n(d)
            bm25+              (k1 + 1) * tf / (tf + k1 * n(d)) + delta

qtf(t): occurrences of t in the query; N: the memories indexed; df(t): those holding t;
|d|: a memory's length in tokens; avgdl: their mean length; delta: 0.5 (``DELTA``, bm25s's
default). tfc(0) is 0 but for bm25l ((k1 + 1) * delta / (k1 + delta)) and bm25+ (delta),
under which a memory sharing no term with the query still scores the query's ``base`` =
sum qtf * idf * tfc(0) (bm25s's "non-occurrence" scores). So, as bm25s stores it, the
index scores only the memories sharing a term, by their part above the base::

    bm25(q, d) = base(q) + sum over the terms t of q in d of
                           qtf(t) * idf(t) * (tfc(tf(t, d), |d|) - tfc(0))

N, df and the total length are counters, so idf and avgdl are always current: a score
equals a from-scratch ``bm25s`` index of the memories indexed (tested, for every method, in
float64 where bm25s computes in float32). A memory is *indexed* (its terms count in N, df
and the lengths; ``index``, ``unindex``) and *filed* (its postings written into one of
``lists`` sets of lists; ``file``, ``unfile``) apart: a query reads one set, and may score a
few indexed memories that are not filed directly from their term counts (``unfiled``), as
``system=bm25`` does for the turns whose context neighbours are still to come.

Postings are append-only arrays (``array.array``, int32) per (set, term) holding (memory,
filing, tf). A memory's *filing* number changes each time it is filed, so a posting is
valid iff its filing is the memory's current one: a move appends the memory's postings to
the new set's lists and leaves the old ones stale, never searching a list to delete. A
set's lists are rebuilt from its valid postings once more than half of them (and over
``compact_above``, 1,024) are stale: amortised O(1) per posting written.

``LexicalTiers`` wraps a tier index (``SharedGraphIndex`` or ``TierIndexes``: every call is
forwarded to it, so the memory facade and arousal see the same index) and mirrors its
membership changes — ``add``, ``move``, ``update``, ``remove`` — in one Lucene ``Bm25Index``
over every memory (``retrieval=bm25``, ``hybrid``) and a tier mark per memory, as the shared
graph marks its nodes (``memory.graph_index``). A tier move changes only the memory's mark
(``tier_``): no posting is written, so the design's promotions and demotions (several a
message under arousal: 17.6 per BEAM haystack message at 1k, 59 at 10k) cost O(1) each
rather than one posting per distinct term of the memory (issue 50). ``lexical(tier, terms)``
scores the members of one tier that share a term with the query: the first call of a query
reads its terms' postings once (every tier's) and keeps what it scored; each tier call then
picks the memories marked with that tier. A search reading several tiers thus reads each
posting once (charged at its first tier call), and a search of one tier reads the postings of
the other tiers too: the price of moves that write nothing, as a shared graph's filtered
search visits nodes of other tiers. N, df and avgdl are the whole store's, so a memory
scores the same in every tier. Why not ``bm25s`` itself: it indexes a whole corpus at once
(O(store) per build) and scores every document, while memory here is written between every
two searches.

Tokens are ``tokenize`` (English words less stop words; CJK characters and adjacent
pairs), the same as ``system=bm25``'s.

Work (``work_``, ``LexicalWork``): ``postings_read`` (every posting a query reads, valid or
stale: the unit a search's ``scored`` counts), ``postings_written`` (at filing and
compaction), ``terms_counted`` ((term, memory) pairs counted into or out of df at index and
unindex), ``compactions``.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..embed.hashing import STOP_WORDS
from .index import IdMap
from .topk import distinct_inverse

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")   # bm25s's variants
DELTA = 0.5                                                    # bm25l's and bm25+'s delta (bm25s's default)
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
    text = text.lower()
    if not _CJK.search(text):                   # no CJK run (the usual case): words less stop words
        return [w for w in _TOKEN.findall(text) if w not in STOP_WORDS]
    out: list[str] = []
    for run in _TOKEN.findall(text):
        if _CJK.match(run):
            out += [c for c in run if c not in STOP_WORDS]
            out += [a + b for a, b in zip(run, run[1:])]
        elif run not in STOP_WORDS:
            out.append(run)
    return out


def bm25_idf(df: np.ndarray, n: float, method: str = "lucene") -> np.ndarray:
    """idf of terms held by ``df`` of ``n`` memories (df >= 1), by ``method`` (module docstring).

    >>> bm25_idf(np.array([1, 2]), 3).round(4).tolist()
    [0.9808, 0.47]
    >>> [bm25_idf(np.array([2]), 3, m).round(4).tolist()[0] for m in METHODS]
    [0.47, 0.0, 0.4055, 0.47, 0.6931]
    """
    df = np.asarray(df, dtype=float)
    if method == "lucene":
        return np.log1p((n - df + 0.5) / (df + 0.5))
    if method == "robertson":
        return np.log(np.maximum((n - df + 0.5) / (df + 0.5), 1.0))
    if method == "atire":
        return np.log(n / df)
    if method == "bm25l":
        return np.log((n + 1.0) / (df + 0.5))
    if method == "bm25+":
        return np.log((n + 1.0) / df)
    raise ValueError(f"BM25 method {method!r} is not one of {', '.join(METHODS)}")


def bm25_tfc(tf: np.ndarray, dl: np.ndarray, avgdl: float, k1: float, b: float, method: str = "lucene",
             delta: float = DELTA) -> np.ndarray:
    """The term-frequency part tfc(tf, |d|) of BM25 by ``method`` (module docstring), for
    term frequencies ``tf`` in memories of lengths ``dl``: tfc(0) + ``bm25_gain`` at weight 1.

    >>> bm25_tfc(np.array([1.0, 2.0]), np.array([2.0, 4.0]), 3.0, 1.5, 0.75).round(4).tolist()
    [0.4706, 0.5161]
    >>> bm25_tfc(np.array([0.0, 1.0]), np.array([3.0, 3.0]), 3.0, 1.5, 0.75, "bm25+").tolist()   # delta + 2.5 / 2.5
    [0.5, 1.5]
    """
    norm = bm25_norm(np.asarray(dl, dtype=float), avgdl, k1, b, method)
    return bm25_tfc0(k1, method, delta) + bm25_gain(1.0, np.asarray(tf, dtype=float), norm, k1, method, delta)


def bm25_tfc0(k1: float, method: str = "lucene", delta: float = DELTA) -> float:
    """tfc(0), what a term a memory lacks adds per unit of idf: 0 but under bm25l
    ((k1 + 1) * delta / (k1 + delta)) and bm25+ (delta).

    >>> [bm25_tfc0(1.5, m) for m in METHODS]
    [0.0, 0.0, 0.0, 0.625, 0.5]
    """
    if method == "bm25l":
        return (k1 + 1.0) * delta / (k1 + delta)
    return delta if method == "bm25+" else 0.0


def bm25_norm(dl: np.ndarray, avgdl: float, k1: float, b: float, method: str = "lucene") -> np.ndarray:
    """A memory's part of tfc, from its length: n(d) = 1 - b + b * |d| / avgdl under bm25l,
    else k1 * n(d)."""
    n = 1.0 - b + b * dl / avgdl
    return n if method == "bm25l" else k1 * n


def bm25_gain(w, tf: np.ndarray, norm: np.ndarray, k1: float, method: str = "lucene",
              delta: float = DELTA) -> np.ndarray:
    """w * (tfc(tf) - tfc(0)): what a term of weight w = qtf * idf adds to a memory holding it
    ``tf`` times above the base, from the memory's ``bm25_norm``. Written per method without
    adding and taking away tfc(0) where it cancels (bm25+: (k1 + 1) * tf / (tf + k1 * n(d))),
    so that k1 = 0 is no 0 / 0; Lucene's in the order of operations the tiers' index had
    before issue 50 (w * tf / (tf + k1 * n(d))), so their scores are the same floats."""
    if method in ("lucene", "robertson"):
        return w * tf / (tf + norm)
    if method in ("atire", "bm25+"):
        return w * (k1 + 1.0) * tf / (tf + norm)
    if method == "bm25l":
        c = tf / norm
        return w * ((k1 + 1.0) * (c + delta) / (k1 + c + delta) - bm25_tfc0(k1, method, delta))
    raise ValueError(f"BM25 method {method!r} is not one of {', '.join(METHODS)}")


@dataclass
class LexicalWork:
    """Lexical index work so far (see the module docstring)."""

    postings_read: int = 0
    postings_written: int = 0
    terms_counted: int = 0
    compactions: int = 0


@dataclass
class QueryTerms:
    """A query's terms known to the index (ids, sorted; occurrences), their idf, and the
    score ``base`` every memory has (sum qtf * idf * tfc(0): 0 but under bm25l and bm25+).
    ``bound`` = sum qtf * idf: under Lucene no memory reaches it (the normaliser of
    ``relevance.Bm25``)."""

    terms: np.ndarray
    qtf: np.ndarray
    idf: np.ndarray
    base: float = 0.0

    @property
    def bound(self) -> float:
        return float(np.sum(self.qtf * self.idf))


def _postings() -> array:
    """One (set, term) list: (memory id, filing number, term frequency) triples, int32, one
    array (one append per posting)."""
    return array("i")


def _triples(p: array) -> np.ndarray:
    """A list's postings as an (n, 3) view: columns memory, filing, tf."""
    return np.frombuffer(p, dtype=np.int32).reshape(-1, 3)


class Bm25Index:
    """Incremental BM25 over memories given as tokens, filed in ``lists`` sets of postings
    (see the module docstring). Every method is O(the memory's distinct terms) but
    ``lexical`` (O(the postings it reads)) and an occasional compaction.

    >>> x = Bm25Index()
    >>> for i, text in enumerate(["milk tea", "milk milk coffee", "green tea"]):
    ...     x.index(i, text.split()); x.file(i, 0)
    >>> q = x.terms(["milk", "milk", "soup"])
    >>> q.terms.tolist(), q.qtf.tolist(), q.idf.round(4).tolist()
    ([0], [2.0], [0.47])
    >>> ids, scores, work = x.lexical(0, q)
    >>> ids.tolist(), scores.round(4).tolist(), work   # 2 * 0.47 * tf / (tf + 1.5 * (0.25 + 0.75 * |d| / (7 / 3)))
    ([0, 1], [0.4018, 0.492], 2)
    >>> x.unfile(2); x.unindex(2); x.index(2, ["milk"])      # memory 2 rewritten, not filed: scored directly
    >>> ids, scores, work = x.lexical(0, x.terms(["milk"]), unfiled=[2])
    >>> ids.tolist(), work, x.work_.postings_written, x.work_.terms_counted
    ([0, 1, 2], 3, 6, 9)
    """

    def __init__(self, lists: int = 1, k1: float = 1.5, b: float = 0.75, method: str = "lucene",
                 delta: float = DELTA, compact_above: int = 1024):
        if method not in METHODS:
            raise ValueError(f"BM25 method {method!r} is not one of {', '.join(METHODS)}")
        self.k1 = k1
        self.b = b
        self.method = method
        self.delta = delta
        self.compact_above = compact_above
        self.tfc0_ = bm25_tfc0(k1, method, delta)
        self.vocab_: dict[str, int] = {}
        self.df_ = IdMap(np.int64, 0)               # term id -> indexed memories holding it
        self.n_docs_ = 0                            # memories indexed
        self.total_len_ = 0                         # their summed lengths in tokens
        self.doc_terms_: dict[int, tuple[np.ndarray, np.ndarray]] = {}   # memory -> (term ids, tfs), int32
        self.doc_len_ = IdMap(np.float64, 0.0)
        self.top_ = 0                               # 1 + the largest memory id indexed so far
        self.filed_ = IdMap(np.int64, -1)           # memory -> set whose lists hold its valid postings
        self.filing_ = IdMap(np.int32, -1)          # memory -> its current filing number (-1: not filed)
        self.filings_ = IdMap(np.int32, 0)          # memory -> filing numbers it has used (the next one)
        self.postings_: list[dict[int, array]] = [{} for _ in range(lists)]
        self.valid_ = [0] * lists                   # valid postings per set
        self.total_ = [0] * lists                   # all postings per set (valid + stale)
        self.stale_terms_: list[set[int]] = [set() for _ in range(lists)]   # lists holding stale postings
        self.work_ = LexicalWork()

    # -- statistics ----------------------------------------------------------------------------
    def indexed(self, i: int) -> bool:
        return i in self.doc_terms_

    def counts(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, term frequencies) of ``tokens``, int32, new tokens added to the vocabulary."""
        counts = Counter(tokens)
        vocab = self.vocab_
        terms = np.fromiter((vocab[t] if t in vocab else vocab.setdefault(t, len(vocab)) for t in counts),
                            dtype=np.int32, count=len(counts))
        return terms, np.fromiter(counts.values(), dtype=np.int32, count=len(counts))

    def index(self, i: int, tokens: list[str]) -> None:
        """Count memory ``i`` (not indexed) of ``tokens`` in N, df and the total length."""
        self.index_counts(i, *self.counts(tokens))

    def index_counts(self, i: int, terms: np.ndarray, tfs: np.ndarray) -> None:
        """``index`` from the memory's distinct term ids and their frequencies (``counts``)."""
        length = int(tfs.sum())
        self.doc_terms_[i] = (terms, tfs)
        self.doc_len_[np.array([i])] = length
        self.top_ = max(self.top_, i + 1)
        self.df_[terms] = self.df_[terms] + 1
        self.n_docs_ += 1
        self.total_len_ += length
        self.work_.terms_counted += len(terms)

    def unindex(self, i: int) -> None:
        """Take memory ``i`` out of the statistics (its postings stay: ``unfile`` them first)."""
        if i not in self.doc_terms_:
            return
        terms, _ = self.doc_terms_.pop(i)
        self.df_[terms] = self.df_[terms] - 1
        self.n_docs_ -= 1
        self.total_len_ -= int(self.doc_len_[np.array([i])][0])
        self.work_.terms_counted += len(terms)

    # -- postings ------------------------------------------------------------------------------
    def file(self, i: int, lst: int) -> None:
        """Write indexed memory ``i``'s postings into set ``lst`` (unfile it first if filed)."""
        terms, tfs = self.doc_terms_[i]
        idx = np.array([i])
        f = int(self.filings_[idx][0])
        self.filings_[idx] = f + 1
        lists = self.postings_[lst]
        for t, tf in zip(terms.tolist(), tfs.tolist()):
            p = lists.get(t)
            if p is None:
                p = lists[t] = _postings()
            p.extend((i, f, tf))
        self.filed_[idx], self.filing_[idx] = lst, f
        self.valid_[lst] += len(terms)
        self.total_[lst] += len(terms)
        self.work_.postings_written += len(terms)

    def unfile(self, i: int) -> None:
        """Make memory ``i``'s postings stale (none if it is not filed)."""
        idx = np.array([i])
        lst = int(self.filed_[idx][0])
        if lst < 0:
            return
        self.filed_[idx], self.filing_[idx] = -1, -1
        terms = self.doc_terms_[i][0]
        self.valid_[lst] -= len(terms)
        self.stale_terms_[lst].update(terms.tolist())
        stale = self.total_[lst] - self.valid_[lst]
        if stale > max(self.valid_[lst], self.compact_above):
            self._compact(lst)

    def _compact(self, lst: int) -> None:
        """Rebuild one set's lists from their valid postings (same order, same filings). Only
        the lists a memory left since the last compaction can hold stale postings
        (``stale_terms_``); the others are kept as they are."""
        lists = self.postings_[lst]
        for t in self.stale_terms_[lst]:
            p = lists.get(t)
            if p is None:
                continue
            rows = _triples(p)
            keep = self.filing_[rows[:, 0]] == rows[:, 1]
            if keep.all():
                continue
            if not keep.any():
                del lists[t]
                continue
            q = lists[t] = _postings()
            q.frombytes(rows[keep].tobytes())
        self.stale_terms_[lst] = set()
        self.total_[lst] = self.valid_[lst]
        self.work_.postings_written += self.valid_[lst]
        self.work_.compactions += 1

    # -- queries -------------------------------------------------------------------------------
    def terms(self, tokens: list[str]) -> QueryTerms:
        """The query's terms the index holds (df > 0), sorted by term id, with their idf now."""
        counts = Counter(tokens)
        known = sorted((self.vocab_[t], n) for t, n in counts.items() if t in self.vocab_)
        terms = np.array([t for t, _ in known], dtype=np.int64)
        qtf = np.array([n for _, n in known], dtype=float)
        df = self.df_[terms]
        live = df > 0
        terms, qtf, df = terms[live], qtf[live], df[live]
        idf = bm25_idf(df, self.n_docs_, self.method)
        return QueryTerms(terms, qtf, idf, float(np.sum(qtf * idf)) * self.tfc0_)

    def lexical(self, lst: int, q: QueryTerms, unfiled=()) -> tuple[np.ndarray, np.ndarray, int]:
        """(ids ascending, scores above the base, work) of the memories of set ``lst`` and of
        the indexed memories ``unfiled`` whose score above the base is positive (under every
        method but robertson and atire with a term of idf 0, and bm25l at k1 = 0: those sharing
        a term). Reads set ``lst``'s lists of the query's terms (work: every posting read) and
        each unfiled memory's term counts (work: one per memory).

        Each memory's contributions are summed one term after the other in the query's term
        order, whichever way it is scored, so equal memories score equal. Many postings
        against the memories' id range are summed into a dense array over the range (one
        ``bincount`` per term, the memories' norms computed once), few by a sort of the ids
        they name: the same sums either way."""
        lists = self.postings_[lst]
        stale = self.total_[lst] > self.valid_[lst]     # else every posting is valid: no check
        parts, read = [], 0                             # (query term index, its valid postings)
        for k, t in enumerate(q.terms.tolist()):
            p = lists.get(t)
            if p is None:
                continue
            r = _triples(p)
            read += len(r)
            if stale:
                r = r[self.filing_[r[:, 0]] == r[:, 1]]
            parts.append((k, r))
        extra = self._unfiled_postings(q, unfiled)     # the same rows for the unfiled memories
        self.work_.postings_read += read
        work = read + len(unfiled)
        n = sum(len(r) for _, r in parts) + len(extra)
        if n == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0), work
        w = q.qtf * q.idf
        avgdl = self.total_len_ / self.n_docs_
        if 4 * n >= self.top_:                          # dense: O(postings + terms * range)
            top = self.top_
            norm = bm25_norm(self.doc_len_[np.arange(top)], avgdl, self.k1, self.b, self.method)
            acc = np.zeros(top)
            for k, r in parts + [(None, extra)]:
                if len(r):
                    d = r[:, 0]
                    wk = w[k] if k is not None else w[r[:, 1]]
                    gain = bm25_gain(wk, r[:, 2], norm[d], self.k1, self.method, self.delta)
                    acc += np.bincount(d, weights=gain, minlength=top)
            ids = np.flatnonzero(acc > 0)
            return ids, acc[ids], work
        rows = np.concatenate([r for _, r in parts] + [extra])
        d = rows[:, 0]
        wk = np.concatenate([np.full(len(r), w[k]) for k, r in parts] + [w[extra[:, 1]]])
        norm = bm25_norm(self.doc_len_[d], avgdl, self.k1, self.b, self.method)
        ids, inv = distinct_inverse(d.astype(np.int64))
        gain = bm25_gain(wk, rows[:, 2], norm, self.k1, self.method, self.delta)
        scores = np.bincount(inv, weights=gain, minlength=len(ids))
        keep = scores > 0
        return ids[keep], scores[keep], work

    def _unfiled_postings(self, q: QueryTerms, unfiled) -> np.ndarray:
        """Rows (memory, query term index, tf) of the ``unfiled`` memories' terms in the query,
        each memory's in the query's term order."""
        rows = []
        for i in unfiled:
            terms, tf = self.doc_terms_[int(i)]
            at = np.searchsorted(q.terms, terms)
            hit = at < len(q.terms)
            hit[hit] = q.terms[at[hit]] == terms[hit]
            order = np.argsort(at[hit], kind="stable")
            found = np.stack([np.full(len(order), i), at[hit][order], tf[hit][order]], axis=1)
            rows.append(found.astype(np.int32))
        return np.concatenate(rows) if rows else np.zeros((0, 3), dtype=np.int32)


class LexicalTiers:
    """A tier index with a Lucene ``Bm25Index`` over every memory and a tier mark per memory
    (see the module docstring).

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
        self.bm25_ = Bm25Index(1, k1, b, compact_above=compact_above)
        self.tier_ = IdMap(np.int64, -1)            # memory -> its tier (-1: not filed)
        self.hits_: tuple[QueryTerms, np.ndarray, np.ndarray] | None = None   # the last query's scored memories

    # -- forwarding: this is the tier index --------------------------------------------------
    def __getattr__(self, name):
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def work_(self):
        return self.inner.work_

    @property
    def lexical_work_(self) -> LexicalWork:
        return self.bm25_.work_

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
        ids = np.asarray(ids, dtype=np.int64)
        for i in ids.tolist():
            if not self.bm25_.indexed(i):
                self.bm25_.index(i, tokenize(self.store.text[i]))
                self.bm25_.file(i, 0)
                self.hits_ = None
        self.tier_[ids] = tier

    def move(self, ids: np.ndarray, old: np.ndarray, new: np.ndarray, vectors: np.ndarray) -> None:
        """Re-mark the memories ``ids`` with their ``new`` tiers: no posting changes."""
        self.inner.move(ids, old, new, vectors)
        self.tier_[np.asarray(ids, dtype=np.int64)] = np.asarray(new, dtype=np.int64)

    def update(self, tier: int, i: int, vector: np.ndarray) -> None:
        """Memory ``i`` was rewritten: its new text replaces the old in statistics and postings."""
        self.inner.update(tier, i, vector)
        self.bm25_.unfile(i)
        self.bm25_.unindex(i)
        self.bm25_.index(i, tokenize(self.store.text[i]))
        self.bm25_.file(i, 0)
        self.tier_[np.array([i])] = tier
        self.hits_ = None

    def remove(self, tier: int, i: int) -> None:
        self.inner.remove(tier, i)
        self.bm25_.unfile(i)
        self.bm25_.unindex(i)
        self.tier_[np.array([i])] = -1
        self.hits_ = None

    # -- queries -------------------------------------------------------------------------------
    def terms(self, text: str) -> QueryTerms:
        """The query's terms the store holds (df > 0), sorted by term id, with their idf now."""
        return self.bm25_.terms(tokenize(text))

    def lexical(self, tier: int, q: QueryTerms) -> tuple[np.ndarray, np.ndarray, int]:
        """(ids sorted, BM25 scores, postings read) of the members of ``tier`` sharing a term
        with the query. The first call for ``q`` reads the postings of its terms (every tier's)
        and keeps what it scored; a later call for the same ``q`` reads nothing more (0 read)
        as long as no memory was added, rewritten or removed since."""
        read = 0
        if self.hits_ is None or self.hits_[0] is not q:
            ids, scores, read = self.bm25_.lexical(0, q)
            self.hits_ = (q, ids, scores)
        _, ids, scores = self.hits_
        mine = self.tier_[ids] == tier
        return ids[mine], scores[mine], read


__all__ = ["tokenize", "bm25_idf", "bm25_tfc", "bm25_tfc0", "bm25_norm", "bm25_gain", "Bm25Index",
           "LexicalTiers", "LexicalWork", "QueryTerms", "METHODS", "DELTA"]
