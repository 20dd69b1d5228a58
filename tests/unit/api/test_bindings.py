"""Every RPC is bound once, in the shape its method has, to the operation of its name;
a response's ``degraded`` lists what the door reported for the call, each item once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from memoryd.api.binding import (
    Binding,
    ClientStream,
    ServerStream,
    TenantUnary,
    Unary,
    with_degraded,
)
from memoryd.api.memory_rpcs import MEMORY_RPCS
from memoryd.api.snapshot_lifecycle_rpcs import LIFECYCLE_RPCS, SNAPSHOT_RPCS
from memoryd.config import SidecarSettings
from memoryd.domain.principal import CallScope
from memoryd.domain.requests import Degradation
from memoryd.operations import Call, Door, Operation, Services, StreamOperation
from memoryd.operations.auth import SidecarAuthenticator, Transport
from memoryd.operations.definition import Effect
from memoryd.resilience.degradation import report
from memoryd_proto.v1 import (
    lifecycle_service_pb2,
    memory_service_pb2,
    snapshot_service_pb2,
)

TABLES = [
    (memory_service_pb2, "MemoryService", MEMORY_RPCS),
    (snapshot_service_pb2, "SnapshotService", SNAPSHOT_RPCS),
    (lifecycle_service_pb2, "LifecycleService", LIFECYCLE_RPCS),
]


def _shape(method: Any) -> type:
    if method.client_streaming:
        return ClientStream
    return ServerStream if method.server_streaming else Unary


@pytest.mark.parametrize(("module", "name", "table"), TABLES, ids=[t[1] for t in TABLES])
def test_each_method_is_bound_once_in_its_shape(
    module: Any, name: str, table: tuple[Binding, ...]
) -> None:
    service = module.DESCRIPTOR.services_by_name[name]
    assert [b.operation.name for b in table] == [f"{name}.{m.name}" for m in service.methods]
    for binding, method in zip(table, service.methods, strict=True):
        shape = _shape(method)
        # TenantUnary is the Unary shape of a request that names no agent.
        assert type(binding) in ({Unary, TenantUnary} if shape is Unary else {shape}), method.name


def test_degraded_is_filled_only_where_the_response_has_the_field() -> None:
    items = [Degradation("embedder", "model down"), Degradation("store", "log overlay")]
    recall = with_degraded(memory_service_pb2.RecallResponse(), items)
    assert [(d.component, d.reason) for d in recall.degraded] == [
        ("embedder", "model down"),
        ("store", "log overlay"),
    ]
    # GetMemoryResponse has no degraded field: nothing to fill, nothing raised.
    assert with_degraded(memory_service_pb2.GetMemoryResponse(), items).ByteSize() == 0


def _door() -> Door:
    return Door(Services(memories=None), SidecarAuthenticator(SidecarSettings()))  # type: ignore[arg-type]


def _call() -> Call:
    return Call("req-1", "/test", Transport(metadata=(), peer="ipv4:127.0.0.1:1"))


async def _degraded_twice(_: Services, scope: CallScope, value: str) -> list[Degradation]:
    report("store", "served from the log")  # found on the call's path
    return [Degradation("embedder", f"fallback for {value}")]  # the result's own


async def test_a_unary_response_lists_the_results_and_the_paths_degradations_once() -> None:
    op: Operation[str, list[Degradation]] = Operation(
        name="MemoryService.Recall",
        effect=Effect.READ,
        run=_degraded_twice,
        own_degraded=lambda own: own,
    )
    binding = Unary(op, lambda r: r.query, lambda _: memory_service_pb2.RecallResponse())
    serve = binding.bind(_door())
    response = await serve(memory_service_pb2.RecallRequest(agent_id="a1", query="q"), _call())
    assert isinstance(response, memory_service_pb2.RecallResponse)
    assert [(d.component, d.reason) for d in response.degraded] == [
        ("embedder", "fallback for q"),
        ("store", "served from the log"),
    ]


async def _count_to(_: Services, scope: CallScope, n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


async def test_a_server_stream_answers_each_item() -> None:
    op: StreamOperation[int, int] = StreamOperation(
        name="LifecycleService.Compact", effect=Effect.WRITE, run=_count_to
    )
    binding = ServerStream(
        op,
        lambda r: 3,
        lambda i: lifecycle_service_pb2.ResetResponse(deleted=i),
    )
    serve = binding.bind(_door())
    request = lifecycle_service_pb2.CompactRequest(agent_id="a1")
    got = [r.deleted async for r in serve(request, _call())]  # type: ignore[attr-defined]
    assert got == [0, 1, 2]


async def _total(_: Services, scope: CallScope, numbers: AsyncIterator[int]) -> int:
    return sum([n async for n in numbers])


async def test_a_client_stream_reads_every_request_and_names_no_agent() -> None:
    op: Operation[AsyncIterator[int], int] = Operation(
        name="LifecycleService.Import",
        effect=Effect.DESTRUCTIVE,
        run=_total,
        tenant_wide=lambda _: True,
    )

    async def numbers(requests: AsyncIterator[Any]) -> AsyncIterator[int]:
        async for r in requests:
            yield r.deleted

    async def requests() -> AsyncIterator[Any]:
        for n in (4, 5, 6):
            yield lifecycle_service_pb2.ResetResponse(deleted=n)

    binding = ClientStream(op, numbers, lambda t: lifecycle_service_pb2.ResetResponse(deleted=t))
    call = _call()
    response = await binding.bind(_door())(requests(), call)
    assert isinstance(response, lifecycle_service_pb2.ResetResponse)
    assert response.deleted == 15
    assert call.agent == ""
