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
blocks that partition's Remembers for at most that long. A holder that has held it
for half its ttl before writing gives up the write (UNAVAILABLE) rather than write
after another replica may have taken over; the ttl is well above the store's
request timeout, so a write sent in time is applied in time. Wall clocks of the
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
from memoryd.service.scope_locks import KeyedLocks
from memoryd.storage.records import RecordStore, new_write_id

log = structlog.get_logger(__name__)

LEASE_KEY = "lease/memories"
#: Longest a replica waits for another's lease before answering UNAVAILABLE.
_WAIT_FACTOR = 2.0
_FIRST_BACKOFF_S, _MAX_BACKOFF_S = 0.002, 0.05


class Lease:
    """A held lease: ``check`` before writing under it."""

    def __init__(self, deadline: float) -> None:
        self._deadline = deadline

    def check(self) -> None:
        """UNAVAILABLE when the lease may no longer be this replica's by the time a
        write it sends now is applied."""
        if time.monotonic() > self._deadline:
            raise Unavailable(
                "held the partition's write lease too long before writing; nothing was "
                "written, retry"
            )


class PartitionLeases:
    """Leases on partitions for a shared store; a lock per partition for one process."""

    def __init__(self, records: RecordStore, *, ttl_s: float = 30.0) -> None:
        self._records = records
        self._ttl = timedelta(seconds=ttl_s)
        self._locks = KeyedLocks()
        #: Whether replicas share the store (else only the lock is taken).
        self.shared = records.capabilities.shared

    @asynccontextmanager
    async def hold(self, partition: Partition) -> AsyncIterator[Lease]:
        """The partition's lease (one process: nothing to take, its planners already
        see each other's writes in flight)."""
        if not self.shared:
            yield Lease(float("inf"))
            return
        async with self._locks.hold(partition):
            started = time.monotonic()
            held = await self._acquire(partition)
            try:
                yield Lease(started + self._ttl.total_seconds() / 2)
            finally:
                await self._release(partition, held)

    async def _acquire(self, partition: Partition) -> Record:
        owner = new_write_id()
        backoff = _FIRST_BACKOFF_S
        give_up = time.monotonic() + _WAIT_FACTOR * self._ttl.total_seconds()
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
                    expires_at=now + self._ttl,
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
