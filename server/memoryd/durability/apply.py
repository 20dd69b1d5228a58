"""Applying durable log entries to the stores (used by Durability, durable_store.py).

The entries of a pass are merged into large store calls (``ops.plan_calls``: the
memory writes and the record writes of every partition the pass takes go to the store
as one call per kind). An entry the store rejects as invalid is found by applying its
merged call one operation at a time: its caller hears why, or, if it was answered
already (applied behind, degraded, or replayed), it is set aside next to the log
(``WriteAheadLog.set_aside``), never retried: that would hold up every later write.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog

from memoryd.durability.entries import Entry, is_poison
from memoryd.durability.ops import Op, apply, apply_call, encode, plan_calls
from memoryd.durability.wal import WriteAheadLog
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Applied:
    """What one apply pass did."""

    #: The entries it is done with: applied, or refused by the store (``error`` set).
    settled: list[Entry]
    #: The store failure that cut the pass short; None when every call went through.
    failure: Exception | None


class EntryApplier:
    """Applies durable entries to ``store`` and ``records`` in merged calls, and
    settles the entries the store refuses (``refused`` is shared with the change
    feed, which skips them)."""

    def __init__(
        self, wal: WriteAheadLog, store: Store, records: RecordStore, refused: set[int]
    ) -> None:
        self._wal = wal
        self._store = store
        self._records = records
        self._refused = refused

    async def apply(self, ready: list[Entry]) -> Applied:
        """Apply ``ready`` (in log order) until done or until the store fails."""
        flat: list[Op] = []
        owner: list[Entry] = []
        for entry in ready:
            flat.extend(entry.ops)
            owner.extend(entry for _ in entry.ops)
        done: set[int] = set()
        failure: Exception | None = None
        try:
            for call in plan_calls(flat):
                try:
                    await apply_call(call, self._store, self._records)
                except Exception as exc:
                    if not is_poison(exc):
                        raise
                    # Bad input the store will never take: find whose, one at a time.
                    await self._isolate([(flat[i], owner[i]) for i in call.indices])
                done.update(call.indices)
        except Exception as exc:
            failure = exc
        settled: list[Entry] = []
        position = 0
        for entry in ready:
            covered = range(position, position + len(entry.ops))
            position += len(entry.ops)
            if entry.error is not None or all(i in done for i in covered):
                settled.append(entry)
        return Applied(settled, failure)

    async def _isolate(self, calls: list[tuple[Op, Entry]]) -> None:
        """Apply one merged call's operations one by one; an entry the store rejects
        as invalid is settled: its caller hears why, or, answered already (applied
        behind, or replayed), it is set aside next to the log. Never retried: it
        would hold up every later write of every partition."""
        for op, entry in calls:
            if entry.error is not None:
                continue  # settled by an earlier operation of it
            try:
                await apply(op, self._store, self._records)
            except Exception as exc:
                if not is_poison(exc):
                    raise
                entry.error = exc
                if entry.answered:
                    await self.set_aside(entry.seq, encode(entry.ops), exc)
                else:
                    self._refused.add(entry.seq)  # before any await: the feed skips it
                    log.error("write rejected by the store; not stored", error=repr(exc))
                    await asyncio.to_thread(self._wal.mark_refused, entry.seq)

    async def set_aside(self, seq: int, payload: bytes, exc: Exception) -> None:
        """Keep the payload of an entry the store refused next to the log."""
        kept = await asyncio.to_thread(self._wal.set_aside, seq, payload)
        log.error(
            "logged write rejected by the store; set aside for inspection (memoryd wal set-aside)",
            seq=seq,
            error=repr(exc),
            kept=str(kept),
        )
