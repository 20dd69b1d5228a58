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
"""

from __future__ import annotations

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
        """The call wrote nothing through the log: record the event as it is."""
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
