"""Okapi BM25 as the in-process store, the hot cache's text index and the log's text
overlay score full text (LanceDB's own full-text index, used while a hot index is
built, has its own).

All three compute a score with the same floating-point operations in the same order
(:func:`score`: the query's distinct terms in their order, each term's part as
``idf * tf * (k1 + 1) / (tf + norm)``), so a memory's score is the same float whichever
of them computed it: an as-of read (over an in-process store) and the live read (over
the hot cache, or the overlay while writes are pending) rank near-ties alike."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memoryd.text import tokenize
from memoryd.text.informative import is_common

#: BM25 parameters of the in-process store and the hot text index. b, the weight of
#: length normalisation, is 0.1 rather than the usual 0.75: memories are short, and
#: a long one holds more of what a question asks; 0.75 ranked one-word turns ("Haha
#: yes!") sharing a word with the question above the turn that answers it. REALTALK
#: dev chats, hybrid recall_all@10 / recall_any@10: 0.436 / 0.660 at 0.75, 0.452 /
#: 0.681 at 0.1 (issue 24). LanceDB's own full-text index (used for a partition whose
#: hot index is still being built) keeps 0.75.
BM25_K1 = 1.2
BM25_B = 0.1
#: Distinct query terms scored; the rest of a very long query is ignored (LanceDB's
#: full-text search keeps the same number).
MAX_QUERY_TERMS = 256


def query_terms(query: str) -> list[str]:
    """The distinct terms of ``query`` in order (at most MAX_QUERY_TERMS)."""
    return list(dict.fromkeys(tokenize(query)))[:MAX_QUERY_TERMS]


@dataclass(frozen=True, slots=True)
class TermStatistics:
    """BM25's statistics of a set of documents for some query terms: how many
    documents, their terms in all (with repeats) and, per query term, how many
    documents hold it (a term absent from ``frequencies`` is held by none)."""

    documents: int
    total_length: int
    frequencies: Mapping[str, int]

    @property
    def average_length(self) -> float:
        """The documents' mean length (1.0 for none or only empty ones, as every
        scorer takes it)."""
        return (self.total_length / self.documents if self.documents else 0.0) or 1.0

    def idf(self, term: str) -> float:
        """The term's inverse document frequency (math.log, not log1p: the hot index
        computes the same float)."""
        df = self.frequencies.get(term, 0)
        return math.log(1 + (self.documents - df + 0.5) / (df + 0.5))

    def is_common(self, term: str) -> bool:
        """Whether the term is common here (memoryd.text.informative)."""
        return is_common(self.frequencies.get(term, 0), self.documents)

    def plus(self, documents: Iterable[Sequence[str]]) -> TermStatistics:
        """These statistics with ``documents`` (token lists) added."""
        frequencies = dict(self.frequencies)
        count, total = self.documents, self.total_length
        for doc in documents:
            count += 1
            total += len(doc)
            for term in set(doc):
                if term in frequencies:
                    frequencies[term] += 1
        return TermStatistics(count, total, frequencies)


def statistics_of(documents: Sequence[Sequence[str]], terms: Sequence[str]) -> TermStatistics:
    """The statistics of ``documents`` (token lists) for the query ``terms``."""
    empty = TermStatistics(0, 0, dict.fromkeys(terms, 0))
    return empty.plus(documents)


def score(doc: Sequence[str], terms: Sequence[str], stats: TermStatistics) -> float:
    """Okapi BM25 of ``doc`` (its tokens) for the distinct query ``terms``, in their
    order, under ``stats``; 0.0 for a document sharing no term."""
    tf = Counter(doc)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / stats.average_length)
    total = 0.0
    for term in terms:
        f = tf.get(term, 0)
        if f:
            total += stats.idf(term) * f * (BM25_K1 + 1) / (f + norm)
    return total


def rare_terms(terms: Sequence[str], stats: TermStatistics) -> frozenset[str]:
    """The query's informative terms: those that are rare under ``stats``."""
    return frozenset(t for t in terms if not stats.is_common(t))


def informative(doc: Sequence[str], rare: frozenset[str]) -> bool:
    """Whether ``doc`` matches an informative term of the query (``rare``:
    :func:`rare_terms`), or the query has none (memoryd.text.informative)."""
    return not rare or not rare.isdisjoint(doc)


def bm25(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """Okapi BM25 of each document (a list of terms) for the distinct query terms, with
    the statistics of ``documents`` alone; 0 for a document sharing no term."""
    terms = list(dict.fromkeys(query))
    stats = statistics_of(documents, terms)
    return [score(doc, terms, stats) for doc in documents]


def informative_matches(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[bool]:
    """Whether each document matches an informative term of ``query``
    (memoryd.text.informative; all True when every query term is common)."""
    terms = list(dict.fromkeys(query))
    rare = rare_terms(terms, statistics_of(documents, terms))
    return [informative(doc, rare) for doc in documents]
