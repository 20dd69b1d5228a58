"""``transaction()``: the writes a block makes (in the same task) become ONE log entry
of the write-ahead log (durability/durable_store.py), applied in order: keyed memory
writes a key and its mirror memory together."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Protocol

from memoryd.durability.ops import Op


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
    deletes return no ids. A no-op without a durable store."""
    if _transaction.get() is not None:
        yield  # nested: the outer block commits
        return
    collected: list[tuple[Log, Op]] = []
    token = _transaction.set(collected)
    try:
        yield
    finally:
        _transaction.reset(token)
    if collected:
        owner = collected[0][0]
        await owner.commit([op for _, op in collected])
