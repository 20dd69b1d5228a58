"""What an agent run starts with: snapshots, the default read, saved component state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.domain import snapshot
from memoryd.observability.tracing import SEARCH, UPSERT
from memoryd.operations.definition import (
    NOTHING,
    Effect,
    Operation,
    Touched,
    now_or_as_of,
    scope_touched,
    session_touched,
)
from memoryd.service.snapshot.as_of import AsOfReads


@dataclass(frozen=True, slots=True)
class SaveState:
    """The input of SaveState: the session and the components to write."""

    session_id: str
    writes: Sequence[snapshot.StateWrite]


@dataclass(frozen=True, slots=True)
class LoadState:
    """The input of LoadState: the session and the components to read."""

    session_id: str
    #: Empty: every component.
    names: tuple[str, ...] = ()


def _snapshot_touched(req: snapshot.SnapshotRequest) -> Touched:
    if req.session_id:
        return ((), f"session:{req.session_id}"[:1024])
    if req.scope is not None:
        return scope_touched(req.scope)
    return NOTHING


BUILD_SNAPSHOT: Operation[snapshot.SnapshotRequest, snapshot.Snapshot] = Operation(
    name="SnapshotService.BuildSnapshot",
    effect=Effect.READ,
    genai=SEARCH,
    run=now_or_as_of(lambda s, scope, req: s.snapshots.build(scope, req), AsOfReads.snapshot),
    touched_in=_snapshot_touched,
    returned=lambda snap: [i.id for i in snap.items if i.id],
    count=lambda _, snap: len(snap.items),
    own_degraded=lambda snap: snap.degraded,
)
DEFAULT_READ: Operation[snapshot.DefaultReadRequest, snapshot.DefaultReadResult] = Operation(
    name="SnapshotService.DefaultRead",
    effect=Effect.READ,
    genai=SEARCH,
    run=now_or_as_of(lambda s, scope, req: s.default_read.read(scope, req), AsOfReads.default_read),
    returned=lambda result: [line.key for line in result.lines],
)
SAVE_STATE: Operation[SaveState, list[snapshot.StateComponent]] = Operation(
    name="SnapshotService.SaveState",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=lambda s, scope, req: s.states.save(scope, req.session_id, req.writes),
    touched_in=session_touched,
)
LOAD_STATE: Operation[LoadState, list[snapshot.StateComponent]] = Operation(
    name="SnapshotService.LoadState",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, req: s.states.load(scope, req.session_id, list(req.names)),
    touched_in=session_touched,
)

OPERATIONS = (BUILD_SNAPSHOT, DEFAULT_READ, SAVE_STATE, LOAD_STATE)
