"""The change feed (Watch): its request and its stream's messages."""

from __future__ import annotations

from memoryd.api.convert.agent_state import profile_to_proto, working_memory_to_proto
from memoryd.api.convert.common import enum_value, wire_enum
from memoryd.api.convert.keyed import key_entry_to_proto
from memoryd.api.convert.memories import memory_to_proto
from memoryd.api.convert.snapshot import state_component_to_proto
from memoryd.domain.changes import Change, ChangeKind, WatchItem, WatchQuery, WatchStart
from memoryd_proto.v1 import memory_service_pb2 as mpb

WATCH_STARTS = wire_enum(mpb.WatchStart, WatchStart, "WATCH_START_")
CHANGE_KINDS = {v: k for k, v in wire_enum(mpb.ChangeKind, ChangeKind, "CHANGE_KIND_").items()}


def watch_query_from(request: mpb.WatchRequest) -> WatchQuery:
    """The Watch request as the operation's input (an unknown ``start`` names the field)."""
    start = enum_value(request.start, WATCH_STARTS, "start", default=WatchStart.NOW)
    assert start is not None
    return WatchQuery(request.cursor, start, request.tenant_wide, request.follow)


def watch_response(item: WatchItem) -> mpb.WatchResponse:
    """One message of the Watch stream: its changes and the cursor that resumes after them."""
    out = mpb.WatchResponse(cursor=item.cursor, caught_up=item.caught_up)
    for change in item.changes:
        wire = out.changes.add(
            kind=CHANGE_KINDS[change.kind],
            agent_id=change.agent_id,
            memory_id=change.memory_id,
            key=change.key,
        )
        if change.memory is not None:
            memory_to_proto(change.memory, wire.memory)
        if change.key_entry is not None:
            key_entry_to_proto(change.key_entry, wire.key_entry)
        _agent_state_to_proto(change, wire)
    return out


def _agent_state_to_proto(change: Change, wire: mpb.Change) -> None:
    """What an agent-state change names and carries (working memory, profile,
    session, saved state)."""
    wire.session_id = change.session_id
    wire.component = change.component
    if change.working_scope is not None:
        wire.working_memory_scope.thread_id = change.working_scope.thread_id
        wire.working_memory_scope.resource_id = change.working_scope.resource_id
    if change.working_memory is not None:
        working_memory_to_proto(change.working_memory, wire.working_memory)
    if change.profile is not None:
        wire.profile.CopyFrom(profile_to_proto(change.profile))
    if change.state is not None:
        state_component_to_proto(change.state, wire.state)
