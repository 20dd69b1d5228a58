"""Offloading: a tool result too large to keep in the session is stored apart.

A tool message whose content is over the session's ``offload_bytes`` keeps a stub
in its place, in the header and wherever the message goes (window, summary,
GetSessionMessages, export): the stub names the attachment (the message's seq) and
how to read it, and quotes the start of the content. The full content is a
SESSION_ATTACHMENT record of the same partition and session generation, written in
the same store write as the header, keyed by the message's seq and the content's
SHA-256 (record.attachment_key). It goes wherever the message goes: DeleteMessages,
ClearSession, the session's expiry and Reset delete it, Export and Import carry it.

GetSessionAttachment reads it back, whole or a slice of characters, after checking
that the message names exactly that content.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memoryd.domain.agent_state import (
    AttachmentQuery,
    AttachmentSlice,
    MessageAttachment,
    MessageDraft,
    MessageRole,
    SessionMessage,
)
from memoryd.domain.errors import DataLoss, InvalidArgument, NotFound
from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.scanning import scan_records
from memoryd.service.sessions.record import (
    SessionState,
    attachment_key,
    message_from_doc,
    message_key,
    message_prefix,
    seq_of_key,
)
from memoryd.storage.records import RecordStore

#: Records read per store call while listing attachments (each may be large: the
#: store has no key-only listing).
READ_BATCH = 16
#: Tool names quoted in a stub are cut to this many characters.
_STUB_NAME_CHARS = 64


@dataclass(frozen=True, slots=True)
class Offload:
    """When and how much to offload: results over ``threshold`` bytes (0: never);
    stubs quote ``preview_chars`` characters."""

    threshold: int
    preview_chars: int

    def due(self, draft: MessageDraft) -> bool:
        return (
            self.threshold > 0
            and draft.role is MessageRole.TOOL
            and len(draft.content.encode("utf-8")) > self.threshold
        )


def describe(content: str) -> MessageAttachment:
    data = content.encode("utf-8")
    return MessageAttachment(len(data), len(content), hashlib.sha256(data).hexdigest())


def stub(content: str, seq: int, attachment: MessageAttachment, name: str, preview: int) -> str:
    """What an offloaded message holds instead of ``content``: the attachment named,
    how to read it, and the first ``preview`` characters."""
    what = f"tool result of {name[:_STUB_NAME_CHARS]}" if name else "tool result"
    head = (
        f"[{what} offloaded: {attachment.size_bytes} bytes, {attachment.chars} characters, "
        f"stored as attachment {seq} of this session; read it with "
        f"get_session_attachment(seq={seq})]"
    )
    quoted = content[:preview].strip()
    if not quoted:
        return head
    return f"{head}\n{quoted}{'…' if preview < len(content) else ''}"


def append_drafts(
    session: SessionState,
    drafts: Sequence[MessageDraft],
    offload: Offload,
    max_message_bytes: int,
    now: datetime,
) -> list[Record]:
    """Append ``drafts`` to ``session``'s tail (seqs, times), offloading what is due;
    returns the attachment records to store with the header. A tool result over
    ``max_message_bytes`` that is not offloaded (the session's offload_bytes is 0 or
    above it) is INVALID_ARGUMENT, before anything changes in the store."""
    records: list[Record] = []
    for i, draft in enumerate(drafts):
        assert draft.role is not None  # checked before the append
        seq = session.message_count + 1
        created = draft.created_at or now
        content, attachment = draft.content, None
        if offload.due(draft):
            attachment = describe(draft.content)
            content = stub(draft.content, seq, attachment, draft.name, offload.preview_chars)
            records.append(attachment_record(session, seq, draft.content, attachment, created))
        elif len(content.encode("utf-8")) > max_message_bytes:
            raise InvalidArgument.field(
                f"messages[{i}].content",
                f"is over {max_message_bytes} bytes (sessions.max_message_bytes) and this "
                "session does not offload it (compression.offload_bytes)",
            )
        session.message_count = seq
        session.messages.append(
            SessionMessage(
                role=draft.role,
                content=content,
                seq=seq,
                created_at=created,
                name=draft.name,
                tool_call_id=draft.tool_call_id,
                tool_calls=draft.tool_calls,
                attachment=attachment,
            )
        )
    session.stored_messages += len(drafts)
    return records


def attachment_record(
    session: SessionState, seq: int, content: str, attachment: MessageAttachment, when: datetime
) -> Record:
    return Record(
        kind=RecordKind.SESSION_ATTACHMENT,
        key=attachment_key(session.id, session.generation, seq, attachment.sha256),
        doc={"seq": seq, "content": content},
        version=1,
        updated_at=when,
    )


def content_record(
    session_id: str, generation: str, seq: int, content: str, when: datetime
) -> Record:
    """The attachment record of ``content`` (an import: its hash names it)."""
    attachment = describe(content)
    return Record(
        kind=RecordKind.SESSION_ATTACHMENT,
        key=attachment_key(session_id, generation, seq, attachment.sha256),
        doc={"seq": seq, "content": content},
        version=1,
        updated_at=when,
    )


def _slice(content: str, offset: int, max_chars: int) -> tuple[str, int]:
    end = len(content) if max_chars <= 0 else min(len(content), offset + max_chars)
    return content[offset:end], (end if end < len(content) else 0)


async def _message(
    records: RecordStore, partition: Partition, session: SessionState, seq: int
) -> SessionMessage | None:
    for message in session.messages:
        if message.seq == seq:
            return message
    if seq > session.summarized_through_seq:
        return None
    found = await records.get_records(
        partition, RecordKind.SESSION_MESSAGE, [message_key(session.id, session.generation, seq)]
    )
    return message_from_doc(found[0].doc) if found else None


async def read(
    records: RecordStore, partition: Partition, session: SessionState, query: AttachmentQuery
) -> AttachmentSlice:
    """The slice ``query`` asks for of message ``query.seq``'s attachment."""
    message = await _message(records, partition, session, query.seq)
    if message is None:
        raise NotFound(f"session {session.id!r} has no message {query.seq}")
    ref = message.attachment
    if ref is None:
        raise NotFound(
            f"message {query.seq} of session {session.id!r} was not offloaded: its content "
            "is the message's own (GetSessionMessages)"
        )
    key = attachment_key(session.id, session.generation, query.seq, ref.sha256)
    found = await records.get_records(partition, RecordKind.SESSION_ATTACHMENT, [key])
    content = found[0].doc.get("content") if found else None
    if not isinstance(content, str) or describe(content) != ref:
        raise DataLoss(
            f"the attachment of message {query.seq} of session {session.id!r} is missing or "
            "does not match its message"
        )
    text, next_offset = _slice(content, query.offset, query.max_chars)
    return AttachmentSlice(message, ref, text, next_offset)


async def generation_keys(
    records: RecordStore, partition: Partition, session_id: str, generation: str | None
) -> list[str]:
    """Keys of the attachments of one session generation (None: of every one)."""
    prefix = (
        message_prefix(session_id, generation) if generation is not None else f"{session_id}\x00"
    )
    kind = RecordKind.SESSION_ATTACHMENT
    return [
        r.key
        async for page in scan_records(records, partition, kind, READ_BATCH, prefix)
        for r in page
    ]


def seq_of_attachment(key: str) -> int:
    return seq_of_key(key.rsplit("\x00", 1)[0])


def refs(messages: Iterable[SessionMessage]) -> list[tuple[int, MessageAttachment]]:
    """(seq, attachment) of the offloaded ones of ``messages``."""
    return [(m.seq, m.attachment) for m in messages if m.attachment is not None]


async def folded_refs(
    records: RecordStore, partition: Partition, session: SessionState, seqs: Sequence[int]
) -> list[tuple[int, MessageAttachment]]:
    """(seq, attachment) of the offloaded ones of the folded messages ``seqs``."""
    keys = [message_key(session.id, session.generation, seq) for seq in seqs]
    if not keys:
        return []
    found = await records.get_records(partition, RecordKind.SESSION_MESSAGE, keys)
    return refs(message_from_doc(r.doc) for r in found)


async def delete_refs(
    records: RecordStore,
    partition: Partition,
    session: SessionState,
    named: Sequence[tuple[int, MessageAttachment]],
) -> int:
    """Delete the attachments ``named`` (seq, attachment) of ``session``."""
    keys = [attachment_key(session.id, session.generation, seq, a.sha256) for seq, a in named]
    return len(await delete_keys(records, partition, keys))


async def delete_keys(records: RecordStore, partition: Partition, keys: Sequence[str]) -> list[str]:
    if not keys:
        return []
    return await records.delete_records(partition, RecordKind.SESSION_ATTACHMENT, list(keys))
