"""Read-modify-write of stored memories: the one way a service changes one.

An update, an archive or restore, a consolidation and its undo, a relation, a merge,
a re-embedding: each reads memories, computes their next state and writes it back.
Written blindly, a change made by another request between the read and the write is
lost (an acknowledged UpdateMemory reverted by a concurrent Archive). Here every
such change is written with the store's conditional write (``Store.upsert_if``, see
storage/conditional.py): it lands only if each memory it read is still at the
version it was read at, else nothing is written and the change is computed again
from what is stored now - up to MAX_ATTEMPTS times, then ABORTED (nothing written).
A change that only applies to the state it saw (``if_version``) raises
FAILED_PRECONDITION from its own check instead. Embedded and shared stores alike:
the log's face decides in front of a store this process alone writes, the store
itself (Qdrant) where replicas share it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from memoryd.domain.errors import Aborted
from memoryd.domain.models import Memory, Partition
from memoryd.service.common import scanning
from memoryd.storage.base import Store
from memoryd.storage.conditional import ConditionalWrite

T = TypeVar("T")
#: Attempts before a change gives up (each lost one means another writer won).
MAX_ATTEMPTS = 64
#: Longest pause between attempts: writers that keep colliding spread out.
_MAX_BACKOFF_S = 0.02


@dataclass(frozen=True, slots=True)
class Changes:
    """What a change writes: memories (new ones too) and ids to delete."""

    upserts: Sequence[Memory] = ()
    deletes: Sequence[str] = ()

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes)


class _Moved(Exception):
    """A memory moved on between an attempt's read and its write (never leaves this
    module's ``run``)."""


#: The memories a change reads (id -> memory with its vector; ids not stored are
#: absent) -> what it writes. Called again, on a fresh read, after a lost race.
Change = Callable[[Mapping[str, Memory]], Awaitable[Changes]]


class MemoryWrites:
    """Conditional read-modify-writes of one store's memories."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def run(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """``attempt`` (read, compute, :meth:`write`), again while it loses a race to
        another writer, up to MAX_ATTEMPTS times (then ABORTED: nothing written)."""
        for i in range(MAX_ATTEMPTS):
            try:
                return await attempt()
            except _Moved:
                await _backoff(i)
        raise Aborted(
            f"{MAX_ATTEMPTS} attempts lost to concurrent writes of the same memories; "
            "nothing was written, retry"
        )

    async def write(
        self,
        partition: Partition,
        memories: Sequence[Memory],
        expected: Mapping[str, int | None],
        *,
        delete: Sequence[str] = (),
    ) -> None:
        """``Store.upsert_if``; a memory that moved on ends the attempt (``run`` starts
        another)."""
        if await self._store.upsert_if(ConditionalWrite(partition, memories, expected, delete)):
            raise _Moved

    @staticmethod
    def moved() -> Exception:
        """For an attempt that finds, before writing, that it must start over."""
        return _Moved()

    async def modify(
        self,
        partition: Partition,
        ids: Sequence[str],
        change: Change,
        *,
        read: Mapping[str, Memory] | None = None,
    ) -> Changes:
        """Apply ``change`` to the memories ``ids`` as stored and write what it returns,
        all or nothing, on the condition that each of ``ids`` is still as read (or
        still absent) and that every memory it adds is new. Returns what was written.
        ``read``: the memories as the caller just read them (with vectors), used by the
        first attempt instead of reading again."""
        ids = list(dict.fromkeys(ids))
        given = read

        async def attempt() -> Changes:
            nonlocal given
            current, given = given, None  # the caller's read serves the first attempt only
            if current is None:
                found = await self._store.get(partition, ids, with_vectors=True)
                current = {m.id: m for m in found}
            # Before the change runs: it may change the memories it is given.
            expected: dict[str, int | None] = {
                i: (current[i].version if i in current else None) for i in ids
            }
            planned = await change(current)
            if planned:
                for memory in planned.upserts:
                    expected.setdefault(memory.id, None)  # an added memory must be new
                await self.write(partition, planned.upserts, expected, delete=planned.deletes)
            return planned

        return await self.run(attempt)

    async def rewrite(
        self,
        partition: Partition,
        ids: Sequence[str],
        change: Callable[[Memory], Memory | None],
        *,
        batch: int,
    ) -> int:
        """``change`` applied to each memory of ``ids`` (None leaves one as it is), a
        batch at a time, each batch a ``modify``. Returns how many were written."""
        written = 0
        for chunk in scanning.chunks(ids, batch):

            async def each(current: Mapping[str, Memory], chunk: Sequence[str] = chunk) -> Changes:
                updated = (change(current[i]) for i in chunk if i in current)
                return Changes([m for m in updated if m is not None])

            written += len((await self.modify(partition, chunk, each)).upserts)
            await scanning.pause()
        return written


async def _backoff(attempt: int) -> None:
    """Nothing after the first lost race (the winner's write is already visible);
    then a growing, jittered pause."""
    if attempt == 0:
        return
    pause = min(_MAX_BACKOFF_S, 0.0005 * 2**attempt)
    await asyncio.sleep(pause * random.random())
