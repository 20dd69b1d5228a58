"""SnapshotService and LifecycleService: each RPC converts its request, runs its
operation through the door and converts the outcome back. Long operations stream
their progress."""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog

from memoryd.api import convert
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.lifecycle import ExportItem, Progress
from memoryd.operations import Call, Door
from memoryd.operations import lifecycle as ops
from memoryd.operations import snapshot as ops_snapshot
from memoryd.operations.lifecycle import (
    Everything,
    ExportRequest,
    ImportRecord,
    ReembedRequest,
    ResetRequest,
    Selection,
)
from memoryd.operations.snapshot import LoadState, SaveState
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb

log = structlog.get_logger("memoryd.lifecycle")


class SnapshotServicer:
    """The servicer of memoryd.v1.SnapshotService; see api/rpc.py for its handlers."""

    def __init__(self, door: Door) -> None:
        self._door = door

    async def BuildSnapshot(
        self, request: spb.BuildSnapshotRequest, call: Call
    ) -> spb.BuildSnapshotResponse:
        out = await self._door.run(
            ops_snapshot.BUILD_SNAPSHOT,
            call,
            request.agent_id,
            lambda: convert.snapshot_request_from(request),
        )
        return convert.snapshot_response(out.value)

    async def DefaultRead(
        self, request: spb.DefaultReadRequest, call: Call
    ) -> spb.DefaultReadResponse:
        out = await self._door.run(
            ops_snapshot.DEFAULT_READ,
            call,
            request.agent_id,
            lambda: convert.default_read_request_from(request),
        )
        return convert.default_read_response(out.value)

    async def SaveState(self, request: spb.SaveStateRequest, call: Call) -> spb.SaveStateResponse:
        out = await self._door.run(
            ops_snapshot.SAVE_STATE,
            call,
            request.agent_id,
            lambda: SaveState(request.session_id, convert.state_writes_from(request)),
        )
        return convert.save_state_response(out.value)

    async def LoadState(self, request: spb.LoadStateRequest, call: Call) -> spb.LoadStateResponse:
        out = await self._door.run(
            ops_snapshot.LOAD_STATE,
            call,
            request.agent_id,
            lambda: LoadState(request.session_id, tuple(request.names)),
        )
        return convert.load_state_response(out.value)


class LifecycleServicer:
    """The servicer of memoryd.v1.LifecycleService; see api/rpc.py for its handlers."""

    def __init__(self, door: Door) -> None:
        self._door = door

    async def GetStats(self, request: lpb.GetStatsRequest, call: Call) -> lpb.GetStatsResponse:
        out = await self._door.run(ops.GET_STATS, call, request.agent_id, Everything)
        return convert.stats_response(out.value)

    async def Archive(self, request: lpb.ArchiveRequest, call: Call) -> lpb.ArchiveResponse:
        out = await self._door.run(
            ops.ARCHIVE, call, request.agent_id, lambda: Selection(convert.selector_from(request))
        )
        return lpb.ArchiveResponse(archived=out.value)

    async def Restore(self, request: lpb.RestoreRequest, call: Call) -> lpb.RestoreResponse:
        out = await self._door.run(
            ops.RESTORE,
            call,
            request.agent_id,
            lambda: Selection(convert.selector_from(request), request.undo_consolidation),
        )
        restored = out.value
        if request.undo_consolidation:
            return lpb.RestoreResponse(
                restored=restored.restored, consolidations_undone=restored.consolidations_undone
            )
        return lpb.RestoreResponse(restored=restored.restored)

    async def Prune(self, request: lpb.PruneRequest, call: Call) -> lpb.PruneResponse:
        out = await self._door.run(
            ops.PRUNE, call, request.agent_id, lambda: convert.prune_criteria_from(request)
        )
        return convert.prune_response(out.value)

    async def Reset(self, request: lpb.ResetRequest, call: Call) -> lpb.ResetResponse:
        out = await self._door.run(
            ops.RESET, call, request.agent_id, lambda: ResetRequest(request.confirm)
        )
        return lpb.ResetResponse(deleted=out.value)

    async def Compact(
        self, request: lpb.CompactRequest, call: Call
    ) -> AsyncIterator[lpb.CompactResponse]:
        events = self._door.stream(
            ops.COMPACT, call, request.agent_id, lambda: convert.compact_options_from(request)
        )
        async for event in events:
            yield convert.compact_event(event)

    async def RunMaintenance(
        self, request: lpb.RunMaintenanceRequest, call: Call
    ) -> AsyncIterator[lpb.RunMaintenanceResponse]:
        events = self._door.stream(
            ops.RUN_MAINTENANCE,
            call,
            request.agent_id,
            lambda: convert.maintenance_options_from(request),
        )
        async for event in events:
            yield convert.maintenance_event(event)

    async def Consolidate(
        self, request: lpb.ConsolidateRequest, call: Call
    ) -> AsyncIterator[lpb.ConsolidateResponse]:
        events = self._door.stream(
            ops.CONSOLIDATE,
            call,
            request.agent_id,
            lambda: convert.consolidate_options_from(request),
        )
        async for event in events:
            yield convert.consolidate_event(event)

    async def Export(
        self, request: lpb.ExportRequest, call: Call
    ) -> AsyncIterator[lpb.ExportResponse]:
        items = self._door.stream(
            ops.EXPORT,
            call,
            request.agent_id,
            lambda: ExportRequest(request.all_agents, request.include_vectors),
        )
        async for item in items:
            if isinstance(item, Progress):
                yield lpb.ExportResponse(progress=convert.progress_to_proto(item))
            else:
                yield lpb.ExportResponse(record=convert.export_record(item))

    async def Import(
        self, requests: AsyncIterator[lpb.ImportRequest], call: Call
    ) -> lpb.ImportResponse:
        out = await self._door.run(ops.IMPORT, call, "", lambda: _import_records(requests))
        return convert.import_response(out.value)

    async def Reembed(
        self, request: lpb.ReembedRequest, call: Call
    ) -> AsyncIterator[lpb.ReembedResponse]:
        events = self._door.stream(
            ops.REEMBED,
            call,
            request.agent_id,
            lambda: ReembedRequest(request.all_agents, request.batch_size),
        )
        async for event in events:
            yield convert.reembed_event(event)


async def _import_records(
    requests: AsyncIterator[lpb.ImportRequest],
) -> AsyncIterator[ImportRecord]:
    index = -1
    async for request in requests:
        index += 1
        if not request.HasField("record"):
            yield ImportRecord(index, None, "record: must be set")
            continue
        item, problem = _import_item(index, request.record)
        if request.target_agent_id:
            agent, field = request.target_agent_id, "target_agent_id"
        else:
            agent = convert.record_agent(item) if item is not None else ""
            field = "record.agent_id"
        yield ImportRecord(index, item, problem, agent, field)


def _import_item(index: int, record: lpb.ExportRecord) -> tuple[ExportItem | None, str]:
    """The domain item of one Import record, or why it cannot be read: such a record is
    reported in ``rejected`` and the stream goes on."""
    try:
        return convert.export_item_from(record), ""
    except InvalidArgument as exc:
        return None, exc.message
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # A conversion the checks above missed: still this record's fault, not the
        # stream's. The detail goes to the log, not to the caller.
        log.warning("import record unreadable", index=index, error=type(exc).__name__)
        return None, "record: cannot be read (a value is out of range or malformed)"
