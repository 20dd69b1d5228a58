"""Admissions that ride in the write-ahead log: one durable record per write.

A write RPC is admitted only once its ``STARTED`` audit event is durable. Where the
write's effects all go into a write-ahead log entry, the door does not fsync the
event on its own (a second fsync per write, before the log's): it hands the call an
:class:`Admission` (current in the call's context) and the log entry that carries the
write carries the event too (durability/durable_store.py). The entry and the event
are then durable together, in the log's one group fsync shared by every writer in
the group, and nothing of the write is visible or applied before that fsync. The
event is queued to the audit file with the entry's sequence (``wal_seq``) when the
entry is submitted; the log keeps the entry until the audit file is synced past it,
and a start re-appends what the file lost (``AuditLog.restore``).

A write that never reaches the log (refused, or nothing to store) leaves its
admission uncarried: the door records the event then, as it records the outcome.
Work that writes on another task (the write batcher) carries its callers'
admissions there explicitly (:func:`riding`).

Over a store other replicas share there is no log: the event is fsynced on its own,
but the call need not wait for that before it starts. The door queues the event
(``Admission.durable``, the fsync in flight) and runs the call, whose reads (a
Remember's duplicate lookups) go on beside the fsync; every write of the call waits
for it first (:func:`made_durable`, in the shared store's facade,
durability/write_through.py), and the door answers only after it. So a write still
runs only once its event is on disk, and is refused (UNAVAILABLE) when the audit
file cannot take it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from memoryd.context_vars import bound
from memoryd.security.audit import AuditEvent, AuditLog, with_wal_seq


@dataclass(slots=True)
class Admission:
    """One call's STARTED event, waiting for the log entry that carries it."""

    event: AuditEvent
    audit: AuditLog
    #: The log entry that carries the event (0: none yet).
    seq: int = 0
    #: The event's own fsync, in flight (a shared store: no log entry carries it).
    durable: asyncio.Future[None] | None = None
    _line: str = ""

    @property
    def carried(self) -> bool:
        return self.seq != 0

    def line(self) -> str:
        """The event as the log entry holds it (its ``wal_seq`` is the entry's own)."""
        if not self._line:
            self._line = self.event.to_json()
        return self._line

    def logged(self, seq: int) -> None:
        """Entry ``seq`` carries the event: queue it to the audit file, marked."""
        self.seq = seq
        self.audit.record(with_wal_seq(self.line(), seq))

    def unlogged(self) -> None:
        """The call wrote nothing through the log: record the event as it is (unless
        it was queued on its own: ``durable``)."""
        if self.durable is not None:
            # Its failure is the call's (heard by any write it made): not logged again.
            self.durable.add_done_callback(_seen)
            return
        if not self.carried:
            self.audit.record(self.event)


_riding: ContextVar[tuple[Admission, ...]] = ContextVar("audit_admissions", default=())


@contextmanager
def riding(admissions: Sequence[Admission]) -> Iterator[None]:
    """Make ``admissions`` the current ones (a call's own; a batch's several)."""
    with bound(_riding, tuple(admissions)):
        yield


def current() -> tuple[Admission, ...]:
    """The current admissions, carried or not."""
    return _riding.get()


def uncarried() -> list[Admission]:
    """The current admissions no log entry carries yet (the next entry takes them)."""
    return [a for a in _riding.get() if not a.carried]


async def made_durable(admissions: Sequence[Admission]) -> None:
    """Wait until the STARTED events of ``admissions`` queued on their own are on disk
    (AuditUnavailable when the file refused one): a write waits for this first."""
    for admission in admissions:
        if admission.durable is not None:
            await asyncio.shield(admission.durable)


def _seen(done: asyncio.Future[None]) -> None:
    if not done.cancelled():
        done.exception()
