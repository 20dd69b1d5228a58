"""Hybrid recall: vector and full-text (BM25) searches fused into one ranking.

``recall.fusion: convex`` (the default): each candidate's cosine, min-max scaled over
the candidates, and its BM25 score over the best one's, mixed by the two weights. It
keeps how much better one match is than the next, which ranks lose: on REALTALK it
found more of the evidence than rank fusion (bench/quality.py, issue 24).
``recall.fusion: rrf``: reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR
2009): each ranking contributes ``weight / (k + rank)`` to every item it contains.
A full-text match on common words alone (``TextHit.informative`` False) is left out
when there is a vector side. Both searches run with the same filter inside the store;
the scoring presets are applied afterwards by the caller (``Candidate.relevance``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from memoryd.config import RecallSettings
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    Partition,
    TextHit,
    UnitVector,
    VectorHit,
)
from memoryd.storage.base import Store

K = TypeVar("K", bound=Hashable)

DEFAULT_K = 60.0


def rrf(
    rankings: Sequence[Sequence[K]],
    *,
    k: float = DEFAULT_K,
    weights: Sequence[float] | None = None,
) -> dict[K, float]:
    """Fused score of every item of ``rankings`` (each best first, without repeats)."""
    if k <= 0:
        raise ValueError("k must be positive")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    fused: dict[K, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def max_fused(weights: Sequence[float], k: float = DEFAULT_K) -> float:
    """The fused score of an item ranked first everywhere: the top of the scale."""
    return sum(weights) / (k + 1)


def convex(
    similarity: dict[K, float],
    keyword: dict[K, float],
    weights: Sequence[float],
    min_spread: float = 0.0,
) -> dict[K, float]:
    """Convex combination of each candidate's cosine, min-max scaled over the
    candidates, and its BM25 score over the best one's: (w_v * v + w_t * t) / (w_v +
    w_t), 0..1, 1 for a memory best by both. A candidate one side did not find gets 0
    there (an empty ``similarity``: no vector side at all).

    ``min_spread``: the cosines are scaled by max(high - low, min_spread), so a narrow
    spread (0.32..0.38: no candidate much closer than another) is not stretched to the
    full 0..1 and does not outweigh a clear full-text match. The closest candidate keeps
    1 and the others fall below it by their distance over that spread (the farthest to
    1 - (high - low) / spread): a lone candidate, or the best one of a narrow spread, is
    not scored 0. Every candidate's cosine is known (text-only matches included), so
    this orders them as plain min-max scaling by the spread would."""
    vector_weight, text_weight = weights
    items = list(dict.fromkeys([*similarity, *keyword]))
    cosines = [similarity[i] for i in similarity]
    low, high = (min(cosines), max(cosines)) if cosines else (0.0, 0.0)
    spread = max(high - low, min_spread) if cosines else 0.0
    best = max(keyword.values(), default=0.0)
    total = (vector_weight if similarity else 0.0) + (text_weight if best > 0 else 0.0)
    out: dict[K, float] = {}
    for item in items:
        v = 1.0 - (high - similarity[item]) / spread if spread > 0 and item in similarity else 1.0
        t = keyword.get(item, 0.0) / best if best > 0 else 0.0
        score = (vector_weight * v if item in similarity else 0.0) + text_weight * t
        out[item] = score / total if total > 0 else 0.0
    return out


def fused_order(fused: dict[K, float], *tiebreaks: dict[K, float]) -> list[K]:
    """Items by fused score, then by each of ``tiebreaks`` in turn (higher first),
    then by key."""
    return sorted(
        fused,
        key=lambda item: (-fused[item], *(-extra.get(item, 0.0) for extra in tiebreaks), str(item)),
    )


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory found by a hybrid recall, with what each ranking said about it."""

    memory: Memory
    #: Cosine of query and memory vectors (computed for text-only matches too).
    similarity: float
    #: BM25 score, 0 when the full-text search did not find it.
    keyword: float
    #: The reciprocal-rank-fusion score.
    fused: float
    #: ``fused`` on a 0..1 scale (1: first in every ranking). The presets use it in
    #: place of similarity: SIMILARITY returns it, DECAYED multiplies it by recency,
    #: WEIGHTED weighs it like similarity.
    relevance: float


async def hybrid_candidates(
    store: Store,
    partition: Partition,
    *,
    vector: UnitVector,
    text: str,
    flt: MemoryFilter,
    limit: int,
    settings: RecallSettings,
    vector_flt: MemoryFilter | None = None,
    text_search: Awaitable[list[TextHit]] | None = None,
) -> list[Candidate]:
    """Vector and full-text rankings of up to ``limit`` each, fused, best first. A
    ranking whose weight is 0 is not searched at all. ``vector_flt``: the vector
    search's filter when it differs (one embedding space: ``in_space``);
    ``text_search``: the full-text search of ``text``, already started by the caller."""
    weights = (settings.hybrid_vector_weight, settings.hybrid_text_weight)
    searches: list[Awaitable[Any]] = []
    if weights[0] > 0:
        in_space = flt if vector_flt is None else vector_flt
        searches.append(store.search(partition, vector, in_space, limit))
    searches.append(text_search or store.text_search(partition, text, flt, limit))
    results = await asyncio.gather(*searches)
    vector_hits: list[VectorHit] = results[0] if weights[0] > 0 else []
    text_hits: list[TextHit] = results[-1]
    if vector_hits:
        # A match on common words alone (memoryd.text.informative) would take a place
        # in the text ranking that outweighs a close vector match.
        text_hits = [h for h in text_hits if h.informative]

    similarity = {h.memory.id: h.similarity for h in vector_hits}
    keyword = {h.memory.id: h.score for h in text_hits}
    memories = {h.memory.id: h.memory for h in vector_hits}
    text_only = {h.memory.id: h.memory for h in text_hits if h.memory.id not in similarity}
    # The cosine of every text-only match (reported, and the fused order's tiebreak).
    vectors = {i: m.vector for i, m in text_only.items() if m.vector is not None}
    unread = [i for i in text_only if i not in vectors]
    if unread:  # a store that did not return them (the contract says it should)
        found = await store.get(partition, unread, with_vectors=True)
        vectors.update((m.id, m.vector) for m in found if m.vector is not None)
    if vectors:
        matrix = np.asarray(list(vectors.values()), dtype=np.float32)
        # Row by row (einsum): a matrix product rounds a row by its position, and a
        # memory's cosine must not depend on which other memories matched.
        cosines = np.einsum("ij,j->i", matrix, np.asarray(vector, dtype=np.float32))
        similarity.update(zip(vectors, cosines.tolist(), strict=True))
    if settings.fusion == "convex":
        fused = convex(
            similarity if vector_hits else {}, keyword, weights, settings.convex_min_spread
        )
        top = 1.0
    else:
        rankings = [[h.memory.id for h in vector_hits], [h.memory.id for h in text_hits]]
        fused = rrf(rankings, k=settings.rrf_k, weights=weights)
        top = max_fused([w for w, r in zip(weights, rankings, strict=True) if r], settings.rrf_k)
    # A tie between the best of one side and the best of the other is structural
    # (convex: a memory found by its text alone at the lowest cosine against the
    # closest vector with no text match, 0.5 each): the full-text match on an
    # informative term is the more specific evidence (an id, a code, a name).
    order = fused_order(fused, keyword, similarity)
    out = []
    for i in order:
        memory = memories.get(i)
        if memory is None:  # results never carry vectors (the wire does not want them)
            memory = text_only[i].copy()
            memory.vector = None
        out.append(
            Candidate(
                memory=memory,
                similarity=similarity.get(i, 0.0),
                keyword=keyword.get(i, 0.0),
                fused=fused[i],
                relevance=min(1.0, fused[i] / top),
            )
        )
    return out
