"""A real grpc.aio server on loopback, run in its own thread and event loop, whose
MemoryService / SnapshotService answers are scripted: fail N times with a code, then
answer. Lets the sync and the async client be tested against real gRPC."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc

from memoryd_proto.v1 import common_pb2, memory_service_pb2, snapshot_service_pb2
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc


@dataclass
class Script:
    """Per method: how many calls fail first, with which code; calls seen so far."""

    failures: dict[str, int] = field(default_factory=dict)
    code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    calls: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    async def enter(self, method: str, context: Any) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1
        seen = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
        self.metadata.setdefault(method, []).append(seen)
        if self.calls[method] <= self.failures.get(method, 0):
            await context.abort(self.code, f"{method} scripted failure {self.calls[method]}")


class FakeMemory(mgrpc.MemoryServiceServicer):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def Remember(self, request: Any, context: Any) -> Any:
        await self.script.enter("Remember", context)
        memory = common_pb2.Memory(id="m1", agent_id=request.agent_id, content=request.content)
        return memory_service_pb2.RememberResponse(memory=memory)

    async def Recall(self, request: Any, context: Any) -> Any:
        await self.script.enter("Recall", context)
        hit = memory_service_pb2.RecallResult(
            memory=common_pb2.Memory(id="m1", content=f"about {request.query}"), score=0.9
        )
        return memory_service_pb2.RecallResponse(results=[hit])


class FakeSnapshot(sgrpc.SnapshotServiceServicer):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def BuildSnapshot(self, request: Any, context: Any) -> Any:
        await self.script.enter("BuildSnapshot", context)
        return snapshot_service_pb2.BuildSnapshotResponse(text=f"snapshot for {request.trigger}")


@contextmanager
def fake_daemon(script: Script) -> Iterator[str]:
    """Serve on 127.0.0.1:<free port> until the block ends; yields the address."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: asyncio.Event | None = None
    address: list[str] = []

    async def serve() -> None:
        nonlocal stop
        stop = asyncio.Event()
        server = grpc.aio.server()
        mgrpc.add_MemoryServiceServicer_to_server(FakeMemory(script), server)  # type: ignore[no-untyped-call]
        sgrpc.add_SnapshotServiceServicer_to_server(FakeSnapshot(script), server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        address.append(f"127.0.0.1:{port}")
        ready.set()
        await stop.wait()
        await server.stop(None)

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "fake daemon did not start"
    try:
        yield address[0]
    finally:
        assert stop is not None
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()
