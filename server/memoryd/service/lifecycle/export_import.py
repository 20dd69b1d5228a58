"""Export: every record of an agent (or of a tenant's agents) as ``memoryd.export.v1``
items, and the mapping between stored records and export items both ways.

The stream is a header, then per agent: its memories (oldest first, with vectors when
asked), its key history (every write, each flagged when it is the key's current
slot), working memory, profile, sessions (each header followed by its summarised messages
and the attachments of its offloaded ones) and saved states. Together they hold every
field of every record, so importing them into an empty store reproduces the
partition exactly (the COUNTER bookkeeping records are recomputed: the key counter
from the highest key version; when maintenance last ran is not exported). Only what
the caller may see is exported: memories and keys above its clearance are left out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from memoryd.domain.agent_state import PROFILE_KEY, AgentProfile, WorkingMemory
from memoryd.domain.keyed import level_of
from memoryd.domain.lifecycle import (
    ExportedKeyEvent,
    ExportedMemory,
    ExportedProfile,
    ExportedSession,
    ExportedSessionAttachment,
    ExportedSessionMessage,
    ExportedState,
    ExportedWorkingMemory,
    ExportHeader,
    ExportItem,
    Progress,
)
from memoryd.domain.models import MemoryFilter, Partition, SecurityLevel
from memoryd.domain.records import Record, RecordKind, UndecodableRecord
from memoryd.service.agent_state.profile import profile_from_record
from memoryd.service.agent_state.state import component_from, state_record
from memoryd.service.agent_state.working import working_doc, working_memory_from
from memoryd.service.common import scanning
from memoryd.service.common.undecodable import skipped
from memoryd.service.keyed.docs import EVENT_SEPARATOR, entry_from
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.sessions import attachments
from memoryd.service.sessions.record import (
    CLOSED,
    OPEN,
    SessionState,
    generation_of,
    message_doc,
    message_from_doc,
    message_key,
    message_prefix,
)

T = TypeVar("T")

# ---------------------------------------------------------------- record <-> item


def working_record(wm: WorkingMemory) -> Record:
    ttl_s = wm.ttl.total_seconds() if wm.ttl else None
    return Record(
        kind=RecordKind.WORKING,
        key=wm.scope.key,
        doc=working_doc(wm.content_json, wm.json_schema, ttl_s),
        version=wm.version,
        updated_at=wm.updated_at,
        expires_at=wm.expires_at,
    )


def profile_record(profile: AgentProfile) -> Record:
    return Record(
        kind=RecordKind.PROFILE,
        key=PROFILE_KEY,
        doc={"content": profile.content},
        version=profile.version,
        updated_at=profile.updated_at,
    )


def session_from_record(agent_id: str, record: Record) -> ExportedSession:
    """The header of a session; its folded messages are exported apart
    (:func:`session_item`)."""
    s = SessionState.from_record(record)
    return ExportedSession(
        agent_id=agent_id,
        session_id=s.id,
        created_at=s.created_at,
        updated_at=record.updated_at,
        version=record.version,
        ttl=timedelta(seconds=s.ttl_s),
        fixed_zone=list(s.fixed_zone),
        summary=s.summary,
        messages=list(s.messages),
        expires_at=record.expires_at,
        closed=s.status == CLOSED,
        summarizer=s.summarizer,
        summary_degraded=list(s.summary_degraded),
        message_count=s.message_count,
        summarized_through_seq=s.summarized_through_seq,
        stored_messages=s.stored_messages,
        compression=s.compression,
        long_term_memory_mode=s.long_term_memory_mode,
    )


def session_record(item: ExportedSession) -> Record:
    legacy = item.summarized_through_seq is None
    first_tail = item.messages[0].seq - 1 if item.messages else item.message_count
    state = SessionState(
        id=item.session_id,
        created_at=item.created_at,
        ttl_s=item.ttl.total_seconds(),
        status=CLOSED if item.closed else OPEN,
        fixed_zone=list(item.fixed_zone),
        summary=item.summary,
        summarizer=item.summarizer,
        summary_degraded=list(item.summary_degraded),
        messages=list(item.messages),
        message_count=item.message_count,
        summarized_through_seq=first_tail if legacy else item.summarized_through_seq or 0,
        stored_messages=len(item.messages) if legacy else item.stored_messages or 0,
        compression=item.compression,
        long_term_memory_mode=item.long_term_memory_mode,
        # record() writes version + 1 and, untouched, keeps expires_at.
        version=item.version - 1,
        expires_at=item.expires_at,
    )
    return state.record(item.updated_at, touch=False)


def session_item(
    agent_id: str, session: SessionState, record: Record
) -> ExportedSessionMessage | ExportedSessionAttachment:
    """A folded message or an attachment of ``session`` as its export item."""
    if record.kind is RecordKind.SESSION_ATTACHMENT:
        return ExportedSessionAttachment(
            agent_id,
            session.id,
            session.created_at,
            seq=attachments.seq_of_attachment(record.key),
            content=str(record.doc.get("content", "")),
        )
    return ExportedSessionMessage(
        agent_id, session.id, session.created_at, message=message_from_doc(record.doc)
    )


def session_message_record(item: ExportedSessionMessage) -> Record:
    message = item.message
    return Record(
        kind=RecordKind.SESSION_MESSAGE,
        key=message_key(item.session_id, generation_of(item.session_created_at), message.seq),
        doc=message_doc(message),
        version=1,
        updated_at=message.created_at,
    )


def session_attachment_record(item: ExportedSessionAttachment) -> Record:
    return attachments.content_record(
        item.session_id,
        generation_of(item.session_created_at),
        item.seq,
        item.content,
        item.session_created_at,
    )


def state_item(agent_id: str, record: Record) -> ExportedState:
    session_id, _, _ = record.key.partition("\x00")
    return ExportedState(agent_id=agent_id, session_id=session_id, component=component_from(record))


def state_item_record(item: ExportedState) -> Record:
    return state_record(item.session_id, item.component)


# ---------------------------------------------------------------- export


class Exporter:
    def __init__(self, deps: LifecycleDeps) -> None:
        self._deps = deps

    async def partitions(self, tenant_id: str) -> list[Partition]:
        """The tenant's partitions holding any memory or record."""
        deps = self._deps
        found = set(await deps.store.list_partitions(tenant_id))
        found.update(await deps.records.list_partitions(tenant_id))
        return sorted(found, key=lambda p: p.agent_id)

    async def export(
        self,
        header: ExportHeader,
        partitions: Sequence[Partition],
        clearance: SecurityLevel,
        *,
        include_vectors: bool,
    ) -> AsyncIterator[ExportItem | Progress]:
        """The header, then every item (as stored: the operation door masks each one
        for a low-clearance caller)."""
        yield header
        for partition in partitions:
            async for item in self._partition(partition, clearance, include_vectors):
                yield item

    async def _partition(
        self, partition: Partition, clearance: SecurityLevel, include_vectors: bool
    ) -> AsyncIterator[ExportItem | Progress]:
        deps = self._deps
        agent = partition.agent_id
        flt = MemoryFilter(include_archived=True, max_security_level=clearance)
        total = await deps.store.count(partition, flt)
        done = 0
        async for page in scanning.scan(deps.store, partition, flt, deps.batch):
            if include_vectors:
                page = await deps.store.get(partition, [m.id for m in page], with_vectors=True)
            for memory in page:
                yield ExportedMemory(memory)
            done += len(page)
            yield Progress("memories", done, total, agent)

        slots: dict[str, int] = {}
        async for records in self._records(partition, RecordKind.KEY):
            slots.update((r.key, r.version) for r in records if level_of(r) <= clearance)
        matched: set[str] = set()
        async for records in self._records(partition, RecordKind.KEY_EVENT):
            shown = [r for r in records if level_of(r) <= clearance]
            # A slot's write that no longer decodes is skipped here, not again below.
            matched.update(
                key
                for r in shown
                if slots.get(key := r.key.split(EVENT_SEPARATOR, 1)[0]) == r.version
            )
            for entry in _decoded(shown, entry_from):
                if isinstance(entry, Progress):
                    yield entry
                    continue
                yield ExportedKeyEvent(agent, entry, slots.get(entry.key) == entry.version)
        missing = sorted(set(slots) - matched)
        if missing:
            # A slot whose write has no history event (data from before history was
            # kept): exported as its own current write.
            found = await deps.records.get_records(partition, RecordKind.KEY, missing)
            for entry in _decoded(found, entry_from):
                yield entry if isinstance(entry, Progress) else ExportedKeyEvent(agent, entry, True)
        yield Progress("keys", len(slots), len(slots), agent)

        async for records in self._records(partition, RecordKind.WORKING):
            for working in _decoded(records, working_memory_from):
                if isinstance(working, Progress):
                    yield working
                else:
                    yield ExportedWorkingMemory(agent, working)
        for record in await deps.records.get_records(partition, RecordKind.PROFILE, [PROFILE_KEY]):
            yield ExportedProfile(agent, profile_from_record(record))
        async for records in self._records(partition, RecordKind.SESSION):
            for record in records:
                yield session_from_record(agent, record)
                session = SessionState.from_record(record)
                prefix = message_prefix(session.id, session.generation)
                async for messages in self._records(partition, RecordKind.SESSION_MESSAGE, prefix):
                    for message in messages:
                        yield session_item(agent, session, message)
                async for stored in scanning.scan_records(
                    deps.records,
                    partition,
                    RecordKind.SESSION_ATTACHMENT,
                    attachments.READ_BATCH,
                    prefix,
                ):
                    for attachment in stored:
                        yield session_item(agent, session, attachment)
        async for records in self._records(partition, RecordKind.STATE):
            for state in _decoded(records, lambda r: state_item(agent, r)):
                yield state
        yield Progress("records", 0, 0, agent)

    def _records(
        self, partition: Partition, kind: RecordKind, prefix: str = ""
    ) -> AsyncIterator[list[Record]]:
        return scanning.scan_records(self._deps.records, partition, kind, self._deps.batch, prefix)


#: The phase of the progress event that tells of a record an export left out.
SKIPPED = "skipped"


def _decoded(records: Sequence[Record], decode: Callable[[Record], T]) -> Iterator[T | Progress]:
    """``decode`` of each record; one that no longer decodes is left out, logged and
    told to the caller as a "skipped" progress event naming it (an export is a
    stream: it has no degradations of its own)."""
    for record in records:
        try:
            yield decode(record)
        except UndecodableRecord as error:
            skipped(error)
            yield Progress(SKIPPED, message=error.message)


def describe(item: Any) -> str:
    """The kind of an export item, for messages."""
    return type(item).__name__.removeprefix("Exported").lower()
