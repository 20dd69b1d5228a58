"""ListMemories by access count or importance: orders the stores do not keep.

Stores list by creation time only (with a keyset cursor), so these orders are made
here: one scan of the matching memories per page, sorted by (value desc, created_at
desc, id), and a keyset cursor of the last item's (value, created_at, id). A page costs
a scan of the filter's matches, so on large partitions prefer a narrow filter.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable
from datetime import datetime

from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, PageCursor, Partition
from memoryd.storage.base import ListPage, Store

#: Memories read per store call while scanning.
SCAN_PAGE = 5000

#: The value each service-side order sorts by (descending).
ORDER_KEYS: dict[MemoryOrder, Callable[[Memory], float]] = {
    MemoryOrder.ACCESS_COUNT_DESC: lambda m: float(m.access_count),
    MemoryOrder.IMPORTANCE_DESC: lambda m: float(m.importance),
}

_Key = tuple[float, float, str]


def _sort_key(value: float, created_at: datetime, memory_id: str) -> _Key:
    # heapq.nsmallest: the largest value first, then the newest, then by id.
    return (-value, -created_at.timestamp(), memory_id)


def cursor_for(order: MemoryOrder, last: Memory) -> PageCursor:
    """The page cursor after ``last``; its id carries the sort value too."""
    value = ORDER_KEYS[order](last)
    return PageCursor(last.created_at, json.dumps([value, last.id]))


async def ranked_page(
    store: Store,
    partition: Partition,
    flt: MemoryFilter,
    order: MemoryOrder,
    after: PageCursor | None,
    limit: int,
) -> list[Memory]:
    """Up to ``limit`` memories in ``order`` after ``after`` (a cursor_for one)."""
    value_of = ORDER_KEYS[order]
    bound: _Key | None = None
    if after is not None:
        value, memory_id = json.loads(after.id)
        bound = _sort_key(float(value), after.created_at, str(memory_id))
    best: list[tuple[_Key, Memory]] = []
    wanted = ListPage(MemoryOrder.CREATED_ASC, limit=SCAN_PAGE)
    while True:
        page = await store.list(partition, flt, wanted)
        keyed = ((_sort_key(value_of(m), m.created_at, m.id), m) for m in page)
        candidates = [(k, m) for k, m in keyed if bound is None or k > bound]
        best = heapq.nsmallest(limit, [*best, *candidates], key=lambda item: item[0])
        if len(page) < SCAN_PAGE:
            return [m for _, m in best]
        wanted = wanted.following(page[-1])
