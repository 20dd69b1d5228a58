"""Working memory, the agent profile and sessions (short-term memory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from memoryd.domain import agent_state
from memoryd.observability.tracing import CREATE, DELETE, SEARCH, UPSERT
from memoryd.operations.definition import (
    Effect,
    Operation,
    scope_touched,
    session_touched,
)

# ---------------------------------------------------------------- working memory


SET_WORKING_MEMORY: Operation[agent_state.WorkingMemoryWrite, agent_state.WorkingMemory] = (
    Operation(
        name="MemoryService.SetWorkingMemory",
        effect=Effect.WRITE,
        genai=UPSERT,
        run=lambda s, scope, write: s.working.set(scope, write),
        touched_in=lambda w: scope_touched(w.scope),
    )
)
GET_WORKING_MEMORY: Operation[agent_state.WorkingScope, agent_state.WorkingMemory] = Operation(
    name="MemoryService.GetWorkingMemory",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, ws: s.working.get(scope, ws),
    touched_in=scope_touched,
)
DELETE_WORKING_MEMORY: Operation[agent_state.WorkingScope, bool] = Operation(
    name="MemoryService.DeleteWorkingMemory",
    effect=Effect.WRITE,
    genai=DELETE,
    run=lambda s, scope, ws: s.working.delete(scope, ws),
    touched_in=scope_touched,
)
LIST_WORKING_MEMORY_SCOPES: Operation[
    agent_state.WorkingScopeQuery, agent_state.WorkingScopePage
] = Operation(
    name="MemoryService.ListWorkingMemoryScopes",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, q: s.working.list_scopes(scope, q),
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


GET_PROFILE: Operation[Nothing, agent_state.AgentProfile] = Operation(
    name="MemoryService.GetProfile",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, _: s.profiles.get(scope),
)
SET_PROFILE: Operation[ProfileWrite, agent_state.AgentProfile] = Operation(
    name="MemoryService.SetProfile",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=lambda s, scope, write: s.profiles.set(scope, write.content, write.if_match),
)

# ---------------------------------------------------------------- sessions


@dataclass(frozen=True, slots=True)
class Append:
    """The input of AppendMessages: the session, its new messages, a TTL and compression
    settings."""

    session_id: str
    messages: Sequence[agent_state.MessageDraft]
    ttl: timedelta | None = None
    compression: agent_state.SessionCompression | None = None
    #: The session's long-term memory mode from this append on (None: unchanged).
    long_term_memory_mode: agent_state.LongTermMemoryMode | None = None


@dataclass(frozen=True, slots=True)
class WindowRequest:
    """The input of GetSessionWindow: the session and a token budget (None: the default)."""

    session_id: str
    token_budget: int | None = None


@dataclass(frozen=True, slots=True)
class Inject:
    """The input of InjectInstruction: the session, the fixed-zone kind and its text."""

    session_id: str
    kind: agent_state.FixedZoneKind | None
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


APPEND_MESSAGES: Operation[Append, agent_state.AppendOutcome] = Operation(
    name="MemoryService.AppendMessages",
    effect=Effect.WRITE,
    genai=CREATE,
    run=lambda s, scope, a: s.sessions.append(
        scope, a.session_id, a.messages, a.ttl, a.compression, a.long_term_memory_mode
    ),
    touched_in=session_touched,
    count=lambda a, _: len(a.messages),
    touched_out=lambda out: (out.recorded_memory_ids, ""),
    own_degraded=lambda o: o.degraded,
)
GET_SESSION_WINDOW: Operation[WindowRequest, agent_state.SessionWindow] = Operation(
    name="MemoryService.GetSessionWindow",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, w: s.sessions.window(scope, w.session_id, w.token_budget),
    touched_in=session_touched,
    own_degraded=lambda o: o.degraded,
)
INJECT_INSTRUCTION: Operation[Inject, list[agent_state.FixedZoneEntry]] = Operation(
    name="MemoryService.InjectInstruction",
    effect=Effect.WRITE,
    genai=CREATE,
    run=lambda s, scope, i: s.sessions.inject(scope, i.session_id, i.kind, i.content),
    touched_in=session_touched,
)
END_SESSION: Operation[EndRequest, agent_state.EndSessionOutcome] = Operation(
    name="MemoryService.EndSession",
    effect=Effect.WRITE,
    run=lambda s, scope, e: s.sessions.end(scope, e.session_id, extract=e.extract),
    touched_in=session_touched,
    own_degraded=lambda o: o.degraded,
)
GET_SESSION_MESSAGES: Operation[
    agent_state.SessionMessagesQuery, agent_state.SessionMessagesPage
] = Operation(
    name="MemoryService.GetSessionMessages",
    effect=Effect.READ,
    run=lambda s, scope, q: s.sessions.messages(scope, q),
    touched_in=session_touched,
)
DELETE_MESSAGES: Operation[DeleteMessages, agent_state.DeleteMessagesOutcome] = Operation(
    name="MemoryService.DeleteMessages",
    effect=Effect.WRITE,
    run=lambda s, scope, d: s.sessions.delete_messages(scope, d.session_id, list(d.seqs)),
    touched_in=session_touched,
    own_degraded=lambda o: o.degraded,
)
CLEAR_SESSION: Operation[ClearRequest, int] = Operation(
    name="MemoryService.ClearSession",
    effect=Effect.WRITE,
    run=lambda s, scope, c: s.sessions.clear(scope, c.session_id, fixed_zone=c.fixed_zone),
    touched_in=session_touched,
)
GET_SESSION_ATTACHMENT: Operation[agent_state.AttachmentQuery, agent_state.AttachmentSlice] = (
    Operation(
        name="MemoryService.GetSessionAttachment",
        effect=Effect.READ,
        genai=SEARCH,
        run=lambda s, scope, q: s.sessions.attachment(scope, q),
        touched_in=session_touched,
    )
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
