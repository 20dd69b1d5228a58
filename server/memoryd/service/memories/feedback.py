"""Pseudo-relevance feedback on the text side: a second full-text round seeded with
the first round's best hits, without an LLM.

A multi-hop question ("Which cities have both Kate and Elise been to?") has evidence
that shares few words with it but many with the best first-round hits. The terms of
the ``feedback_seeds`` best candidates that the query lacks are scored by how much
they concentrate in the seeds rather than in the whole candidate pool (sum over
seeds of 1 / (rank * pool document frequency): a term every candidate holds, a
speaker's name, says nothing), and the ``feedback_terms`` best are added to the
query for one more full-text search. Its BM25 scores, over the best one's, are mixed
into relevance: (1 - w) * relevance + w * feedback, w = ``feedback_weight``; a memory
only the second round found joins with that share alone. A vector Rocchio round was
measured a loss (issue 24), so only the text side is fed back.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from memoryd.config import RecallSettings
from memoryd.domain.models import MemoryFilter, Partition, Vector
from memoryd.service.memories.hybrid import Candidate
from memoryd.storage.base import Store
from memoryd.text import tokenize


def feedback_terms(query: str, ranked: Sequence[Candidate], seeds: int, count: int) -> list[str]:
    """The ``count`` terms of the ``seeds`` best of ``ranked`` (best first) that the
    query lacks, most concentrated in the seeds first."""
    asked = set(tokenize(query))
    pool: Counter[str] = Counter()
    documents = [set(tokenize(c.memory.content)) for c in ranked]
    for terms in documents:
        pool.update(terms)
    weight: defaultdict[str, float] = defaultdict(float)
    for rank, terms in enumerate(documents[:seeds], start=1):
        for term in terms - asked:
            weight[term] += 1.0 / (rank * pool[term])
    return [t for t, _ in sorted(weight.items(), key=lambda kv: (-kv[1], kv[0]))[:count]]


async def with_feedback(
    store: Store,
    partition: Partition,
    ranked: list[Candidate],
    *,
    text: str,
    vector: Vector,
    flt: MemoryFilter,
    limit: int,
    settings: RecallSettings,
) -> list[Candidate]:
    """``ranked`` (best first) re-scored with a second, expanded full-text round."""
    if settings.feedback_terms <= 0 or not ranked:
        return ranked
    terms = feedback_terms(text, ranked, settings.feedback_seeds, settings.feedback_terms)
    if not terms:
        return ranked
    hits = await store.text_search(partition, f"{text} {' '.join(terms)}", flt, limit)
    hits = [h for h in hits if h.informative]
    best = max((h.score for h in hits), default=0.0)
    if best <= 0:
        return ranked
    share = {h.memory.id: h.score / best for h in hits}
    w = settings.feedback_weight
    out = [
        dataclasses.replace(c, relevance=(1 - w) * c.relevance + w * share.get(c.memory.id, 0.0))
        for c in ranked
    ]
    known = {c.memory.id for c in ranked}
    query = np.asarray(vector, dtype=np.float32)
    for h in hits:
        if h.memory.id in known:
            continue
        memory = h.memory.copy()
        cosine = float(memory.vector @ query) if memory.vector is not None else 0.0
        memory.vector = None  # results never carry vectors
        out.append(Candidate(memory, cosine, 0.0, 0.0, w * share[h.memory.id]))
    return sorted(out, key=lambda c: -c.relevance)  # stable: ties keep the first order
