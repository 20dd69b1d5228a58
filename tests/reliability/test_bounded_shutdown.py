"""A shutdown is bounded (issue 20, finding 9): SIGTERM with a 1,000-item batch in
flight under load exited 16-29 s after the signal (grace 10 s), mostly flushing access
statistics and applying the backlog. Each close that can take long now has a budget,
and what it leaves is safe to leave: pending writes stay in the log for the next
start, access statistics are best effort, an index refresh is its own atomic commit.
``make bench`` (mixed) measures the signal-to-exit time on a real daemon; these check
that each close returns while its store call hangs (a deadlock guard of 30 s, not a
timing assertion)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoryd.domain.models import Memory, Partition, utcnow
from memoryd.durability.facades import DurableStore
from memoryd.service.memories.access_stats import SMALL_FLUSH, AccessStatsBuffer
from memoryd.storage.lancedb.indexing import IndexRefresher
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.reliability.support import open_core
from tests.reliability.test_replay import DIM, _memory

P = Partition("t", "a")


class HangingStore:
    """An in-memory store whose writes never finish while ``hang`` is set."""

    def __init__(self) -> None:
        self.inner = InMemoryStore(DIM)
        self.name = self.inner.name
        self.capabilities = self.inner.capabilities
        self.hang = asyncio.Event()

    async def open(self) -> None:
        await self.inner.open()

    async def upsert(self, partition: Partition, memories: Sequence[Memory], **kw: Any) -> None:
        if self.hang.is_set():
            await asyncio.Event().wait()
        await self.inner.upsert(partition, memories, **kw)

    async def record_access(self, partition: Partition, updates: Any) -> None:
        await asyncio.Event().wait()

    async def get(self, partition: Partition, ids: Sequence[str], **kw: Any) -> list[Memory]:
        return await self.inner.get(partition, ids, **kw)

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        return await self.inner.list_partitions(tenant_id)


async def test_close_leaves_what_it_cannot_apply_to_the_log(tmp_path: Path) -> None:
    store = HangingStore()
    await store.open()
    core = await open_core(tmp_path, store, InMemoryRecordStore(), apply_behind=8)
    store.hang.set()
    await DurableStore(core, dimension=DIM).upsert(P, [_memory(1, P)])  # answered; its apply hangs
    core.final_apply_s = 0.2
    async with asyncio.timeout(30):
        await core.close()
    assert len(core.pending) == 1  # not applied, not dropped
    fresh = HangingStore()
    await fresh.open()
    again = await open_core(tmp_path, fresh, InMemoryRecordStore())
    assert again.replayed == 1
    assert [m.id for m in await fresh.inner.get(P, ["m1"])] == ["m1"]
    await again.close()


async def test_the_last_access_statistics_flush_is_bounded() -> None:
    store = HangingStore()
    buffer = AccessStatsBuffer(store, interval_s=3600, max_pending=10_000)  # type: ignore[arg-type]
    buffer.start()
    buffer.record(P, [f"m{i}" for i in range(SMALL_FLUSH + 1)], utcnow())  # a big flush
    async with asyncio.timeout(30):
        await buffer.close(budget_s=0.1)


async def test_an_index_refresh_under_way_is_abandoned_at_close() -> None:
    started = asyncio.Event()

    async def optimize() -> None:
        started.set()
        await asyncio.Event().wait()  # a compaction of a large table

    refresher = IndexRefresher(optimize, rows=1, idle_s=0)
    refresher.wrote(5)
    await started.wait()
    task = refresher.task
    async with asyncio.timeout(30):
        await refresher.close(wait_s=0.1)
    assert task is not None and task.cancelled()
