"""``transaction()``: the writes a block makes (in the same task) become ONE log entry
of the write-ahead log (durability/durable_store.py), applied in order: keyed memory
writes a key and its mirror memory together."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Protocol

from memoryd.context_vars import bound
from memoryd.durability.ops import Op
from memoryd.storage.write_stamp import collecting_after_logged, stamp_of_write


class Log(Protocol):
    """What a transaction commits its writes to (``Durability``)."""

    async def commit(self, ops: list[Op]) -> None: ...


_transaction: ContextVar[list[tuple[Log, Op]] | None] = ContextVar("wal_transaction", default=None)


def collecting() -> list[tuple[Log, Op]] | None:
    """Where a write inside a ``transaction()`` block goes (None: outside one)."""
    return _transaction.get()


def in_transaction() -> bool:
    """Whether writes are being collected by ``transaction()`` (in this task)."""
    return _transaction.get() is not None


@contextlib.asynccontextmanager
async def transaction() -> AsyncIterator[None]:
    """Writes made in the block become one log entry, committed when it exits
    (nothing when it raises). Inside, writes return before they are durable and
    deletes return no ids; what a layer defers until its write is logged
    (storage/write_stamp.py: ``when_logged``) runs after the commit, with its stamp.
    Without a durable store the writes are made as they come and the deferred runs
    when the block ends."""
    if _transaction.get() is not None:
        yield  # nested: the outer block commits
        return
    collected: list[tuple[Log, Op]] = []
    with bound(_transaction, collected), collecting_after_logged() as after_logged:
        yield
    with stamp_of_write() as logged:
        if collected:
            owner = collected[0][0]
            await owner.commit([op for _, op in collected])
        for then in after_logged:  # the block's writes are logged (or there is no log)
            await then(logged())
