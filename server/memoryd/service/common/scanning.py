"""Store scans in pages that leave room for requests: every page is its own store call,
and the event loop gets a turn between pages (a scan over 100k memories never holds
the store or the loop long)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import ListPage, Store
from memoryd.storage.records import KeyPage, RecordStore

#: Memories read per page when scanning (reads are cheap per row, costly per call;
#: big conversions run in a worker thread).
SCAN_PAGE = 5000


async def pause() -> None:
    """Let requests run between batches."""
    await asyncio.sleep(0)


async def scan(
    store: Store, partition: Partition, flt: MemoryFilter, page_size: int = SCAN_PAGE
) -> AsyncIterator[list[Memory]]:
    """Every matching memory (without vectors), oldest first, a page at a time."""
    wanted = ListPage(MemoryOrder.CREATED_ASC, limit=page_size)
    while True:
        page = await store.list(partition, flt, wanted)
        if page:
            yield page
        if len(page) < page_size:
            return
        wanted = wanted.following(page[-1])
        await pause()


async def scan_records(
    records: RecordStore, partition: Partition, kind: RecordKind, batch: int, prefix: str = ""
) -> AsyncIterator[list[Record]]:
    """Every record of ``kind`` (under ``prefix``) in key order, ``batch`` at a time."""
    after: str | None = None
    while True:
        page = await records.list_records(
            partition, kind, KeyPage(prefix=prefix, after=after, limit=batch)
        )
        if page:
            yield page
        if len(page) < batch:
            return
        after = page[-1].key
        await pause()


async def expired_keys(
    records: RecordStore, partition: Partition, kind: RecordKind, now: datetime, batch: int
) -> list[str]:
    """Keys of the records of ``kind`` that expired at or before ``now`` (a scan of
    every one, ``batch`` at a time)."""
    return [
        r.key
        async for page in scan_records(records, partition, kind, batch)
        for r in page
        if r.expired(now)
    ]


def chunks(items: Sequence[str], size: int) -> list[Sequence[str]]:
    """``items`` cut into consecutive slices of at most ``size``."""
    return [items[i : i + size] for i in range(0, len(items), size)]
