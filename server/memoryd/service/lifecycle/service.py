"""LifecycleService: stats, archive / restore, prune, reset, and the long operations
(compact, maintenance, export / import, re-embed; their modules say how each works).

Every operation is confined to the caller's partition(s) and, except where noted,
to what the caller's clearance lets it see: memories above it are neither counted,
archived, pruned nor exported. Reset (admin) wipes the whole partition. Keyed
memories' mirrors are left to their slots by prune and maintenance (use SetMemory
with null to delete a key).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime
from pathlib import Path

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.keyed import level_of
from memoryd.domain.lifecycle import (
    CompactOptions,
    CompactResult,
    ConsolidateOptions,
    ConsolidateResult,
    EraseReceipt,
    EraseRequest,
    ErasureCheck,
    ExportHeader,
    ExportItem,
    MaintenanceOptions,
    MaintenanceResult,
    MemorySelector,
    Progress,
    PruneCriteria,
    PruneOutcome,
    ReembedResult,
    Stats,
    VerifyErasureRequest,
)
from memoryd.domain.limits import next_version
from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.domain.principal import CallScope, Role
from memoryd.domain.records import RecordKind
from memoryd.domain.relations import restored
from memoryd.service.common import scanning
from memoryd.service.common import validation as check
from memoryd.service.common.validation import Violations
from memoryd.service.keyed.docs import is_live
from memoryd.service.lifecycle import bulk
from memoryd.service.lifecycle.bulk import EVERYTHING, LifecycleDeps
from memoryd.service.lifecycle.compaction import Compactor
from memoryd.service.lifecycle.consolidation import Consolidator
from memoryd.service.lifecycle.consolidation import undo as undo_consolidation
from memoryd.service.lifecycle.erasure import Eraser
from memoryd.service.lifecycle.export_import import Exporter
from memoryd.service.lifecycle.importer import Importer, ImportLimits
from memoryd.service.lifecycle.maintenance import (
    MAX_DAYS,
    Maintainer,
    MaintenanceScheduler,
    last_maintenance,
)
from memoryd.service.lifecycle.reembed import DEFAULT_BATCH, MAX_BATCH, Reembedder
from memoryd.storage.base import disk_bytes
from memoryd.storage.checks import matches


class LifecycleService:
    def __init__(
        self,
        deps: LifecycleDeps,
        import_limits: ImportLimits,
        *,
        memory_root: Path | None = None,
        data_dir: Path | None = None,
        sole_tenant: str | None = None,
    ) -> None:
        self._deps = deps
        self._import_limits = import_limits
        self.compactor = Compactor(deps)
        self.consolidator = Consolidator(deps)
        self.maintainer = Maintainer(deps, self.compactor, self.consolidator)
        self.exporter = Exporter(deps)
        self.reembedder = Reembedder(deps)
        self.eraser = Eraser(deps, memory_root, data_dir, sole_tenant)

    def scheduler(
        self,
        *,
        seed: int | None = None,
        on_run: Callable[[float, str], None] | None = None,
        maintained: Callable[[Partition], None] | None = None,
    ) -> MaintenanceScheduler:
        return MaintenanceScheduler(
            self._deps, self.maintainer, seed=seed, on_run=on_run, maintained=maintained
        )

    # ------------------------------------------------------------------ stats

    async def stats(self, scope: CallScope) -> Stats:
        deps = self._deps
        partition = scope.partition
        now = deps.clock()
        flt = MemoryFilter(
            include_archived=True, max_security_level=scope.clearance, not_expired_at=now
        )
        total = archived = 0
        importance = 0.0
        types: Counter[str] = Counter()
        levels: Counter[str] = Counter()
        models: Counter[str] = Counter()
        async for page in scanning.scan(deps.store, partition, flt):
            for m in page:
                total += 1
                archived += m.archived
                importance += m.importance
                types[m.memory_type.value] += 1
                levels[m.security_level.name.lower()] += 1
                models[m.embedding_model] += 1
        keys = 0
        async for records in scanning.scan_records(
            deps.records, partition, RecordKind.KEY, deps.batch
        ):
            keys += sum(is_live(r) and level_of(r) <= scope.clearance for r in records)
        sessions = await self._live(partition, RecordKind.SESSION, now)
        working = await self._live(partition, RecordKind.WORKING, now)
        store_bytes = 0
        # The store's size covers every tenant: only admins see it.
        if Role.ADMIN in scope.principal.roles:
            store_bytes = await asyncio.to_thread(disk_bytes, deps.store)
        visible_levels = [lv for lv in SecurityLevel if lv <= scope.clearance]
        return Stats(
            memories=total,
            by_memory_type=dict(sorted(types.items())),
            by_security_level={lv.name.lower(): levels[lv.name.lower()] for lv in visible_levels},
            archived=archived,
            keys=keys,
            sessions=sessions,
            working_scopes=working,
            average_importance=importance / total if total else 0.0,
            store_bytes=store_bytes,
            last_maintenance_at=await last_maintenance(deps, partition),
            by_embedding_model=dict(sorted(models.items())),
        )

    async def _live(self, partition: Partition, kind: RecordKind, now: datetime) -> int:
        count = 0
        async for records in scanning.scan_records(
            self._deps.records, partition, kind, self._deps.batch
        ):
            count += sum(1 for r in records if not r.expired(now))
        return count

    # ------------------------------------------------------------------ archive

    async def archive(self, scope: CallScope, selector: MemorySelector) -> int:
        return await self._set_archived(scope, selector, archived=True)

    async def restore(self, scope: CallScope, selector: MemorySelector) -> int:
        return await self._set_archived(scope, selector, archived=False)

    async def undo_consolidation(
        self, scope: CallScope, selector: MemorySelector
    ) -> tuple[int, int]:
        """Undo the consolidated memories the selector names: (undone, originals back)."""
        ids = await self._select(scope, selector)
        return await undo_consolidation(self._deps, scope.partition, scope.clearance, ids)

    async def _set_archived(
        self, scope: CallScope, selector: MemorySelector, *, archived: bool
    ) -> int:
        ids = await self._select(scope, selector)
        now = self._deps.clock()

        def flip(m: Memory) -> Memory | None:
            if m.archived == archived or m.security_level > scope.clearance:
                return None
            # A memory restored is current again: it is no longer superseded.
            metadata = m.metadata if archived else restored(m.metadata)
            return dataclasses.replace(
                m,
                archived=archived,
                metadata=metadata,
                version=next_version(m.version),
                updated_at=now,
            )

        return await bulk.rewrite(self._deps, scope.partition, ids, flip)

    async def _select(self, scope: CallScope, selector: MemorySelector) -> list[str]:
        """Ids of the visible memories the selector names (ids and filter both apply)."""
        limits = self._deps.limits
        v = Violations()
        check.check_tags(v, selector.tags, limits, "selector.tags")
        check.check_namespace(v, selector.namespace, limits, "selector.namespace")
        if len(selector.ids) > limits.max_batch_size:
            v.add(
                "selector.ids",
                f"has {len(selector.ids)} ids; the limit is {limits.max_batch_size}",
            )
        if any(not i for i in selector.ids):
            v.add("selector.ids", "must not contain empty ids")
        if (
            selector.created_after
            and selector.created_before
            and selector.created_after >= selector.created_before
        ):
            v.add("selector.created_after", "must be before created_before")
        has_filter = bool(
            selector.namespace is not None
            or selector.tags
            or selector.memory_types
            or selector.created_before
            or selector.created_after
        )
        if not selector.ids and not has_filter:
            v.add(
                "selector",
                "must name ids or at least one filter (an empty selector selects nothing)",
            )
        v.raise_if_any()
        flt = MemoryFilter(
            namespace=selector.namespace,
            tags=selector.tags,
            tag_match=selector.tag_match,
            memory_types=selector.memory_types,
            created_before=selector.created_before,
            created_after=selector.created_after,
            include_archived=True,
            max_security_level=scope.clearance,
        )
        if selector.ids:
            found = await self._deps.store.get(scope.partition, list(dict.fromkeys(selector.ids)))
            # The store's own reference semantics of a filter, for memories fetched by id.
            return [m.id for m in found if matches(m, flt)]
        ids: list[str] = []
        async for page in scanning.scan(self._deps.store, scope.partition, flt):
            ids.extend(m.id for m in page)
        return ids

    # ------------------------------------------------------------------ prune / reset

    async def prune(self, scope: CallScope, criteria: PruneCriteria) -> PruneOutcome:
        """Delete the memories matching every criterion (the memories of a namespace,
        when that is the only one), keyed memories' mirrors excepted (SetMemory with
        null deletes a key); ``dry_run`` reports what would go."""
        v = Violations()
        check.check_tags(v, criteria.tags, self._deps.limits)
        check.check_namespace(v, criteria.namespace, self._deps.limits)
        if criteria.min_access_count is not None and criteria.min_access_count < 0:
            v.add("min_access_count", "must not be negative")
        if not (
            criteria.created_before
            or criteria.tags
            or criteria.min_access_count is not None
            or criteria.memory_types
            or criteria.namespace is not None
        ):
            v.add(
                "created_before",
                "set at least one criterion (created_before, tags, min_access_count, "
                "memory_types, namespace): Prune never deletes everything (use Reset)",
            )
        v.raise_if_any()
        flt = MemoryFilter(
            namespace=criteria.namespace,
            tags=criteria.tags,
            memory_types=criteria.memory_types,
            created_before=criteria.created_before,
            include_archived=True,
            max_security_level=scope.clearance,
        )
        minimum = criteria.min_access_count
        ids: list[str] = []
        async for page in scanning.scan(self._deps.store, scope.partition, flt):
            ids.extend(
                m.id for m in page if not m.key and (minimum is None or m.access_count < minimum)
            )
        if criteria.dry_run:
            return PruneOutcome(pruned=len(ids), ids=ids, dry_run=True)
        gone = await bulk.delete(self._deps, scope.partition, ids)
        return PruneOutcome(pruned=gone, ids=ids, dry_run=False)

    async def reset(self, scope: CallScope, confirm: bool) -> int:
        """Delete every memory and record of the partition; returns how many went."""
        if not confirm:
            raise InvalidArgument.field(
                "confirm",
                f"must be true: Reset deletes every memory and record of agent "
                f"{scope.partition.agent_id!r}",
            )
        deps = self._deps
        if deps.keyed is None:
            return await self._wipe(scope.partition)
        async with deps.keyed.exclusive(scope.partition):
            return await self._wipe(scope.partition)

    async def _wipe(self, partition: Partition) -> int:
        deps = self._deps
        ids: list[str] = []
        async for page in scanning.scan(deps.store, partition, EVERYTHING):
            ids.extend(m.id for m in page)
        deleted = await bulk.delete(deps, partition, ids)
        gone = await bulk.delete_partition_records(deps, partition)
        deleted += sum(n for kind, n in gone.items() if kind is not RecordKind.COUNTER)
        return deleted

    # ------------------------------------------------------------------ erasure

    async def erase(self, scope: CallScope, request: EraseRequest) -> EraseReceipt:
        """Erase the agent's partition, or memories of it, from every place a copy of
        them is kept (docs/erasure.md); ``dry_run`` changes nothing. A subject of
        every agent of the tenant (``all_agents``): of each one the caller may act
        for."""
        partitions = await self.export_partitions(scope, request.all_agents)
        return await self.eraser.erase(partitions, request, scope.clearance)

    async def verify_erasure(self, scope: CallScope, request: VerifyErasureRequest) -> ErasureCheck:
        """Files of the data directory that still hold any of the request's strings
        (of the caller's tenant's folders only, where tenants share the files)."""
        return await self.eraser.verify(scope.partition.tenant_id, request)

    # ------------------------------------------------------------------ long operations

    def compact(
        self, scope: CallScope, options: CompactOptions
    ) -> AsyncIterator[Progress | CompactResult]:
        v = Violations()
        if options.merge_group_threshold is not None and options.merge_group_threshold < 2:
            v.add("merge_group_threshold", "must be at least 2")
        if options.merge_similarity is not None and not 0 < options.merge_similarity <= 1:
            v.add("merge_similarity", "must be in (0, 1]")
        v.raise_if_any()
        return self.compactor.compact(scope.partition, scope.clearance, options)

    def consolidate(
        self, scope: CallScope, options: ConsolidateOptions
    ) -> AsyncIterator[Progress | ConsolidateResult]:
        v = Violations()
        if options.min_age_days is not None and not 0 <= options.min_age_days <= MAX_DAYS:
            v.add("min_age_days", f"must be between 0 and {MAX_DAYS}")
        if options.min_group_size is not None and options.min_group_size < 2:
            v.add("min_group_size", "must be at least 2")
        check.check_tags(v, options.tags, self._deps.limits)
        v.raise_if_any()
        return self.consolidator.run(scope.partition, scope.clearance, options)

    def run_maintenance(
        self, scope: CallScope, options: MaintenanceOptions
    ) -> AsyncIterator[Progress | MaintenanceResult]:
        v = Violations()
        if options.max_entries is not None and options.max_entries < 1:
            v.add("max_entries", "must be at least 1")
        if options.retention_days is not None and not 1 <= options.retention_days <= MAX_DAYS:
            v.add("retention_days", f"must be between 1 and {MAX_DAYS} (100 years)")
        v.raise_if_any()
        return self.maintainer.run(scope.partition, scope.clearance, options)

    async def export_partitions(self, scope: CallScope, all_agents: bool) -> list[Partition]:
        """The partitions an export covers: the caller's agent, or every agent of its
        tenant that the caller may act for."""
        if not all_agents:
            return [scope.partition]
        principal = scope.principal
        return [
            p
            for p in await self.exporter.partitions(principal.tenant_id)
            if principal.may_act_for(p.agent_id)
        ]

    def export(
        self,
        scope: CallScope,
        partitions: Sequence[Partition],
        *,
        all_agents: bool,
        include_vectors: bool,
    ) -> AsyncIterator[ExportItem | Progress]:
        embedder = self._deps.embedder
        header = ExportHeader(
            tenant_id=scope.partition.tenant_id,
            agent_id="" if all_agents else scope.partition.agent_id,
            exported_at=self._deps.clock(),
            embedding_model=embedder.model_id,
            embedding_dimension=embedder.dimension,
        )
        return self.exporter.export(
            header, partitions, scope.clearance, include_vectors=include_vectors
        )

    def importer(self) -> Importer:
        return Importer(self._deps, self._import_limits)

    def reembed(
        self, partitions: Sequence[Partition], batch_size: int | None
    ) -> AsyncIterator[Progress | ReembedResult]:
        size = DEFAULT_BATCH if batch_size is None else batch_size
        if not 1 <= size <= MAX_BATCH:
            raise InvalidArgument.field("batch_size", f"must be between 1 and {MAX_BATCH}")
        return self.reembedder.reembed(partitions, size)
