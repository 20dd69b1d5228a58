"""Session requests beyond append / window / inject / end: compression settings, the
stored messages (GetSessionMessages, DeleteMessages, ClearSession) and sessions in
export records."""

from __future__ import annotations

from memoryd.api.convert.agent_state import (
    FIXED_ZONE_KINDS,
    LONG_TERM_MODES,
    LONG_TERM_MODES_TO_PROTO,
    MESSAGE_ROLES,
    ROLES_TO_PROTO,
    attachment_to_proto,
    message_to_proto,
    tool_calls_from,
)
from memoryd.api.convert.common import (
    add_each,
    duration_from,
    enum_value,
    required_timestamp,
    set_timestamp,
    timestamp_from,
)
from memoryd.domain.agent_state import (
    SESSION_COMPRESSION_FIELDS,
    AttachmentQuery,
    AttachmentSlice,
    DeleteMessagesOutcome,
    FixedZoneEntry,
    LongTermMemoryMode,
    MessageAttachment,
    SessionCompression,
    SessionMessage,
    SessionMessagesPage,
    SessionMessagesQuery,
)
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.lifecycle import (
    ExportedSession,
    ExportedSessionAttachment,
    ExportedSessionMessage,
)
from memoryd.domain.requests import Degradation
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb

_REVERSE_KINDS = {v: k for k, v in FIXED_ZONE_KINDS.items()}


def compression_from(msg: mpb.SessionCompression) -> SessionCompression:
    """A session's compression settings; unset fields keep the session's or the configured ones."""
    return SessionCompression(
        **{
            name: getattr(msg, name) if msg.HasField(name) else None
            for name in SESSION_COMPRESSION_FIELDS
        }
    )


def append_compression_from(req: mpb.AppendMessagesRequest) -> SessionCompression | None:
    """The compression settings an AppendMessages request sets, if any."""
    return compression_from(req.compression) if req.HasField("compression") else None


def long_term_mode_from(req: mpb.AppendMessagesRequest) -> LongTermMemoryMode | None:
    """The session's long-term memory mode an AppendMessages sets (None: unchanged)."""
    return enum_value(req.long_term_memory_mode, LONG_TERM_MODES, "long_term_memory_mode")


def attachment_query_from(req: mpb.GetSessionAttachmentRequest) -> AttachmentQuery:
    """A GetSessionAttachment request as a query: session, seq and the slice wanted."""
    return AttachmentQuery(
        session_id=req.session_id, seq=req.seq, offset=req.offset, max_chars=req.max_chars
    )


def attachment_response(out: AttachmentSlice) -> mpb.GetSessionAttachmentResponse:
    """The GetSessionAttachment response: the slice, its attachment and where the next starts."""
    m = out.message
    resp = mpb.GetSessionAttachmentResponse(
        seq=m.seq,
        content=out.content,
        next_offset=out.next_offset,
        role=ROLES_TO_PROTO[m.role],  # type: ignore[arg-type]
        name=m.name,
        tool_call_id=m.tool_call_id,
    )
    attachment_to_proto(out.attachment, resp.attachment)
    return resp


def compression_to_proto(c: SessionCompression, out: mpb.SessionCompression) -> None:
    """``c`` into the wire SessionCompression ``out`` (only the fields it sets)."""
    out.SetInParent()
    for name in SESSION_COMPRESSION_FIELDS:
        value = getattr(c, name)
        if value is not None:
            setattr(out, name, value)


def messages_query_from(req: mpb.GetSessionMessagesRequest) -> SessionMessagesQuery:
    """A GetSessionMessages request as a query: the seq range and paging."""
    return SessionMessagesQuery(
        session_id=req.session_id,
        from_seq=req.from_seq,
        to_seq=req.to_seq,
        page_size=req.page_size or None,
        page_token=req.page_token,
    )


def messages_response(page: SessionMessagesPage) -> mpb.GetSessionMessagesResponse:
    """The GetSessionMessages response: a page of stored messages in seq order."""
    resp = mpb.GetSessionMessagesResponse(
        next_page_token=page.next_page_token,
        message_count=page.message_count,
        summarized_through_seq=page.summarized_through_seq,
    )
    add_each(resp.messages, page.messages, message_to_proto)
    return resp


def delete_messages_response(outcome: DeleteMessagesOutcome) -> mpb.DeleteMessagesResponse:
    """The DeleteMessages response: the seqs deleted and whether the summary was rebuilt."""
    resp = mpb.DeleteMessagesResponse(
        deleted_seqs=outcome.deleted, summary_rebuilt=outcome.summary_rebuilt
    )
    return resp


# ---------------------------------------------------------------- export records


def message_from_proto(m: mpb.SessionMessage, path: str) -> SessionMessage:
    """A stored session message of an Import stream; ``path`` names it in errors."""
    role = MESSAGE_ROLES.get(m.role)
    if role is None:
        raise InvalidArgument.field(f"{path}.role", "must be set")
    return SessionMessage(
        role=role,
        content=m.content,
        seq=m.seq,
        created_at=required_timestamp(m, "created_at", path),
        name=m.name,
        tool_call_id=m.tool_call_id,
        tool_calls=tool_calls_from(m, path),
        attachment=_attachment_from(m, path),
    )


def _attachment_from(m: mpb.SessionMessage, path: str) -> MessageAttachment | None:
    if not m.HasField("attachment"):
        return None
    a = m.attachment
    if a.size_bytes < 0 or a.chars < 0 or len(a.sha256) != 64 or a.sha256.strip(_HEX):
        raise InvalidArgument.field(
            f"{path}.attachment", "must have sizes not below 0 and a lowercase hex SHA-256"
        )
    return MessageAttachment(a.size_bytes, a.chars, a.sha256)


_HEX = "0123456789abcdef"


def session_to_proto(item: ExportedSession, s: lpb.ExportedSession) -> None:
    """An exported session (header, fixed zone, summary) into the wire message ``s``."""
    s.agent_id = item.agent_id
    s.session_id = item.session_id
    for entry in item.fixed_zone:
        out = s.fixed_zone.add(kind=_REVERSE_KINDS[entry.kind], content=entry.content)
        set_timestamp(out.created_at, entry.created_at)
    s.summary = item.summary
    add_each(s.messages, item.messages, message_to_proto)
    set_timestamp(s.expires_at, item.expires_at)
    s.closed = item.closed
    set_timestamp(s.created_at, item.created_at)
    set_timestamp(s.updated_at, item.updated_at)
    s.ttl.FromTimedelta(item.ttl)
    s.summarizer = item.summarizer
    for d in item.summary_degraded:
        s.summary_degraded.add(component=d.component, reason=d.reason)
    s.message_count = item.message_count
    s.version = item.version
    s.summarized_through_seq = item.summarized_through_seq or 0
    s.stored_messages = item.stored_messages or 0
    compression_to_proto(item.compression, s.compression)
    s.long_term_memory_mode = LONG_TERM_MODES_TO_PROTO[item.long_term_memory_mode]  # type: ignore[assignment]


def session_from_proto(s: lpb.ExportedSession, path: str) -> ExportedSession:
    """An imported session as the domain item; ``path`` names it in errors."""
    fixed = []
    for i, e in enumerate(s.fixed_zone):
        kind = FIXED_ZONE_KINDS.get(e.kind)
        if kind is None:
            raise InvalidArgument.field(f"{path}.fixed_zone[{i}].kind", "must be set")
        fixed.append(
            FixedZoneEntry(
                kind, e.content, required_timestamp(e, "created_at", f"{path}.fixed_zone[{i}]")
            )
        )
    messages = [message_from_proto(m, f"{path}.messages[{i}]") for i, m in enumerate(s.messages)]
    ttl = duration_from(s, "ttl", f"{path}.ttl")
    if ttl is None:
        raise InvalidArgument.field(f"{path}.ttl", "must be set")
    # An export written before sessions kept every message has neither count.
    kept = s.summarized_through_seq > 0 or s.stored_messages > 0
    return ExportedSession(
        agent_id=s.agent_id,
        session_id=s.session_id,
        created_at=required_timestamp(s, "created_at", path),
        updated_at=required_timestamp(s, "updated_at", path),
        version=s.version,
        ttl=ttl,
        fixed_zone=fixed,
        summary=s.summary,
        messages=messages,
        expires_at=timestamp_from(s, "expires_at", f"{path}.expires_at"),
        closed=s.closed,
        summarizer=s.summarizer,
        summary_degraded=[Degradation(d.component, d.reason) for d in s.summary_degraded],
        message_count=s.message_count,
        summarized_through_seq=s.summarized_through_seq if kept else None,
        stored_messages=s.stored_messages if kept else None,
        compression=compression_from(s.compression),
        long_term_memory_mode=enum_value(
            s.long_term_memory_mode,
            LONG_TERM_MODES,
            f"{path}.long_term_memory_mode",
            default=LongTermMemoryMode.AGENT_CONTROL,
        )
        or LongTermMemoryMode.AGENT_CONTROL,
    )


def session_message_to_proto(item: ExportedSessionMessage, out: lpb.ExportedSessionMessage) -> None:
    """An exported session message into the wire message ``out``."""
    out.agent_id = item.agent_id
    out.session_id = item.session_id
    set_timestamp(out.session_created_at, item.session_created_at)
    message_to_proto(item.message, out.message)


def session_message_from_proto(m: lpb.ExportedSessionMessage, path: str) -> ExportedSessionMessage:
    """An imported session message as the domain item; ``path`` names it in errors."""
    return ExportedSessionMessage(
        agent_id=m.agent_id,
        session_id=m.session_id,
        session_created_at=required_timestamp(m, "session_created_at", path),
        message=message_from_proto(m.message, f"{path}.message"),
    )


def session_attachment_to_proto(
    item: ExportedSessionAttachment, out: lpb.ExportedSessionAttachment
) -> None:
    """An exported session attachment into its export record."""
    out.agent_id = item.agent_id
    out.session_id = item.session_id
    set_timestamp(out.session_created_at, item.session_created_at)
    out.seq = item.seq
    out.content = item.content


def session_attachment_from_proto(
    m: lpb.ExportedSessionAttachment, path: str
) -> ExportedSessionAttachment:
    """An imported session attachment, checked (``path`` names it in errors)."""
    if m.seq < 1:
        raise InvalidArgument.field(f"{path}.seq", "must be positive")
    return ExportedSessionAttachment(
        agent_id=m.agent_id,
        session_id=m.session_id,
        session_created_at=required_timestamp(m, "session_created_at", path),
        seq=m.seq,
        content=m.content,
    )
