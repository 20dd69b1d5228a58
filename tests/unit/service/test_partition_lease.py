"""The partition lease of a shared store: one holder at a time across "replicas"
(separate PartitionLeases over one store), renewed past half its ttl, given up when
another replica took it over after it expired, and nothing at all for one process;
held for a burst (taken once, freed after lingering), handed to a replica that asked
at the end of a turn, and carrying dense versions across hand-overs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

import pytest

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.leases import VERSION_BLOCK, PartitionLeases
from memoryd.storage.base import Capabilities
from memoryd.storage.memory_records import InMemoryRecordStore

P = Partition("t", "a")
T = TypeVar("T")


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


class CountingRecords(SharedRecords):
    """Counts the calls a lease makes (reads, conditional and plain writes; not the
    ones the in-process store makes inside them)."""

    def __init__(self) -> None:
        super().__init__()
        self.requests = 0
        self._depth = 0

    async def _counted(self, call: Awaitable[T]) -> T:
        self.requests += self._depth == 0
        self._depth += 1
        try:
            return await call
        finally:
            self._depth -= 1

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        return await self._counted(super().get_records(partition, kind, keys))

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        return await self._counted(super().put_record_if(partition, record, expected))

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        await self._counted(super().put_records(partition, records))


async def test_a_burst_takes_the_lease_once_and_frees_it_after_lingering() -> None:
    records = CountingRecords()
    await records.open()
    leases = PartitionLeases(records, ttl_s=5, linger_s=0.05)
    for _ in range(20):
        async with leases.hold(P) as lease:
            await lease.confirm()
    assert records.requests == 2  # read, take (the in-process store needs no read-back)
    [held] = await records.get_records(P, RecordKind.COUNTER, [leases.key])
    assert held.doc["holder"]
    await asyncio.sleep(0.15)  # idle past linger_s: freed in the background
    [freed] = await records.get_records(P, RecordKind.COUNTER, [leases.key])
    assert not freed.doc["holder"]
    await leases.close()


async def test_versions_are_dense_across_hand_overs_and_skip_a_dead_holders_block(
    records: SharedRecords,
) -> None:
    a, b = (PartitionLeases(records, linger_s=0, versions="keys") for _ in range(2))
    got = []
    for leases in (a, b, a, b):
        async with leases.hold(P) as lease:
            got += [await lease.version(), await lease.version()]
    assert got == list(range(1, 9))  # freed with the last number: the next one continues

    dead = PartitionLeases(records, ttl_s=0.05, versions="keys")
    async with dead.hold(P) as lease:
        assert await lease.version() == 9
    dead._tenures.clear()  # the process died holding it: never freed
    await asyncio.sleep(0.1)  # expired
    async with a.hold(P) as lease:
        assert await lease.version() == 9 + VERSION_BLOCK  # above its whole block


async def test_a_holder_past_its_block_claims_another(records: SharedRecords) -> None:
    leases = PartitionLeases(records, linger_s=0, versions="keys")
    async with leases.hold(P) as lease:
        versions = [await lease.version() for _ in range(VERSION_BLOCK + 2)]
        assert lease.held is not None and lease.held.doc["top"] == VERSION_BLOCK * 2
    assert versions == list(range(1, VERSION_BLOCK + 3))


async def test_a_busy_holder_hands_over_at_the_end_of_its_turn(records: SharedRecords) -> None:
    """Replica A writes without pause; B asks, and gets the lease at A's next turn."""
    a = PartitionLeases(records, turn_s=0.05, linger_s=0.05)
    b = PartitionLeases(records, turn_s=0.05, linger_s=0.05)
    stop = asyncio.Event()
    inside: list[str] = []

    async def busy() -> None:
        while not stop.is_set():
            async with a.hold(P):
                inside.append("a")
                await asyncio.sleep(0.002)
                inside.remove("a")

    writer = asyncio.create_task(busy())
    await asyncio.sleep(0.02)
    async with b.hold(P):
        assert inside == []  # A is not writing while B holds it
    stop.set()
    await writer
    await a.close()
    await b.close()


async def test_a_failed_write_ends_the_burst_too(records: SharedRecords) -> None:
    """A writer refused under the lease (a quota, a precondition) does not keep it."""
    leases = PartitionLeases(records, ttl_s=5, linger_s=0.02)
    with pytest.raises(ValueError):
        async with leases.hold(P):
            raise ValueError("refused")
    await asyncio.sleep(0.1)
    [freed] = await records.get_records(P, RecordKind.COUNTER, [leases.key])
    assert not freed.doc["holder"]


class FlakyRecords(SharedRecords):
    """A shared store whose conditional writes fail while ``down`` (unreachable)."""

    down = False

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        if self.down:
            raise Unavailable("store unavailable (unreachable)")
        return await super().put_record_if(partition, record, expected)


async def test_a_lease_its_holder_could_not_free_is_taken_at_once_by_the_same_process() -> None:
    """The freeing failed: the lease record still names this process, whose next
    writer takes it over instead of waiting out a ttl of an hour (a waiter writes a
    want record: none is written)."""
    records = FlakyRecords()
    await records.open()
    leases = PartitionLeases(records, ttl_s=3600, linger_s=0, versions="keys")
    async with leases.hold(P) as lease:
        assert await lease.version() == 1
        records.down = True
    [stuck] = await records.get_records(P, RecordKind.COUNTER, [leases.key])
    assert stuck.doc["holder"]  # not freed
    records.down = False
    async with asyncio.timeout(60), leases.hold(P) as lease:  # a liveness guard
        assert await lease.version() == 1 + VERSION_BLOCK  # above the stuck block
        assert lease.held is not None and lease.held.doc["holder"] != stuck.doc["holder"]
    assert await records.get_records(P, RecordKind.COUNTER, [f"{leases.key}/want"]) == []
    await leases.close()


async def test_a_lease_its_holder_could_not_free_is_freed_once_the_store_answers() -> None:
    """Another replica gets the lease once the store is back, not after a ttl of an
    hour: the holder retries the freeing in the background."""
    records = FlakyRecords()
    await records.open()
    holder, other = (PartitionLeases(records, ttl_s=3600, linger_s=0) for _ in range(2))
    async with holder.hold(P):
        records.down = True
    records.down = False
    # A liveness guard, not a timing: without the retry this waits 2 hours.
    async with asyncio.timeout(60), other.hold(P) as lease:
        assert lease.held is not None
    await holder.close()
    await other.close()


async def test_a_replica_restarted_after_a_crash_takes_back_its_lease_at_once(
    records: SharedRecords,
) -> None:
    """The same replica id (kept in its data dir) in a new process: the lease its
    previous process died holding is its own, not waited out for a ttl of an hour;
    another replica's would be."""
    before = PartitionLeases(records, replica="r1", ttl_s=3600, versions="keys")
    async with before.hold(P) as lease:
        assert await lease.version() == 1
    before._tenures.clear()  # the process died holding it: never freed
    after = PartitionLeases(records, replica="r1", ttl_s=3600, versions="keys")
    async with asyncio.timeout(60), after.hold(P) as lease:  # a liveness guard
        assert await lease.version() == 1 + VERSION_BLOCK
    other = PartitionLeases(records, replica="r2", ttl_s=3600, linger_s=0)
    after_held = await records.get_records(P, RecordKind.COUNTER, [after.key])
    assert after_held[0].doc["holder"]  # still held (lingering): r2 must ask for it
    assert not other._ours(after_held[0])
    await after.close()
