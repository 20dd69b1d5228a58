"""Working memory, the agent profile and sessions (short-term memory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from memoryd.domain.agent_state import (
    AgentProfile,
    AppendOutcome,
    AttachmentQuery,
    AttachmentSlice,
    DeleteMessagesOutcome,
    EndSessionOutcome,
    FixedZoneEntry,
    FixedZoneKind,
    LongTermMemoryMode,
    MessageDraft,
    SessionCompression,
    SessionMessagesPage,
    SessionMessagesQuery,
    SessionWindow,
    WorkingMemory,
    WorkingMemoryWrite,
    WorkingScope,
    WorkingScopePage,
    WorkingScopeQuery,
)
from memoryd.domain.principal import CallScope
from memoryd.observability.tracing import CREATE, DELETE, SEARCH, UPSERT
from memoryd.operations.definition import Effect, Operation, Touched
from memoryd.operations.services import Services


def _scope_key(scope: WorkingScope) -> Touched:
    return ((), f"scope:{scope.thread_id}/{scope.resource_id}"[:1024])


def _session_key(session_id: str) -> Touched:
    return ((), f"session:{session_id}"[:1024] if session_id else "")


# ---------------------------------------------------------------- working memory


async def _set_working(s: Services, scope: CallScope, write: WorkingMemoryWrite) -> WorkingMemory:
    return await s.working.set(scope, write)


async def _get_working(s: Services, scope: CallScope, ws: WorkingScope) -> WorkingMemory:
    return await s.working.get(scope, ws)


async def _delete_working(s: Services, scope: CallScope, ws: WorkingScope) -> bool:
    return await s.working.delete(scope, ws)


async def _list_scopes(s: Services, scope: CallScope, q: WorkingScopeQuery) -> WorkingScopePage:
    return await s.working.list_scopes(scope, q)


SET_WORKING_MEMORY: Operation[WorkingMemoryWrite, WorkingMemory] = Operation(
    name="MemoryService.SetWorkingMemory",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=_set_working,
    touched_in=lambda w: _scope_key(w.scope),
)
GET_WORKING_MEMORY: Operation[WorkingScope, WorkingMemory] = Operation(
    name="MemoryService.GetWorkingMemory",
    effect=Effect.READ,
    genai=SEARCH,
    run=_get_working,
    touched_in=_scope_key,
)
DELETE_WORKING_MEMORY: Operation[WorkingScope, bool] = Operation(
    name="MemoryService.DeleteWorkingMemory",
    effect=Effect.WRITE,
    genai=DELETE,
    run=_delete_working,
    touched_in=_scope_key,
)
LIST_WORKING_MEMORY_SCOPES: Operation[WorkingScopeQuery, WorkingScopePage] = Operation(
    name="MemoryService.ListWorkingMemoryScopes",
    effect=Effect.READ,
    genai=SEARCH,
    run=_list_scopes,
    count=lambda _, page: len(page.items),
)

# ---------------------------------------------------------------- agent profile


@dataclass(frozen=True, slots=True)
class ProfileWrite:
    """The input of SetProfile: the new agent.md and the etag it replaces."""

    content: str
    #: The etag the stored profile must have ("" : no check).
    if_match: str = ""


@dataclass(frozen=True, slots=True)
class Nothing:
    """The input of an operation that needs nothing but its scope."""


async def _get_profile(s: Services, scope: CallScope, _: Nothing) -> AgentProfile:
    return await s.profiles.get(scope)


async def _set_profile(s: Services, scope: CallScope, write: ProfileWrite) -> AgentProfile:
    return await s.profiles.set(scope, write.content, write.if_match)


GET_PROFILE: Operation[Nothing, AgentProfile] = Operation(
    name="MemoryService.GetProfile", effect=Effect.READ, genai=SEARCH, run=_get_profile
)
SET_PROFILE: Operation[ProfileWrite, AgentProfile] = Operation(
    name="MemoryService.SetProfile", effect=Effect.WRITE, genai=UPSERT, run=_set_profile
)

# ---------------------------------------------------------------- sessions


@dataclass(frozen=True, slots=True)
class Append:
    """The input of AppendMessages: the session, its new messages, a TTL and compression
    settings."""

    session_id: str
    messages: Sequence[MessageDraft]
    ttl: timedelta | None = None
    compression: SessionCompression | None = None
    #: The session's long-term memory mode from this append on (None: unchanged).
    long_term_memory_mode: LongTermMemoryMode | None = None


@dataclass(frozen=True, slots=True)
class WindowRequest:
    """The input of GetSessionWindow: the session and a token budget (None: the default)."""

    session_id: str
    token_budget: int | None = None


@dataclass(frozen=True, slots=True)
class Inject:
    """The input of InjectInstruction: the session, the fixed-zone kind and its text."""

    session_id: str
    kind: FixedZoneKind | None
    content: str


@dataclass(frozen=True, slots=True)
class EndRequest:
    """The input of EndSession: the session and whether to extract long-term memories."""

    session_id: str
    extract: bool = False


@dataclass(frozen=True, slots=True)
class DeleteMessages:
    """The input of DeleteMessages: the session and the seqs to delete."""

    session_id: str
    seqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClearRequest:
    """The input of ClearSession: the session, and whether its fixed zone goes too."""

    session_id: str
    fixed_zone: bool = False


async def _append(s: Services, scope: CallScope, a: Append) -> AppendOutcome:
    return await s.sessions.append(
        scope, a.session_id, a.messages, a.ttl, a.compression, a.long_term_memory_mode
    )


async def _window(s: Services, scope: CallScope, w: WindowRequest) -> SessionWindow:
    return await s.sessions.window(scope, w.session_id, w.token_budget)


async def _inject(s: Services, scope: CallScope, i: Inject) -> list[FixedZoneEntry]:
    return await s.sessions.inject(scope, i.session_id, i.kind, i.content)


async def _end(s: Services, scope: CallScope, e: EndRequest) -> EndSessionOutcome:
    return await s.sessions.end(scope, e.session_id, extract=e.extract)


async def _messages(s: Services, scope: CallScope, q: SessionMessagesQuery) -> SessionMessagesPage:
    return await s.sessions.messages(scope, q)


async def _delete_messages(
    s: Services, scope: CallScope, d: DeleteMessages
) -> DeleteMessagesOutcome:
    return await s.sessions.delete_messages(scope, d.session_id, list(d.seqs))


async def _clear(s: Services, scope: CallScope, c: ClearRequest) -> int:
    return await s.sessions.clear(scope, c.session_id, fixed_zone=c.fixed_zone)


async def _attachment(s: Services, scope: CallScope, q: AttachmentQuery) -> AttachmentSlice:
    return await s.sessions.attachment(scope, q)


APPEND_MESSAGES: Operation[Append, AppendOutcome] = Operation(
    name="MemoryService.AppendMessages",
    effect=Effect.WRITE,
    genai=CREATE,
    run=_append,
    touched_in=lambda a: _session_key(a.session_id),
    count=lambda a, _: len(a.messages),
    touched_out=lambda out: (out.recorded_memory_ids, ""),
    own_degraded=lambda o: o.degraded,
)
GET_SESSION_WINDOW: Operation[WindowRequest, SessionWindow] = Operation(
    name="MemoryService.GetSessionWindow",
    effect=Effect.READ,
    genai=SEARCH,
    run=_window,
    touched_in=lambda w: _session_key(w.session_id),
    own_degraded=lambda o: o.degraded,
)
INJECT_INSTRUCTION: Operation[Inject, list[FixedZoneEntry]] = Operation(
    name="MemoryService.InjectInstruction",
    effect=Effect.WRITE,
    genai=CREATE,
    run=_inject,
    touched_in=lambda i: _session_key(i.session_id),
)
END_SESSION: Operation[EndRequest, EndSessionOutcome] = Operation(
    name="MemoryService.EndSession",
    effect=Effect.WRITE,
    run=_end,
    touched_in=lambda e: _session_key(e.session_id),
    own_degraded=lambda o: o.degraded,
)
GET_SESSION_MESSAGES: Operation[SessionMessagesQuery, SessionMessagesPage] = Operation(
    name="MemoryService.GetSessionMessages",
    effect=Effect.READ,
    run=_messages,
    touched_in=lambda q: _session_key(q.session_id),
)
DELETE_MESSAGES: Operation[DeleteMessages, DeleteMessagesOutcome] = Operation(
    name="MemoryService.DeleteMessages",
    effect=Effect.WRITE,
    run=_delete_messages,
    touched_in=lambda d: _session_key(d.session_id),
    own_degraded=lambda o: o.degraded,
)
CLEAR_SESSION: Operation[ClearRequest, int] = Operation(
    name="MemoryService.ClearSession",
    effect=Effect.WRITE,
    run=_clear,
    touched_in=lambda c: _session_key(c.session_id),
)
GET_SESSION_ATTACHMENT: Operation[AttachmentQuery, AttachmentSlice] = Operation(
    name="MemoryService.GetSessionAttachment",
    effect=Effect.READ,
    genai=SEARCH,
    run=_attachment,
    touched_in=lambda q: _session_key(q.session_id),
)

OPERATIONS = (
    SET_WORKING_MEMORY,
    GET_WORKING_MEMORY,
    DELETE_WORKING_MEMORY,
    LIST_WORKING_MEMORY_SCOPES,
    GET_PROFILE,
    SET_PROFILE,
    APPEND_MESSAGES,
    GET_SESSION_WINDOW,
    INJECT_INSTRUCTION,
    END_SESSION,
    GET_SESSION_MESSAGES,
    DELETE_MESSAGES,
    CLEAR_SESSION,
    GET_SESSION_ATTACHMENT,
)
