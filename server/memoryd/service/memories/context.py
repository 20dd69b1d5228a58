"""Context expansion: a found memory's neighbours in its conversation join the results.

The evidence for a question is often the turn just before or after the one that
matches it best ("Did you go?" / "Yes, to the Lisbon marathon"), a turn that shares
neither words nor meaning with the question. Memories of one namespace ordered by
created_at are a conversation's turns in order (the client sets created_at to the
turn's time), so the ``context_neighbours`` memories on each side of the
``context_seeds`` best candidates are added, ranked just below their seed:
relevance = the seed's relevance x ``context_discount`` per step away. A neighbour
that was found anyway keeps the better of its two relevances. Neighbours pass the
request's own filter (security ceiling, archived, expiry, tags, types, dates).
"""

from __future__ import annotations

import asyncio
import dataclasses

import numpy as np

from memoryd.config import RecallSettings
from memoryd.domain.errors import Unavailable
from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, PageCursor, Partition, Vector
from memoryd.resilience.degradation import report
from memoryd.service.memories.hybrid import Candidate
from memoryd.storage.base import ListPage, Store


async def with_context(
    store: Store,
    partition: Partition,
    ranked: list[Candidate],
    flt: MemoryFilter,
    vector: Vector,
    settings: RecallSettings,
) -> list[Candidate]:
    """``ranked`` (best first) with the neighbours of its best ones, best first."""
    reach = settings.context_neighbours
    if reach <= 0 or not ranked:
        return ranked
    seeds = ranked[: settings.context_seeds]
    try:
        pages = await asyncio.gather(
            *(
                store.list(
                    partition,
                    dataclasses.replace(flt, namespace=seed.memory.namespace),
                    ListPage(order, PageCursor(seed.memory.created_at, seed.memory.id), reach),
                )
                for seed in seeds
                for order in (MemoryOrder.CREATED_DESC, MemoryOrder.CREATED_ASC)
            )
        )
    except Unavailable as exc:  # the store cannot list: the hits themselves still stand
        report("store", f"context expansion left out: {exc.message}")
        return ranked
    by_id = {c.memory.id: c for c in ranked}
    added: dict[str, tuple[Memory, float]] = {}
    for i, page in enumerate(pages):
        seed = seeds[i // 2]
        for step, memory in enumerate(page, start=1):
            relevance = seed.relevance * settings.context_discount**step
            found = by_id.get(memory.id)
            if found is not None:
                if relevance > found.relevance:
                    by_id[memory.id] = dataclasses.replace(found, relevance=relevance)
            elif relevance > added.get(memory.id, (memory, -1.0))[1]:
                added[memory.id] = (memory, relevance)
    cosines = await _cosines(store, partition, list(added), vector)
    for memory_id, (memory, relevance) in added.items():
        by_id[memory_id] = Candidate(
            memory=memory,
            similarity=cosines.get(memory_id, 0.0),
            keyword=0.0,
            fused=0.0,
            relevance=relevance,
        )
    # Stable: equal relevances keep the fused order (a neighbour after its seed).
    return sorted(by_id.values(), key=lambda c: -c.relevance)


async def _cosines(
    store: Store, partition: Partition, ids: list[str], vector: Vector
) -> dict[str, float]:
    """The similarity component of the added neighbours (listing returns no vectors)."""
    if not ids:
        return {}
    found = [m for m in await store.get(partition, ids, with_vectors=True) if m.vector is not None]
    if not found:
        return {}
    matrix = np.asarray([m.vector for m in found], dtype=np.float32)
    cosines = matrix @ np.asarray(vector, dtype=np.float32)
    return {m.id: float(c) for m, c in zip(found, cosines.tolist(), strict=True)}
