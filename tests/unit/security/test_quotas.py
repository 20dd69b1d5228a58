"""Quotas: memories per partition (with per-tenant overrides), keys, session messages."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from memoryd.domain.errors import ResourceExhausted
from memoryd.domain.models import Memory, MemoryFilter, Partition, utcnow
from memoryd.security.settings import QuotaSettings
from memoryd.service.common.quotas import Quotas
from memoryd.storage.memory import InMemoryStore

P = Partition("t1", "a1")


def memories(n: int, start: int = 0) -> list[Memory]:
    now = utcnow()
    vec = np.ones(8, dtype=np.float32) / np.sqrt(8)
    return [
        Memory(
            id=f"m{start + i}",
            tenant_id=P.tenant_id,
            agent_id=P.agent_id,
            content="c",
            created_at=now,
            updated_at=now,
            vector=vec,
        )
        for i in range(n)
    ]


async def test_memories_per_partition_quota() -> None:
    store = InMemoryStore(dimension=8)
    await store.open()
    quotas = Quotas(QuotaSettings(max_memories_per_partition=5), store)
    batch = memories(4)
    await quotas.admit_memories(P, 4, lambda: store.upsert(P, batch))
    with pytest.raises(ResourceExhausted, match=r"quotas.max_memories_per_partition \(5\)"):
        await quotas.admit_memories(P, 2, lambda: store.upsert(P, memories(2, 10)))
    assert await store.count(P, MemoryFilter(include_archived=True)) == 4
    await quotas.admit_memories(P, 1, lambda: store.upsert(P, memories(1, 20)))
    # Another partition has its own count.
    other = Partition("t1", "a2")
    await quotas.admit_memories(other, 5, lambda: store.upsert(other, []))


async def test_overlapping_writes_that_add_nothing_keep_the_books() -> None:
    # A Remember merged into an existing memory adds 0. Two such writes overlapping:
    # the first to finish dropped the partition's in-flight entry, the second then
    # failed with KeyError (INTERNAL) although its write was stored (issue 20, found
    # by make bench's mixed load).
    store = InMemoryStore(dimension=8)
    await store.open()
    quotas = Quotas(QuotaSettings(max_memories_per_partition=50), store)
    first_in, release = asyncio.Event(), asyncio.Event()

    async def held() -> None:
        first_in.set()
        await release.wait()

    first = asyncio.ensure_future(quotas.admit_memories(P, 0, held))
    await first_in.wait()
    second = asyncio.ensure_future(quotas.admit_memories(P, 0, release.wait))
    third = asyncio.ensure_future(quotas.admit_memories(P, 2, lambda: store.upsert(P, memories(2))))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, second, third)
    await quotas.admit_memories(P, 1, lambda: store.upsert(P, memories(1, 5)))
    assert await store.count(P, MemoryFilter(include_archived=True)) == 3


async def test_per_tenant_override_and_unlimited() -> None:
    store = InMemoryStore(dimension=8)
    await store.open()
    settings = QuotaSettings(
        max_memories_per_partition=1,
        tenants={"t1": {"max_memories_per_partition": 0}},  # type: ignore[dict-item]
    )
    quotas = Quotas(settings, store)
    await quotas.admit_memories(P, 3, lambda: store.upsert(P, memories(3)))
    q = Partition("t2", "a")
    with pytest.raises(ResourceExhausted):
        await quotas.admit_memories(q, 2, lambda: store.upsert(q, []))


def test_keys_and_session_messages() -> None:
    quotas = Quotas(
        QuotaSettings(
            max_keys_per_partition=3,
            max_session_messages=10,
            tenants={"big": {"max_session_messages": 100}},
        ),  # type: ignore[dict-item]
        store=None,  # type: ignore[arg-type]
    )
    quotas.check_keys("t", 2, 1)
    with pytest.raises(ResourceExhausted, match="max_keys_per_partition"):
        quotas.check_keys("t", 3, 1)
    with pytest.raises(ResourceExhausted, match="max_session_messages"):
        quotas.check_session_messages("t", 9, 2)
    quotas.check_session_messages("big", 9, 2)


async def test_a_write_adding_nothing_finishing_last_is_counted_right() -> None:
    """A deduplicated Remember adds no memory; while it is in flight another write of
    the partition finishes. Before the fix the first to finish dropped the partition's
    in-flight entry and the other failed with KeyError (INTERNAL), found with three
    replicas remembering one fact at once."""
    import asyncio

    store = InMemoryStore(dimension=8)
    await store.open()
    quotas = Quotas(QuotaSettings(max_memories_per_partition=5), store)
    release = asyncio.Event()

    async def slow_merge() -> None:
        await release.wait()

    merge = asyncio.create_task(quotas.admit_memories(P, 0, slow_merge))
    await asyncio.sleep(0)
    await quotas.admit_memories(P, 1, lambda: store.upsert(P, memories(1)))
    release.set()
    await merge
    # The bookkeeping is back to nothing in flight: the quota still admits exactly 4.
    await quotas.admit_memories(P, 4, lambda: store.upsert(P, memories(4, 10)))
    with pytest.raises(ResourceExhausted):
        await quotas.admit_memories(P, 1, lambda: store.upsert(P, memories(1, 20)))
