"""Lifecycle operations: stats, archive and restore, prune, reset, the long-running
ones that stream progress (compact, maintenance, consolidation, re-embedding), and
export and import."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from memoryd.domain import lifecycle
from memoryd.domain.errors import InvalidArgument, PermissionDenied
from memoryd.domain.principal import CallScope
from memoryd.observability.tracing import DELETE, SEARCH, UPDATE, UPSERT
from memoryd.operations.definition import Effect, Operation, StreamOperation
from memoryd.operations.scope import agent_scope
from memoryd.operations.services import Services


@dataclass(frozen=True, slots=True)
class Selection:
    """The input of Archive and Restore: which memories."""

    selector: lifecycle.MemorySelector
    #: Restore only: undo consolidations (restore the sources, archive what was derived).
    undo_consolidation: bool = False


@dataclass(frozen=True, slots=True)
class Restored:
    """The result of Restore: memories restored, and consolidations undone."""

    restored: int
    consolidations_undone: int = 0


@dataclass(frozen=True, slots=True)
class ResetRequest:
    """The input of Reset: it does nothing unless ``confirm``."""

    confirm: bool


@dataclass(frozen=True, slots=True)
class Everything:
    """The input of GetStats: the whole partition."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """The input of Export: one agent or the whole tenant (admin), with or without vectors."""

    all_agents: bool = False
    include_vectors: bool = False


@dataclass(frozen=True, slots=True)
class ReembedRequest:
    """The input of Reembed: one agent or the whole tenant, and a batch size."""

    all_agents: bool = False
    #: None: the default batch size.
    batch_size: int | None = None


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One record of an import stream: its item, or why it cannot be read."""

    index: int
    item: lifecycle.ExportItem | None
    problem: str = ""
    #: The agent it is imported into, and the request field that named it.
    agent: str = ""
    field: str = "record.agent_id"


async def _restore(s: Services, scope: CallScope, sel: Selection) -> Restored:
    if sel.undo_consolidation:
        undone, back = await s.lifecycle.undo_consolidation(scope, sel.selector)
        return Restored(back, undone)
    return Restored(await s.lifecycle.restore(scope, sel.selector))


def _compact(
    s: Services, scope: CallScope, o: lifecycle.CompactOptions
) -> AsyncIterator[lifecycle.Progress | lifecycle.CompactResult]:
    return s.lifecycle.compact(scope, o)


def _maintain(
    s: Services, scope: CallScope, o: lifecycle.MaintenanceOptions
) -> AsyncIterator[lifecycle.Progress | lifecycle.MaintenanceResult]:
    return s.lifecycle.run_maintenance(scope, o)


def _consolidate(
    s: Services, scope: CallScope, o: lifecycle.ConsolidateOptions
) -> AsyncIterator[lifecycle.Progress | lifecycle.ConsolidateResult]:
    return s.lifecycle.consolidate(scope, o)


async def _export(
    s: Services, scope: CallScope, req: ExportRequest
) -> AsyncIterator[lifecycle.ExportItem | lifecycle.Progress]:
    service = s.lifecycle
    partitions = await service.export_partitions(scope, req.all_agents)
    items = service.export(
        scope, partitions, all_agents=req.all_agents, include_vectors=req.include_vectors
    )
    async for item in items:
        yield item


async def _reembed(
    s: Services, scope: CallScope, req: ReembedRequest
) -> AsyncIterator[lifecycle.Progress | lifecycle.ReembedResult]:
    service = s.lifecycle
    partitions = await service.export_partitions(scope, req.all_agents)
    if req.batch_size is not None and req.batch_size < 0:
        raise InvalidArgument.field("batch_size", "must not be negative")
    async for event in service.reembed(partitions, req.batch_size or None):
        yield event


async def _import(
    s: Services, scope: CallScope, records: AsyncIterator[ImportRecord]
) -> lifecycle.ImportOutcome:
    """Every record of the stream into the agent it names (or the target agent); a
    record that cannot be read or names an agent the caller may not act for is
    reported in ``rejected`` and the stream goes on."""
    importer = s.lifecycle.importer()
    scopes: dict[str, CallScope] = {}
    async for record in records:
        index, item = record.index, record.item
        if item is None:
            importer.reject(index, record.problem)
            continue
        if isinstance(item, lifecycle.ExportHeader):
            if item.format == lifecycle.EXPORT_FORMAT:
                continue
            problem = (
                f"{item.format!r} is not a format this server reads ({lifecycle.EXPORT_FORMAT})"
            )
            if index == 0:  # nothing read yet: the whole stream is of another format
                raise InvalidArgument.field("record.header.format", problem)
            importer.reject(index, f"record.header.format: {problem}")
            continue
        target = scopes.get(record.agent)
        if target is None:
            try:
                target = agent_scope(scope.principal, record.agent, record.field)
            except (InvalidArgument, PermissionDenied) as exc:
                importer.reject(index, exc.message)
                continue
            scopes[record.agent] = target
        await importer.add(index, target, item)
    return await importer.finish()


def _exported_ids(item: lifecycle.ExportItem | lifecycle.Progress) -> Iterable[str]:
    if isinstance(item, lifecycle.ExportedMemory):
        return (item.memory.id,)
    if isinstance(item, lifecycle.ExportedKeyEvent):
        return (item.entry.key,)
    if isinstance(
        item, lifecycle.ExportedSession | lifecycle.ExportedSessionMessage | lifecycle.ExportedState
    ):
        return (f"session:{item.session_id}",)
    return ()


GET_STATS: Operation[Everything, lifecycle.Stats] = Operation(
    name="LifecycleService.GetStats",
    effect=Effect.READ,
    run=lambda s, scope, _: s.lifecycle.stats(scope),
)
ARCHIVE: Operation[Selection, int] = Operation(
    name="LifecycleService.Archive",
    effect=Effect.WRITE,
    genai=UPDATE,
    run=lambda s, scope, sel: s.lifecycle.archive(scope, sel.selector),
    touched_in=lambda sel: (sel.selector.ids, ""),
)
RESTORE: Operation[Selection, Restored] = Operation(
    name="LifecycleService.Restore",
    effect=Effect.WRITE,
    genai=UPDATE,
    run=_restore,
    touched_in=lambda sel: (sel.selector.ids, ""),
)
PRUNE: Operation[lifecycle.PruneCriteria, lifecycle.PruneOutcome] = Operation(
    name="LifecycleService.Prune",
    # Deletes whatever matches its criteria (a dry run previews exactly that).
    effect=Effect.DESTRUCTIVE,
    genai=DELETE,
    run=lambda s, scope, criteria: s.lifecycle.prune(scope, criteria),
)
RESET: Operation[ResetRequest, int] = Operation(
    name="LifecycleService.Reset",
    effect=Effect.DESTRUCTIVE,
    genai=DELETE,
    run=lambda s, scope, req: s.lifecycle.reset(scope, req.confirm),
)

ERASE: Operation[lifecycle.EraseRequest, lifecycle.EraseReceipt] = Operation(
    name="LifecycleService.Erase",
    # Deletes beyond recovery: old versions and the log's segments go too.
    effect=Effect.DESTRUCTIVE,
    genai=DELETE,
    run=lambda s, scope, req: s.lifecycle.erase(scope, req),
    # A subject of every agent of the tenant: no agent to name.
    tenant_wide=lambda req: req.all_agents,
    touched_in=lambda req: (req.ids, ""),
    # The audit keeps the erased ids and the receipt's digest, never any content.
    touched_out=lambda receipt: (receipt.ids, f"erasure:{receipt.digest}"),
)
VERIFY_ERASURE: Operation[lifecycle.VerifyErasureRequest, lifecycle.ErasureCheck] = Operation(
    name="LifecycleService.VerifyErasure",
    # Scans the data directory (only the tenant's own folders where tenants share
    # it) and answers with file names and counts, never with what the files hold.
    effect=Effect.ADMIN_OVERRIDE,
    genai=SEARCH,
    run=lambda s, scope, req: s.lifecycle.verify_erasure(scope, req),
    tenant_wide=lambda _: True,
)


def _compact_effect(o: lifecycle.CompactOptions) -> Effect:
    """Compacting by the configured policy (tombstones, expired items, near-duplicate
    merges at the operator's threshold, which scheduled maintenance applies anyway) is
    a write; a merge threshold or similarity of the caller's own deletes the memories
    it merges away, well beyond anything the call names."""
    overrides = o.merge_group_threshold is not None or o.merge_similarity is not None
    return Effect.DESTRUCTIVE if overrides else Effect.WRITE


def _maintenance_effect(o: lifecycle.MaintenanceOptions) -> Effect:
    """A retention override deletes; max_entries archives beyond the operator's policy."""
    if o.retention_days is not None:
        return Effect.DESTRUCTIVE
    return Effect.ADMIN_OVERRIDE if o.max_entries is not None else Effect.WRITE


COMPACT: StreamOperation[lifecycle.CompactOptions, lifecycle.Progress | lifecycle.CompactResult] = (
    StreamOperation(
        name="LifecycleService.Compact",
        effect=Effect.WRITE,
        effect_of=_compact_effect,
        run=_compact,
    )
)
RUN_MAINTENANCE: StreamOperation[
    lifecycle.MaintenanceOptions, lifecycle.Progress | lifecycle.MaintenanceResult
] = StreamOperation(
    name="LifecycleService.RunMaintenance",
    effect=Effect.WRITE,
    effect_of=_maintenance_effect,
    run=_maintain,
)
CONSOLIDATE: StreamOperation[
    lifecycle.ConsolidateOptions, lifecycle.Progress | lifecycle.ConsolidateResult
] = StreamOperation(
    name="LifecycleService.Consolidate",
    # Lossless: the originals are archived beside the derived memory, and Restore's
    # undo_consolidation brings them back (service/lifecycle/consolidation.py).
    effect=Effect.WRITE,
    run=_consolidate,
)
EXPORT: StreamOperation[ExportRequest, lifecycle.ExportItem | lifecycle.Progress] = StreamOperation(
    name="LifecycleService.Export",
    effect=Effect.READ,
    effect_of=lambda r: Effect.ADMIN_OVERRIDE if r.all_agents else Effect.READ,
    genai=SEARCH,
    run=_export,
    tenant_wide=lambda r: r.all_agents,
    returned=_exported_ids,
    unmasked_for_admin=True,
)
IMPORT: Operation[AsyncIterator[ImportRecord], lifecycle.ImportOutcome] = Operation(
    name="LifecycleService.Import",
    # Writes into every agent its records name, over what they hold.
    effect=Effect.ADMIN_OVERRIDE,
    genai=UPSERT,
    run=_import,
    tenant_wide=lambda _: True,
)
REEMBED: StreamOperation[ReembedRequest, lifecycle.Progress | lifecycle.ReembedResult] = (
    StreamOperation(
        name="LifecycleService.Reembed",
        effect=Effect.ADMIN_OVERRIDE,
        genai=UPDATE,
        run=_reembed,
        tenant_wide=lambda r: r.all_agents,
    )
)

OPERATIONS = (
    GET_STATS,
    ARCHIVE,
    RESTORE,
    PRUNE,
    RESET,
    COMPACT,
    RUN_MAINTENANCE,
    CONSOLIDATE,
    EXPORT,
    IMPORT,
    REEMBED,
    ERASE,
    VERIFY_ERASURE,
)
