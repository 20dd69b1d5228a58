"""Loading a partition into the hot cache: every record of it from the store, in
pages (any backend), and records put into the partition's columns."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import numpy as np

from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, Partition
from memoryd.storage.base import ListPage, Store
from memoryd.storage.hot.partition import HotPartition
from memoryd.storage.hot.rows import stored_form

#: Records read per page when a partition is loaded.
SCAN_PAGE = 5000
_EVERYTHING = MemoryFilter(include_archived=True)


async def scan(store: Store, partition: Partition, page_size: int) -> AsyncIterator[list[Memory]]:
    """Every record of ``partition`` with its vector, archived ones too, oldest first,
    ``page_size`` at a time."""
    wanted = ListPage(MemoryOrder.CREATED_ASC, limit=page_size)
    while True:
        page = await store.list(partition, _EVERYTHING, wanted)
        if not page:
            return
        yield await store.get(partition, [m.id for m in page], with_vectors=True)
        if len(page) < page_size:
            return
        wanted = wanted.following(page[-1])


def put_many(part: HotPartition, memories: Sequence[Memory], *, from_store: bool) -> None:
    """Insert records that carry vectors: as the store returned them
    (``from_store``: already in stored form, taken over) or as passed to ``upsert``."""
    if not memories:
        return
    vectors = np.stack([np.asarray(m.vector, dtype=np.float32) for m in memories])
    if from_store:
        for m in memories:
            m.vector = None
        part.put_rows(memories, vectors)
    else:
        part.put_rows([stored_form(m) for m in memories], vectors)
