"""SnapshotService and LifecycleService servicers: validate -> convert -> call the
service -> convert back. Long operations stream their progress."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
import structlog

from memoryd.api import convert
from memoryd.api.context import call_scope, principal
from memoryd.domain.errors import InvalidArgument, PermissionDenied, Unimplemented
from memoryd.domain.lifecycle import EXPORT_FORMAT, ExportHeader, ExportItem, Progress
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope
from memoryd.service.default_read import DefaultReadService
from memoryd.service.importer import Importer
from memoryd.service.lifecycle import LifecycleService
from memoryd.service.snapshot import SnapshotService
from memoryd.service.state import StateService
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc

Ctx: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
log = structlog.get_logger("memoryd.lifecycle")


class SnapshotServicer(sgrpc.SnapshotServiceServicer):
    def __init__(
        self,
        snapshots: SnapshotService | None = None,
        default_read: DefaultReadService | None = None,
        state: StateService | None = None,
    ) -> None:
        self._snapshots = snapshots
        self._default_read = default_read
        self._state = state

    def _need(self, service: Any, what: str) -> Any:
        if service is None:
            raise Unimplemented(f"{what} is not enabled in this server")
        return service

    async def BuildSnapshot(
        self, request: spb.BuildSnapshotRequest, context: Ctx
    ) -> spb.BuildSnapshotResponse:
        scope = call_scope(request.agent_id)
        service: SnapshotService = self._need(self._snapshots, "BuildSnapshot")
        snapshot = await service.build(scope, convert.snapshot_request_from(request))
        return convert.snapshot_response(snapshot)

    async def DefaultRead(
        self, request: spb.DefaultReadRequest, context: Ctx
    ) -> spb.DefaultReadResponse:
        scope = call_scope(request.agent_id)
        service: DefaultReadService = self._need(self._default_read, "DefaultRead (keyed memory)")
        result = await service.read(scope, convert.default_read_request_from(request))
        return convert.default_read_response(result)

    async def SaveState(self, request: spb.SaveStateRequest, context: Ctx) -> spb.SaveStateResponse:
        scope = call_scope(request.agent_id)
        service: StateService = self._need(self._state, "SaveState")
        saved = await service.save(scope, request.session_id, convert.state_writes_from(request))
        return convert.save_state_response(saved)

    async def LoadState(self, request: spb.LoadStateRequest, context: Ctx) -> spb.LoadStateResponse:
        scope = call_scope(request.agent_id)
        service: StateService = self._need(self._state, "LoadState")
        loaded = await service.load(scope, request.session_id, list(request.names))
        return convert.load_state_response(loaded)


class LifecycleServicer(lgrpc.LifecycleServiceServicer):
    def __init__(self, lifecycle: LifecycleService | None = None) -> None:
        self._lifecycle = lifecycle

    def _service(self) -> LifecycleService:
        if self._lifecycle is None:
            raise Unimplemented("the lifecycle service is not enabled in this server")
        return self._lifecycle

    async def GetStats(self, request: lpb.GetStatsRequest, context: Ctx) -> lpb.GetStatsResponse:
        scope = call_scope(request.agent_id)
        return convert.stats_response(await self._service().stats(scope))

    async def Archive(self, request: lpb.ArchiveRequest, context: Ctx) -> lpb.ArchiveResponse:
        scope = call_scope(request.agent_id)
        count = await self._service().archive(scope, convert.selector_from(request))
        return lpb.ArchiveResponse(archived=count)

    async def Restore(self, request: lpb.RestoreRequest, context: Ctx) -> lpb.RestoreResponse:
        scope = call_scope(request.agent_id)
        selector = convert.selector_from(request)
        if request.undo_consolidation:
            undone, back = await self._service().undo_consolidation(scope, selector)
            return lpb.RestoreResponse(restored=back, consolidations_undone=undone)
        count = await self._service().restore(scope, selector)
        return lpb.RestoreResponse(restored=count)

    async def Prune(self, request: lpb.PruneRequest, context: Ctx) -> lpb.PruneResponse:
        scope = call_scope(request.agent_id)
        outcome = await self._service().prune(scope, convert.prune_criteria_from(request))
        return convert.prune_response(outcome)

    async def Reset(self, request: lpb.ResetRequest, context: Ctx) -> lpb.ResetResponse:
        scope = call_scope(request.agent_id)
        deleted = await self._service().reset(scope, request.confirm)
        return lpb.ResetResponse(deleted=deleted)

    async def Compact(
        self, request: lpb.CompactRequest, context: Ctx
    ) -> AsyncIterator[lpb.CompactResponse]:
        scope = call_scope(request.agent_id)
        events = self._service().compact(scope, convert.compact_options_from(request))
        async for event in events:
            yield convert.compact_event(event)

    async def RunMaintenance(
        self, request: lpb.RunMaintenanceRequest, context: Ctx
    ) -> AsyncIterator[lpb.RunMaintenanceResponse]:
        scope = call_scope(request.agent_id)
        events = self._service().run_maintenance(scope, convert.maintenance_options_from(request))
        async for event in events:
            yield convert.maintenance_event(event)

    async def Consolidate(
        self, request: lpb.ConsolidateRequest, context: Ctx
    ) -> AsyncIterator[lpb.ConsolidateResponse]:
        scope = call_scope(request.agent_id)
        events = self._service().consolidate(scope, convert.consolidate_options_from(request))
        async for event in events:
            yield convert.consolidate_event(event)

    async def Export(
        self, request: lpb.ExportRequest, context: Ctx
    ) -> AsyncIterator[lpb.ExportResponse]:
        service = self._service()
        scope = (
            _tenant_scope(request.agent_id) if request.all_agents else call_scope(request.agent_id)
        )
        partitions = await service.export_partitions(scope, request.all_agents)
        events = service.export(
            scope,
            partitions,
            all_agents=request.all_agents,
            include_vectors=request.include_vectors,
        )
        async for item in events:
            if isinstance(item, Progress):
                yield lpb.ExportResponse(progress=convert.progress_to_proto(item))
            else:
                yield lpb.ExportResponse(record=convert.export_record(item))

    async def Import(
        self, requests: AsyncIterator[lpb.ImportRequest], context: Ctx
    ) -> lpb.ImportResponse:
        importer = self._service().importer()
        scopes: dict[str, CallScope] = {}
        index = -1
        async for request in requests:
            index += 1
            if not request.HasField("record"):
                importer.reject(index, "record: must be set")
                continue
            item = _import_item(importer, index, request.record)
            if item is None:
                continue
            if isinstance(item, ExportHeader):
                if item.format == EXPORT_FORMAT:
                    continue
                problem = f"{item.format!r} is not a format this server reads ({EXPORT_FORMAT})"
                if index == 0:  # nothing read yet: the whole stream is of another format
                    raise InvalidArgument.field("record.header.format", problem)
                importer.reject(index, f"record.header.format: {problem}")
                continue
            field = "target_agent_id" if request.target_agent_id else "record.agent_id"
            agent = request.target_agent_id or convert.record_agent(item)
            scope = scopes.get(agent)
            if scope is None:
                try:
                    scope = call_scope(agent, field)
                except (InvalidArgument, PermissionDenied) as exc:
                    importer.reject(index, exc.message)
                    continue
                scopes[agent] = scope
            await importer.add(index, scope, item)
        return convert.import_response(await importer.finish())

    async def Reembed(
        self, request: lpb.ReembedRequest, context: Ctx
    ) -> AsyncIterator[lpb.ReembedResponse]:
        service = self._service()
        scope = (
            _tenant_scope(request.agent_id) if request.all_agents else call_scope(request.agent_id)
        )
        partitions = await service.export_partitions(scope, request.all_agents)
        if request.batch_size < 0:
            raise InvalidArgument.field("batch_size", "must not be negative")
        events = service.reembed(partitions, request.batch_size or None)
        async for event in events:
            yield convert.reembed_event(event)


def _import_item(importer: Importer, index: int, record: lpb.ExportRecord) -> ExportItem | None:
    """The domain item of one Import record, or None once it is rejected: a record
    that cannot be read is reported in ``rejected`` and the stream goes on."""
    try:
        return convert.export_item_from(record)
    except InvalidArgument as exc:
        importer.reject(index, exc.message)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # A conversion the checks above missed: still this record's fault, not the
        # stream's. The detail goes to the log, not to the caller.
        log.warning("import record unreadable", index=index, error=type(exc).__name__)
        importer.reject(index, "record: cannot be read (a value is out of range or malformed)")
    return None


def _tenant_scope(agent_id: str) -> CallScope:
    """A tenant-wide call: agent_id may be empty; the tenant is the caller's."""
    if agent_id:
        return call_scope(agent_id)
    caller = principal()
    return CallScope(principal=caller, partition=Partition(caller.tenant_id, ""))
