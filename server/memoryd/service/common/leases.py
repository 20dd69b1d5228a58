"""Who may change a partition at once, across replicas of a shared store.

Some writes must see every other write of their partition: deduplication plans a
Remember against the memories stored (two replicas planning the same text at once
would each insert it), a memory quota counted by two replicas admits one write too
many, and a key's version must exceed every version acknowledged before it. Where
replicas share the store those writes run under a lease on the partition: a COUNTER
record (``lease/<name>``) taken with a conditional write (RecordStore.put_record_if)
over a free or expired lease. One process's writers queue on a lock first, so only
one of them asks the store.

A lease is held per burst, not per write: taking one costs three store requests
(read, conditional write, read back) and freeing it two, against the one or two a
write needs. The holder keeps it while its writers keep coming and ``linger_s``
after the last one, then frees it in the background. A replica that wants a lease
another holds says so in a ``lease/<name>/want`` record (again now and then while it
waits) and polls. An idle holder reads that record every fifth of ``linger_s`` and
frees the lease at once when asked; a busy one reads it at the end of each
``turn_s`` and, when asked, frees it and stands back for a moment, so a busy replica
cannot starve another. Replicas writing one agent at once therefore take turns,
each writing a burst of requests per turn.

A lease may carry a block of versions (``versions``: the COUNTER record whose
version the partition's writes continue). Taking the lease claims the numbers above
both that record and the last holder's block; the holder hands them out in order
(Lease.version), claims another block with a conditional write when one runs out,
and frees the lease recording the last number it handed out, so the next holder
continues right after it: versions stay dense, and a holder that died leaves a gap,
never a repeat.

A lease expires ``ttl_s`` after it was taken or renewed, so a replica that dies
holding it blocks that partition's leased writes for at most that long. A replica
that lives on but could not free it (the store unreachable, or its answer lost) does
not make anyone wait that long: its own writers take the lease over at once (every
holder id it writes begins with its replica id, and none of its tenures is live
when it takes one), and it retries the freeing in the background for the others.
The replica id outlives a restart (datadir.replica_id), so a replica restarted
after a crash takes back at once what it held. A holder
about to write more than half a ttl after taking it first renews it, with a
conditional write over the lease as it took it: if another replica has taken it over
meanwhile the renewal fails and the write is given up (UNAVAILABLE). The ttl is well
above the store's request timeout, so a write sent while the lease is fresh is
applied while it holds. Wall clocks of the replicas are compared (expiry is a time in
the record): they must agree to within a few seconds (NTP). Where one process owns
the store nothing of this happens.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from memoryd.domain.errors import Unavailable
from memoryd.domain.limits import next_version
from memoryd.domain.models import Partition, utcnow
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.locks import KeyedLocks
from memoryd.storage.records import RecordStore, new_write_id

log = structlog.get_logger(__name__)

#: The lease Remember's plans and checked updates take (the name of its record).
MEMORIES_LEASE = "memories"
#: Longest a replica waits for another's lease before answering UNAVAILABLE.
_WAIT_FACTOR = 2.0
_FIRST_BACKOFF_S, _MAX_BACKOFF_S = 0.002, 0.02
#: Least time between two reads of the want record by an idle holder.
_MIN_WANT_POLL_S = 0.05
#: Versions claimed at once by a lease that carries them.
VERSION_BLOCK = 1024
#: First and longest pause between two background retries of a failed freeing.
_FREE_RETRY_FIRST_S, _FREE_RETRY_MAX_S = 0.1, 2.0
#: A want record this much older than a tenure is not addressed to it (wall clocks
#: of replicas differ by a little).
_STALE_WANT = timedelta(seconds=5)


@dataclass(slots=True)
class _Tenure:
    """One continuous hold of a lease by this process."""

    #: The lease record as this process last wrote it.
    held: Record
    #: time.monotonic() of the last take or renewal (renew past half the ttl).
    renewed: float
    #: time.monotonic() the current turn began.
    turn: float
    #: Identifies the tenure: what a writer counted under it stays exact within it.
    serial: int
    #: Wall time the tenure began (older want records are not for it).
    started_at: datetime
    #: The next version to hand out and the last one claimed (leases with versions).
    next: int = 0
    top: int = 0
    #: The nonce of the want record at the last end of a turn ("" none yet).
    seen_want: str = ""


class Lease:
    """A held lease: ``confirm`` before writing under it."""

    def __init__(
        self, owner: PartitionLeases | None, partition: Partition, tenure: _Tenure | None
    ) -> None:
        self._owner = owner
        self._partition = partition
        self._tenure = tenure

    @property
    def held(self) -> Record | None:
        """The lease record as this holder last wrote it (None: one process, no record)."""
        return None if self._tenure is None else self._tenure.held

    @property
    def tenure(self) -> int | None:
        """Identifies this process's continuous hold of the lease: a count taken under
        one tenure stays exact for the rest of it (None: one process)."""
        return None if self._tenure is None else self._tenure.serial

    async def confirm(self) -> None:
        """Make sure the lease is still this holder's for a write sent now: renewed
        past half its ttl; UNAVAILABLE if another replica took it over."""
        if self._owner is None or self._tenure is None:
            return
        await self._owner.keep(self._partition, self._tenure)

    async def version(self) -> int:
        """The partition's next version, from the lease's block (a lease taken with
        ``versions``); past the block another one is claimed first. Confirms the
        lease like :meth:`confirm`."""
        if self._owner is None or self._tenure is None:
            raise RuntimeError("versions come from a lease of a shared store")
        return await self._owner.hand_out(self._partition, self._tenure)


class PartitionLeases:
    """Leases on partitions for a shared store; a lock per partition for one process."""

    def __init__(
        self,
        records: RecordStore,
        *,
        replica: str | None = None,
        name: str = MEMORIES_LEASE,
        ttl_s: float = 30.0,
        linger_s: float = 0.25,
        turn_s: float = 0.5,
        versions: str | None = None,
    ) -> None:
        self._records = records
        self.key = f"lease/{name}"
        self._want_key = f"lease/{name}/want"
        self.ttl = timedelta(seconds=ttl_s)
        self._linger_s = linger_s
        self._turn_s = turn_s
        #: The COUNTER record whose version this lease's version blocks continue.
        self._versions = versions
        self._locks = KeyedLocks()
        #: Whether replicas share the store (else only the lock is taken).
        self.shared = records.capabilities.shared
        self._tenures: dict[Partition, _Tenure] = {}
        #: Partitions whose lease this process gave up at the end of a turn:
        #: time.monotonic() before which it does not try to take it again.
        self._standing_back: dict[Partition, float] = {}
        #: time.monotonic() a writer last let go of the partition's lease.
        self._last_use: dict[Partition, float] = {}
        #: Partitions whose idle lease is watched (freed after lingering, or when asked).
        self._watched: set[Partition] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._serials = itertools.count(1)
        self._closing = False
        #: Begins every holder id this process writes (``_ours``): the replica's id,
        #: kept across its restarts (datadir.replica_id), else one of this process.
        self._replica = replica or new_write_id()

    @asynccontextmanager
    async def hold(self, partition: Partition) -> AsyncIterator[Lease]:
        """The partition's lease (one process: nothing to take, its planners already
        see each other's writes in flight)."""
        if not self.shared:
            yield Lease(None, partition, None)
            return
        try:
            async with self._locks.hold(partition):
                tenure = await self._current(partition)
                try:
                    yield Lease(self, partition, tenure)
                finally:
                    await self._end_of_use(partition, tenure)
        finally:
            # A writer that failed (a quota, a precondition) ends a burst too.
            self._last_use[partition] = time.monotonic()
            if not self._locks.busy(partition):
                self._linger(partition)

    async def close(self) -> None:
        """Free every lease this process holds (at shutdown)."""
        self._closing = True
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for partition, tenure in list(self._tenures.items()):
            await self._release(partition, tenure)

    # -- the holder's side -------------------------------------------------------------

    async def keep(self, partition: Partition, tenure: _Tenure) -> None:
        """Renew ``tenure`` if past half its ttl; UNAVAILABLE when it was lost."""
        if time.monotonic() - tenure.renewed < self.ttl.total_seconds() / 2:
            return
        if not await self._renew(partition, tenure, tenure.top):
            self._drop(partition, tenure)
            raise Unavailable(
                "the partition's write lease expired and another replica took it before "
                "this write; nothing was written, retry"
            )

    async def hand_out(self, partition: Partition, tenure: _Tenure) -> int:
        """The next version of ``tenure``'s block (another block claimed first when
        this one is used up)."""
        if self._versions is None:
            raise RuntimeError(f"{self.key} carries no versions")
        if tenure.next > tenure.top:
            if not await self._renew(partition, tenure, tenure.next - 1 + VERSION_BLOCK):
                self._drop(partition, tenure)
                raise Unavailable(
                    "the partition's write lease was taken over before this write; "
                    "nothing was written, retry"
                )
        else:
            await self.keep(partition, tenure)
        version = tenure.next
        tenure.next = next_version(version)
        return version

    async def _renew(self, partition: Partition, tenure: _Tenure, top: int) -> bool:
        """Extend the lease by a ttl from now (and its block to ``top``), if it is
        still what this process wrote last."""
        held, now = tenure.held, utcnow()
        doc = dict(held.doc)
        if self._versions is not None:
            doc["top"] = top
        renewed = Record(
            RecordKind.COUNTER,
            self.key,
            doc,
            held.version + 1,
            now,
            expires_at=now + self.ttl,
            write_id=new_write_id(),
        )
        if not await self._records.put_record_if(partition, renewed, held):
            return False
        tenure.held, tenure.renewed, tenure.top = renewed, time.monotonic(), top
        return True

    async def _current(self, partition: Partition) -> _Tenure:
        """This process's tenure of the partition's lease: the one held (renewed when
        due), else a new one."""
        tenure = self._tenures.get(partition)
        if tenure is not None:
            if time.monotonic() - tenure.renewed < self.ttl.total_seconds() / 2:
                return tenure
            if await self._renew(partition, tenure, tenure.top):
                return tenure
            self._drop(partition, tenure)  # taken over: nothing was written under it since
        back = self._standing_back.pop(partition, 0.0) - time.monotonic()
        if back > 0:
            await asyncio.sleep(back)
        tenure = await self._acquire(partition)
        self._tenures[partition] = tenure
        return tenure

    async def _end_of_use(self, partition: Partition, tenure: _Tenure) -> None:
        """After one writer: at the end of a turn, give the lease up if another
        replica asked for it; without lingering, free it when no writer here waits."""
        if self._tenures.get(partition) is not tenure:
            return  # lost, or freed already
        if time.monotonic() - tenure.turn >= self._turn_s and await self._asked(partition, tenure):
            # Stand back for longer than a waiter polls, so it gets the turn.
            self._standing_back[partition] = time.monotonic() + 2 * _MAX_BACKOFF_S
            await self._release(partition, tenure)
        elif self._linger_s <= 0 and self._locks.users(partition) <= 1:
            await self._release(partition, tenure)

    async def _asked(self, partition: Partition, tenure: _Tenure) -> bool:
        """Whether another replica asked for the lease since the last turn ended
        (starts the next turn)."""
        tenure.turn = time.monotonic()
        try:
            found = await self._records.get_records(partition, RecordKind.COUNTER, [self._want_key])
        except Exception as exc:  # the writer's own outcome is what it hears
            log.warning("lease want record unreadable", lease=self.key, error=str(exc))
            return False
        want = found[0] if found else None
        nonce = str(want.doc.get("nonce", "")) if want is not None else ""
        if want is None or nonce == tenure.seen_want:
            return False
        tenure.seen_want = nonce
        # A record from long before the tenure is a stale one.
        return want.updated_at >= tenure.started_at - _STALE_WANT

    def _linger(self, partition: Partition) -> None:
        """Keep an idle lease ``linger_s`` for the next burst, then free it (sooner
        when another replica asks for it)."""
        if partition not in self._tenures or self._linger_s <= 0 or partition in self._watched:
            return
        self._watched.add(partition)
        self._spawn(self._watch_idle(partition))

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        """Run ``work`` in the background (awaited at shutdown)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_idle(self, partition: Partition) -> None:
        """While no writer holds the partition's lease: free it once idle for
        ``linger_s``, or once another replica asked for it (read every poll, only
        after a poll's idleness: a steady stream of writes reads nothing)."""
        poll = max(_MIN_WANT_POLL_S, self._linger_s / 5)
        try:
            while not self._locks.busy(partition):
                tenure = self._tenures.get(partition)
                if tenure is None:
                    return
                idle = time.monotonic() - self._last_use.get(partition, 0.0)
                if (
                    self._closing
                    or idle >= self._linger_s
                    or (idle >= poll and await self._asked(partition, tenure))
                ):
                    await self._release_idle(partition)
                    return
                await asyncio.sleep(min(poll, self._linger_s - idle))
        finally:
            self._watched.discard(partition)

    async def _release_idle(self, partition: Partition) -> None:
        async with self._locks.hold(partition):
            tenure = self._tenures.get(partition)
            # A writer that came meanwhile (and waits for this lock) holds it on.
            if tenure is not None and self._locks.users(partition) <= 1:
                await self._release(partition, tenure)

    def _drop(self, partition: Partition, tenure: _Tenure) -> None:
        if self._tenures.get(partition) is tenure:
            del self._tenures[partition]

    # -- taking and freeing -------------------------------------------------------------

    def _ours(self, lease: Record) -> bool:
        """Whether ``lease`` names a holder of this replica. When a tenure is taken
        none of this replica's is live (its writers queue on one lock; a replica id is
        one live process's), so such a lease is one whose freeing or taking failed in
        doubt, or one this replica held before it was restarted: taken over at once,
        never waited out."""
        return str(lease.doc.get("holder", "")).startswith(f"{self._replica}.")

    async def _acquire(self, partition: Partition) -> _Tenure:
        owner = f"{self._replica}.{new_write_id()}"
        backoff = _FIRST_BACKOFF_S
        started = time.monotonic()
        asked = -math.inf
        wanted = [self.key] if self._versions is None else [self.key, self._versions]
        while True:
            found = {
                r.key: r
                for r in await self._records.get_records(partition, RecordKind.COUNTER, wanted)
            }
            current = found.get(self.key)
            now = utcnow()
            if current is None or _free(current, now) or self._ours(current):
                start = _claimed(current, found.get(self._versions or ""))
                doc: dict[str, object] = {"holder": owner}
                if self._versions is not None:
                    doc["top"] = start + VERSION_BLOCK
                taken = Record(
                    RecordKind.COUNTER,
                    self.key,
                    doc,
                    (current.version if current is not None else 0) + 1,
                    now,
                    expires_at=now + self.ttl,
                    write_id=owner,
                )
                if await self._records.put_record_if(partition, taken, current):
                    tick = time.monotonic()
                    return _Tenure(
                        taken,
                        renewed=tick,
                        turn=tick,
                        serial=next(self._serials),
                        started_at=now,
                        next=next_version(start),
                        top=start + VERSION_BLOCK,
                    )
            elif time.monotonic() - asked > self._turn_s / 2:
                # The holder reads it at the end of its turn (asked again now and
                # then: its turn may have begun just after this was written).
                want = Record(RecordKind.COUNTER, self._want_key, {"nonce": new_write_id()}, 1, now)
                await self._records.put_records(partition, [want])
                asked = time.monotonic()
            if time.monotonic() - started > _WAIT_FACTOR * self.ttl.total_seconds():
                raise Unavailable(
                    "another replica has held this agent's write lease too long; retry"
                )
            await asyncio.sleep(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, _MAX_BACKOFF_S)

    async def _release(self, partition: Partition, tenure: _Tenure) -> None:
        self._drop(partition, tenure)
        # The next holder continues right after the last version handed out.
        top = tenure.next - 1 if self._versions is not None else None
        try:
            # Lost only if it expired and another replica took it: then it is theirs.
            await self._records.put_record_if(partition, self._freed(tenure.held, top), tenure.held)
        except Exception as exc:
            # The caller's own outcome is what it hears; the others need not wait out
            # the ttl once the store answers again.
            log.warning("partition lease not released", lease=self.key, error=str(exc))
            if not self._closing:
                self._spawn(self._free_later(partition, tenure.held, top))

    def _freed(self, held: Record, top: int | None) -> Record:
        """The lease record freeing ``held`` (with the block's last version used)."""
        now = utcnow()
        doc: dict[str, object] = {"holder": ""}
        if top is not None:
            doc["top"] = top
        return Record(
            RecordKind.COUNTER,
            self.key,
            doc,
            held.version + 1,
            now,
            expires_at=now,
            write_id=new_write_id(),
        )

    async def _free_later(self, partition: Partition, held: Record, top: int | None) -> None:
        """Retry freeing ``held`` until the store answers (freed, or no longer as held:
        taken over, or freed by the attempt whose answer was lost), it expires, or
        shutdown."""
        pause = _FREE_RETRY_FIRST_S
        while not self._closing and held.expires_at is not None and utcnow() < held.expires_at:
            await asyncio.sleep(pause)
            try:
                freed = await self._records.put_record_if(partition, self._freed(held, top), held)
            except Exception:
                pause = min(2 * pause, _FREE_RETRY_MAX_S)
                continue
            if freed:
                log.info("partition lease released after a retry", lease=self.key)
            return


def _free(lease: Record, now: datetime) -> bool:
    return not lease.doc.get("holder") or lease.expired(now)


def _claimed(lease: Record | None, counter: Record | None) -> int:
    """The highest version any holder may have used: the last holder's block (or its
    last version, when it freed the lease) and the partition's counter."""
    top = lease.doc.get("top", 0) if lease is not None else 0
    return max(top if isinstance(top, int) else 0, counter.version if counter else 0)
