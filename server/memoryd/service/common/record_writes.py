"""Read-modify-write of one record, exact for every writer the store allows.

A service reads a record, computes its next state and writes it back: working-memory
merges, profile etags, session appends, saved state, a key's slot and the partition's
version counter. Within one process a lock per record makes that exact (and stays the
only cost: one write, as before). When replicas share the store
(``Capabilities.shared``) the lock orders this process's writers only, so the write
is conditional on the record still holding what was read
(RecordStore.put_record_if); a writer that lost the race reads again and recomputes.
Every attempt runs the same code: :meth:`RecordWrites.run` loops,
:meth:`RecordWrites.replace` either writes or says the record moved on.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Hashable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

from memoryd.domain.errors import Aborted
from memoryd.domain.models import Clock, Partition, utcnow
from memoryd.domain.records import Record
from memoryd.service.common.locks import KeyedLocks
from memoryd.storage.records import RecordStore, new_write_id

T = TypeVar("T")
#: Attempts before a write gives up (each lost one means another writer won).
MAX_ATTEMPTS = 64


class _Moved(Exception):
    """The record is no longer what this attempt read (never leaves this module)."""


class RecordWrites:
    """Locks per record key plus, on a shared store, conditional writes."""

    def __init__(self, records: RecordStore) -> None:
        self._records = records
        self._locks = KeyedLocks()
        #: Other processes write the same records: every write is conditional.
        self.shared = records.capabilities.shared

    async def run(self, lock_key: Hashable, attempt: Callable[[], Awaitable[T]]) -> T:
        """``attempt`` (read, compute, :meth:`replace`) under the lock of ``lock_key``,
        again while another writer changes the record in between (shared stores only)."""
        async with self._locks.hold(lock_key):
            for _ in range(MAX_ATTEMPTS):
                try:
                    return await attempt()
                except _Moved:
                    continue
        raise Aborted(
            f"{MAX_ATTEMPTS} attempts lost to concurrent writes of the same record; "
            "nothing was written, retry"
        )

    async def replace(
        self,
        partition: Partition,
        record: Record,
        expected: Record | None,
        *,
        before: Sequence[Record] = (),
        after: Sequence[Record] = (),
    ) -> Record:
        """Write ``record`` over ``expected`` (what the attempt read; None: nothing)
        with other records of the same change: ``before``, whose content does not
        depend on winning, and ``after``, which only the winner may write. Returns the
        record as written. On a shared store, a record that moved on ends the attempt
        (``run`` starts another)."""
        if not self.shared:
            # The lock is the whole condition: one store write, as always.
            await self._records.put_records(partition, [*before, record, *after])
            return record
        if before:
            await self._records.put_records(partition, list(before))
        written = dataclasses.replace(record, write_id=new_write_id(), lineage=())
        if not await self._records.put_record_if(partition, written, expected):
            raise _Moved
        if after:
            await self._records.put_records(partition, list(after))
        return written

    def locked(self, lock_key: Hashable) -> AbstractAsyncContextManager[None]:
        """This process's lock of ``lock_key`` alone (maintenance that deletes)."""
        return self._locks.hold(lock_key)

    def moved(self) -> Exception:
        """For an attempt that finds, after reading, that it must start over."""
        return _Moved()


@dataclasses.dataclass(eq=False, kw_only=True)
class RecordService:
    """The base of a service that keeps records of its own (profiles, saved state,
    working memory, sessions): their store, "now", and the exact read-modify-write
    of one record (``_writes``)."""

    records: RecordStore
    clock: Clock = utcnow

    @functools.cached_property
    def _writes(self) -> RecordWrites:
        return RecordWrites(self.records)
