"""Where a write stands in the write-ahead log: its own position and an instant in the
log's order, for the layers above the durable store.

The history of as-of reads (storage/history.py) records each write's versions at that
write's position, not at the log's last position when it gets round to recording them
(a concurrent writer's may be later), and at an instant that orders writes as the log
does, so that a read as of a Watch cursor sees exactly the writes up to it. The log
(durability/) stamps a write as it takes it (:func:`stamp`), in the writer's task; a
layer reads the stamp of the write it just made within :func:`stamp_of_write`.

Inside a transaction (durability/transaction.py) writes are logged only when the block
ends, all or nothing: what a layer does once its write is logged waits for that
(:func:`when_logged`) and never happens when the block fails, so a failed key write
leaves no version of a mirror that was never stored.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from memoryd.context_vars import bound

#: What a layer does once its write is logged, given the write's stamp.
AfterLogged = Callable[["WriteStamp | None"], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class WriteStamp:
    """A logged write's position (its log sequence) and the instant it was taken;
    instants increase with positions."""

    position: int
    at: datetime


_stamp: ContextVar[WriteStamp | None] = ContextVar("memoryd_write_stamp", default=None)
_deferred: ContextVar[list[AfterLogged] | None] = ContextVar("memoryd_after_logged", default=None)


def stamp(value: WriteStamp) -> None:
    """The log took the calling task's write (called by the log, in that task)."""
    _stamp.set(value)


def current_stamp() -> WriteStamp | None:
    """The stamp of the calling task's last logged write (None: none since it looked)."""
    return _stamp.get()


@contextlib.contextmanager
def stamp_of_write() -> Iterator[Callable[[], WriteStamp | None]]:
    """A reader of the stamp of the write made in the block (None: not logged, as
    without a log, or not yet, as inside a transaction)."""
    with bound(_stamp, None):
        yield _stamp.get


@contextlib.contextmanager
def collecting_after_logged() -> Iterator[list[AfterLogged]]:
    """For a transaction: what :func:`when_logged` defers in the block, to run once the
    block's writes are logged (and never if it fails)."""
    deferred: list[AfterLogged] = []
    with bound(_deferred, deferred):
        yield deferred


async def when_logged(then: AfterLogged, stamp_now: Callable[[], WriteStamp | None]) -> None:
    """Run ``then`` with the write's stamp once it is logged: now (``stamp_now`` reads
    it), or inside a transaction when the transaction's entry is."""
    deferred = _deferred.get()
    if deferred is not None:
        deferred.append(then)
        return
    await then(stamp_now())


def logged_later() -> bool:
    """Whether the calling task's writes are logged later, together (a transaction):
    a delete inside one answers no ids (durability/facades.py), so what it deletes is
    what it was asked to."""
    return _deferred.get() is not None
