"""Bulk reads and writes for lifecycle operations, in batches that leave room for
requests: every batch is its own store call, and the event loop gets a turn between
batches (an operation over 100k memories never holds the store or the loop long).

Rewrites re-read each batch (with vectors) right before writing it and go through
the write batcher like every other write, so a memory changed by a request a moment
earlier is rewritten from its current state, not from the scan's copy.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memoryd.config import DedupSettings, LimitsSettings, MaintenanceSettings
from memoryd.domain.models import Memory, MemoryFilter, MemoryOrder, PageCursor, Partition, utcnow
from memoryd.domain.records import Record, RecordKind
from memoryd.embedding.base import Embedder
from memoryd.security.masking import Masker
from memoryd.service.keyed import KeyedMemoryService
from memoryd.service.llm import ChatClient
from memoryd.service.sessions import SessionService
from memoryd.service.working import WorkingMemoryService
from memoryd.service.write_batcher import WriteBatcher
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore

#: Memories read per page when scanning (reads are cheap per row, costly per call;
#: big conversions run in a worker thread).
SCAN_PAGE = 5000
#: Every memory of a partition: archived and expired ones included.
EVERYTHING = MemoryFilter(include_archived=True)
#: Record kinds that hold an agent's data (COUNTER records are bookkeeping).
DATA_KINDS = (
    RecordKind.KEY,
    RecordKind.KEY_EVENT,
    RecordKind.WORKING,
    RecordKind.PROFILE,
    RecordKind.SESSION,
    RecordKind.SESSION_MESSAGE,
    RecordKind.STATE,
)


@dataclass(slots=True)
class LifecycleDeps:
    """What the lifecycle operations work with."""

    store: Store
    records: RecordStore
    writer: WriteBatcher
    embedder: Embedder
    settings: MaintenanceSettings
    limits: LimitsSettings
    dedup: DedupSettings
    #: Root of the key-history archive (history_policy "archive").
    history_dir: Path
    keyed: KeyedMemoryService | None = None
    working: WorkingMemoryService | None = None
    sessions: SessionService | None = None
    #: The optional chat endpoint (consolidation summaries).
    llm: ChatClient | None = None
    #: Masks exports for low-clearance callers (security/masking.py).
    masker: Masker | None = None
    clock: Callable[[], datetime] = utcnow

    @property
    def batch(self) -> int:
        return self.settings.batch_size


async def pause() -> None:
    """Let requests run between batches."""
    await asyncio.sleep(0)


async def scan(
    store: Store, partition: Partition, flt: MemoryFilter, page_size: int = SCAN_PAGE
) -> AsyncIterator[list[Memory]]:
    """Every matching memory (without vectors), oldest first, a page at a time."""
    after: PageCursor | None = None
    while True:
        page = await store.list(
            partition, flt, order=MemoryOrder.CREATED_ASC, after=after, limit=page_size
        )
        if page:
            yield page
        if len(page) < page_size:
            return
        after = PageCursor(page[-1].created_at, page[-1].id)
        await pause()


async def scan_records(
    records: RecordStore, partition: Partition, kind: RecordKind, batch: int, prefix: str = ""
) -> AsyncIterator[list[Record]]:
    after: str | None = None
    while True:
        page = await records.list_records(partition, kind, prefix=prefix, after=after, limit=batch)
        if page:
            yield page
        if len(page) < batch:
            return
        after = page[-1].key
        await pause()


def chunks(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


async def rewrite(
    deps: LifecycleDeps,
    partition: Partition,
    ids: Sequence[str],
    change: Callable[[Memory], Memory | None],
) -> int:
    """Apply ``change`` to each memory (re-read with its vector); None leaves one as it
    is. Returns how many were written."""
    written = 0
    for chunk in chunks(ids, deps.batch):
        current = await deps.store.get(partition, chunk, with_vectors=True)
        updated = [m for m in (change(c) for c in current) if m is not None]
        if updated:
            await deps.writer.submit(partition, updated)
            written += len(updated)
        await pause()
    return written


async def delete(deps: LifecycleDeps, partition: Partition, ids: Sequence[str]) -> int:
    gone = 0
    for chunk in chunks(ids, deps.batch):
        gone += len(await deps.store.delete(partition, chunk))
        await pause()
    return gone


async def delete_records(
    deps: LifecycleDeps, partition: Partition, kind: RecordKind, keys: Sequence[str]
) -> int:
    gone = 0
    for chunk in chunks(keys, deps.batch):
        gone += len(await deps.records.delete_records(partition, kind, chunk))
        await pause()
    return gone
