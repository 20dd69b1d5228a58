"""LifecycleService messages, and export records (``memoryd.export.v1``) both ways.

An export file is JSON Lines: one ``ExportRecord`` per line as protobuf JSON
(``json_format.MessageToJson`` with the .proto field names), the header first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

from memoryd.api.convert.agent_state import working_memory_to_proto
from memoryd.api.convert.common import (
    MEMORY_TYPES,
    SECURITY_LEVELS,
    TAG_MATCHES,
    duration_from,
    enum_list,
    enum_value,
    json_from_value,
    json_object,
    provenance_from,
    required_timestamp,
    set_timestamp,
    struct_data,
    timestamp_from,
    vector_from,
)
from memoryd.api.convert.keyed import key_entry_to_proto
from memoryd.api.convert.memories import memory_to_proto
from memoryd.api.convert.sessions import (
    session_attachment_from_proto,
    session_attachment_to_proto,
    session_from_proto,
    session_message_from_proto,
    session_message_to_proto,
    session_to_proto,
)
from memoryd.api.convert.snapshot import state_component_from, state_component_to_proto
from memoryd.domain import lifecycle
from memoryd.domain.agent_state import (
    AgentProfile,
    WorkingMemory,
    WorkingScope,
)
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import EMPTY_OBJECT, Json
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Memory, MemoryType, SecurityLevel, TagMatch
from memoryd.domain.requests import Degradation
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb

_Result = TypeVar("_Result")
_Response = TypeVar("_Response", bound=Message)

# ---------------------------------------------------------------- requests


def selector_from(req: lpb.ArchiveRequest | lpb.RestoreRequest) -> lifecycle.MemorySelector:
    """The memories an Archive or Restore request selects: ids, or a filter."""
    s = req.selector
    tag_match = enum_value(s.tag_match, TAG_MATCHES, "selector.tag_match", default=TagMatch.ANY)
    assert tag_match is not None
    return lifecycle.MemorySelector(
        ids=tuple(s.ids),
        namespace=s.namespace if s.HasField("namespace") else None,
        tags=tuple(s.tags),
        tag_match=tag_match,
        memory_types=enum_list(s.memory_types, MEMORY_TYPES, "selector.memory_types"),
        created_before=timestamp_from(s, "created_before", "selector.created_before"),
        created_after=timestamp_from(s, "created_after", "selector.created_after"),
    )


def prune_criteria_from(req: lpb.PruneRequest) -> lifecycle.PruneCriteria:
    """A Prune request as criteria: created-before, tags, access count, types, dry run."""
    return lifecycle.PruneCriteria(
        created_before=timestamp_from(req, "created_before"),
        tags=tuple(req.tags),
        min_access_count=req.min_access_count if req.HasField("min_access_count") else None,
        memory_types=enum_list(req.memory_types, MEMORY_TYPES, "memory_types"),
        dry_run=req.dry_run,
        namespace=req.namespace if req.HasField("namespace") else None,
    )


def compact_options_from(req: lpb.CompactRequest) -> lifecycle.CompactOptions:
    """A Compact request as options (INVALID_ARGUMENT for a negative threshold)."""
    if req.merge_group_threshold < 0:
        raise InvalidArgument.field("merge_group_threshold", "must not be negative")
    return lifecycle.CompactOptions(
        merge_group_threshold=req.merge_group_threshold or None,
        merge_similarity=req.merge_similarity if req.HasField("merge_similarity") else None,
    )


def maintenance_options_from(req: lpb.RunMaintenanceRequest) -> lifecycle.MaintenanceOptions:
    """A RunMaintenance request as options; unset overrides leave the configured policy."""
    return lifecycle.MaintenanceOptions(
        max_entries=req.max_entries if req.HasField("max_entries") else None,
        retention_days=req.retention_days if req.HasField("retention_days") else None,
        consolidate=req.consolidate if req.HasField("consolidate") else None,
    )


def consolidate_options_from(req: lpb.ConsolidateRequest) -> lifecycle.ConsolidateOptions:
    """A Consolidate request as options; unset ones take the configured values."""
    return lifecycle.ConsolidateOptions(
        dry_run=req.dry_run,
        min_age_days=req.min_age_days if req.HasField("min_age_days") else None,
        min_group_size=req.min_group_size if req.HasField("min_group_size") else None,
        tags=tuple(req.tags),
    )


# ---------------------------------------------------------------- responses


def _counts(out: Any, counts: dict[str, int]) -> None:
    for name, count in counts.items():
        out.add(name=name, count=count)


def stats_response(stats: lifecycle.Stats) -> lpb.GetStatsResponse:
    """The GetStats response."""
    resp = lpb.GetStatsResponse(
        memories=stats.memories,
        archived=stats.archived,
        keys=stats.keys,
        sessions=stats.sessions,
        working_scopes=stats.working_scopes,
        average_importance=stats.average_importance,
        store_bytes=stats.store_bytes,
    )
    _counts(resp.by_memory_type, stats.by_memory_type)
    _counts(resp.by_security_level, stats.by_security_level)
    _counts(resp.by_embedding_model, stats.by_embedding_model)
    set_timestamp(resp.last_maintenance_at, stats.last_maintenance_at)
    return resp


def prune_response(outcome: lifecycle.PruneOutcome) -> lpb.PruneResponse:
    """The Prune response: how many, which, and whether it was a dry run."""
    return lpb.PruneResponse(pruned=outcome.pruned, ids=outcome.ids, dry_run=outcome.dry_run)


def progress_to_proto(p: lifecycle.Progress) -> pb.Progress:
    """One progress event of a long operation as a wire message."""
    return pb.Progress(phase=p.phase, done=p.done, total=p.total, message=p.message)


def progress_or(
    response: Callable[..., _Response],
    result: Callable[[_Result], Message],
    *,
    field: str = "result",
) -> Callable[[lifecycle.Progress | _Result], _Response]:
    """The converter of a stream that sends progress and then what it did (Compact,
    RunMaintenance, Consolidate, Reembed; Export sends records): a Progress goes into
    the response's ``progress`` field, anything else through ``result`` into ``field``."""

    def event(item: lifecycle.Progress | _Result) -> _Response:
        if isinstance(item, lifecycle.Progress):
            return response(progress=progress_to_proto(item))
        return response(**{field: result(item)})

    return event


def _compact_result(result: lifecycle.CompactResult) -> lpb.CompactResult:
    return lpb.CompactResult(
        tombstones_purged=result.tombstones_purged,
        expired_purged=result.expired_purged,
        merged=result.merged,
        store_optimized=result.store_optimized,
    )


def _maintenance_result(outcome: lifecycle.MaintenanceResult) -> lpb.MaintenanceResult:
    result = lpb.MaintenanceResult(
        archived=outcome.archived,
        deleted_by_retention=outcome.deleted_by_retention,
        expired=outcome.expired,
        compacted=outcome.compacted,
        consolidated=outcome.consolidated,
    )
    _degradations(list(outcome.degraded), result.degraded)
    set_timestamp(result.finished_at, outcome.finished_at)
    return result


def _consolidate_result(outcome: lifecycle.ConsolidateResult) -> lpb.ConsolidateResult:
    """The result with each group condensed (or that would be)."""
    result = lpb.ConsolidateResult(
        groups=outcome.groups, consolidated=outcome.consolidated, dry_run=outcome.dry_run
    )
    for group in outcome.details:
        result.details.add(
            group=group.group,
            source_ids=group.source_ids,
            derived_id=group.derived_id,
            content=group.content,
            method=group.method,
        )
    _degradations(list(outcome.degraded), result.degraded)
    return result


def _reembed_result(outcome: lifecycle.ReembedResult) -> lpb.ReembedResult:
    return lpb.ReembedResult(reembedded=outcome.reembedded, embedding_model=outcome.embedding_model)


#: One event of each long operation's stream: progress, or the result.
compact_event = progress_or(lpb.CompactResponse, _compact_result)
maintenance_event = progress_or(lpb.RunMaintenanceResponse, _maintenance_result)
consolidate_event = progress_or(lpb.ConsolidateResponse, _consolidate_result)
reembed_event = progress_or(lpb.ReembedResponse, _reembed_result)


def import_response(outcome: lifecycle.ImportOutcome) -> lpb.ImportResponse:
    """The Import response: imported, skipped, and each rejected record with why."""
    resp = lpb.ImportResponse(imported=outcome.imported, skipped=outcome.skipped)
    for rejection in outcome.rejected:
        resp.rejected.add(index=rejection.index, reason=rejection.reason)
    return resp


# ---------------------------------------------------------------- export records


def _degradations(items: list[Degradation], out: Any) -> None:
    for d in items:
        out.add(component=d.component, reason=d.reason)


def export_record(item: lifecycle.ExportItem) -> lpb.ExportRecord:
    """One exported item (header, memory, key event, session, ...) as a wire ExportRecord."""
    record = lpb.ExportRecord()
    if isinstance(item, lifecycle.ExportHeader):
        h = record.header
        h.format = item.format
        h.tenant_id = item.tenant_id
        h.agent_id = item.agent_id
        set_timestamp(h.exported_at, item.exported_at)
        h.embedding_model = item.embedding_model
        h.embedding_dimension = item.embedding_dimension
    elif isinstance(item, lifecycle.ExportedMemory):
        memory_to_proto(item.memory, record.memory.memory)
        if item.memory.vector is not None:
            record.memory.vector.extend(item.memory.vector.tolist())
    elif isinstance(item, lifecycle.ExportedKeyEvent):
        record.key_event.agent_id = item.agent_id
        key_entry_to_proto(item.entry, record.key_event.entry)
        record.key_event.current = item.current
    elif isinstance(item, lifecycle.ExportedWorkingMemory):
        record.working_memory.agent_id = item.agent_id
        working_memory_to_proto(item.working, record.working_memory.working_memory)
        if item.working.ttl:
            record.working_memory.ttl.FromTimedelta(item.working.ttl)
    elif isinstance(item, lifecycle.ExportedProfile):
        p = record.profile
        p.agent_id = item.agent_id
        p.profile.content = item.profile.content
        p.profile.etag = item.profile.etag
        set_timestamp(p.profile.updated_at, item.profile.updated_at)
        p.version = item.profile.version
    elif isinstance(item, lifecycle.ExportedSession):
        session_to_proto(item, record.session)
    elif isinstance(item, lifecycle.ExportedSessionMessage):
        session_message_to_proto(item, record.session_message)
    elif isinstance(item, lifecycle.ExportedSessionAttachment):
        session_attachment_to_proto(item, record.session_attachment)
    elif isinstance(item, lifecycle.ExportedState):
        record.state.agent_id = item.agent_id
        record.state.session_id = item.session_id
        state_component_to_proto(item.component, record.state.component)
    return record


def export_line(record: lpb.ExportRecord) -> str:
    """One line of an export file."""
    return json_format.MessageToJson(record, preserving_proto_field_name=True, indent=None)


def parse_export_line(line: str) -> lpb.ExportRecord:
    """An ExportRecord from one line of an export file (unknown fields are an error)."""
    record = lpb.ExportRecord()
    json_format.Parse(line, record)
    return record


def memory_from_proto(msg: pb.Memory, path: str) -> Memory:
    """A memory of an Import stream as a domain Memory; ``path`` names it in errors."""
    memory_type = enum_value(
        msg.memory_type, MEMORY_TYPES, f"{path}.memory_type", default=MemoryType.FACT
    )
    level = enum_value(
        msg.security_level,
        SECURITY_LEVELS,
        f"{path}.security_level",
        default=SecurityLevel.INTERNAL,
    )
    assert memory_type is not None and level is not None
    metadata = json_object(msg, "metadata_json", "metadata", f"{path}.", exclusive=False)
    source = provenance_from(msg, "source", f"{path}.source")
    return Memory(
        id=msg.id,
        tenant_id=msg.tenant_id,
        agent_id=msg.agent_id,
        content=msg.content,
        created_at=required_timestamp(msg, "created_at", path),
        updated_at=required_timestamp(msg, "updated_at", path),
        namespace=msg.namespace,
        memory_type=memory_type,
        tags=tuple(msg.tags),
        security_level=level,
        importance=msg.importance,
        confidence=msg.confidence,
        source=source,
        metadata=metadata.members if metadata is not None else {},
        metadata_json=metadata.text if metadata is not None else "",
        accessed_at=timestamp_from(msg, "accessed_at", f"{path}.accessed_at"),
        access_count=msg.access_count,
        version=msg.version,
        archived=msg.archived,
        expires_at=timestamp_from(msg, "expires_at", f"{path}.expires_at"),
        key=msg.key,
        embedding_model=msg.embedding_model,
        embedding_dimension=msg.embedding_dimension,
        supersedes=msg.supersedes,
        occurred_at=timestamp_from(msg, "occurred_at", f"{path}.occurred_at"),
    )


def key_entry_from(msg: mpb.KeyEntry, path: str) -> KeyEntry:
    """An exported key write; its content_json (exact) is preferred over content."""
    content, text = _key_content(msg, path)
    level = enum_value(
        msg.security_level,
        SECURITY_LEVELS,
        f"{path}.security_level",
        default=SecurityLevel.INTERNAL,
    )
    assert level is not None
    return KeyEntry(
        key=msg.key,
        content=content,
        content_json=text,
        valid=msg.valid,
        version=msg.version,
        updated_at=required_timestamp(msg, "updated_at", path),
        source=provenance_from(msg, "source", f"{path}.source"),
        security_level=level,
        memory_id=msg.memory_id,
        namespace=msg.namespace,
    )


def _key_content(msg: mpb.KeyEntry, path: str) -> tuple[Any, str]:
    """(value, stored text) of an exported key write; its content_json (exact) is
    read when set, content otherwise."""
    if msg.content_json:
        content = Json.from_text(msg.content_json, f"{path}.content_json")
    elif msg.HasField("content"):
        where = f"{path}.content"
        content = Json.from_value(json_from_value(msg.content, where), where)
    else:
        raise InvalidArgument.field(
            f"{path}.content_json", "must be set (or content; null for a tombstone)"
        )
    return content.value, content.text


def _object(msg: Any, field: str, path: str) -> dict[str, Any] | None:
    if not msg.HasField(field):
        return None
    where = f"{path}.{field}"
    return Json.from_value(struct_data(getattr(msg, field), where), where).members


def _working_from(msg: lpb.ExportedWorkingMemory, path: str) -> WorkingMemory:
    wm = msg.working_memory
    inner = f"{path}.working_memory"
    content = json_object(wm, "content_json", "content", f"{inner}.", exclusive=False)
    content = content or EMPTY_OBJECT
    return WorkingMemory(
        scope=WorkingScope(wm.scope.thread_id, wm.scope.resource_id),
        content=content.members,
        content_json=content.text,
        version=wm.version,
        updated_at=required_timestamp(wm, "updated_at", inner),
        expires_at=timestamp_from(wm, "expires_at", f"{inner}.expires_at"),
        ttl=duration_from(msg, "ttl", f"{path}.ttl"),
        json_schema=_object(wm, "json_schema", inner),
    )


def export_item_from(record: lpb.ExportRecord) -> lifecycle.ExportItem:
    """The domain item of one export record; InvalidArgument names the bad field."""
    kind = record.WhichOneof("record")
    if kind == "header":
        h = record.header
        return lifecycle.ExportHeader(
            tenant_id=h.tenant_id,
            agent_id=h.agent_id,
            exported_at=required_timestamp(h, "exported_at", "header"),
            embedding_model=h.embedding_model,
            embedding_dimension=h.embedding_dimension,
            format=h.format,
        )
    if kind == "memory":
        memory = memory_from_proto(record.memory.memory, "memory.memory")
        memory.vector = vector_from(record.memory.vector)
        return lifecycle.ExportedMemory(memory)
    if kind == "key_event":
        e = record.key_event
        return lifecycle.ExportedKeyEvent(
            e.agent_id, key_entry_from(e.entry, "key_event.entry"), e.current
        )
    if kind == "working_memory":
        w = record.working_memory
        return lifecycle.ExportedWorkingMemory(w.agent_id, _working_from(w, "working_memory"))
    if kind == "profile":
        p = record.profile
        profile = AgentProfile(
            content=p.profile.content,
            etag=p.profile.etag,
            version=p.version,
            updated_at=required_timestamp(p.profile, "updated_at", "profile.profile"),
        )
        return lifecycle.ExportedProfile(p.agent_id, profile)
    if kind == "session":
        return session_from_proto(record.session, "session")
    if kind == "session_message":
        return session_message_from_proto(record.session_message, "session_message")
    if kind == "session_attachment":
        return session_attachment_from_proto(record.session_attachment, "session_attachment")
    if kind == "state":
        st = record.state
        return lifecycle.ExportedState(
            st.agent_id, st.session_id, state_component_from(st.component, "state.component")
        )
    raise InvalidArgument.field("record", "is empty: set one of its kinds")


def record_agent(item: lifecycle.ExportItem) -> str:
    """The agent an export item belongs to ("" for the header)."""
    if isinstance(item, lifecycle.ExportedMemory):
        return item.memory.agent_id
    if isinstance(item, lifecycle.ExportHeader):
        return ""
    return item.agent_id
