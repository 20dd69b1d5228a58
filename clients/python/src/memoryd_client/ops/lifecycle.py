"""LifecycleService: stats, archive / restore, prune, reset, compaction, maintenance,
export / import and re-embedding. Long operations report progress through
``on_progress`` and return their final result."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from google.protobuf import json_format

from memoryd_client import requests as rq
from memoryd_client.core import Fold, ServerStream, Unary
from memoryd_client.errors import invalid_argument
from memoryd_client.results import Degradation, degradations
from memoryd_client.wire_values import when
from memoryd_proto.v1 import common_pb2, lifecycle_service_pb2

ProgressCallback = Callable[["Progress"], None]


@dataclass(frozen=True, slots=True)
class Progress:
    phase: str
    done: int
    total: int
    message: str = ""


@dataclass(frozen=True, slots=True)
class Stats:
    memories: int
    archived: int
    keys: int
    sessions: int
    working_scopes: int
    average_importance: float
    store_bytes: int
    last_maintenance_at: datetime | None
    by_memory_type: dict[str, int]
    by_security_level: dict[str, int]
    by_embedding_model: dict[str, int]


@dataclass(frozen=True, slots=True)
class Pruned:
    pruned: int
    ids: tuple[str, ...]
    dry_run: bool


@dataclass(frozen=True, slots=True)
class Erased:
    """Erase's receipt: the count per place checked, the ids erased, the digest."""

    places: dict[str, int]
    ids: tuple[str, ...]
    digest: str
    dry_run: bool


@dataclass(frozen=True, slots=True)
class Residue:
    """A file still holding ``needles[needle]`` (path relative to the data directory)."""

    path: str
    needle: int
    count: int


@dataclass(frozen=True, slots=True)
class ErasureCheck:
    files_scanned: int
    bytes_scanned: int
    residue: tuple[Residue, ...]
    #: Places not scanned (shared with other tenants).
    skipped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CompactResult:
    tombstones_purged: int
    expired_purged: int
    merged: int
    store_optimized: bool


@dataclass(frozen=True, slots=True)
class MaintenanceResult:
    archived: int
    deleted_by_retention: int
    expired: int
    compacted: bool
    finished_at: datetime | None
    #: Memories archived into consolidated ones.
    consolidated: int = 0
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsolidatedGroup:
    group: str
    source_ids: tuple[str, ...]
    #: "" on a dry run.
    derived_id: str
    content: str
    #: "llm" or "merge".
    method: str


@dataclass(frozen=True, slots=True)
class Consolidated:
    groups: int
    consolidated: int
    dry_run: bool
    details: tuple[ConsolidatedGroup, ...] = ()
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsolidationsUndone:
    #: Consolidated memories archived again.
    undone: int
    #: Their originals brought back.
    restored: int


@dataclass(frozen=True, slots=True)
class ReembedResult:
    reembedded: int
    embedding_model: str


@dataclass(frozen=True, slots=True)
class ImportResult:
    imported: int
    skipped: int
    #: (index of the record in the stream, reason) for each record not imported.
    rejected: tuple[tuple[int, str], ...] = field(default=())


def _progress(event: common_pb2.Progress) -> Progress:
    return Progress(event.phase, event.done, event.total, event.message)


def _counts(items: Iterable[lifecycle_service_pb2.CountByName]) -> dict[str, int]:
    return {c.name: c.count for c in items}


def get_stats(agent_id: str) -> Unary[Stats]:
    """Counts of the agent's memories, keys, sessions and working scopes."""
    return Unary(
        "lifecycle",
        "GetStats",
        lifecycle_service_pb2.GetStatsRequest(agent_id=agent_id),
        _stats,
        idempotent=True,
    )


def _stats(r: lifecycle_service_pb2.GetStatsResponse) -> Stats:
    return Stats(
        memories=r.memories,
        archived=r.archived,
        keys=r.keys,
        sessions=r.sessions,
        working_scopes=r.working_scopes,
        average_importance=r.average_importance,
        store_bytes=r.store_bytes,
        last_maintenance_at=when(r.last_maintenance_at),
        by_memory_type=_counts(r.by_memory_type),
        by_security_level=_counts(r.by_security_level),
        by_embedding_model=_counts(r.by_embedding_model),
    )


def _selector(
    ids: rq.StrSeq, tags: rq.StrSeq, namespace: str | None
) -> lifecycle_service_pb2.MemorySelector:
    selector = lifecycle_service_pb2.MemorySelector(
        ids=[ids] if isinstance(ids, str) else list(ids),
        tags=[tags] if isinstance(tags, str) else list(tags),
    )
    if namespace is not None:
        selector.namespace = namespace
    return selector


def archive(
    agent_id: str, *, ids: rq.StrSeq = (), tags: rq.StrSeq = (), namespace: str | None = None
) -> Unary[int]:
    """Archive memories by id or filter (recall skips them); returns how many."""
    request = lifecycle_service_pb2.ArchiveRequest(
        agent_id=agent_id, selector=_selector(ids, tags, namespace)
    )
    return Unary("lifecycle", "Archive", request, lambda r: r.archived, idempotent=True)


def restore(
    agent_id: str, *, ids: rq.StrSeq = (), tags: rq.StrSeq = (), namespace: str | None = None
) -> Unary[int]:
    """Bring archived memories back; returns how many."""
    request = lifecycle_service_pb2.RestoreRequest(
        agent_id=agent_id, selector=_selector(ids, tags, namespace)
    )
    return Unary("lifecycle", "Restore", request, lambda r: r.restored, idempotent=True)


def undo_consolidation(agent_id: str, ids: rq.StrSeq) -> Unary[ConsolidationsUndone]:
    """Archive these consolidated memories and bring back what they were made from."""
    request = lifecycle_service_pb2.RestoreRequest(
        agent_id=agent_id, selector=_selector(ids, (), None), undo_consolidation=True
    )
    return Unary(
        "lifecycle",
        "Restore",
        request,
        lambda r: ConsolidationsUndone(r.consolidations_undone, r.restored),
        idempotent=True,
    )


def prune(
    agent_id: str,
    *,
    created_before: datetime | None = None,
    tags: rq.StrSeq = (),
    min_access_count: int | None = None,
    dry_run: bool = False,
    namespace: str | None = None,
) -> Unary[Pruned]:
    """Delete memories matching every given criterion (admin); ``dry_run`` only reports.
    ``namespace`` alone deletes that namespace (keyed memories' mirrors excepted)."""
    request = lifecycle_service_pb2.PruneRequest(
        agent_id=agent_id,
        tags=[tags] if isinstance(tags, str) else list(tags),
        dry_run=dry_run,
        namespace=namespace,
    )
    if created_before is not None:
        request.created_before.CopyFrom(rq.timestamp(created_before, "created_before"))
    if min_access_count is not None:
        request.min_access_count = min_access_count
    return Unary(
        "lifecycle",
        "Prune",
        request,
        lambda r: Pruned(r.pruned, tuple(r.ids), r.dry_run),
        idempotent=dry_run,
    )


def reset(agent_id: str, *, confirm: bool = False) -> Unary[int]:
    """Delete everything of one agent (admin); ``confirm=True`` is required."""
    if confirm is not True:
        raise invalid_argument("confirm", "must be true: reset deletes everything of the agent")
    request = lifecycle_service_pb2.ResetRequest(agent_id=agent_id, confirm=True)
    return Unary("lifecycle", "Reset", request, lambda r: r.deleted, idempotent=False)


def erase(
    agent_id: str,
    *,
    ids: rq.StrSeq = (),
    whole_agent: bool = False,
    subject: str = "",
    dry_run: bool = False,
    key_prefix: str = "",
    all_agents: bool = False,
) -> Unary[Erased]:
    """Erase an agent's whole partition, some of its memories, everything of it
    holding ``subject`` (of every agent of the tenant with ``all_agents``), or its
    keys under ``key_prefix``, from every place a copy is kept (admin;
    docs/erasure.md); ``dry_run`` only reports."""
    request = lifecycle_service_pb2.EraseRequest(
        agent_id=agent_id,
        whole_agent=whole_agent,
        ids=[ids] if isinstance(ids, str) else list(ids),
        dry_run=dry_run,
        subject=subject,
        key_prefix=key_prefix,
        all_agents=all_agents,
    )
    return Unary(
        "lifecycle",
        "Erase",
        request,
        lambda r: Erased({p.name: p.count for p in r.places}, tuple(r.ids), r.digest, r.dry_run),
        idempotent=True,
    )


def verify_erasure(needles: rq.StrSeq) -> Unary[ErasureCheck]:
    """Files of the daemon's data directory that still hold any of ``needles`` (admin)."""
    request = lifecycle_service_pb2.VerifyErasureRequest(
        needles=[needles] if isinstance(needles, str) else list(needles)
    )
    return Unary(
        "lifecycle",
        "VerifyErasure",
        request,
        lambda r: ErasureCheck(
            r.files_scanned,
            r.bytes_scanned,
            tuple(Residue(x.path, x.needle, x.count) for x in r.residue),
            tuple(r.skipped),
        ),
        idempotent=True,
    )


def _long(
    method: str,
    request: Any,
    result: Callable[[Any], Any],
    on_progress: ProgressCallback | None,
) -> Unary[Any]:
    def fold() -> Fold[Any]:
        progress = None
        if on_progress is not None:
            callback = on_progress

            def progress(event: Any) -> None:
                callback(_progress(event.progress))

        return Fold(result, progress, method)

    return Unary("lifecycle", method, request, lambda r: r, idempotent=False, fold=fold)


def compact(
    agent_id: str,
    *,
    merge_group_threshold: int | None = None,
    merge_similarity: float | None = None,
    on_progress: ProgressCallback | None = None,
) -> Unary[CompactResult]:
    """Purge tombstones and expired memories, merge near-duplicates, optimise the store."""
    request = lifecycle_service_pb2.CompactRequest(
        agent_id=agent_id,
        merge_group_threshold=rq.positive_or_unset(merge_group_threshold, "merge_group_threshold"),
    )
    if merge_similarity is not None:
        request.merge_similarity = merge_similarity

    def result(r: lifecycle_service_pb2.CompactResponse) -> CompactResult | None:
        if r.WhichOneof("event") != "result":
            return None
        x = r.result
        return CompactResult(x.tombstones_purged, x.expired_purged, x.merged, x.store_optimized)

    return _long("Compact", request, result, on_progress)


def run_maintenance(
    agent_id: str,
    *,
    max_entries: int | None = None,
    retention_days: int | None = None,
    consolidate: bool | None = None,
    on_progress: ProgressCallback | None = None,
) -> Unary[MaintenanceResult]:
    """Archive the lowest-scored excess over ``max_entries``, apply retention, drop expired,
    and (``consolidate``, or the daemon's setting) consolidate old memories."""
    request = lifecycle_service_pb2.RunMaintenanceRequest(agent_id=agent_id)
    if max_entries is not None:
        request.max_entries = max_entries
    if retention_days is not None:
        request.retention_days = retention_days
    if consolidate is not None:
        request.consolidate = consolidate

    def result(r: lifecycle_service_pb2.RunMaintenanceResponse) -> MaintenanceResult | None:
        if r.WhichOneof("event") != "result":
            return None
        x = r.result
        return MaintenanceResult(
            x.archived,
            x.deleted_by_retention,
            x.expired,
            x.compacted,
            when(x.finished_at),
            x.consolidated,
            degradations(x.degraded),
        )

    return _long("RunMaintenance", request, result, on_progress)


def consolidate(
    agent_id: str,
    *,
    dry_run: bool = False,
    min_age_days: int | None = None,
    min_group_size: int | None = None,
    tags: rq.StrSeq = (),
    on_progress: ProgressCallback | None = None,
) -> Unary[Consolidated]:
    """Condense groups of related older memories into one each (the originals are
    archived, restorable with :func:`undo_consolidation`); ``dry_run`` only reports."""
    request = lifecycle_service_pb2.ConsolidateRequest(
        agent_id=agent_id, dry_run=dry_run, tags=[tags] if isinstance(tags, str) else list(tags)
    )
    if min_age_days is not None:
        request.min_age_days = min_age_days
    if min_group_size is not None:
        request.min_group_size = min_group_size

    def result(r: lifecycle_service_pb2.ConsolidateResponse) -> Consolidated | None:
        if r.WhichOneof("event") != "result":
            return None
        x = r.result
        details = tuple(
            ConsolidatedGroup(g.group, tuple(g.source_ids), g.derived_id, g.content, g.method)
            for g in x.details
        )
        return Consolidated(x.groups, x.consolidated, x.dry_run, details, degradations(x.degraded))

    return _long("Consolidate", request, result, on_progress)


def reembed(
    agent_id: str,
    *,
    all_agents: bool = False,
    batch_size: int | None = None,
    on_progress: ProgressCallback | None = None,
) -> Unary[ReembedResult]:
    """Re-embed memories whose model differs from the daemon's current one."""
    request = lifecycle_service_pb2.ReembedRequest(
        agent_id=agent_id,
        all_agents=all_agents,
        batch_size=rq.positive_or_unset(batch_size, "batch_size"),
    )

    def result(r: lifecycle_service_pb2.ReembedResponse) -> ReembedResult | None:
        if r.WhichOneof("event") != "result":
            return None
        return ReembedResult(r.result.reembedded, r.result.embedding_model)

    return _long("Reembed", request, result, on_progress)


def export(
    agent_id: str,
    *,
    all_agents: bool = False,
    include_vectors: bool = False,
    on_progress: ProgressCallback | None = None,
) -> ServerStream[lifecycle_service_pb2.ExportRecord]:
    """Every record of the agent (``all_agents``: the tenant, admin) as ``ExportRecord``
    messages, header first; :func:`export_line` makes JSONL of them."""
    request = lifecycle_service_pb2.ExportRequest(
        agent_id=agent_id, all_agents=all_agents, include_vectors=include_vectors
    )

    def item(r: lifecycle_service_pb2.ExportResponse) -> lifecycle_service_pb2.ExportRecord | None:
        return r.record if r.WhichOneof("event") == "record" else None

    on_event = None
    if on_progress is not None:
        callback = on_progress

        def on_event(r: lifecycle_service_pb2.ExportResponse) -> None:
            callback(_progress(r.progress))

    return ServerStream("lifecycle", "Export", request, item, on_event)


def export_line(record: lifecycle_service_pb2.ExportRecord) -> str:
    """One JSONL line (protobuf JSON, field names as in the proto)."""
    return json_format.MessageToJson(record, preserving_proto_field_name=True, indent=None)


def parse_export_line(line: str) -> lifecycle_service_pb2.ExportRecord:
    return json_format.Parse(line, lifecycle_service_pb2.ExportRecord())


def import_records(
    records: Iterable[lifecycle_service_pb2.ExportRecord | Mapping[str, Any] | str],
    *,
    target_agent_id: str = "",
) -> Unary[ImportResult]:
    """Stream records (messages, their JSON dicts, or JSONL lines) into the daemon;
    idempotent by id and version on the daemon's side, but never retried by the
    client (the iterator cannot be replayed)."""

    def requests() -> Iterable[lifecycle_service_pb2.ImportRequest]:
        for record in records:
            if isinstance(record, str):
                record = parse_export_line(record)
            elif isinstance(record, Mapping):
                record = json_format.ParseDict(dict(record), lifecycle_service_pb2.ExportRecord())
            yield lifecycle_service_pb2.ImportRequest(
                record=record, target_agent_id=target_agent_id
            )

    return Unary(
        "lifecycle",
        "Import",
        requests(),
        lambda r: ImportResult(
            r.imported, r.skipped, tuple((x.index, x.reason) for x in r.rejected)
        ),
        idempotent=True,
        stream_in=True,
    )
