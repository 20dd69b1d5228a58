"""SnapshotService messages: BuildSnapshot, DefaultRead, SaveState / LoadState."""

from __future__ import annotations

from collections.abc import Sequence

from memoryd.api.convert.agent_state import working_scope_from
from memoryd.api.convert.common import (
    SECURITY_LEVELS,
    add_each,
    as_of_from,
    duration_from,
    enum_list,
    enum_value,
    json_object,
    json_to_value,
    set_provenance,
    set_timestamp,
    timestamp_from,
    trust_from,
    vector_from,
    wire_enum,
)
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import EMPTY_OBJECT
from memoryd.domain.models import SecurityLevel
from memoryd.domain.snapshot import (
    DefaultReadRequest,
    DefaultReadResult,
    Snapshot,
    SnapshotFormat,
    SnapshotRequest,
    SnapshotSection,
    StateComponent,
    StateWrite,
)
from memoryd_proto.v1 import snapshot_service_pb2 as spb

SECTIONS = wire_enum(spb.SnapshotSection, SnapshotSection, "SNAPSHOT_SECTION_")
FORMATS = wire_enum(spb.SnapshotFormat, SnapshotFormat, "SNAPSHOT_FORMAT_")
_REVERSE_SECTIONS = {v: k for k, v in SECTIONS.items()}


def _positive_or_none(value: int, field: str) -> int | None:
    if value < 0:
        raise InvalidArgument.field(field, f"must not be negative, got {value}")
    return value or None


def snapshot_request_from(req: spb.BuildSnapshotRequest) -> SnapshotRequest:
    """A BuildSnapshot request: trigger, budget, sections and their order, format, scope,
    session."""
    fmt = enum_value(req.format, FORMATS, "format", default=SnapshotFormat.MARKDOWN)
    level = enum_value(
        req.max_security_level,
        SECURITY_LEVELS,
        "max_security_level",
        default=SecurityLevel.RESTRICTED,
    )
    assert fmt is not None and level is not None
    window = duration_from(req, "recent_window")
    scope = working_scope_from(req.scope) if req.HasField("scope") else None
    return SnapshotRequest(
        namespace=req.namespace if req.HasField("namespace") else None,
        trigger=req.trigger,
        trigger_embedding=vector_from(req.trigger_embedding),
        focus=req.focus,
        token_budget=_positive_or_none(req.token_budget, "token_budget"),
        sections=enum_list(req.sections, SECTIONS, "sections"),
        priority=enum_list(req.priority, SECTIONS, "priority"),
        format=fmt,
        scope=scope,
        session_id=req.session_id,
        semantic_limit=_positive_or_none(req.semantic_limit, "semantic_limit"),
        recent_limit=_positive_or_none(req.recent_limit, "recent_limit"),
        recent_window=window,
        max_security_level=level,
        min_relevance=req.min_relevance or None,
        context_window=req.context_window if req.HasField("context_window") else None,
        trust=trust_from(req),
        as_of=as_of_from(req),
    )


def snapshot_response(snapshot: Snapshot) -> spb.BuildSnapshotResponse:
    """The BuildSnapshot response: the text, its items, tokens per section and what was left
    out."""
    resp = spb.BuildSnapshotResponse(
        text=snapshot.text,
        tokens_used=snapshot.tokens_used,
        token_budget=snapshot.token_budget,
        token_counter=snapshot.token_counter,
    )
    for item in snapshot.items:
        added = resp.items.add(
            section=_REVERSE_SECTIONS[item.section],
            id=item.id,
            text=item.text,
            tokens=item.tokens,
            truncated=item.truncated,
        )
        if item.source is not None:
            set_provenance(added.source, item.source)
    for usage in snapshot.usage:
        resp.usage.add(
            section=_REVERSE_SECTIONS[usage.section],
            tokens=usage.tokens,
            items=usage.items,
        )
    for omitted in snapshot.omitted:
        resp.omitted.add(
            section=_REVERSE_SECTIONS[omitted.section],
            id=omitted.id,
            reason=omitted.reason,
        )
    return resp


def default_read_request_from(req: spb.DefaultReadRequest) -> DefaultReadRequest:
    """A DefaultRead request: token limit, tags, prefix and the time to read at."""
    return DefaultReadRequest(
        token_limit=_positive_or_none(req.token_limit, "token_limit"),
        tags=tuple(req.tags),
        current_time=timestamp_from(req, "current_time"),
        prefix=req.prefix,
        as_of=as_of_from(req),
    )


def default_read_response(result: DefaultReadResult) -> spb.DefaultReadResponse:
    """The DefaultRead response: the text and one line per key it holds."""
    resp = spb.DefaultReadResponse(
        text=result.text, tokens_used=result.tokens_used, token_counter=result.token_counter
    )
    for line in result.lines:
        out = resp.lines.add(
            key=line.key,
            type=line.type,
            summary=line.summary,
            content_json=line.content_json,
            score=line.score,
        )
        set_timestamp(out.updated_at, line.updated_at)
        if line.source is not None:
            set_provenance(out.source, line.source)
    return resp


def state_writes_from(req: spb.SaveStateRequest) -> list[StateWrite]:
    """The components of a SaveState request, each state as written."""
    writes = []
    for i, component in enumerate(req.components):
        state = json_object(component, "state_json", "state", f"components[{i}].")
        writes.append(StateWrite(name=component.name, state=state or EMPTY_OBJECT))
    return writes


def state_component_to_proto(
    component: StateComponent, out: spb.StateComponent | None = None
) -> spb.StateComponent:
    """A saved component as a wire message (into ``out`` when given), its state as written."""
    msg = spb.StateComponent() if out is None else out
    msg.name = component.name
    msg.version = component.version
    msg.state.SetInParent()
    for name, value in component.state.items():
        json_to_value(value, msg.state.fields[name])
    msg.state_json = component.state_json
    set_timestamp(msg.updated_at, component.updated_at)
    return msg


def state_component_from(msg: spb.StateComponent, path: str) -> StateComponent:
    """A complete component (export files carry version and time)."""
    updated = timestamp_from(msg, "updated_at", f"{path}.updated_at")
    if updated is None:
        raise InvalidArgument.field(f"{path}.updated_at", "must be set")
    state = json_object(msg, "state_json", "state", f"{path}.", exclusive=False) or EMPTY_OBJECT
    return StateComponent(
        name=msg.name,
        state=state.members,
        state_json=state.text,
        version=msg.version,
        updated_at=updated,
    )


def save_state_response(components: Sequence[StateComponent]) -> spb.SaveStateResponse:
    """The SaveState response: the components as saved."""
    resp = spb.SaveStateResponse()
    add_each(resp.components, components, state_component_to_proto)
    return resp


def load_state_response(components: Sequence[StateComponent]) -> spb.LoadStateResponse:
    """The LoadState response: the components asked for."""
    resp = spb.LoadStateResponse()
    add_each(resp.components, components, state_component_to_proto)
    return resp
