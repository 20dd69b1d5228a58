"""Working memory, agent profile and session messages.

JSON objects travel as text (``content_json``: integers keep every digit) or as
``google.protobuf.Struct``, whose integral numbers within 2**53 come back as Python
ints (see :func:`memoryd.api.convert.keyed.json_from_value`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from google.protobuf.message import Message

from memoryd.api.convert.common import (
    dict_to_struct,
    duration_from,
    enum_value,
    json_object_from,
    set_timestamp,
    timestamp_from,
    wire_enum,
)
from memoryd.api.convert.keyed import json_from_value, json_to_value
from memoryd.api.convert.memories import memory_to_proto
from memoryd.domain.agent_state import (
    AgentProfile,
    AppendOutcome,
    EndSessionOutcome,
    FixedZoneEntry,
    FixedZoneKind,
    MessageDraft,
    MessageRole,
    SessionMessage,
    SessionWindow,
    ToolCall,
    WorkingMemory,
    WorkingMemoryMode,
    WorkingMemoryWrite,
    WorkingScope,
    WorkingScopePage,
    WorkingScopeQuery,
)
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb

WORKING_MODES = wire_enum(mpb.WorkingMemoryMode, WorkingMemoryMode, "WORKING_MEMORY_MODE_")
MESSAGE_ROLES = wire_enum(mpb.MessageRole, MessageRole, "MESSAGE_ROLE_")
FIXED_ZONE_KINDS = wire_enum(mpb.FixedZoneKind, FixedZoneKind, "FIXED_ZONE_KIND_")
_REVERSE_ROLES = {v: k for k, v in MESSAGE_ROLES.items()}
_REVERSE_KINDS = {v: k for k, v in FIXED_ZONE_KINDS.items()}


def _object_from(msg: Message, field: str, path: str) -> dict[str, Any] | None:
    """A Struct field as a dict; None when the field is unset."""
    if not msg.HasField(field):
        return None
    struct = getattr(msg, field)
    return {name: json_from_value(value, f"{path}.{name}") for name, value in struct.fields.items()}


# ---------------------------------------------------------------- working memory


def working_scope_from(msg: pb.WorkingMemoryScope) -> WorkingScope:
    """The domain scope of a wire working-memory scope."""
    return WorkingScope(thread_id=msg.thread_id, resource_id=msg.resource_id)


def json_object(
    msg: Message, text_field: str, struct_field: str, path: str, *, exclusive: bool = True
) -> tuple[dict[str, Any], str]:
    """A JSON object given as text (stored as written) or as a Struct, and its text
    ("" for a Struct); ({}, "") when unset (see json_object_from for ``exclusive``)."""
    found = json_object_from(msg, text_field, struct_field, path, exclusive=exclusive)
    if found is not None:
        return found
    return _object_from(msg, struct_field, f"{path}{struct_field}") or {}, ""


def working_write_from(req: mpb.SetWorkingMemoryRequest) -> WorkingMemoryWrite:
    """A SetWorkingMemory request as a write: mode, content as written, TTL and schema."""
    mode = enum_value(req.mode, WORKING_MODES, "mode", default=WorkingMemoryMode.MERGE)
    assert mode is not None
    content, text = json_object(req, "content_json", "content", "")
    return WorkingMemoryWrite(
        scope=working_scope_from(req.scope),
        content=content,
        content_json=text,
        mode=mode,
        ttl=duration_from(req, "ttl"),
        json_schema=_object_from(req, "json_schema", "json_schema"),
    )


def working_memory_to_proto(
    wm: WorkingMemory, out: mpb.WorkingMemory | None = None
) -> mpb.WorkingMemory:
    """``wm`` as a wire WorkingMemory (into ``out`` when given); the content as stored."""
    msg = mpb.WorkingMemory() if out is None else out
    msg.scope.thread_id = wm.scope.thread_id
    msg.scope.resource_id = wm.scope.resource_id
    msg.content.SetInParent()
    dict_to_struct(msg.content, wm.content)
    msg.content_json = wm.content_json
    msg.version = wm.version
    set_timestamp(msg.updated_at, wm.updated_at)
    set_timestamp(msg.expires_at, wm.expires_at)
    if wm.json_schema is not None:
        dict_to_struct(msg.json_schema, wm.json_schema)
    return msg


def working_scope_query_from(req: mpb.ListWorkingMemoryScopesRequest) -> WorkingScopeQuery:
    """Empty filter strings mean "any"."""
    return WorkingScopeQuery(
        thread_id=req.thread_id or None,
        resource_id=req.resource_id or None,
        page_size=req.page_size or None,
        page_token=req.page_token,
    )


def list_scopes_response(page: WorkingScopePage) -> mpb.ListWorkingMemoryScopesResponse:
    """A page of working-memory scopes as the ListWorkingMemoryScopes response."""
    resp = mpb.ListWorkingMemoryScopesResponse(next_page_token=page.next_page_token)
    for wm in page.items:
        working_memory_to_proto(wm, resp.scopes.add())
    return resp


# ---------------------------------------------------------------- profile


def profile_to_proto(profile: AgentProfile) -> mpb.AgentProfile:
    """The agent profile (agent.md, its etag and update time) as a wire message."""
    msg = mpb.AgentProfile(content=profile.content, etag=profile.etag)
    set_timestamp(msg.updated_at, profile.updated_at)
    return msg


# ---------------------------------------------------------------- sessions


def tool_calls_from(msg: mpb.SessionMessage, path: str) -> tuple[ToolCall, ...]:
    """The tool calls of a wire session message; ``path`` names the message in errors."""
    return tuple(
        ToolCall(
            id=c.id,
            name=c.name,
            arguments=json_from_value(c.arguments, f"{path}.tool_calls[{j}].arguments")
            if c.HasField("arguments")
            else None,
        )
        for j, c in enumerate(msg.tool_calls)
    )


def message_drafts_from(req: mpb.AppendMessagesRequest) -> list[MessageDraft]:
    """Drafts in request order; an unset role stays None (the service names it)."""
    drafts = []
    for i, m in enumerate(req.messages):
        drafts.append(
            MessageDraft(
                role=enum_value(m.role, MESSAGE_ROLES, f"messages[{i}].role"),
                content=m.content,
                name=m.name,
                tool_call_id=m.tool_call_id,
                created_at=timestamp_from(m, "created_at", f"messages[{i}].created_at"),
                tool_calls=tool_calls_from(m, f"messages[{i}]"),
            )
        )
    return drafts


def append_ttl_from(req: mpb.AppendMessagesRequest) -> timedelta | None:
    """The session TTL an AppendMessages request sets, if any."""
    return duration_from(req, "ttl")


def fixed_zone_kind_from(req: mpb.InjectInstructionRequest) -> FixedZoneKind | None:
    """The fixed-zone kind an InjectInstruction request names (None when unset)."""
    return enum_value(req.kind, FIXED_ZONE_KINDS, "kind")


def append_response(outcome: AppendOutcome) -> mpb.AppendMessagesResponse:
    """The AppendMessages response: the session's message count and whether it was compressed."""
    resp = mpb.AppendMessagesResponse(
        message_count=outcome.message_count, compressed=outcome.compressed
    )
    return resp


def _fixed_entry_to_proto(entry: FixedZoneEntry, out: mpb.FixedZoneEntry) -> None:
    out.kind = _REVERSE_KINDS[entry.kind]  # type: ignore[assignment]
    out.content = entry.content
    set_timestamp(out.created_at, entry.created_at)


def message_to_proto(message: SessionMessage, out: mpb.SessionMessage) -> None:
    """``message`` into the wire session message ``out``, tool calls included."""
    out.role = _REVERSE_ROLES[message.role]  # type: ignore[assignment]
    out.content = message.content
    out.name = message.name
    out.tool_call_id = message.tool_call_id
    out.seq = message.seq
    set_timestamp(out.created_at, message.created_at)
    for call in message.tool_calls:
        c = out.tool_calls.add(id=call.id, name=call.name)
        if call.arguments is not None:
            json_to_value(call.arguments, c.arguments)


def inject_response(zone: Sequence[FixedZoneEntry]) -> mpb.InjectInstructionResponse:
    """The InjectInstruction response: the session's fixed zone after the change."""
    resp = mpb.InjectInstructionResponse()
    for entry in zone:
        _fixed_entry_to_proto(entry, resp.fixed_zone.add())
    return resp


def window_response(window: SessionWindow) -> mpb.GetSessionWindowResponse:
    """The GetSessionWindow response: fixed zone, summary and the recent turns that fit."""
    resp = mpb.GetSessionWindowResponse(
        summary=window.summary,
        tokens_used=window.tokens_used,
        summarizer=window.summarizer,
        token_counter=window.token_counter,
        summarized_through_seq=window.summarized_through_seq,
        stored_messages=window.stored_messages,
    )
    for entry in window.fixed_zone:
        _fixed_entry_to_proto(entry, resp.fixed_zone.add())
    for message in window.recent:
        message_to_proto(message, resp.recent.add())
    return resp


def end_session_response(outcome: EndSessionOutcome) -> mpb.EndSessionResponse:
    """The EndSession response: the summary and the memories extracted."""
    resp = mpb.EndSessionResponse(summary=outcome.summary)
    for memory in outcome.extracted:
        memory_to_proto(memory, resp.extracted.add())
    return resp
