"""Which memories the log's conditional writes are checking, and what wrote them since;
and the order of those writes with access-statistics flushes (``FlushGate``).

``DurableStore.upsert_if`` compares the versions it reads (the log's pending writes
laid over the store) with the ones expected, then logs its write. Reading awaits the
store, so another write of the same memory can be logged meanwhile, after the read
and before the write. Every write through the log's faces says so here first
(synchronously, right before it is logged), and a check that sees its ids touched
reports them as moved: the caller reads again. From the end of the check to the log
append nothing awaits, so nothing gets in between there. No lock is held across the
log's fsync: concurrent writes of other memories are not held up.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field

from memoryd.domain.models import Partition


@dataclass(eq=False, slots=True)
class Watch:
    """One check in progress: the ids written since it started."""

    touched: set[str] = field(default_factory=set)


class Watches:
    def __init__(self) -> None:
        self._by_id: dict[tuple[Partition, str], list[Watch]] = {}

    @contextmanager
    def watch(self, partition: Partition, ids: Sequence[str]) -> Iterator[Watch]:
        """Watch ``ids`` while the block runs (a check: read, compare)."""
        watch = Watch()
        keys = [(partition, i) for i in dict.fromkeys(ids)]
        for key in keys:
            self._by_id.setdefault(key, []).append(watch)
        try:
            yield watch
        finally:
            for key in keys:
                watchers = self._by_id[key]
                watchers.remove(watch)
                if not watchers:
                    del self._by_id[key]

    def wrote(self, partition: Partition, ids: Sequence[str]) -> None:
        """A write of ``ids`` is about to be logged: every check watching one of them
        is told."""
        if not self._by_id:
            return
        for memory_id in ids:
            for watch in self._by_id.get((partition, memory_id), ()):
                watch.touched.add(memory_id)


class FlushGate:
    """Orders access-statistics flushes with conditional writes, per partition.

    A flush rewrites the rows it counts in the store directly (not logged), after
    applying what the log holds for the partition. A conditional write takes the
    counters it keeps from its read (storage/conditional.py) and is applied behind:
    had a flush rewritten a row between that read and that apply, the apply would
    put the older count back. So conditional writes of a partition pass together,
    and its flush passes alone: it waits for the writes in flight (their entries are
    then logged, and it applies them first) and holds new ones back until its rows
    are rewritten (they then read the new counts).
    """

    def __init__(self) -> None:
        self._state: dict[Partition, _Gate] = {}

    @asynccontextmanager
    async def write(self, partition: Partition) -> AsyncIterator[None]:
        async with self._gate(partition) as gate:
            async with gate.changed:
                await gate.changed.wait_for(lambda: not gate.flushing)
                gate.writers += 1
            try:
                yield
            finally:
                async with gate.changed:
                    gate.writers -= 1
                    gate.changed.notify_all()

    @asynccontextmanager
    async def flush(self, partition: Partition) -> AsyncIterator[None]:
        async with self._gate(partition) as gate:
            async with gate.changed:
                await gate.changed.wait_for(lambda: not gate.flushing)
                gate.flushing = True
                await gate.changed.wait_for(lambda: gate.writers == 0)
            try:
                yield
            finally:
                async with gate.changed:
                    gate.flushing = False
                    gate.changed.notify_all()

    @asynccontextmanager
    async def _gate(self, partition: Partition) -> AsyncIterator[_Gate]:
        """The partition's gate, forgotten once nobody holds or awaits it."""
        gate = self._state.setdefault(partition, _Gate())
        gate.users += 1
        try:
            yield gate
        finally:
            gate.users -= 1
            if not gate.users:
                del self._state[partition]


@dataclass(eq=False, slots=True)
class _Gate:
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    #: Tasks holding or awaiting the gate.
    users: int = 0
    writers: int = 0
    flushing: bool = False
