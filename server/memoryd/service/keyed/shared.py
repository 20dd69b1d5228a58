"""SetMemory over a store several memoryd replicas write (Capabilities.shared).

One process serialises a partition's key writes with a lock and a cached counter
(service/keyed/service.py). Across replicas the partition's keys lease does
(service/common/leases.py, ``lease/keys``): a replica writes a partition's keys only
while it holds that lease, and keeps it for a burst of writes, so the writes of a
burst cost no coordination at all. The lease carries the partition's versions: it
is taken with a block of them claimed above every version any earlier holder may
have used (the block recorded in the lease, and the COUNTER record), and freed with
the last version handed out, so the next holder continues right after it.

A write under the lease:

1. reads the key's slot only when it has to: for ``if_version``, or when the key
   quota is near its limit and whether the key is new decides the write. A write
   far below the quota needs no read: each one is counted as if it added a key
   (an estimate that only runs high; the partition is counted exactly once per
   tenure, and again before the estimate could cross the trusted fraction);
2. takes the lease's next version (no store request: the block is in the lease);
3. writes the slot, its history event and the counter (one request per record
   collection, sent at once) and, at the same time, the key's mirror memory (an
   upsert for a value, a delete for a tombstone).

So a SetMemory costs four store requests, five with the read. Writes of one
partition are in version order on every replica (a replica's writes hold its lock,
and another replica's writes follow a lease hand-over), which also orders the
mirrors: the last write of a key leaves its mirror.

A replica killed in step 3 leaves the write partly applied (not acknowledged); the
next write of the key replaces slot and mirror. A version it took is never used
again: its block stays claimed until the lease expires.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Memory, Partition
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.leases import Lease, PartitionLeases
from memoryd.service.common.quotas import Quotas
from memoryd.service.keyed.docs import check_if_version, mirror_id, visible_slot
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore

#: The lease key writes take (its record: ``lease/keys``).
KEYS_LEASE = "keys"
#: Fraction of the key quota up to which a write is admitted on the estimate.
_TRUST_FRACTION = 0.9
#: Partitions whose key counts are kept; past this the counts start over.
_COUNTS_MAX = 10_000


@dataclass(frozen=True, slots=True)
class SlotWrite:
    """What one SetMemory writes at the version it was given."""

    entry: KeyEntry
    records: list[Record]
    #: The mirror memory of a value; None for a tombstone.
    mirror: Memory | None


#: A claimed version -> the write at that version.
Plan = Callable[[int], SlotWrite]


@dataclass(slots=True)
class _KeyCount:
    """Keys of a partition as counted under one tenure of its lease."""

    tenure: int | None
    value: int
    #: Counted (and kept) exactly; else every write since counted as a new key.
    exact: bool


class SharedKeyWrites:
    """SetMemory among replicas: under the partition's keys lease (module doc)."""

    def __init__(
        self,
        records: RecordStore,
        store: Store,
        leases: PartitionLeases,
        quotas: Quotas | None,
    ) -> None:
        self._records = records
        self._store = store
        self._leases = leases
        self._quotas = quotas
        self._counts: dict[Partition, _KeyCount] = {}

    async def set(self, scope: CallScope, key: str, if_version: int | None, plan: Plan) -> KeyEntry:
        """Check ``if_version`` and the key quota, take a version, write."""
        partition = scope.partition
        async with self._leases.hold(partition) as lease:
            if if_version is not None or not await self._room_without_reading(partition, lease):
                found = await self._records.get_records(partition, RecordKind.KEY, [key])
                current = visible_slot(scope.clearance, found[0] if found else None)
                check_if_version(if_version, current)
                if current is None:
                    await self._admit_new_key(partition, lease)
            write = plan(await lease.version())
            await asyncio.gather(
                self._records.put_records(partition, write.records),
                self._write_mirror(partition, write),
            )
        return write.entry

    async def _write_mirror(self, partition: Partition, write: SlotWrite) -> None:
        if write.mirror is not None:
            await self._store.upsert(partition, [write.mirror])
            return
        key = write.entry.key
        await self._store.delete(
            partition, [mirror_id(partition.tenant_id, partition.agent_id, key)]
        )

    # -- the key quota -------------------------------------------------------------------

    def _limit(self, partition: Partition) -> int:
        return self._quotas.keys_limit(partition.tenant_id) if self._quotas is not None else 0

    async def _count(self, partition: Partition, lease: Lease) -> _KeyCount:
        """The partition's key count, counted once per tenure of the lease (other
        replicas add keys between tenures, never during one)."""
        count = self._counts.get(partition)
        if count is None or count.tenure != lease.tenure:
            if len(self._counts) >= _COUNTS_MAX:
                self._counts.clear()
            value = await self._records.count_records(partition, RecordKind.KEY)
            count = self._counts[partition] = _KeyCount(lease.tenure, value, exact=True)
        return count

    async def _room_without_reading(self, partition: Partition, lease: Lease) -> bool:
        """Whether the quota admits this write even if it adds a key (then it is
        counted as one): no need to read the slot."""
        limit = self._limit(partition)
        if not limit:
            return True
        count = await self._count(partition, lease)
        if count.value + 1 > limit * _TRUST_FRACTION and not count.exact:
            # The estimate ran high: count again before reading slots.
            count.value = await self._records.count_records(partition, RecordKind.KEY)
            count.exact = True
        if count.value + 1 > limit * _TRUST_FRACTION:
            return False
        count.value += 1
        count.exact = False
        return True

    async def _admit_new_key(self, partition: Partition, lease: Lease) -> None:
        """quotas.max_keys_per_partition for a key known to be new (tombstoned slots
        count: they are stored)."""
        if self._quotas is None or not self._limit(partition):
            return
        count = await self._count(partition, lease)
        if not count.exact and count.value + 1 > self._limit(partition):
            count.value = await self._records.count_records(partition, RecordKind.KEY)
            count.exact = True
        self._quotas.check_keys(partition.tenant_id, count.value, 1)
        count.value += 1
