"""Full-text scores with the log's pending writes laid over the store's answer.

A full-text search of a partition with writes not yet applied used to wait until they
were, since BM25's statistics cannot be laid over a store's answer the way a cosine
can. Under mixed load that wait (for the apply lock, then for the table's commits
queued behind other agents' writes) was the read tail (issue 20). Instead the store
answers for what it holds, and every candidate, stored or pending, is scored with the
statistics the store will have once the log is applied, so one answer ranks them all
alike.

Where the store can tell its statistics (storage.base.ExactTextStatistics: the hot
cache's text index, the in-process store), they are taken without the memories the
log rewrites or deletes and the pending memories are added (:func:`overlaid_hits`):
the scores are then the very floats the store gives once the writes are applied
(storage/bm25.py), so a read made now ranks near-ties as a read as of now does later
(docs/as-of.md). Otherwise (LanceDB's own index while the hot one is built) they are
estimated from the hits (:func:`fitted_hits`): BM25 is linear in the query terms' idf
for a given average length, ``score(d) = sum_t idf_t * w(tf_t(d), len(d), avg_len)``,
so the hits are equations whose least-squares solution is the store's idf (hence its
document frequencies), and the average length is the one that makes them fit best.
A query term no hit holds is one no stored memory holds: had the store many memories
with it, some would be among the hits.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import numpy as np
import numpy.typing as npt

from memoryd.domain.models import Memory, TextHit
from memoryd.storage.bm25 import BM25_B, BM25_K1, TermStatistics, informative, rare_terms, score
from memoryd.text import tokenize
from memoryd.text.informative import COMMON_TERM_RATIO

F64 = npt.NDArray[np.float64]
#: Steps of the search for the average length that fits the store's scores best.
_FIT_STEPS = 40


def _weights(tfs: F64, lengths: F64, avg_len: float) -> F64:
    """BM25's term-frequency factors (documents x terms) at ``avg_len``."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / avg_len)
    out: F64 = tfs * (BM25_K1 + 1) / (tfs + norm[:, None])
    return out


def _idf(documents: float, df: F64) -> F64:
    out: F64 = np.log1p((documents - df + 0.5) / (df + 0.5))
    return out


def _df(idf: F64, documents: float) -> F64:
    """The document frequencies that give ``idf`` over ``documents``."""
    x = np.expm1(np.clip(idf, 0.0, None))
    out: F64 = np.clip((documents + 0.5 - 0.5 * x) / (x + 1), 0.0, documents)
    return out


def _fit(tfs: F64, lengths: F64, scores: F64) -> tuple[float, F64]:
    """(average length, idf per term held by a hit) that fit the store's scores."""
    held = tfs.any(axis=0)

    def residual(avg_len: float) -> tuple[float, F64]:
        w = _weights(tfs[:, held], lengths, avg_len)
        idf: F64 = np.linalg.lstsq(w, scores, rcond=None)[0].astype(np.float64)
        return float(np.linalg.norm(w @ idf - scores)), idf

    # Golden-section search on log(average length) over a wide bracket: the fit is
    # unimodal in it, and exact (residual 0) for this module's own BM25.
    lo, hi = math.log(max(float(lengths.min()) / 4, 0.5)), math.log(float(lengths.max()) * 4)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = residual(math.exp(a))[0], residual(math.exp(b))[0]
    for _ in range(_FIT_STEPS):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = residual(math.exp(a))[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = residual(math.exp(b))[0]
    avg_len = math.exp((lo + hi) / 2)
    idf = np.zeros(tfs.shape[1])
    idf[held] = residual(avg_len)[1]
    return avg_len, idf


def overlaid_hits(
    terms: Sequence[str],
    hits: Sequence[TextHit],
    rewritten: AbstractSet[str],
    pending: Sequence[Memory],
    statistics: TermStatistics,
) -> list[TextHit]:
    """The store's ``hits`` (those not ``rewritten`` or deleted in the log since) and
    the ``pending`` memories that match ``terms``, scored exactly as the store will
    score them once the log is applied; unsorted. ``statistics``: the store's, for
    the distinct query ``terms`` under the search's filter, without the memories
    ``rewritten`` names."""
    terms = list(dict.fromkeys(terms))
    new = [tokenize(m.content) for m in pending]
    after = statistics.plus(new)
    kept = [h.memory for h in hits if h.memory.id not in rewritten]
    docs = [tokenize(m.content) for m in kept] + new
    rare = rare_terms(terms, after)
    out = []
    for memory, doc in zip([*kept, *pending], docs, strict=True):
        found = score(doc, terms, after)
        if found > 0:
            out.append(TextHit(memory, found, informative(doc, rare)))
    return out


def fitted_hits(
    terms: Sequence[str],
    hits: Sequence[TextHit],
    rewritten: AbstractSet[str],
    pending: Sequence[Memory],
    stored: int,
) -> list[TextHit]:
    """:func:`overlaid_hits` for a store that cannot tell its statistics: they are
    estimated from its ``hits`` (the module docstring). ``stored``: how many memories
    the store searched (its count under the filter)."""
    terms = list(dict.fromkeys(terms))
    if not terms:
        return []
    docs = [Counter(tokenize(h.memory.content)) for h in hits]
    new = [Counter(tokenize(m.content)) for m in pending]
    tfs = np.array([[d[t] for t in terms] for d in docs + new], dtype=np.float64)
    tfs = tfs.reshape(len(docs) + len(new), len(terms))
    lengths = np.array([sum(d.values()) for d in docs + new], dtype=np.float64)
    stored = max(stored, len(hits))
    df = np.zeros(len(terms))
    avg_len = float(lengths.mean()) if len(lengths) else 1.0
    if hits:
        scores = np.array([h.score for h in hits], dtype=np.float64)
        avg_len, idf = _fit(tfs[: len(hits)], lengths[: len(hits)], scores)
        held = tfs[: len(hits)].any(axis=0)
        df[held] = _df(idf[held], stored)
    # Once applied, the pending memories count too (a rewrite is counted as new: the
    # log does not say which of them the store holds).
    documents = stored + len(pending)
    df += (tfs[len(hits) :] > 0).sum(axis=0)
    idf = _idf(documents, df)
    common = df > COMMON_TERM_RATIO * documents
    all_scores = _weights(tfs, lengths, avg_len) @ idf
    out = []
    memories = [h.memory for h in hits] + list(pending)
    for k, memory in enumerate(memories):
        if (k < len(hits) and memory.id in rewritten) or all_scores[k] <= 0:
            continue
        # As the stores judge it: a match is informative when it holds a rare query
        # term, or when the query has none (memoryd.text.informative).
        informative = bool(common.all()) or bool((tfs[k] > 0)[~common].any())
        out.append(TextHit(memory, float(all_scores[k]), informative))
    return out
