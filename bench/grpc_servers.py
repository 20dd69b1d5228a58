"""gRPC server kinds on this machine: grpc.aio against the sync server with a thread pool.

Each kind serves a Recall handler that returns a prebuilt 10-result response and does
no memoryd work, so what is measured is the framework's own cost per call; the same Go
load generator (bench/loadgen) drives each at 1 and 32 clients. A last kind is grpc.aio
with memoryd's call path (api/rpc.py's handler and the operation layer's door: request
id, authentication, role, scope, access log, metrics), which every memoryd call
passes through; its operation returns at once.

    python bench/grpc_servers.py [seconds]     # prints one JSON row per run
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from prometheus_client import CollectorRegistry

from memoryd.api.rpc import Rpcs
from memoryd.config import LoggingSettings, SidecarSettings
from memoryd.domain.principal import CallScope
from memoryd.observability.logging import AccessLog, configure_logging
from memoryd.observability.metrics import Metrics
from memoryd.operations import Call, Door, Operation, Services
from memoryd.operations.auth import SidecarAuthenticator
from memoryd.operations.definition import Effect
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

#: (name, sync thread-pool workers or None for grpc.aio, with memoryd's call path)
KINDS: tuple[tuple[str, int | None, bool], ...] = (
    ("grpc.aio", None, False),
    ("sync, 4 threads", 4, False),
    ("sync, 16 threads", 16, False),
    ("grpc.aio + memoryd call path", None, True),
)
CLIENTS = (1, 32)


def recall_response() -> mpb.RecallResponse:
    """The shape of a k = 10 Recall answer (~2 KB on the wire)."""
    response = mpb.RecallResponse(embedding_model="all-MiniLM-L6-v2")
    for i in range(10):
        result = response.results.add(score=0.5)
        m = result.memory
        m.id, m.tenant_id, m.agent_id = f"0193a1b2c3d4e5f6a7b8c9d0e1f2a3{i:02d}", "t", "a"
        m.content = f"The user prefers dark blue slides on Monday (note {i})"
        m.created_at.seconds = m.updated_at.seconds = m.accessed_at.seconds = 1_700_000_000
        m.importance, m.confidence, m.version = 0.5, 1.0, 1
        c = result.components
        c.similarity, c.recency, c.importance, c.decayed, c.weighted = 0.5, 0.9, 0.5, 0.4, 0.5
    return response


class _AioServicer(mgrpc.MemoryServiceServicer):
    def __init__(self) -> None:
        self.response = recall_response()

    async def Recall(self, request: Any, context: Any) -> mpb.RecallResponse:
        return self.response


class _SyncServicer(mgrpc.MemoryServiceServicer):
    def __init__(self) -> None:
        self.response = recall_response()

    def Recall(self, request: Any, context: Any) -> mpb.RecallResponse:
        return self.response


async def _nothing(services: Services, scope: CallScope, value: object) -> None:
    return None


#: Recall's effect and name, doing no work: what is measured is the call path itself.
_RECALL: Operation[object, None] = Operation(
    name="MemoryService.Recall", effect=Effect.READ, run=_nothing
)


def _memoryd_path(server: grpc.aio.Server) -> None:
    """Recall served the way the daemon serves every RPC (api/rpc.py -> the door)."""
    logging = LoggingSettings(format="json")
    configure_logging(logging)
    door = Door(
        Services(memories=None),  # type: ignore[arg-type]  # the stub operation uses none
        SidecarAuthenticator(SidecarSettings()),
        metrics=Metrics(CollectorRegistry()),
        access_log=AccessLog(logging),
    )
    response = recall_response()

    async def recall(request: mpb.RecallRequest, call: Call) -> mpb.RecallResponse:
        await door.run(_RECALL, call, request.agent_id, lambda: request)
        return response

    service = mpb.DESCRIPTOR.services_by_name["MemoryService"]
    handler = Rpcs(door).handler(service, service.methods_by_name["Recall"], recall, _RECALL)
    handlers = {"Recall": handler}
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
    server.add_registered_method_handlers(service.full_name, handlers)


def _serve(workers: int | None, with_memoryd: bool, log_path: str, ports: Any) -> None:
    # The access log goes to a file, as the daemon's stderr does under the bench.
    os.dup2(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), 2)
    if workers is not None:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
        mgrpc.add_MemoryServiceServicer_to_server(_SyncServicer(), server)  # type: ignore[no-untyped-call]
        ports.put(server.add_insecure_port("127.0.0.1:0"))
        server.start()
        server.wait_for_termination()
        return

    async def main() -> None:
        aio = grpc.aio.server()
        if with_memoryd:
            _memoryd_path(aio)
        else:
            mgrpc.add_MemoryServiceServicer_to_server(_AioServicer(), aio)  # type: ignore[no-untyped-call]
        ports.put(aio.add_insecure_port("127.0.0.1:0"))
        await aio.start()
        await aio.wait_for_termination()

    asyncio.run(main())


@contextmanager
def serving(name: str, log_dir: Path) -> Iterator[int]:
    """The server kind ``name`` (one of KINDS) in a process of its own; its port."""
    workers, with_memoryd = next((w, m) for n, w, m in KINDS if n == name)
    ctx = mp.get_context("spawn")  # no grpc state inherited from the caller
    ports = ctx.Queue()
    log_path = str(log_dir / "stderr.log")
    server = ctx.Process(target=_serve, args=(workers, with_memoryd, log_path, ports))
    server.start()
    try:
        yield ports.get(timeout=60)
    finally:
        server.terminate()
        server.join(10)


def loadgen_row(
    loadgen: Path, address: str, queries: Path, clients: int, seconds: float, agent: str = "a"
) -> dict[str, Any]:
    """One closed-loop run of the Go client: RPS and p50 / p99 ms (or the error)."""
    done = subprocess.run(
        [str(loadgen), address, agent, str(queries), str(clients), str(seconds)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        return {"clients": clients, "error": done.stderr[-300:]}
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return row


def compare(
    loadgen: Path, queries_f32: Path, seconds: float, log: Callable[[str], None] = print
) -> list[dict[str, Any]]:
    """One row per (kind, clients): RPS and latency percentiles from the Go client."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="memoryd-grpc-kinds-") as tmp:
        for name, _, _ in KINDS:
            with serving(name, Path(tmp)) as port:
                for clients in CLIENTS:
                    row: dict[str, Any] = {
                        "server": name,
                        **loadgen_row(loadgen, f"127.0.0.1:{port}", queries_f32, clients, seconds),
                    }
                    log(f"grpc servers: {row}")
                    rows.append(row)
    return rows


if __name__ == "__main__":
    bench = Path(__file__).resolve().parent
    with tempfile.NamedTemporaryFile(suffix=".f32") as f:
        np.random.default_rng(0).standard_normal((64, 384)).astype("<f4").tofile(f.name)
        seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
        for r in compare(bench / ".bin" / "loadgen", Path(f.name), seconds):
            print(json.dumps(r))
