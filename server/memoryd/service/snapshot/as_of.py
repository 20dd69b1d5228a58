"""As-of reads (docs/as-of.md): Recall, BuildSnapshot, DefaultRead, GetKey and
ListKeys answered as they would have been answered at a past instant.

The state valid then is selected and the SAME read pipeline runs over it, with that
instant as its clock's "now" (decay, recency, expiry, the recent window all computed
then): memories from the memory history (storage/history.py), keys from their
history events (KEY_EVENT records, service/keyed/docs.py). The selection is loaded
into an in-process store of its own (one per call, dropped after it), so no read can
touch, or be touched by, the live state, and nothing the read does (access
statistics) is written anywhere that lasts.

A log position comes as a Watch cursor (sealed: the log's sequence counts every
tenant's writes, so no raw number is taken or told); it resolves to the instant the
partition's last change at or before it was recorded. Reads past the retention horizon (history.retention_hours), or from
before this process first wrote or read the partition's memories, are OUT_OF_RANGE
naming ``as_of`` and the horizon.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from memoryd.domain.agent_state import PROFILE_KEY
from memoryd.domain.as_of import AsOf
from memoryd.domain.errors import InvalidArgument, OutOfRange, Unimplemented
from memoryd.domain.keyed import KeyEntry, KeyListing, KeyListQuery
from memoryd.domain.models import Clock, Memory, Partition
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.requests import RecallOutcome, RecallQuery
from memoryd.domain.snapshot import (
    DefaultReadRequest,
    DefaultReadResult,
    Snapshot,
    SnapshotRequest,
)
from memoryd.service.common import scanning
from memoryd.service.keyed.docs import COUNTER_KEY, EVENT_SEPARATOR, decoded_entry
from memoryd.service.keyed.index import KeyIndexes
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.memories.service import MemoryService
from memoryd.service.snapshot.default_read import DefaultReadService
from memoryd.service.snapshot.service import SnapshotService
from memoryd.storage.base import Store
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_journal import RecordId
from memoryd.storage.history_stores import stored_memories
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.records import RecordStore

FIELD = "as_of"
_SCAN = 1000
#: Why a daemon over a store shared by replicas answers as-of reads UNIMPLEMENTED.
SHARED_AS_OF = (
    "as-of reads are not served where replicas share the store: each replica's memory "
    "history holds only the writes it made (docs/as-of.md)"
)
#: Why a daemon with history.enabled false answers as-of reads UNIMPLEMENTED.
HISTORY_OFF = "as-of reads are off on this daemon (history.enabled is false)"


@dataclass(eq=False, kw_only=True)
class AsOfReads:
    """The as-of side of the read services (None ``history``: this daemon keeps none,
    a store shared by replicas: UNIMPLEMENTED)."""

    history: MemoryHistory | None
    memories: MemoryService
    snapshots: SnapshotService
    default_reads: DefaultReadService
    keyed: KeyedMemoryService
    records: RecordStore
    #: The memories' store beneath the key mirrors' read fence (storage/fenced.py): a
    #: read as of an instant takes each key's mirror at its version then from the
    #: history, or embeds it (``_mirrors_then``), and waits for no pass.
    store: Store
    dimension: int
    clock: Clock
    #: Why there is no history (the UNIMPLEMENTED message), when ``history`` is None.
    unavailable: str = "as-of reads are not enabled on this daemon"
    #: The log sequence a Watch cursor names for the caller (the change feed's
    #: ChangeFeedService.sequence_of); None: no change feed, no cursors.
    sequence_of: Callable[[CallScope, str], int] | None = None

    # ------------------------------------------------------------------ reads

    async def recall(self, scope: CallScope, query: RecallQuery, as_of: AsOf) -> RecallOutcome:
        instant = await self._memories_instant(scope, as_of)
        return await (await self._memories_at(scope.partition, instant)).recall(scope, query)

    async def snapshot(self, scope: CallScope, req: SnapshotRequest, as_of: AsOf) -> Snapshot:
        instant = await self._memories_instant(scope, as_of)
        memories = await self._memories_at(scope.partition, instant)
        at = _fixed(instant)
        records = await self._records_at(scope.partition, instant, _records_of(req))
        s = self.snapshots
        builder = replace(
            s,
            memories=memories,
            store=memories.store,
            clock=at,
            profiles=None if s.profiles is None else replace(s.profiles, records=records, clock=at),
            working=None if s.working is None else s.working.reader(records, at),
            sessions=(
                None
                if s.sessions is None
                else replace(s.sessions, records=records, clock=at, memories=memories)
            ),
        )
        return await builder.build(scope, req)

    async def default_read(
        self, scope: CallScope, req: DefaultReadRequest, as_of: AsOf
    ) -> DefaultReadResult:
        instant = await self._keys_instant(scope, as_of)
        records = await self._keys_at(scope.partition, instant)
        indexes = KeyIndexes(
            records,
            self.default_reads.limits,
            summary_chars=self.default_reads.settings.default_read_summary_chars,
            clock=_fixed(instant),
        )
        reader = replace(
            self.default_reads, indexes=indexes, records=records, clock=_fixed(instant)
        )
        return await reader.read(scope, replace(req, current_time=req.current_time or instant))

    async def get_key(self, scope: CallScope, key: str, as_of: AsOf) -> KeyEntry:
        instant = await self._keys_instant(scope, as_of)
        records = await self._keys_at(scope.partition, instant)
        return await self.keyed.reader(records, _fixed(instant)).get(scope, key)

    async def list_keys(self, scope: CallScope, query: KeyListQuery, as_of: AsOf) -> KeyListing:
        instant = await self._keys_instant(scope, as_of)
        records = await self._keys_at(scope.partition, instant)
        return await self.keyed.reader(records, _fixed(instant)).list(scope, query)

    # ------------------------------------------------------------------ instants

    def _checked(self, as_of: AsOf) -> None:
        if (as_of.instant is None) == (as_of.cursor is None):
            raise InvalidArgument.field(FIELD, "set exactly one of a time or a Watch cursor")
        if as_of.instant is not None:
            if as_of.instant.tzinfo is None:
                raise InvalidArgument.field(FIELD, "time must carry a timezone")
            if as_of.instant > self.clock():
                raise InvalidArgument.field(FIELD, "time is in the future")

    async def _memories_instant(self, scope: CallScope, as_of: AsOf) -> datetime:
        self._checked(as_of)
        history = self._history()
        partition = scope.partition
        await history.load(partition)
        history.start(partition)
        horizon = history.horizon(partition)
        assert horizon is not None  # started just above
        if as_of.cursor is not None:
            if self.sequence_of is None:
                raise Unimplemented(
                    "as_of.cursor: this daemon has no change feed (no write-ahead log)"
                )
            found = history.instant_of(partition, self.sequence_of(scope, as_of.cursor))
            if found is None:
                raise _beyond(horizon, "the cursor's position")
            return found
        assert as_of.instant is not None
        if as_of.instant < horizon:
            raise _beyond(horizon, as_of.instant.isoformat())
        return as_of.instant

    async def _keys_instant(self, scope: CallScope, as_of: AsOf) -> datetime:
        """Keys keep every write in their history records: the horizon is the
        retention alone. A cursor resolves through the memory history."""
        if as_of.cursor is not None:
            return await self._memories_instant(scope, as_of)
        self._checked(as_of)
        history = self._history()
        horizon = self.clock() - history.retention
        assert as_of.instant is not None
        if as_of.instant < horizon:
            raise _beyond(horizon, as_of.instant.isoformat())
        return as_of.instant

    def _history(self) -> MemoryHistory:
        if self.history is None:
            raise Unimplemented(self.unavailable)
        return self.history

    # ------------------------------------------------------------------ state then

    async def _memories_at(self, partition: Partition, instant: datetime) -> MemoryService:
        """The memory service over the memories valid at ``instant``."""
        store = InMemoryStore(self.dimension)
        await store.open()
        stored = await stored_memories(self.store, partition)
        then = self._history().valid_at(partition, instant, stored)
        await store.upsert(partition, await self._mirrors_then(partition, instant, then))
        return self.memories.reader(store, _fixed(instant))

    async def _mirrors_then(
        self, partition: Partition, instant: datetime, then: list[Memory]
    ) -> list[Memory]:
        """``then`` with each key's mirror at the key's version at ``instant``. A mirror
        embedded behind its key's answer (service/keyed/pending.py) is written later,
        or never for a version the pass skipped, while a read at ``instant`` would have
        waited for it: a mirror older than its key, and not touched since the key's
        write (a Forget of it stands), is the version recorded later, else embedded
        now (each text alone, as the pass does: the same vector)."""
        history = self._history()
        by_id = {m.id: m for m in then}
        for slot in (await self._slots_at(partition, instant)).values():
            entry = decoded_entry(slot)
            if entry is None or not entry.valid or not entry.memory_id:
                continue
            held = by_id.get(entry.memory_id)
            if held is not None and held.version >= entry.version:
                continue
            if history.recorded(partition, entry.memory_id, entry.updated_at, instant):
                continue
            mirror = history.first_at_version(partition, entry.memory_id, entry.version)
            if mirror is None:
                mirror = await self.keyed.embedded_mirror(partition, entry)
            by_id[entry.memory_id] = mirror
        return list(by_id.values())

    async def _records_at(
        self, partition: Partition, instant: datetime, wanted: Sequence[RecordId]
    ) -> RecordStore:
        """A record store holding the ``wanted`` records (the snapshot's profile,
        working memory and session) as they were at ``instant``."""
        history = self._history()
        records = InMemoryRecordStore()
        await records.open()
        then = []
        for kind, key in wanted:
            stored = await self.records.get_records(partition, kind, [key])
            found = history.record_at(
                partition, (kind, key), instant, stored[0] if stored else None
            )
            if found is not None:
                then.append(found)
        await records.put_records(partition, then)
        return records

    async def _slots_at(self, partition: Partition, instant: datetime) -> dict[str, Record]:
        """Each key's slot as it was at ``instant`` (from its history events)."""
        slots: dict[str, Record] = {}
        async for page in scanning.scan_records(
            self.records, partition, RecordKind.KEY_EVENT, _SCAN
        ):
            for event in page:
                if event.updated_at <= instant:  # events sort by key, then version
                    key = event.key.split(EVENT_SEPARATOR, 1)[0]
                    slots[key] = replace(event, kind=RecordKind.KEY, key=key)
        return slots

    async def _keys_at(self, partition: Partition, instant: datetime) -> RecordStore:
        """A record store holding each key's slot as it was at ``instant``."""
        slots = await self._slots_at(partition, instant)
        records = InMemoryRecordStore()
        await records.open()
        rows: Sequence[Record] = list(slots.values())
        version = max((r.version for r in rows), default=0)
        counter = Record(RecordKind.COUNTER, COUNTER_KEY, {}, version, instant)
        await records.put_records(partition, [*rows, counter])
        return records


def _records_of(req: SnapshotRequest) -> list[RecordId]:
    """The records a snapshot of ``req`` reads: the profile, the scope's working
    memory and the session (those it names)."""
    wanted: list[RecordId] = [(RecordKind.PROFILE, PROFILE_KEY)]
    if req.scope is not None:
        wanted.append((RecordKind.WORKING, req.scope.key))
    if req.session_id:
        wanted.append((RecordKind.SESSION, req.session_id))
    return wanted


def _fixed(instant: datetime) -> Callable[[], datetime]:
    return lambda: instant


def _beyond(horizon: datetime, asked: str) -> OutOfRange:
    return OutOfRange(
        f"{FIELD}: {asked} is before the history's horizon {horizon.astimezone(UTC).isoformat()} "
        "(history.retention_hours, or when this daemon started keeping the partition's "
        "history): it can no longer be read as of"
    )
