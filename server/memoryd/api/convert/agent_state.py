"""Working memory, agent profile and session messages.

JSON objects travel as text (``content_json``: integers keep every digit) or as
``google.protobuf.Struct``, whose integral numbers within 2**53 come back as Python
ints (see :func:`memoryd.api.convert.keyed.json_from_value`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from memoryd.api.convert.common import (
    add_each,
    dict_to_struct,
    duration_from,
    enum_value,
    json_from_value,
    json_object,
    json_to_value,
    set_timestamp,
    struct_data,
    timestamp_from,
    wire_enum,
)
from memoryd.api.convert.memories import memory_to_proto
from memoryd.domain import agent_state
from memoryd.domain.json_text import EMPTY_OBJECT, Json
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb

WORKING_MODES = wire_enum(
    mpb.WorkingMemoryMode, agent_state.WorkingMemoryMode, "WORKING_MEMORY_MODE_"
)
MESSAGE_ROLES = wire_enum(mpb.MessageRole, agent_state.MessageRole, "MESSAGE_ROLE_")
FIXED_ZONE_KINDS = wire_enum(mpb.FixedZoneKind, agent_state.FixedZoneKind, "FIXED_ZONE_KIND_")
LONG_TERM_MODES = wire_enum(
    mpb.LongTermMemoryMode, agent_state.LongTermMemoryMode, "LONG_TERM_MEMORY_MODE_"
)
LONG_TERM_MODES_TO_PROTO = {v: k for k, v in LONG_TERM_MODES.items()}
ROLES_TO_PROTO = {v: k for k, v in MESSAGE_ROLES.items()}
_REVERSE_KINDS = {v: k for k, v in FIXED_ZONE_KINDS.items()}


# ---------------------------------------------------------------- working memory


def working_scope_from(msg: pb.WorkingMemoryScope) -> agent_state.WorkingScope:
    """The domain scope of a wire working-memory scope."""
    return agent_state.WorkingScope(thread_id=msg.thread_id, resource_id=msg.resource_id)


def working_write_from(req: mpb.SetWorkingMemoryRequest) -> agent_state.WorkingMemoryWrite:
    """A SetWorkingMemory request as a write: mode, content as written, TTL and schema."""
    mode = enum_value(req.mode, WORKING_MODES, "mode", default=agent_state.WorkingMemoryMode.MERGE)
    assert mode is not None
    schema = None
    if req.HasField("json_schema"):
        schema = Json.from_value(struct_data(req.json_schema, "json_schema"), "json_schema")
    return agent_state.WorkingMemoryWrite(
        scope=working_scope_from(req.scope),
        content=json_object(req, "content_json", "content") or EMPTY_OBJECT,
        mode=mode,
        ttl=duration_from(req, "ttl"),
        json_schema=schema,
    )


def working_memory_to_proto(
    wm: agent_state.WorkingMemory, out: mpb.WorkingMemory | None = None
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


def working_scope_query_from(
    req: mpb.ListWorkingMemoryScopesRequest,
) -> agent_state.WorkingScopeQuery:
    """Empty filter strings mean "any"."""
    return agent_state.WorkingScopeQuery(
        thread_id=req.thread_id or None,
        resource_id=req.resource_id or None,
        page_size=req.page_size or None,
        page_token=req.page_token,
    )


def list_scopes_response(page: agent_state.WorkingScopePage) -> mpb.ListWorkingMemoryScopesResponse:
    """A page of working-memory scopes as the ListWorkingMemoryScopes response."""
    resp = mpb.ListWorkingMemoryScopesResponse(next_page_token=page.next_page_token)
    add_each(resp.scopes, page.items, working_memory_to_proto)
    return resp


# ---------------------------------------------------------------- profile


def profile_to_proto(profile: agent_state.AgentProfile) -> mpb.AgentProfile:
    """The agent profile (agent.md, its etag and update time) as a wire message."""
    msg = mpb.AgentProfile(content=profile.content, etag=profile.etag)
    set_timestamp(msg.updated_at, profile.updated_at)
    return msg


# ---------------------------------------------------------------- sessions


def tool_calls_from(msg: mpb.SessionMessage, path: str) -> tuple[agent_state.ToolCall, ...]:
    """The tool calls of a wire session message; ``path`` names the message in errors."""
    return tuple(
        agent_state.ToolCall(
            id=c.id, name=c.name, arguments=_arguments(c, f"{path}.tool_calls[{j}].arguments")
        )
        for j, c in enumerate(msg.tool_calls)
    )


def _arguments(call: mpb.ToolCall, path: str) -> Any:
    """A tool call's arguments as JSON data (checked like every JSON value); None when
    unset."""
    if not call.HasField("arguments"):
        return None
    return Json.from_value(json_from_value(call.arguments, path), path).value


def message_drafts_from(req: mpb.AppendMessagesRequest) -> list[agent_state.MessageDraft]:
    """Drafts in request order; an unset role stays None (the service names it)."""
    drafts = []
    for i, m in enumerate(req.messages):
        drafts.append(
            agent_state.MessageDraft(
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


def fixed_zone_kind_from(req: mpb.InjectInstructionRequest) -> agent_state.FixedZoneKind | None:
    """The fixed-zone kind an InjectInstruction request names (None when unset)."""
    return enum_value(req.kind, FIXED_ZONE_KINDS, "kind")


def append_response(outcome: agent_state.AppendOutcome) -> mpb.AppendMessagesResponse:
    """The AppendMessages response: the session's message count and whether it was compressed."""
    resp = mpb.AppendMessagesResponse(
        message_count=outcome.message_count,
        compressed=outcome.compressed,
        recorded_memory_ids=outcome.recorded_memory_ids,
        offloaded_seqs=outcome.offloaded_seqs,
    )
    return resp


def _fixed_entry_to_proto(entry: agent_state.FixedZoneEntry, out: mpb.FixedZoneEntry) -> None:
    out.kind = _REVERSE_KINDS[entry.kind]  # type: ignore[assignment]
    out.content = entry.content
    set_timestamp(out.created_at, entry.created_at)


def message_to_proto(message: agent_state.SessionMessage, out: mpb.SessionMessage) -> None:
    """``message`` into the wire session message ``out``, tool calls included."""
    out.role = ROLES_TO_PROTO[message.role]  # type: ignore[assignment]
    out.content = message.content
    out.name = message.name
    out.tool_call_id = message.tool_call_id
    out.seq = message.seq
    set_timestamp(out.created_at, message.created_at)
    for call in message.tool_calls:
        c = out.tool_calls.add(id=call.id, name=call.name)
        if call.arguments is not None:
            json_to_value(call.arguments, c.arguments)
    if message.attachment is not None:
        attachment_to_proto(message.attachment, out.attachment)
    out.merged_from_seq = message.merged_from_seq


def attachment_to_proto(a: agent_state.MessageAttachment, out: mpb.MessageAttachment) -> None:
    """An offloaded message's attachment (size, characters, digest) into ``out``."""
    out.size_bytes = a.size_bytes
    out.chars = a.chars
    out.sha256 = a.sha256


def inject_response(zone: Sequence[agent_state.FixedZoneEntry]) -> mpb.InjectInstructionResponse:
    """The InjectInstruction response: the session's fixed zone after the change."""
    resp = mpb.InjectInstructionResponse()
    add_each(resp.fixed_zone, zone, _fixed_entry_to_proto)
    return resp


def window_response(window: agent_state.SessionWindow) -> mpb.GetSessionWindowResponse:
    """The GetSessionWindow response: fixed zone, summary and the recent turns that fit."""
    resp = mpb.GetSessionWindowResponse(
        summary=window.summary,
        tokens_used=window.tokens_used,
        summarizer=window.summarizer,
        token_counter=window.token_counter,
        summarized_through_seq=window.summarized_through_seq,
        stored_messages=window.stored_messages,
        long_term_memory_mode=LONG_TERM_MODES_TO_PROTO[window.long_term_memory_mode],  # type: ignore[arg-type]
        long_term_memory=window.long_term_memory,
    )
    add_each(resp.long_term_memories, window.long_term_memories, memory_to_proto)
    add_each(resp.fixed_zone, window.fixed_zone, _fixed_entry_to_proto)
    add_each(resp.recent, window.recent, message_to_proto)
    return resp


def end_session_response(outcome: agent_state.EndSessionOutcome) -> mpb.EndSessionResponse:
    """The EndSession response: the summary and the memories extracted."""
    resp = mpb.EndSessionResponse(summary=outcome.summary)
    add_each(resp.extracted, outcome.extracted, memory_to_proto)
    return resp
