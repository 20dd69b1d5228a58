"""SnapshotService and LifecycleService: each RPC's operation and its two converters,
served by the shapes of api/binding.py. Long operations stream their progress; Import
reads a stream of records."""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog

from memoryd.api import convert
from memoryd.api.binding import Binding, ClientStream, ServerStream, TenantUnary, Unary
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.lifecycle import (
    EraseReceipt,
    EraseRequest,
    ErasureCheck,
    ExportItem,
    VerifyErasureRequest,
)
from memoryd.operations import lifecycle as ops
from memoryd.operations import snapshot as ops_snapshot
from memoryd.operations.lifecycle import (
    Everything,
    ExportRequest,
    ImportRecord,
    ReembedRequest,
    ResetRequest,
    Restored,
    Selection,
)
from memoryd.operations.snapshot import LoadState, SaveState
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb

log = structlog.get_logger("memoryd.lifecycle")


def _restored(restored: Restored) -> lpb.RestoreResponse:
    return lpb.RestoreResponse(
        restored=restored.restored, consolidations_undone=restored.consolidations_undone
    )


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


def _receipt(receipt: EraseReceipt) -> lpb.EraseResponse:
    return lpb.EraseResponse(
        places=[lpb.CountByName(name=p, count=n) for p, n in receipt.places.items()],
        ids=receipt.ids,
        digest=receipt.digest,
        dry_run=receipt.dry_run,
    )


def _erasure_check(check: ErasureCheck) -> lpb.VerifyErasureResponse:
    return lpb.VerifyErasureResponse(
        files_scanned=check.files_scanned,
        bytes_scanned=check.bytes_scanned,
        residue=[
            lpb.ErasureResidue(path=r.path, needle=r.needle, count=r.count) for r in check.residue
        ],
        skipped=check.skipped,
    )


#: memoryd.v1.SnapshotService's RPCs, in the contract's order.
SNAPSHOT_RPCS: tuple[Binding, ...] = (
    Unary(ops_snapshot.BUILD_SNAPSHOT, convert.snapshot_request_from, convert.snapshot_response),
    Unary(
        ops_snapshot.DEFAULT_READ,
        convert.default_read_request_from,
        convert.default_read_response,
    ),
    Unary(
        ops_snapshot.SAVE_STATE,
        lambda r: SaveState(r.session_id, convert.state_writes_from(r)),
        convert.save_state_response,
    ),
    Unary(
        ops_snapshot.LOAD_STATE,
        lambda r: LoadState(r.session_id, tuple(r.names)),
        convert.load_state_response,
    ),
)

#: memoryd.v1.LifecycleService's RPCs, in the contract's order.
LIFECYCLE_RPCS: tuple[Binding, ...] = (
    Unary(ops.GET_STATS, lambda _: Everything(), convert.stats_response),
    Unary(
        ops.ARCHIVE,
        lambda r: Selection(convert.selector_from(r)),
        lambda archived: lpb.ArchiveResponse(archived=archived),
    ),
    Unary(
        ops.RESTORE,
        lambda r: Selection(convert.selector_from(r), r.undo_consolidation),
        _restored,
    ),
    Unary(ops.PRUNE, convert.prune_criteria_from, convert.prune_response),
    Unary(
        ops.RESET,
        lambda r: ResetRequest(r.confirm),
        lambda deleted: lpb.ResetResponse(deleted=deleted),
    ),
    ServerStream(ops.COMPACT, convert.compact_options_from, convert.compact_event),
    ServerStream(ops.RUN_MAINTENANCE, convert.maintenance_options_from, convert.maintenance_event),
    ServerStream(ops.CONSOLIDATE, convert.consolidate_options_from, convert.consolidate_event),
    ServerStream(
        ops.EXPORT,
        lambda r: ExportRequest(r.all_agents, r.include_vectors),
        convert.progress_or(lpb.ExportResponse, convert.export_record, field="record"),
    ),
    ClientStream(ops.IMPORT, _import_records, convert.import_response),
    ServerStream(
        ops.REEMBED,
        lambda r: ReembedRequest(r.all_agents, r.batch_size),
        convert.reembed_event,
    ),
    Unary(
        ops.ERASE,
        lambda r: EraseRequest(
            r.whole_agent, tuple(r.ids), r.dry_run, r.subject, r.key_prefix, r.all_agents
        ),
        _receipt,
    ),
    TenantUnary(
        ops.VERIFY_ERASURE,
        lambda r: VerifyErasureRequest(tuple(r.needles)),
        _erasure_check,
    ),
)
