"""BM25-like sparse vectors for Qdrant's text ranking.

Documents get BM25 term weights (term-frequency saturation and length
normalisation); queries get 1.0 per distinct term; the collection's sparse vector
has ``modifier=IDF``, so the engine multiplies in each term's inverse document
frequency - together that is BM25 scored by Qdrant itself. The store limits the IDF
corpus to the points the query's filter selects (``SearchParams.idf``), so no
statistic comes from another partition or from records the caller may not see.
Length normalisation uses a fixed average length (AVG_LEN): a document's weights are
computed once, at write time, without corpus statistics.

Terms come from :func:`memoryd.text.tokenize`, the tokenizer of every backend (CJK
bigrams, stemming, stop words), and are hashed to 32-bit indices (Qdrant's sparse
indices are u32); a collision merely merges two terms.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter

from qdrant_client import models

from memoryd.text import tokenize

#: BM25 parameters; AVG_LEN is a fixed estimate of a memory's length in terms
#: (Qdrant does not know the corpus average, so the document side carries it).
K1 = 1.2
B = 0.75
AVG_LEN = 32.0


@functools.lru_cache(maxsize=65_536)
def term_index(term: str) -> int:
    """A stable 32-bit index of ``term`` (the same in every process and release).
    Cached: a text's terms repeat across memories and queries."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


def _vector(weights: dict[int, float]) -> models.SparseVector | None:
    if not weights:
        return None
    indices = sorted(weights)
    # Built as is (no validation pass: every field is already of its type).
    return models.SparseVector.model_construct(
        indices=indices, values=[weights[i] for i in indices]
    )


def document_vector(text: str) -> models.SparseVector | None:
    """BM25 document weights of ``text``; None when it has no terms."""
    terms = tokenize(text)
    norm = K1 * (1.0 - B + B * len(terms) / AVG_LEN)
    weights: dict[int, float] = {}
    for term, tf in Counter(terms).items():
        idx = term_index(term)
        weights[idx] = weights.get(idx, 0.0) + tf * (K1 + 1.0) / (tf + norm)
    return _vector(weights)


def query_vector(text: str) -> models.SparseVector | None:
    """1.0 per distinct term of ``text``; None when it has no terms."""
    return _vector({term_index(t): 1.0 for t in tokenize(text)})
