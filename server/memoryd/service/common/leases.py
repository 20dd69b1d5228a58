"""Who may change a partition's memories at once, across replicas of a shared store.

Deduplication plans a write against the memories stored (and, in one process, the
ones other requests are about to write): two replicas planning the same text at the
same moment would each see no duplicate and insert it twice, and a memory quota
counted by two replicas at once admits one write too many. Those plans therefore
run under a lease on the partition when replicas share the store: a COUNTER record
(``lease/memories``) taken with a conditional write (RecordStore.put_record_if) over
a free or expired lease, held while the plan is written, and freed the same way.
One process's tasks queue on a lock first, so only one of them asks the store.

A lease expires ``ttl_s`` after it was taken, so a replica that dies holding it
blocks that partition's Remembers for at most that long. A holder about to write
after holding it for more than half its ttl (a big batch planned against a big
partition) first renews it, with a conditional write over the lease as it took it:
if another replica has taken it over meanwhile the renewal fails and the write is
given up (UNAVAILABLE). The ttl is well above the store's request timeout, so a write
sent while the lease is fresh is applied while it holds. Wall clocks of the
replicas are compared (expiry is a time in the record): they must agree to within a
few seconds (NTP). Where one process owns the store nothing of this happens.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

import structlog

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import Partition, utcnow
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.locks import KeyedLocks
from memoryd.storage.records import RecordStore, new_write_id

log = structlog.get_logger(__name__)

LEASE_KEY = "lease/memories"
#: Longest a replica waits for another's lease before answering UNAVAILABLE.
_WAIT_FACTOR = 2.0
_FIRST_BACKOFF_S, _MAX_BACKOFF_S = 0.002, 0.05


class Lease:
    """A held lease: ``confirm`` before writing under it."""

    def __init__(
        self, owner: PartitionLeases | None, partition: Partition, held: Record | None
    ) -> None:
        self._owner = owner
        self._partition = partition
        #: The lease record as this holder last wrote it (None: one process, no record).
        self.held = held
        self._taken = time.monotonic()

    async def confirm(self) -> None:
        """Make sure the lease is still this holder's for a write sent now: renewed
        past half its ttl; UNAVAILABLE if another replica took it over."""
        if self._owner is None or self.held is None:
            return
        if time.monotonic() - self._taken < self._owner.ttl.total_seconds() / 2:
            return
        renewed = await self._owner.renew(self._partition, self.held)
        if renewed is None:
            raise Unavailable(
                "the partition's write lease expired and another replica took it before "
                "this write; nothing was written, retry"
            )
        self.held, self._taken = renewed, time.monotonic()


class PartitionLeases:
    """Leases on partitions for a shared store; a lock per partition for one process."""

    def __init__(self, records: RecordStore, *, ttl_s: float = 30.0) -> None:
        self._records = records
        self.ttl = timedelta(seconds=ttl_s)
        self._locks = KeyedLocks()
        #: Whether replicas share the store (else only the lock is taken).
        self.shared = records.capabilities.shared

    @asynccontextmanager
    async def hold(self, partition: Partition) -> AsyncIterator[Lease]:
        """The partition's lease (one process: nothing to take, its planners already
        see each other's writes in flight)."""
        if not self.shared:
            yield Lease(None, partition, None)
            return
        async with self._locks.hold(partition):
            lease = Lease(self, partition, await self._acquire(partition))
            try:
                yield lease
            finally:
                assert lease.held is not None
                await self._release(partition, lease.held)

    async def renew(self, partition: Partition, held: Record) -> Record | None:
        """``held`` extended by a ttl from now, if it is still what the store holds."""
        now = utcnow()
        renewed = Record(
            RecordKind.COUNTER,
            LEASE_KEY,
            dict(held.doc),
            held.version + 1,
            now,
            expires_at=now + self.ttl,
            write_id=new_write_id(),
        )
        return renewed if await self._records.put_record_if(partition, renewed, held) else None

    async def _acquire(self, partition: Partition) -> Record:
        owner = new_write_id()
        backoff = _FIRST_BACKOFF_S
        give_up = time.monotonic() + _WAIT_FACTOR * self.ttl.total_seconds()
        while True:
            found = await self._records.get_records(partition, RecordKind.COUNTER, [LEASE_KEY])
            current = found[0] if found else None
            now = utcnow()
            if current is None or _free(current, now):
                taken = Record(
                    RecordKind.COUNTER,
                    LEASE_KEY,
                    {"holder": owner},
                    (current.version if current is not None else 0) + 1,
                    now,
                    expires_at=now + self.ttl,
                    write_id=owner,
                )
                if await self._records.put_record_if(partition, taken, current):
                    return taken
            if time.monotonic() > give_up:
                raise Unavailable(
                    "another replica has held this agent's write lease too long; retry"
                )
            await asyncio.sleep(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, _MAX_BACKOFF_S)

    async def _release(self, partition: Partition, held: Record) -> None:
        now = utcnow()
        freed = Record(
            RecordKind.COUNTER,
            LEASE_KEY,
            {"holder": ""},
            held.version + 1,
            now,
            expires_at=now,
            write_id=new_write_id(),
        )
        try:
            # Lost only if it expired and another replica took it: then it is theirs.
            await self._records.put_record_if(partition, freed, held)
        except Exception as exc:
            # It expires by itself; the caller's own outcome is what it hears.
            log.warning("partition lease not released", error=str(exc))


def _free(lease: Record, now: datetime) -> bool:
    return not lease.doc.get("holder") or (lease.expires_at is not None and lease.expires_at <= now)
