"""Log entries waiting to be applied, and which of them an apply pass takes."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from memoryd.domain.errors import MemorydError, Unavailable
from memoryd.domain.models import Partition
from memoryd.durability.ops import Op, size


@dataclass(slots=True)
class Entry:
    seq: int
    ops: list[Op]
    durable: asyncio.Future[None]
    applied: bool = False
    #: Set when the store rejected the entry as invalid: its caller hears why, or
    #: (answered already) it was set aside next to the log.
    error: Exception | None = None
    #: Its caller was answered while it was not applied (``apply_behind``, the store
    #: failing, or replayed at start): it is never dropped.
    answered: bool = False

    @property
    def is_durable(self) -> bool:
        return self.durable.done() and self.durable.exception() is None


class Backlog:
    """The entries logged and not applied, by sequence and by partition, with what
    every question asked per write or per read costs kept small: the items waiting
    (the apply-behind bound) is a counter, a partition's overlay reads that
    partition's entries only. A backlog of thousands of entries (a store compacting
    behind the answer) so costs a write or a read no more than a few entries would."""

    def __init__(self) -> None:
        self._entries: dict[int, Entry] = {}
        self._by_partition: dict[Partition, dict[int, Entry]] = {}
        #: Memories, ids, records and keys of the entries held.
        self.items = 0
        #: Entries in log order from the first not yet decided (the change feed's
        #: horizon, ``first_undecided``); decided ones at its front are dropped.
        self._undecided: deque[Entry] = deque()

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __contains__(self, seq: int) -> bool:
        return seq in self._entries

    def add(self, entry: Entry) -> None:
        self._entries[entry.seq] = entry
        self._drop_decided()  # also with no watcher asking: the queue stays bounded
        self._undecided.append(entry)
        for partition in partitions_of([entry]):
            self._by_partition.setdefault(partition, {})[entry.seq] = entry
        self.items += sum(size(op) for op in entry.ops)

    def remove(self, entry: Entry) -> None:
        if self._entries.pop(entry.seq, None) is None:
            return
        for partition in partitions_of([entry]):
            mine = self._by_partition.get(partition)
            if mine is not None:
                mine.pop(entry.seq, None)
                if not mine:
                    del self._by_partition[partition]
        self.items -= sum(size(op) for op in entry.ops)

    def values(self) -> list[Entry]:
        """Every entry held, in log order (dicts keep insertion order; sequences are
        assigned in order and replayed in order)."""
        return list(self._entries.values())

    def first_undecided(self, durable_seq: int) -> int:
        """The first sequence at or below ``durable_seq`` whose entry is durable and
        neither applied, answered nor refused (``durable_seq`` + 1: none). Amortised
        O(1): an entry once decided stays so, and leaves the queue for good."""
        self._drop_decided()
        queue = self._undecided
        if queue and queue[0].seq <= durable_seq:
            return queue[0].seq
        return durable_seq + 1

    def _drop_decided(self) -> None:
        queue = self._undecided
        while queue and _decided(queue[0]):
            queue.popleft()

    def first_seq(self) -> int:
        return next(iter(self._entries))

    def of(self, partition: Partition) -> list[Entry]:
        return list(self._by_partition.get(partition, {}).values())

    def ops_for(self, partition: Partition) -> list[Op]:
        """The operations on ``partition`` of its durable entries, in log order."""
        return [
            op
            for e in self._by_partition.get(partition, {}).values()
            if not e.applied and e.is_durable
            for op in e.ops
            if op.partition == partition
        ]

    def in_fsync(self, partition: Partition) -> list[asyncio.Future[None]]:
        """The durability of ``partition``'s entries still in their fsync."""
        return [
            e.durable
            for e in self._by_partition.get(partition, {}).values()
            if not e.durable.done()
        ]

    def has_ready(self, partition: Partition | None = None) -> bool:
        """Whether a durable entry (writing to ``partition``; None: anywhere) waits."""
        held = self._entries if partition is None else self._by_partition.get(partition, {})
        return any(not e.applied and e.is_durable for e in held.values())

    def ready(self, max_items: int | None = None) -> list[Entry]:
        """The durable entries in log order up to the first still in its fsync (later
        ones wait for it), at most about ``max_items`` items (one entry at least)."""
        out: list[Entry] = []
        taken = 0
        for entry in self._entries.values():
            if entry.applied:
                continue
            if not entry.durable.done():
                break
            if not entry.is_durable:
                continue
            if max_items is not None and out and taken >= max_items:
                break
            out.append(entry)
            taken += sum(size(op) for op in entry.ops)
        return out


def _decided(entry: Entry) -> bool:
    """Applied, answered or refused; or failed in its fsync (never in the log)."""
    if entry.applied or entry.answered or entry.error is not None:
        return True
    return entry.durable.done() and entry.durable.exception() is not None


def partitions_of(entries: list[Entry]) -> frozenset[Partition]:
    return frozenset(op.partition for entry in entries for op in entry.ops)


def needed(ready: list[Entry], partitions: frozenset[Partition]) -> list[Entry]:
    """The entries of ``ready`` that write to ``partitions``, closed over every other
    partition those entries write to (a transaction over two partitions needs the
    earlier entries of both)."""
    wanted = set(partitions)
    while True:
        chosen = [e for e in ready if any(op.partition in wanted for op in e.ops)]
        grown = wanted | partitions_of(chosen)
        if grown == wanted:
            return chosen
        wanted = grown


def touches(entry: Entry, partition: Partition | None) -> bool:
    return partition is None or any(op.partition == partition for op in entry.ops)


def is_poison(exc: Exception) -> bool:
    """Bad input (never succeeds on retry), as opposed to the store failing."""
    if isinstance(exc, Unavailable):
        return False
    return isinstance(exc, MemorydError | ValueError | TypeError)
