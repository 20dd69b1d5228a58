"""Working memory, the agent profile and sessions (short-term memory)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from memoryd_client import requests as rq
from memoryd_client.core import Unary
from memoryd_client.errors import invalid_argument
from memoryd_client.results import (
    Appended,
    Attachment,
    FixedZoneEntry,
    Memory,
    Message,
    MessagesDeleted,
    Page,
    Profile,
    SessionAttachment,
    SessionEnd,
    SessionMessages,
    SessionWindow,
    WorkingMemory,
    degradations,
)
from memoryd_client.wire_values import enum_name
from memoryd_proto.v1 import common_pb2, memory_service_pb2

# ---------------------------------------------------------------------- working memory


def _scope(thread_id: str, resource_id: str) -> common_pb2.WorkingMemoryScope:
    return common_pb2.WorkingMemoryScope(thread_id=thread_id, resource_id=resource_id)


def set_working_memory(
    agent_id: str,
    content: rq.JsonObjectArg,
    *,
    thread_id: str = "",
    resource_id: str = "",
    replace: bool = False,
    ttl: float | timedelta | None = None,
    json_schema: Mapping[str, Any] | None = None,
) -> Unary[WorkingMemory]:
    """Merge ``content``'s top-level fields into the scope's working memory
    (``replace=True``: replace it). A replace is safe to retry; a merge is not.
    ``content`` as :class:`~memoryd_client.JsonText` is stored as written (a merge
    keeps each member's text). ``ttl``: expire this long after this write; ``0``: never
    (an expiry set before is removed); None: keep the scope's expiry."""
    mode = (
        memory_service_pb2.WORKING_MEMORY_MODE_REPLACE
        if replace
        else memory_service_pb2.WORKING_MEMORY_MODE_MERGE
    )
    request = memory_service_pb2.SetWorkingMemoryRequest(
        agent_id=agent_id,
        scope=_scope(thread_id, resource_id),
        content_json=rq.json_text(content, "content", object_only=True),
        mode=mode,
    )
    if ttl is not None and (ttl.total_seconds() if isinstance(ttl, timedelta) else ttl) == 0:
        request.ttl.SetInParent()  # a zero Duration: no expiry
    elif ttl is not None:
        request.ttl.CopyFrom(rq.duration(ttl, "ttl"))
    if json_schema is not None:
        request.json_schema.CopyFrom(rq.struct(json_schema, "json_schema"))
    return Unary(
        "memory",
        "SetWorkingMemory",
        request,
        lambda r: WorkingMemory.from_pb(r.working_memory),
        idempotent=replace,
    )


def get_working_memory(
    agent_id: str, *, thread_id: str = "", resource_id: str = ""
) -> Unary[WorkingMemory]:
    request = memory_service_pb2.GetWorkingMemoryRequest(
        agent_id=agent_id, scope=_scope(thread_id, resource_id)
    )
    return Unary(
        "memory",
        "GetWorkingMemory",
        request,
        lambda r: WorkingMemory.from_pb(r.working_memory),
        idempotent=True,
    )


def delete_working_memory(
    agent_id: str, *, thread_id: str = "", resource_id: str = ""
) -> Unary[bool]:
    """True when the scope existed. Safe to retry."""
    request = memory_service_pb2.DeleteWorkingMemoryRequest(
        agent_id=agent_id, scope=_scope(thread_id, resource_id)
    )
    return Unary("memory", "DeleteWorkingMemory", request, lambda r: r.deleted, idempotent=True)


def list_working_memory_scopes(
    agent_id: str,
    *,
    thread_id: str = "",
    resource_id: str = "",
    page_size: int | None = None,
    page_token: str = "",
) -> Unary[Page[WorkingMemory]]:
    request = memory_service_pb2.ListWorkingMemoryScopesRequest(
        agent_id=agent_id,
        thread_id=thread_id,
        resource_id=resource_id,
        page_size=rq.positive_or_unset(page_size, "page_size"),
        page_token=page_token,
    )
    return Unary(
        "memory",
        "ListWorkingMemoryScopes",
        request,
        lambda r: Page(tuple(WorkingMemory.from_pb(w) for w in r.scopes), r.next_page_token),
        idempotent=True,
    )


# ---------------------------------------------------------------------- profile


def get_profile(agent_id: str) -> Unary[Profile]:
    request = memory_service_pb2.GetProfileRequest(agent_id=agent_id)
    return Unary(
        "memory", "GetProfile", request, lambda r: Profile.from_pb(r.profile), idempotent=True
    )


def set_profile(agent_id: str, content: str, *, if_match: str = "") -> Unary[Profile]:
    """Replace the agent's agent.md. ``if_match``: the etag it must still have ("none"
    when creating); then a stale write fails with ``FailedPreconditionError``."""
    request = memory_service_pb2.SetProfileRequest(
        agent_id=agent_id, content=content, if_match=if_match
    )
    return Unary(
        "memory", "SetProfile", request, lambda r: Profile.from_pb(r.profile), idempotent=True
    )


# ---------------------------------------------------------------------- sessions

MessageArg = Mapping[str, Any] | tuple[str, str]


def tool_call(call: Mapping[str, Any], field: str) -> memory_service_pb2.ToolCall:
    """An OpenAI tool call (``{"id", "type": "function", "function": {"name",
    "arguments": "<JSON text>"}}``) or the flat ``{"id", "name", "arguments"}``;
    arguments given as JSON text are parsed, so they are stored as JSON."""
    if not isinstance(call, Mapping):
        raise invalid_argument(field, "must be a tool call dict")
    function = call.get("function")
    spec = function if isinstance(function, Mapping) else call
    arguments = spec.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            raise invalid_argument(f"{field}.arguments", f"is not JSON: {exc.msg}") from None
    out = memory_service_pb2.ToolCall(
        id=str(call.get("id") or ""), name=str(spec.get("name") or "")
    )
    if arguments is not None:
        out.arguments.CopyFrom(rq.json_value(arguments, f"{field}.arguments"))
    return out


def session_message(message: MessageArg, field: str) -> memory_service_pb2.SessionMessage:
    """``{"role": "user", "content": "hi"}`` (OpenAI chat shape; ``name``,
    ``tool_call_id`` and ``tool_calls`` kept) or ``("user", "hi")``."""
    if isinstance(message, tuple):
        role, content = message
        message = {"role": role, "content": content}
    if not isinstance(message, Mapping):
        raise invalid_argument(field, "must be a {role, content} dict or a (role, content) pair")
    text = message.get("content")
    calls = message.get("tool_calls") or ()
    if text is None and calls:
        text = ""  # an assistant turn that only calls tools
    if not isinstance(text, str):
        raise invalid_argument(f"{field}.content", "must be a string")
    return memory_service_pb2.SessionMessage(
        role=rq.enum_value(
            str(message.get("role", "")),
            memory_service_pb2.MessageRole,
            "MESSAGE_ROLE_",
            f"{field}.role",
        ),  # type: ignore[arg-type]
        content=text,
        name=str(message.get("name") or ""),
        tool_call_id=str(message.get("tool_call_id") or ""),
        tool_calls=[tool_call(c, f"{field}.tool_calls[{j}]") for j, c in enumerate(calls)],
    )


def _compression(settings: Mapping[str, Any]) -> memory_service_pb2.SessionCompression | None:
    """The fields of ``settings`` that are not None (SessionCompression's names)."""
    given = {k: v for k, v in settings.items() if v is not None}
    return memory_service_pb2.SessionCompression(**given) if given else None


def append_messages(
    agent_id: str,
    session_id: str,
    messages: Iterable[MessageArg],
    *,
    ttl: float | timedelta | None = None,
    compress_threshold_messages: int | None = None,
    compress_token_ratio: float | None = None,
    context_budget_tokens: int | None = None,
    keep_recent_messages: int | None = None,
    offload_bytes: int | None = None,
    merge_adjacent_messages: bool | None = None,
    long_term_memory_mode: rq.EnumArg | None = None,
) -> Unary[Appended]:
    """Append messages to a session (created on first append). Not retried: a repeat
    would append them twice. The compression settings, when given, become this
    session's own from now on (the others keep their value); so does
    ``long_term_memory_mode`` (``"agent_control"``, ``"static_control"`` or ``"both"``;
    static control records each assistant reply in long-term memory)."""
    request = memory_service_pb2.AppendMessagesRequest(
        agent_id=agent_id,
        session_id=session_id,
        messages=[session_message(m, f"messages[{i}]") for i, m in enumerate(messages)],
    )
    if ttl is not None:
        request.ttl.CopyFrom(rq.duration(ttl, "ttl"))
    compression = _compression(
        {
            "compress_threshold_messages": compress_threshold_messages,
            "compress_token_ratio": compress_token_ratio,
            "context_budget_tokens": context_budget_tokens,
            "keep_recent_messages": keep_recent_messages,
            "offload_bytes": offload_bytes,
            "merge_adjacent_messages": merge_adjacent_messages,
        }
    )
    if compression is not None:
        request.compression.CopyFrom(compression)
    if long_term_memory_mode is not None:
        request.long_term_memory_mode = rq.enum_value(  # type: ignore[assignment]
            long_term_memory_mode,
            memory_service_pb2.LongTermMemoryMode,
            "LONG_TERM_MEMORY_MODE_",
            "long_term_memory_mode",
        )
    return Unary(
        "memory",
        "AppendMessages",
        request,
        lambda r: Appended(
            r.message_count,
            r.compressed,
            degradations(r.degraded),
            tuple(r.recorded_memory_ids),
            tuple(r.offloaded_seqs),
        ),
        idempotent=False,
    )


def get_session_window(
    agent_id: str, session_id: str, *, token_budget: int | None = None
) -> Unary[SessionWindow]:
    """The fixed zone, the summary of older turns and the recent turns, within
    ``token_budget`` (None: the daemon's default)."""
    request = memory_service_pb2.GetSessionWindowRequest(
        agent_id=agent_id,
        session_id=session_id,
        token_budget=rq.positive_or_unset(token_budget, "token_budget"),
    )
    return Unary("memory", "GetSessionWindow", request, _window, idempotent=True)


def _window(r: memory_service_pb2.GetSessionWindowResponse) -> SessionWindow:
    return SessionWindow(
        fixed_zone=tuple(FixedZoneEntry.from_pb(e) for e in r.fixed_zone),
        summary=r.summary,
        recent=tuple(Message.from_pb(m) for m in r.recent),
        tokens_used=r.tokens_used,
        summarizer=r.summarizer,
        token_counter=r.token_counter,
        degraded=degradations(r.degraded),
        summarized_through_seq=r.summarized_through_seq,
        stored_messages=r.stored_messages,
        long_term_memory_mode=enum_name(
            memory_service_pb2.LongTermMemoryMode,
            r.long_term_memory_mode or memory_service_pb2.LONG_TERM_MEMORY_MODE_AGENT_CONTROL,
            "LONG_TERM_MEMORY_MODE_",
        ),
        long_term_memories=tuple(Memory.from_pb(m) for m in r.long_term_memories),
        long_term_memory=r.long_term_memory,
    )


def get_session_attachment(
    agent_id: str, session_id: str, seq: int, *, offset: int = 0, max_chars: int = 0
) -> Unary[SessionAttachment]:
    """The full content of offloaded message ``seq`` (its stub names it): from
    ``offset`` characters, at most ``max_chars`` (0: to the end)."""
    request = memory_service_pb2.GetSessionAttachmentRequest(
        agent_id=agent_id, session_id=session_id, seq=seq, offset=offset, max_chars=max_chars
    )

    def parse(r: memory_service_pb2.GetSessionAttachmentResponse) -> SessionAttachment:
        a = r.attachment
        return SessionAttachment(
            r.seq,
            r.content,
            Attachment(a.size_bytes, a.chars, a.sha256),
            r.next_offset,
            enum_name(memory_service_pb2.MessageRole, r.role, "MESSAGE_ROLE_"),
            r.name,
            r.tool_call_id,
        )

    return Unary("memory", "GetSessionAttachment", request, parse, idempotent=True)


def get_session_messages(
    agent_id: str,
    session_id: str,
    *,
    from_seq: int = 0,
    to_seq: int = 0,
    page_size: int | None = None,
    page_token: str = "",
) -> Unary[SessionMessages]:
    """The session's stored messages with ``from_seq <= seq <= to_seq`` (0: open),
    summarised or not, oldest first; one page (``next_page_token`` for the next)."""
    request = memory_service_pb2.GetSessionMessagesRequest(
        agent_id=agent_id,
        session_id=session_id,
        from_seq=from_seq,
        to_seq=to_seq,
        page_size=rq.positive_or_unset(page_size, "page_size"),
        page_token=page_token,
    )
    return Unary(
        "memory",
        "GetSessionMessages",
        request,
        lambda r: SessionMessages(
            tuple(Message.from_pb(m) for m in r.messages),
            r.next_page_token,
            r.message_count,
            r.summarized_through_seq,
        ),
        idempotent=True,
    )


def delete_messages(agent_id: str, session_id: str, seqs: Iterable[int]) -> Unary[MessagesDeleted]:
    """Delete messages by seq (a summary that covered one is rebuilt). Safe to retry."""
    request = memory_service_pb2.DeleteMessagesRequest(
        agent_id=agent_id, session_id=session_id, seqs=list(seqs)
    )
    return Unary(
        "memory",
        "DeleteMessages",
        request,
        lambda r: MessagesDeleted(
            tuple(r.deleted_seqs), r.summary_rebuilt, degradations(r.degraded)
        ),
        idempotent=True,
    )


def clear_session(agent_id: str, session_id: str, *, fixed_zone: bool = False) -> Unary[int]:
    """Delete every message and the summary (``fixed_zone``: that too); returns how
    many messages went. The session stays open. Safe to retry."""
    request = memory_service_pb2.ClearSessionRequest(
        agent_id=agent_id, session_id=session_id, fixed_zone=fixed_zone
    )
    return Unary("memory", "ClearSession", request, lambda r: r.deleted, idempotent=True)


def inject_instruction(
    agent_id: str, session_id: str, content: str, *, kind: rq.EnumArg = "instruction"
) -> Unary[list[FixedZoneEntry]]:
    """Add to the session's fixed zone (``kind``: trigger, focus or instruction)."""
    request = memory_service_pb2.InjectInstructionRequest(
        agent_id=agent_id,
        session_id=session_id,
        kind=rq.enum_value(kind, memory_service_pb2.FixedZoneKind, "FIXED_ZONE_KIND_", "kind"),  # type: ignore[arg-type]
        content=content,
    )
    return Unary(
        "memory",
        "InjectInstruction",
        request,
        lambda r: [FixedZoneEntry.from_pb(e) for e in r.fixed_zone],
        idempotent=False,
    )


def end_session(
    agent_id: str, session_id: str, *, extract_memories: bool = False
) -> Unary[SessionEnd]:
    """Close the session; ``extract_memories`` stores long-term memories from it first."""
    request = memory_service_pb2.EndSessionRequest(
        agent_id=agent_id, session_id=session_id, extract_memories=extract_memories
    )
    return Unary(
        "memory",
        "EndSession",
        request,
        lambda r: SessionEnd(
            r.summary, tuple(Memory.from_pb(m) for m in r.extracted), degradations(r.degraded)
        ),
        idempotent=False,
    )
