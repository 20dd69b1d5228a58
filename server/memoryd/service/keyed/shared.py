"""SetMemory over a store several memoryd replicas write (Capabilities.shared).

One process serialises a partition's key writes with a lock and a cached counter
(service/keyed/service.py). Across replicas the store decides, with conditional writes
(RecordStore.put_record_if, service/common/record_writes.py):

1. The partition's next version is claimed on its COUNTER record: read it, write
   ``version + 1`` over exactly what was read. Of two replicas claiming the same
   number one wins; the other reads again. Versions are unique and increase in the
   order the claims succeed.
2. The key's slot is written over exactly the slot this attempt read and checked
   ``if_version`` against. A slot that moved meanwhile (another replica's write)
   makes the attempt start over from 1: a version is only ever written over a
   lower one, so the slot's writes, its history events and the claims agree on one
   order, and a conditional write's precondition held over the state it replaced.
   (A claimed number that loses its slot is never used: versions have gaps, never
   repeats.)
3. The history event follows the slot (its key is unique: the version).
4. The long-term memory mirroring the key is written (or deleted) after the slot.
   Two replicas' mirror writes may land in either order, so each writer then reads
   the slot again: if a later write replaced it, this writer's mirror write may
   have landed after that one's, and the mirror is rewritten from the slot as it is
   now (its content embedded again: only on such a race). The last writer to touch
   the mirror always checks after, so the mirror converges to the slot.

A replica killed between 2 and 4 leaves the key with its previous mirror (or none)
until the key is written again: that write was not acknowledged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from memoryd.domain.keyed import KeyEntry
from memoryd.domain.limits import next_version
from memoryd.domain.models import Memory, Partition, utcnow
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.record_writes import RecordWrites
from memoryd.service.keyed.docs import COUNTER_KEY, entry_from, mirror_id
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore


@dataclass(frozen=True, slots=True)
class SlotWrite:
    """What one SetMemory attempt writes, computed from the slot it read."""

    entry: KeyEntry
    records: list[Record]
    #: The mirror memory of a value; None for a tombstone.
    mirror: Memory | None


#: (slot as read or None, claimed version) -> the write; raises to refuse it
#: (FailedPrecondition, ResourceExhausted, PermissionDenied).
Plan = Callable[[Record | None, int], Awaitable[SlotWrite]]
#: (partition, a slot's entry) -> its mirror memory, content embedded (None for a
#: tombstone).
MirrorOf = Callable[[Partition, KeyEntry], Awaitable[Memory | None]]
#: Mirror rewrites after losing races before giving up (the next write settles it).
_SETTLE_ROUNDS = 8


class SharedKeyWrites:
    """Claim, slot, history, mirror: exact among replicas (see the module doc)."""

    def __init__(
        self, records: RecordStore, store: Store, writes: RecordWrites, mirror_of: MirrorOf
    ) -> None:
        self._records = records
        self._store = store
        self._writes = writes
        self._mirror_of = mirror_of

    async def set(
        self,
        partition: Partition,
        key: str,
        check: Callable[[Record | None], Awaitable[None]],
        plan: Plan,
    ) -> KeyEntry:
        """``check`` the slot as read (if_version, quota), claim a version, write."""

        async def attempt() -> SlotWrite:
            found = await self._records.get_records(partition, RecordKind.KEY, [key])
            slot = found[0] if found else None
            await check(slot)
            version = await self.claim(partition, key)
            write = await plan(slot, version)
            slot_record, *others = write.records
            # The counter was advanced by the claim: only the slot and its event.
            event = [r for r in others if r.kind is RecordKind.KEY_EVENT]
            await self._writes.replace(partition, slot_record, slot, after=event)
            return write

        write = await self._writes.run((partition, "key", key), attempt)
        await self._settle_mirror(partition, write.entry, write.mirror)
        return write.entry

    async def claim(self, partition: Partition, key: str) -> int:
        """The partition's next version, claimed on its COUNTER record."""

        async def attempt() -> int:
            found = await self._records.get_records(partition, RecordKind.COUNTER, [COUNTER_KEY])
            current = found[0] if found else None
            version = next_version(current.version if current is not None else 0)
            counter = Record(RecordKind.COUNTER, COUNTER_KEY, {"key": key}, version, utcnow())
            await self._writes.replace(partition, counter, current)
            return version

        return await self._writes.run((partition, "counter"), attempt)

    async def _settle_mirror(
        self, partition: Partition, written: KeyEntry, mirror: Memory | None
    ) -> None:
        """Write the mirror of ``written``; then, while the slot has moved past what
        was last written, rewrite it from the slot as it is."""
        memory_id = mirror_id(partition.tenant_id, partition.agent_id, written.key)
        for _ in range(_SETTLE_ROUNDS):
            if mirror is None:
                await self._store.delete(partition, [memory_id])
            else:
                await self._store.upsert(partition, [mirror])
            found = await self._records.get_records(partition, RecordKind.KEY, [written.key])
            latest = entry_from(found[0]) if found else None
            if latest is None or latest.version <= written.version:
                return
            written = latest
            mirror = await self._mirror_of(partition, latest)
