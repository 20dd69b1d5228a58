"""Which query terms can carry a full-text match on their own.

A term held by more than COMMON_TERM_RATIO of the searched memories says little about
any one of them ("user" in a store of facts about the user, a speaker's name in a
chat), yet BM25 still ranks the memories holding it, and reciprocal rank fusion
weighs a rank, not a score: a first place won on such a word alone outvoted a close
vector match. As Lucene's CommonTermsQuery does, common terms add to the score of a
memory that matches a rarer term of the query, but a memory that shares only common
terms with a query that has rarer ones is not an informative match. A query made of
common terms only keeps them all (there is nothing better to go by). A query term no
memory holds counts as rare: it is what the question is about.
"""

from __future__ import annotations

#: A term held by more than this share of the searched memories is common. 0.5 is
#: where the Robertson-Sparck Jones weight log((N - df + 0.5) / (df + 0.5)) of a term
#: turns negative: past it, holding the term is evidence against relevance.
COMMON_TERM_RATIO = 0.5


def is_common(document_frequency: int, documents: int) -> bool:
    """Whether a term held by ``document_frequency`` of ``documents`` is common."""
    return document_frequency > COMMON_TERM_RATIO * documents
