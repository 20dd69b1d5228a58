"""list: (created_at, id) ordering and keyset pagination; count with filters."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, PageCursor, Partition
from memoryd.storage.base import ListPage, Store

from .support import BASE, make_memory

P = Partition("tenant", "agent")


def _tied_memories() -> list[Memory]:
    """30 records in 6 groups sharing created_at; ids deliberately not in insert order."""
    ids = [f"id-{k:02d}" for k in range(30)]
    random.Random(1).shuffle(ids)
    return [
        make_memory(P, id=ids[k], created_at=BASE + timedelta(microseconds=k % 6))
        for k in range(30)
    ]


#: The orders a store lists by; the others are the service's (service/memories/ordering.py).
STORE_ORDERS = [MemoryOrder.CREATED_DESC, MemoryOrder.CREATED_ASC]


@pytest.mark.parametrize("order", STORE_ORDERS)
@pytest.mark.parametrize("page_size", [1, 4, 7, 30, 50])
async def test_keyset_pagination_visits_every_record_once(
    store: Store, order: MemoryOrder, page_size: int
) -> None:
    memories = _tied_memories()
    await store.upsert(P, memories)
    desc = order is MemoryOrder.CREATED_DESC
    expected = sorted(memories, key=lambda m: (m.created_at, m.id), reverse=desc)

    seen: list[str] = []
    cursor: PageCursor | None = None
    for _ in range(100):
        page = await store.list(P, MemoryFilter(), ListPage(order, cursor, page_size))
        assert len(page) <= page_size
        if not page:
            break
        seen.extend(m.id for m in page)
        cursor = PageCursor(page[-1].created_at, page[-1].id)
    assert seen == [m.id for m in expected]


async def test_default_order_is_newest_first(store: Store) -> None:
    memories = _tied_memories()
    await store.upsert(P, memories)
    page = await store.list(P, MemoryFilter(), ListPage(limit=5))
    newest = sorted(memories, key=lambda m: (m.created_at, m.id), reverse=True)[:5]
    assert [m.id for m in page] == [m.id for m in newest]
    assert all(m.vector is None for m in page)


async def test_cursor_of_a_deleted_record_still_works(store: Store) -> None:
    memories = _tied_memories()
    await store.upsert(P, memories)
    asc = MemoryOrder.CREATED_ASC
    first = await store.list(P, MemoryFilter(), ListPage(asc, limit=10))
    await store.delete(P, [first[-1].id])
    cursor = PageCursor(first[-1].created_at, first[-1].id)
    rest = await store.list(P, MemoryFilter(), ListPage(asc, cursor, 100))
    expected = sorted(memories, key=lambda m: (m.created_at, m.id))[10:]
    assert [m.id for m in rest] == [m.id for m in expected]


async def test_pagination_with_a_filter(store: Store) -> None:
    memories = _tied_memories()
    for k, m in enumerate(memories):
        m.tags = ("even",) if k % 2 == 0 else ()
    await store.upsert(P, memories)
    flt = MemoryFilter(tags=("even",))
    seen: list[str] = []
    cursor: PageCursor | None = None
    while page := await store.list(P, flt, ListPage(after=cursor, limit=4)):
        seen.extend(m.id for m in page)
        cursor = PageCursor(page[-1].created_at, page[-1].id)
    evens = sorted(memories[::2], key=lambda m: (m.created_at, m.id), reverse=True)
    assert seen == [m.id for m in evens]


async def test_count_with_filters(store: Store) -> None:
    await store.upsert(
        P,
        [
            make_memory(P, namespace="a"),
            make_memory(P, namespace="a", archived=True),
            make_memory(P, namespace="b", tags=("x",)),
        ],
    )
    assert await store.count(P, MemoryFilter()) == 2
    assert await store.count(P, MemoryFilter(include_archived=True)) == 3
    assert await store.count(P, MemoryFilter(namespace="a")) == 1
    assert await store.count(P, MemoryFilter(namespace="a", include_archived=True)) == 2
    assert await store.count(P, MemoryFilter(tags=("x",))) == 1
    assert await store.count(Partition("tenant", "other"), MemoryFilter()) == 0
