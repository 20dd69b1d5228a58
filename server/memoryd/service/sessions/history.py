"""A session's stored messages: reading ranges, deleting, and purging expired sessions.

The stored messages of a session are its folded turns (SESSION_MESSAGE records, seq
up to the header's ``summarized_through_seq``) followed by the header's tail (the
turns not yet summarised); see memoryd.service.sessions.record. Every function takes
the partition explicitly and touches only that session generation's records.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from memoryd.domain.agent_state import SessionMessage
from memoryd.domain.models import Partition
from memoryd.domain.records import RecordKind
from memoryd.service.common.scanning import expired_keys, scan_records
from memoryd.service.sessions import attachments
from memoryd.service.sessions.record import (
    SessionState,
    message_from_doc,
    message_key,
    message_prefix,
    session_of_key,
)
from memoryd.storage.records import KeyPage, RecordStore

#: Records read per store call.
READ_BATCH = 200


@dataclass(frozen=True, slots=True)
class StoredMessages:
    """The stored messages of one session generation in a partition: its folded
    records, then the header's tail."""

    records: RecordStore
    partition: Partition
    session: SessionState

    async def folded(self, *, after_seq: int = 0, limit: int = READ_BATCH) -> list[SessionMessage]:
        """Up to ``limit`` folded messages with seq > ``after_seq``, in seq order."""
        session = self.session
        if session.folded_messages <= 0 or after_seq >= session.summarized_through_seq:
            return []
        prefix = message_prefix(session.id, session.generation)
        after = message_key(session.id, session.generation, after_seq) if after_seq > 0 else None
        page = await self.records.list_records(
            self.partition,
            RecordKind.SESSION_MESSAGE,
            KeyPage(prefix=prefix, after=after, limit=limit),
        )
        # A record past the summary is a fold another replica wrote and then lost the
        # header to (same content: the message is still in the tail): not folded yet.
        messages = [message_from_doc(r.doc) for r in page]
        return [m for m in messages if m.seq <= session.summarized_through_seq]

    async def pages(
        self, *, after_seq: int = 0, batch: int = READ_BATCH
    ) -> AsyncIterator[list[SessionMessage]]:
        """Every stored message with seq > ``after_seq`` (folded, then the tail), in pages."""
        while True:
            page = await self.folded(after_seq=after_seq, limit=batch)
            if page:
                yield page
                after_seq = page[-1].seq
            if len(page) < batch:
                break
        tail = [m for m in self.session.messages if m.seq > after_seq]
        if tail:
            yield tail

    async def page(
        self, after_seq: int, to_seq: int, size: int
    ) -> tuple[list[SessionMessage], bool]:
        """Up to ``size`` stored messages with ``after_seq`` < seq <= ``to_seq`` (0: no
        bound), and whether more follow."""
        found: list[SessionMessage] = []
        async for batch in self.pages(after_seq=after_seq, batch=size + 1):
            found.extend(m for m in batch if not to_seq or m.seq <= to_seq)
            if len(found) > size or (to_seq and batch[-1].seq >= to_seq):
                break
        return found[:size], len(found) > size

    async def delete_folded(self, seqs: Sequence[int]) -> list[int]:
        """Delete the folded messages with these seqs; returns the seqs that existed."""
        session = self.session
        keys = [message_key(session.id, session.generation, s) for s in seqs]
        if not keys:
            return []
        kind = RecordKind.SESSION_MESSAGE
        gone = set(await self.records.delete_records(self.partition, kind, keys))
        return [s for s, k in zip(seqs, keys, strict=True) if k in gone]


async def delete_generation(
    records: RecordStore, partition: Partition, session_id: str, generation: str | None = None
) -> int:
    """Delete the message records of a session (of one generation, or of every one)
    and their attachments; returns how many message records went."""
    prefix = (
        message_prefix(session_id, generation) if generation is not None else f"{session_id}\x00"
    )
    await attachments.delete_keys(
        records,
        partition,
        await attachments.generation_keys(records, partition, session_id, generation),
    )
    gone = 0
    while True:
        page = await records.list_records(
            partition, RecordKind.SESSION_MESSAGE, KeyPage(prefix=prefix, limit=READ_BATCH)
        )
        if not page:
            return gone
        gone += len(
            await records.delete_records(
                partition, RecordKind.SESSION_MESSAGE, [r.key for r in page]
            )
        )
        if len(page) < READ_BATCH:
            return gone


async def expired_sessions(records: RecordStore, partition: Partition, now: datetime) -> list[str]:
    """Ids of the partition's sessions whose header expired at or before ``now``."""
    return await expired_keys(records, partition, RecordKind.SESSION, now, READ_BATCH)


async def message_generations(records: RecordStore, partition: Partition) -> dict[str, set[str]]:
    """Session id -> the generations that have message or attachment records in the
    partition."""
    found: dict[str, set[str]] = {}
    kinds = (
        (RecordKind.SESSION_MESSAGE, READ_BATCH),
        (RecordKind.SESSION_ATTACHMENT, attachments.READ_BATCH),
    )
    for kind, batch in kinds:
        async for page in scan_records(records, partition, kind, batch):
            for record in page:
                session_id, generation = session_of_key(record.key)
                found.setdefault(session_id, set()).add(generation)
    return found
