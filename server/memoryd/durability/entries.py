"""Log entries waiting to be applied, and which of them an apply pass takes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from memoryd.domain.errors import MemorydError, Unavailable
from memoryd.domain.models import Partition
from memoryd.durability.ops import Op


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
