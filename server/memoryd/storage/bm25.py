"""Okapi BM25 as the in-process store and the hot cache's text index score full text
(LanceDB's own full-text index, used while a hot index is built, has its own)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

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


def bm25(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """Okapi BM25 of each document (a list of terms) for the distinct query terms, with
    the statistics of ``documents`` alone; 0 for a document sharing no term."""
    if not documents:
        return []
    terms = set(query)
    counts = [Counter(t for t in doc if t in terms) for doc in documents]
    df = Counter(t for c in counts for t in c)
    n = len(documents)
    avg_len = sum(len(doc) for doc in documents) / n or 1.0
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    scores = []
    for doc, c in zip(documents, counts, strict=True):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avg_len)
        scores.append(sum(idf[t] * f * (BM25_K1 + 1) / (f + norm) for t, f in c.items()))
    return scores


def informative_matches(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[bool]:
    """Whether each document matches an informative term of ``query``
    (memoryd.text.informative; all True when every query term is common)."""
    held = [set(doc) for doc in documents]
    rare = [t for t in set(query) if not is_common(sum(t in h for h in held), len(held))]
    if not rare:
        return [True] * len(held)
    return [any(t in h for t in rare) for h in held]
