"""Import: ``memoryd.export.v1`` items into partitions, idempotent by id and version.

Every item is validated like the write that first stored it; a bad item is rejected
(with its index and the reason) and the rest go on. An item whose record already
exists at the same or a newer version is skipped, so importing the same file twice
changes nothing. Items are buffered and written in batches (one store read and one
write per batch and kind).

Memories keep their id, version, timestamps and counters; without a usable vector
(none exported, or another dimension) they are embedded anew by this daemon's
embedder. Importing into another agent (or tenant) re-derives the ids of keyed
memories' mirrors, which are a function of the partition and the key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from memoryd.config import (
    KeysSettings,
    ProfileSettings,
    SessionSettings,
    SnapshotSettings,
    WorkingMemorySettings,
)
from memoryd.domain.errors import InvalidArgument, PermissionDenied
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.lifecycle import (
    ExportedKeyEvent,
    ExportedMemory,
    ExportedProfile,
    ExportedSession,
    ExportedSessionAttachment,
    ExportedSessionMessage,
    ExportedState,
    ExportedWorkingMemory,
    ExportItem,
    ImportOutcome,
    ImportRejection,
)
from memoryd.domain.limits import MAX_COUNT, MAX_IMPORTED_VERSION, MAX_SEQ, MAX_TTL
from memoryd.domain.models import Memory, Partition, SecurityLevel
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.service.agent_state.working import check_identifier, compact_json_size
from memoryd.service.common import validation as check
from memoryd.service.common.memory_writes import Changes
from memoryd.service.common.validation import Violations
from memoryd.service.keyed.docs import (
    COUNTER_KEY,
    entry_records,
    mirror_fields,
    mirror_id,
)
from memoryd.service.keyed.keys import InvalidKey, KeyLimits, normalise_key
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.export_import import (
    profile_record,
    session_attachment_record,
    session_message_record,
    session_record,
    state_item_record,
    working_record,
)
from memoryd.service.sessions.checks import SessionChecks

_MAX_ID_BYTES = 256
#: A stored vector is used as it is when its norm is this close to 1.
_UNIT_TOLERANCE = 1e-3


@dataclass(frozen=True, slots=True)
class ImportLimits:
    keys: KeysSettings
    working: WorkingMemorySettings
    profile: ProfileSettings
    sessions: SessionSettings
    snapshot: SnapshotSettings


@dataclass(slots=True)
class _Pending:
    memories: dict[Partition, list[tuple[int, Memory]]] = field(default_factory=dict)
    keys: dict[Partition, list[tuple[int, ExportedKeyEvent, Record, Record, Record]]] = field(
        default_factory=dict
    )
    records: dict[tuple[Partition, RecordKind], list[tuple[int, Record]]] = field(
        default_factory=dict
    )


class Importer:
    """One import stream: ``add`` each item, then ``finish``."""

    def __init__(self, deps: LifecycleDeps, limits: ImportLimits) -> None:
        self._deps = deps
        self._limits = limits
        self._key_limits = KeyLimits(limits.keys.max_key_bytes)
        self._sessions = SessionChecks(limits.sessions)
        self._pending = _Pending()
        self.outcome = ImportOutcome()

    def reject(self, index: int, reason: str) -> None:
        self.outcome.rejected.append(ImportRejection(index, reason))

    async def add(self, index: int, scope: CallScope, item: ExportItem) -> None:
        try:
            await self._add(index, scope, item)
        except (InvalidArgument, PermissionDenied) as exc:
            self.reject(index, exc.message)

    async def finish(self) -> ImportOutcome:
        pending = self._pending
        for partition in list(pending.memories):
            await self._flush_memories(partition)
        for partition in list(pending.keys):
            await self._flush_keys(partition)
        for partition, kind in list(pending.records):
            await self._flush_records(partition, kind)
        self.outcome.rejected.sort(key=lambda r: r.index)
        return self.outcome

    # ------------------------------------------------------------------ buffering

    async def _add(self, index: int, scope: CallScope, item: ExportItem) -> None:
        partition = scope.partition
        batch = self._deps.batch
        if isinstance(item, ExportedMemory):
            memory = self._memory(scope, item.memory)
            queue = self._pending.memories.setdefault(partition, [])
            queue.append((index, memory))
            if len(queue) >= batch:
                await self._flush_memories(partition)
            return
        if isinstance(item, ExportedKeyEvent):
            entry = self._key_entry(scope, item.entry)
            expires_at = None
            if entry.valid:
                v = Violations("key_event.entry.")
                expires_at = mirror_fields(entry.content, self._deps.limits, v).expires_at
                v.raise_if_any()
            slot, event, counter = entry_records(entry, expires_at)
            keys = self._pending.keys.setdefault(partition, [])
            keys.append((index, dataclasses.replace(item, entry=entry), slot, event, counter))
            if len(keys) >= batch:
                await self._flush_keys(partition)
            return
        if isinstance(item, ExportedWorkingMemory) and item.working.json_schema:
            await self._check_schema(scope, item.working.json_schema)
        record = self._record(item)
        queue_key = (partition, record.kind)
        queue2 = self._pending.records.setdefault(queue_key, [])
        queue2.append((index, record))
        if len(queue2) >= batch:
            await self._flush_records(partition, record.kind)

    def _memory(self, scope: CallScope, m: Memory) -> Memory:
        v = Violations("memory.memory.")
        self._check_id(v, m.id, "id")
        check.check_content(v, m.content, self._deps.limits)
        check.check_tags(v, m.tags, self._deps.limits)
        check.check_namespace(v, m.namespace, self._deps.limits)
        check.check_metadata(v, m.metadata, self._deps.limits)
        check.check_source(v, m.source)
        check.check_unit_interval(v, m.importance, "importance")
        check.check_unit_interval(v, m.confidence, "confidence")
        self._check_version(v, m.version)
        if not 0 <= m.access_count <= MAX_COUNT:
            v.add("access_count", f"must be between 0 and {MAX_COUNT}")
        check_identifier(v, m.embedding_model, "embedding_model", _MAX_ID_BYTES)
        check_identifier(v, m.supersedes, "supersedes", _MAX_ID_BYTES)
        v.raise_if_any()
        self._check_level(m.security_level, scope, "memory.memory.security_level")
        partition = scope.partition
        memory_id = m.id
        if m.key:
            memory_id = mirror_id(
                partition.tenant_id, partition.agent_id, self._key(m.key, "memory.memory.key")
            )
        vector = m.vector
        if vector is not None:
            vector = np.asarray(vector, dtype=np.float32)
            norm = float(np.linalg.norm(vector)) if vector.ndim == 1 else 0.0
            if (
                vector.shape != (self._deps.embedder.dimension,)
                or not np.isfinite(norm)
                or norm == 0
            ):
                vector = None  # another model's space: embedded anew below
            elif abs(norm - 1.0) > _UNIT_TOLERANCE:
                vector = vector / np.float32(norm)
        return dataclasses.replace(
            m,
            id=memory_id,
            tenant_id=partition.tenant_id,
            agent_id=partition.agent_id,
            tags=tuple(dict.fromkeys(t.strip() for t in m.tags)),
            vector=vector,
            # The vector's own dimension, whatever the record claimed.
            embedding_dimension=self._deps.embedder.dimension,
        )

    def _key_entry(self, scope: CallScope, entry: KeyEntry) -> KeyEntry:
        v = Violations("key_event.entry.")
        key = self._key(entry.key, "key_event.entry.key")
        self._check_version(v, entry.version)
        if entry.valid and entry.content is None:
            v.add("content", "is null but the entry is marked valid")
        if not entry.valid and entry.content is not None:
            v.add("content", "must be null for a tombstone (valid false)")
        if entry.content is not None:
            size = len(entry.content_json.encode())
            if size > self._limits.keys.max_content_bytes:
                v.add(
                    "content",
                    f"is {size} bytes as JSON; the limit is {self._limits.keys.max_content_bytes}",
                )
        check.check_source(v, entry.source)
        check.check_namespace(v, entry.namespace, self._deps.limits)
        v.raise_if_any()
        self._check_level(entry.security_level, scope, "key_event.entry.security_level")
        partition = scope.partition
        memory_id = mirror_id(partition.tenant_id, partition.agent_id, key) if entry.valid else ""
        return dataclasses.replace(entry, key=key, memory_id=memory_id)

    def _record(self, item: ExportItem) -> Record:
        """The record an item is imported as, once it keeps within the limits
        (INVALID_ARGUMENT naming the field otherwise)."""
        if isinstance(item, ExportedWorkingMemory):
            self._working_violations(item).raise_if_any()
            return working_record(item.working)
        if isinstance(item, ExportedProfile):
            self._profile_violations(item).raise_if_any()
            return profile_record(item.profile)
        if isinstance(item, ExportedSession):
            self._session_violations(item).raise_if_any()
            return session_record(item)
        if isinstance(item, ExportedSessionMessage):
            self._session_message_violations(item).raise_if_any()
            return session_message_record(item)
        if isinstance(item, ExportedSessionAttachment):
            self._session_attachment_violations(item).raise_if_any()
            return session_attachment_record(item)
        if isinstance(item, ExportedState):
            self._state_violations(item).raise_if_any()
            return state_item_record(item)
        raise InvalidArgument.field("record", f"cannot import a {type(item).__name__} here")

    def _working_violations(self, item: ExportedWorkingMemory) -> Violations:
        lim = self._limits
        wm = item.working
        v = Violations("working_memory.")  # the item's ttl; the rest is its working_memory
        inner = "working_memory."
        if not wm.scope.thread_id and not wm.scope.resource_id:
            v.add(f"{inner}scope", "thread_id or resource_id must be set")
        for name, value in (
            ("thread_id", wm.scope.thread_id),
            ("resource_id", wm.scope.resource_id),
        ):
            check_identifier(v, value, f"{inner}scope.{name}", lim.working.max_scope_id_bytes)
        self._check_json(v, wm.content, f"{inner}content", lim.working.max_content_bytes)
        if wm.ttl is not None and not timedelta(0) <= wm.ttl <= MAX_TTL:
            v.add("ttl", f"must be between 0 and {MAX_TTL.days} days")
        self._check_version(v, wm.version, f"{inner}version")
        return v

    def _profile_violations(self, item: ExportedProfile) -> Violations:
        lim = self._limits
        v = Violations("profile.")
        size = len(item.profile.content.encode())
        if size > lim.profile.max_content_bytes:
            v.add(
                "profile.content",
                f"is {size} bytes; the limit is {lim.profile.max_content_bytes}",
            )
        if "\x00" in item.profile.content:
            v.add("profile.content", "must not contain NUL characters")
        self._check_version(v, item.profile.version)
        return v

    def _session_violations(self, item: ExportedSession) -> Violations:
        v = self._session_item_violations("session.", item.session_id)
        sessions = self._limits.sessions
        _check_contents(
            v,
            "messages",
            [m.content for m in item.messages],
            sessions.max_messages,
            sessions.max_message_bytes,
        )
        if not timedelta(0) < item.ttl <= MAX_TTL:
            v.add("ttl", f"must be positive and at most {MAX_TTL.days} days")
        self._check_session_counts(v, item)
        self._check_version(v, item.version)
        return v

    def _session_message_violations(self, item: ExportedSessionMessage) -> Violations:
        v = self._session_item_violations("session_message.", item.session_id)
        sessions = self._limits.sessions
        message = item.message
        if not 1 <= message.seq <= MAX_SEQ:
            v.add("message.seq", f"must be between 1 and {MAX_SEQ}")
        if len(message.content.encode()) > sessions.max_message_bytes:
            v.add("message.content", f"longer than {sessions.max_message_bytes} bytes")
        return v

    def _session_attachment_violations(self, item: ExportedSessionAttachment) -> Violations:
        v = self._session_item_violations("session_attachment.", item.session_id)
        sessions = self._limits.sessions
        if not 1 <= item.seq <= MAX_SEQ:
            v.add("seq", f"must be between 1 and {MAX_SEQ}")
        size = len(item.content.encode())
        if size > sessions.max_attachment_bytes:
            v.add("content", f"longer than {sessions.max_attachment_bytes} bytes")
        return v

    def _state_violations(self, item: ExportedState) -> Violations:
        v = self._session_item_violations("state.", item.session_id)
        snapshot = self._limits.snapshot
        name = item.component.name
        if not name.strip():
            v.add("component.name", "must not be empty")
        check_identifier(v, name, "component.name", snapshot.max_state_name_bytes)
        self._check_json(v, item.component.state, "component.state", snapshot.max_state_bytes)
        self._check_version(v, item.component.version, "component.version")
        return v

    # ------------------------------------------------------------------ checks

    def _key(self, raw: str, field: str) -> str:
        try:
            key = normalise_key(raw, self._key_limits)
        except InvalidKey as exc:
            raise InvalidArgument.field(field, str(exc)) from None
        if key != raw:
            raise InvalidArgument.field(field, f"is not a normalised key (expected {key!r})")
        return key

    @staticmethod
    def _check_level(level: SecurityLevel, scope: CallScope, field: str) -> None:
        if level > scope.clearance:
            raise PermissionDenied(f"{field}: {level.name} is above the caller's clearance")

    @staticmethod
    def _check_id(v: Violations, value: str, field: str) -> None:
        if not value:
            v.add(field, "must not be empty")
        check_identifier(v, value, field, _MAX_ID_BYTES)

    @staticmethod
    def _check_version(v: Violations, version: int, field: str = "version") -> None:
        # At most 2^52: the record keeps room for more writes than it will ever get.
        if not 1 <= version <= MAX_IMPORTED_VERSION:
            v.add(field, f"must be between 1 and {MAX_IMPORTED_VERSION}")

    def _check_session_counts(self, v: Violations, item: ExportedSession) -> None:
        """Counters and seqs within what a session can reach and consistent with each
        other (like versions: ClearSession reported an imported 2^63 - 1 as deleted)."""
        lim = self._limits.sessions
        tail, count = len(item.messages), item.message_count
        if not tail <= count <= MAX_SEQ:
            v.add("message_count", f"must be between the number of messages ({tail}) and {MAX_SEQ}")
            count = MAX_SEQ
        through, stored = item.summarized_through_seq, item.stored_messages
        if through is not None and not 0 <= through <= count:
            v.add("summarized_through_seq", f"must be between 0 and message_count ({count})")
        if stored is not None and not tail <= stored <= count:
            v.add(
                "stored_messages",
                f"must be between the number of messages ({tail}) and message_count ({count})",
            )
        elif stored is not None and through is not None and stored - tail > through:
            v.add(
                "stored_messages",
                f"counts {stored - tail} summarised messages, more than summarized_through_seq "
                f"({through})",
            )
        for i, message in enumerate(item.messages):
            if not 0 <= message.seq <= count:
                v.add(f"messages[{i}].seq", "must be between 0 and message_count")
        self._sessions.compression(v, item.compression, item.compression)
        _check_contents(
            v,
            "fixed_zone",
            [e.content for e in item.fixed_zone],
            lim.max_fixed_zone_entries,
            lim.max_message_bytes,
            noun="entries",
        )

    @staticmethod
    def _check_json(v: Violations, value: object, field: str, max_bytes: int) -> None:
        size = compact_json_size(value)
        if size is None:
            v.add(field, "is not valid JSON")
        elif size > max_bytes:
            v.add(field, f"is {size} bytes as JSON; the limit is {max_bytes}")

    async def _check_schema(self, scope: CallScope, schema: dict[str, Any]) -> None:
        """The checks SetWorkingMemory makes of a schema, in the tenant's schema budget."""
        working = self._deps.working
        if working is None:
            raise InvalidArgument.field(
                "working_memory.working_memory.json_schema", "cannot be checked here"
            )
        v = Violations("working_memory.working_memory.")
        await working.check_schema(scope, schema, v)
        v.raise_if_any()

    def _session_item_violations(self, prefix: str, session_id: str) -> Violations:
        """The violations of an item of a session (fields named after ``prefix``),
        its session id checked."""
        v = Violations(prefix)
        if not session_id:
            v.add("session_id", "must not be empty")
        check_identifier(v, session_id, "session_id", self._limits.sessions.max_session_id_bytes)
        return v

    # ------------------------------------------------------------------ flushing

    async def _flush_memories(self, partition: Partition) -> None:
        batch = self._pending.memories.pop(partition, [])
        if not batch:
            return
        deps = self._deps
        newest: dict[str, tuple[int, Memory]] = {}
        for index, m in batch:
            kept = newest.get(m.id)
            if kept is not None and kept[1].version >= m.version:
                self.outcome.skipped += 1
                continue
            if kept is not None:
                self.outcome.skipped += 1
            newest[m.id] = (index, m)
        stored = {m.id: m.version for m in await deps.store.get(partition, list(newest))}
        todo: list[tuple[int, Memory]] = []
        for index, m in newest.values():
            if stored.get(m.id, 0) >= m.version:
                self.outcome.skipped += 1
            else:
                todo.append((index, m))
        await self._embed_missing(todo)
        ready = [m for _, m in todo if m.vector is not None]
        if not ready:
            return

        async def newer(current: Mapping[str, Memory]) -> Changes:
            # Checked again as the write lands: a request's update since the check
            # above may have moved a memory past the imported version.
            return Changes(
                [m for m in ready if m.id not in current or current[m.id].version < m.version]
            )

        written = await deps.writes.modify(partition, [m.id for m in ready], newer)
        self.outcome.imported += len(written.upserts)
        self.outcome.skipped += len(ready) - len(written.upserts)

    async def _embed_missing(self, todo: list[tuple[int, Memory]]) -> None:
        embedder = self._deps.embedder
        missing = [(i, m) for i, m in todo if m.vector is None]
        if not missing:
            return
        vectors = await embedder.embed([m.content for _, m in missing])
        for (index, m), vector in zip(missing, vectors, strict=True):
            if not np.any(vector):
                self.reject(index, "memory.memory.content: the embedder produced no vector for it")
                continue
            m.vector = vector
            m.embedding_model = embedder.model_id
            m.embedding_dimension = embedder.dimension

    async def _flush_keys(self, partition: Partition) -> None:
        batch = self._pending.keys.pop(partition, [])
        if not batch:
            return
        deps = self._deps
        if deps.keyed is None:
            await self._write_keys(partition, batch)
            return
        async with deps.keyed.exclusive(partition):
            await self._write_keys(partition, batch)

    async def _write_keys(
        self,
        partition: Partition,
        batch: Sequence[tuple[int, ExportedKeyEvent, Record, Record, Record]],
    ) -> None:
        records = self._deps.records
        events = {
            r.key
            for r in await records.get_records(
                partition, RecordKind.KEY_EVENT, [e.key for _, _, _, e, _ in batch]
            )
        }
        slots = {
            r.key: r.version
            for r in await records.get_records(
                partition,
                RecordKind.KEY,
                [item.entry.key for _, item, _, _, _ in batch if item.current],
            )
        }
        found = await records.get_records(partition, RecordKind.COUNTER, [COUNTER_KEY])
        counter: Record | None = found[0] if found else None
        top = counter
        puts: list[Record] = []
        for _, item, slot, event, new_counter in batch:
            if event.key in events:
                self.outcome.skipped += 1
                continue
            events.add(event.key)
            puts.append(event)
            if item.current and slots.get(slot.key, 0) < slot.version:
                puts.append(slot)
                slots[slot.key] = slot.version
            if top is None or new_counter.version > top.version:
                top = new_counter
            self.outcome.imported += 1
        if top is not None and top is not counter:
            puts.append(top)
        if puts:
            await records.put_records(partition, puts)

    async def _flush_records(self, partition: Partition, kind: RecordKind) -> None:
        batch = self._pending.records.pop((partition, kind), [])
        if not batch:
            return
        records = self._deps.records
        newest: dict[str, Record] = {}
        for _, record in batch:
            kept = newest.get(record.key)
            if kept is not None:
                self.outcome.skipped += 1
                if kept.version >= record.version:
                    continue
            newest[record.key] = record
        stored = {
            r.key: r.version for r in await records.get_records(partition, kind, list(newest))
        }
        puts = [r for r in newest.values() if stored.get(r.key, 0) < r.version]
        self.outcome.skipped += len(newest) - len(puts)
        if puts:
            await records.put_records(partition, puts)
            self.outcome.imported += len(puts)


def _check_contents(
    v: Violations,
    field: str,
    contents: Sequence[str],
    max_count: int,
    max_bytes: int,
    *,
    noun: str = "",
) -> None:
    """At most ``max_count`` items in ``field`` (``noun``: what the message calls them;
    unset, the field's name), each ``content`` at most ``max_bytes``."""
    if len(contents) > max_count:
        v.add(field, f"has {len(contents)} {noun or field}; the limit is {max_count}")
    for i, content in enumerate(contents):
        if len(content.encode()) > max_bytes:
            v.add(f"{field}[{i}].content", f"longer than {max_bytes} bytes")
