"""Replay at start: the log applied in a few large store calls, and a store that
fails (or does not open) leaves the daemon serving degraded, not dead.

Real write-ahead logs on disk; in-process stores that count or refuse their calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.domain.errors import StoreError
from memoryd.domain.models import Memory, Partition, utcnow
from memoryd.durability.facades import DurableStore
from memoryd.durability.ops import MAX_CALL_ITEMS, Op, encode
from memoryd.durability.wal import WriteAheadLog
from memoryd.storage.base import NO_HINTS, UpsertHints
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.reliability.support import open_core, until

DIM = 8
PARTITIONS = [Partition("t", f"agent{i}") for i in range(3)]


class CountingStore:
    """An in-memory store that counts its write calls and fails them while ``down``."""

    def __init__(self) -> None:
        self.inner = InMemoryStore(DIM)
        self.name = self.inner.name
        self.capabilities = self.inner.capabilities
        self.upserts = 0
        self.down = False

    async def open(self) -> None:
        await self.inner.open()

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        if self.down:
            raise StoreError("lancedb upsert failed: no space left on device")
        self.upserts += 1
        await self.inner.upsert(partition, memories, hints)

    async def get(self, partition: Partition, ids: Sequence[str], **kw: Any) -> list[Memory]:
        if self.down:
            raise StoreError("lancedb get failed: no space left on device")
        return await self.inner.get(partition, ids, **kw)

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        return await self.inner.list_partitions(tenant_id)


def _memory(i: int, partition: Partition) -> Memory:
    now = utcnow()
    vec = np.full(DIM, 0.01, dtype=np.float32)
    vec[i % DIM] = 1.0
    return Memory(
        id=f"m{i}",
        tenant_id=partition.tenant_id,
        agent_id=partition.agent_id,
        content=f"memory {i}",
        created_at=now,
        updated_at=now,
        vector=vec,
    )


def _log_remembers(tmp: Path, count: int) -> dict[Partition, list[str]]:
    """``count`` one-memory entries, the partitions' writers interleaved (as under load)."""
    written: dict[Partition, list[str]] = {p: [] for p in PARTITIONS}
    payloads = []
    for i in range(count):
        partition = PARTITIONS[i % len(PARTITIONS)]
        payloads.append(encode([Op("upsert", partition, memories=(_memory(i, partition),))]))
        written[partition].append(f"m{i}")
    WriteAheadLog(tmp / "wal").append_offline(payloads)
    return written


async def test_replay_applies_thousands_of_entries_in_a_few_store_calls(tmp_path: Path) -> None:
    written = _log_remembers(tmp_path, 10_000)
    store = CountingStore()
    await store.open()
    core = await open_core(tmp_path, store, InMemoryRecordStore())
    assert core.replayed == 10_000 and not core.pending
    # Per partition, ceil(3,334 / MAX_CALL_ITEMS) calls instead of one per entry.
    assert store.upserts == len(PARTITIONS) * -(-3334 // MAX_CALL_ITEMS)
    for partition, ids in written.items():
        assert len(await store.inner.get(partition, ids)) == len(ids)
    await core.close()


async def test_a_store_failing_during_replay_leaves_the_log_pending_and_serving(
    tmp_path: Path,
) -> None:
    written = _log_remembers(tmp_path, 30)
    store = CountingStore()
    await store.open()
    store.down = True
    core = await open_core(tmp_path, store, InMemoryRecordStore())
    state = core.states.get("store")
    assert state is not None and not state.ok and "no space left on device" in state.reason
    assert len(core.pending) == 30 and core.replayed == 0
    facade = DurableStore(core, dimension=DIM)
    p = PARTITIONS[0]
    assert [m.id for m in await facade.get(p, written[p][:3])] == written[p][:3]  # from the log
    store.down = False  # space freed: the background retry applies everything
    await until(lambda: not core.pending)
    await until(lambda: core.states.get("store").ok)  # type: ignore[union-attr]
    for partition, ids in written.items():
        assert len(await store.inner.get(partition, ids)) == len(ids)
    await core.close()


async def test_a_store_that_did_not_open_is_opened_in_the_background(tmp_path: Path) -> None:
    written = _log_remembers(tmp_path, 9)
    store = CountingStore()
    attempts = []

    async def reopen() -> None:
        attempts.append(1)
        if len(attempts) < 3:
            raise StoreError("qdrant open failed: unreachable")
        await store.open()

    core = await open_core(tmp_path, store, InMemoryRecordStore(), reopen=reopen)
    assert len(core.pending) == 9 and not core.states.get("store").ok  # type: ignore[union-attr]
    await until(lambda: not core.pending)
    assert len(attempts) == 3
    for partition, ids in written.items():
        assert len(await store.inner.get(partition, ids)) == len(ids)
    await core.close()
