"""The partition lease of a shared store: one holder at a time across "replicas"
(separate PartitionLeases over one store), renewed past half its ttl, given up when
another replica took it over after it expired, and nothing at all for one process."""

from __future__ import annotations

import asyncio

import pytest

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import Partition
from memoryd.domain.records import RecordKind
from memoryd.service.common.leases import PartitionLeases
from memoryd.storage.base import Capabilities
from memoryd.storage.memory_records import InMemoryRecordStore

P = Partition("t", "a")


class SharedRecords(InMemoryRecordStore):
    capabilities = Capabilities(shared=True)


@pytest.fixture
async def records() -> SharedRecords:
    store = SharedRecords()
    await store.open()
    return store


async def test_one_holder_at_a_time_across_replicas(records: SharedRecords) -> None:
    replicas = [PartitionLeases(records, ttl_s=5) for _ in range(3)]
    inside: list[int] = []
    overlaps = 0

    async def work(i: int) -> None:
        nonlocal overlaps
        async with replicas[i % 3].hold(P):
            inside.append(i)
            overlaps += len(inside) > 1
            await asyncio.sleep(0.001)
            inside.remove(i)

    await asyncio.gather(*(work(i) for i in range(30)))
    assert overlaps == 0


async def test_a_long_plan_renews_its_lease(records: SharedRecords) -> None:
    leases = PartitionLeases(records, ttl_s=0.2)
    async with leases.hold(P) as lease:
        taken = lease.held
        await asyncio.sleep(0.15)  # past half the ttl
        await lease.confirm()
        assert lease.held is not None and taken is not None
        assert lease.held.expires_at is not None and taken.expires_at is not None
        assert lease.held.expires_at > taken.expires_at


async def test_a_lease_taken_over_after_it_expired_is_given_up(records: SharedRecords) -> None:
    slow, fast = PartitionLeases(records, ttl_s=0.1), PartitionLeases(records, ttl_s=5)
    async with slow.hold(P) as lease:
        await asyncio.sleep(0.15)  # expired: another replica may take it
        async with fast.hold(P):
            pass
        with pytest.raises(Unavailable, match="another replica took it"):
            await lease.confirm()


async def test_one_process_takes_no_lease() -> None:
    records = InMemoryRecordStore()
    await records.open()
    async with PartitionLeases(records).hold(P) as lease:
        await lease.confirm()
        assert lease.held is None
    assert await records.count_records(P, RecordKind.COUNTER) == 0
