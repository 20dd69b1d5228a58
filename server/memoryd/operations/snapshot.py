"""What an agent run starts with: snapshots, the default read, saved component state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.domain.principal import CallScope
from memoryd.domain.snapshot import (
    DefaultReadRequest,
    DefaultReadResult,
    Snapshot,
    SnapshotRequest,
    StateComponent,
    StateWrite,
)
from memoryd.observability.tracing import SEARCH, UPSERT
from memoryd.operations.definition import NOTHING, Effect, Operation, Touched
from memoryd.operations.services import Services


@dataclass(frozen=True, slots=True)
class SaveState:
    """The input of SaveState: the session and the components to write."""

    session_id: str
    writes: Sequence[StateWrite]


@dataclass(frozen=True, slots=True)
class LoadState:
    """The input of LoadState: the session and the components to read."""

    session_id: str
    #: Empty: every component.
    names: tuple[str, ...] = ()


async def _build(s: Services, scope: CallScope, req: SnapshotRequest) -> Snapshot:
    return await s.snapshots.build(scope, req)


async def _default_read(
    s: Services, scope: CallScope, req: DefaultReadRequest
) -> DefaultReadResult:
    return await s.default_read.read(scope, req)


async def _save(s: Services, scope: CallScope, req: SaveState) -> list[StateComponent]:
    return await s.states.save(scope, req.session_id, req.writes)


async def _load(s: Services, scope: CallScope, req: LoadState) -> list[StateComponent]:
    return await s.states.load(scope, req.session_id, list(req.names))


def _snapshot_touched(req: SnapshotRequest) -> Touched:
    if req.session_id:
        return ((), f"session:{req.session_id}"[:1024])
    if req.scope is not None:
        return ((), f"scope:{req.scope.thread_id}/{req.scope.resource_id}"[:1024])
    return NOTHING


BUILD_SNAPSHOT: Operation[SnapshotRequest, Snapshot] = Operation(
    name="SnapshotService.BuildSnapshot",
    effect=Effect.READ,
    genai=SEARCH,
    run=_build,
    touched_in=_snapshot_touched,
    returned=lambda snap: [i.id for i in snap.items if i.id],
    count=lambda _, snap: len(snap.items),
    own_degraded=lambda snap: snap.degraded,
)
DEFAULT_READ: Operation[DefaultReadRequest, DefaultReadResult] = Operation(
    name="SnapshotService.DefaultRead",
    effect=Effect.READ,
    genai=SEARCH,
    run=_default_read,
    returned=lambda result: [line.key for line in result.lines],
)
SAVE_STATE: Operation[SaveState, list[StateComponent]] = Operation(
    name="SnapshotService.SaveState",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=_save,
    touched_in=lambda r: ((), f"session:{r.session_id}"[:1024] if r.session_id else ""),
)
LOAD_STATE: Operation[LoadState, list[StateComponent]] = Operation(
    name="SnapshotService.LoadState",
    effect=Effect.READ,
    genai=SEARCH,
    run=_load,
    touched_in=lambda r: ((), f"session:{r.session_id}"[:1024] if r.session_id else ""),
)

OPERATIONS = (BUILD_SNAPSHOT, DEFAULT_READ, SAVE_STATE, LOAD_STATE)
