"""Context expansion: a found memory's neighbours in its conversation join the results.

The evidence for a question is often the turn just before or after the one that
matches it best ("Did you go?" / "Yes, to the Lisbon marathon"), a turn that shares
neither words nor meaning with the question. So the turns up to ``window`` steps
either side of each of the ``context_seeds`` best candidates are added, ranked just
below their seed: relevance = the seed's relevance x ``context_discount`` per step
away. A neighbour that was found anyway keeps the better of its two relevances. They
count against the request's limit like any result (the list is cut after them).

Which turns are a seed's neighbours:

- a seed with a session position (domain/conversation.py: a session id and a
  sequence number, from Remember or recorded from a session) has for neighbours the
  memories of the same session whose sequence is at most ``window`` away (step =
  the difference), looked for among the ``SCAN_PER_STEP x window`` memories written
  just before and just after it in its namespace (by created_at): a session
  interleaved in one namespace with that many others' turns may lose some;
- a seed without one has for neighbours the ``window`` memories on each side of it
  in its namespace by created_at (a namespace read as one conversation).

Neighbours are read through the request's own filter (the caller's partition, its
clearance and security ceiling, trust, archived, expiry, tags, types, dates), so a
memory the caller could not recall never joins as a neighbour either.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools

import numpy as np

from memoryd.config import RecallSettings
from memoryd.domain.conversation import position_of
from memoryd.domain.errors import Unavailable
from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, PageCursor, Partition, Vector
from memoryd.resilience.degradation import report
from memoryd.service.memories.hybrid import Candidate
from memoryd.storage.base import ListPage, Store

#: Memories read each side of a seed with a session position, per step of the window.
SCAN_PER_STEP = 32


async def with_context(
    store: Store,
    partition: Partition,
    ranked: list[Candidate],
    flt: MemoryFilter,
    vector: Vector,
    settings: RecallSettings,
    window: int,
) -> list[Candidate]:
    """``ranked`` (best first) with the neighbours of its best ones, best first."""
    if window <= 0 or not ranked:
        return ranked
    seeds = ranked[: settings.context_seeds]
    try:
        around = await asyncio.gather(
            *(neighbours(store, partition, flt, seed.memory, window) for seed in seeds)
        )
    except Unavailable as exc:  # the store cannot list: the hits themselves still stand
        report("store", f"context expansion left out: {exc.message}")
        return ranked
    by_id = {c.memory.id: c for c in ranked}
    added: dict[str, tuple[Memory, float]] = {}
    for seed, found_around in zip(seeds, around, strict=True):
        for step, memory in found_around:
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


async def neighbours(
    store: Store, partition: Partition, flt: MemoryFilter, seed: Memory, window: int
) -> list[tuple[int, Memory]]:
    """(steps away, memory) of ``seed``'s neighbours within ``window`` steps, read
    through ``flt`` (see the module's docstring)."""
    position = position_of(seed.metadata)
    reach = window if position is None else SCAN_PER_STEP * window
    around = dataclasses.replace(flt, namespace=seed.namespace)
    cursor = PageCursor(seed.created_at, seed.id)
    before, after = await asyncio.gather(
        *(
            store.list(partition, around, ListPage(order, cursor, reach))
            for order in (MemoryOrder.CREATED_DESC, MemoryOrder.CREATED_ASC)
        )
    )
    if position is None:
        return [*enumerate(before, start=1), *enumerate(after, start=1)]
    out: dict[str, tuple[int, Memory]] = {}
    for memory in itertools.chain(before, after):
        other = position_of(memory.metadata)
        if other is None or other.session_id != position.session_id:
            continue
        step = abs(other.sequence - position.sequence)
        if 0 < step <= window:
            out[memory.id] = (step, memory)
    return list(out.values())


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
