"""The grpc.aio server: memoryd's services, health per service, reflection, listeners."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from memoryd.api.health import HealthServicer
from memoryd.api.memory_rpcs import MEMORY_RPCS
from memoryd.api.rpc import Rpcs
from memoryd.api.snapshot_lifecycle_rpcs import LIFECYCLE_RPCS, SNAPSHOT_RPCS
from memoryd.operations import Door
from memoryd.resilience.degradation import ComponentState, ComponentStates
from memoryd_proto.v1 import lifecycle_service_pb2, memory_service_pb2, snapshot_service_pb2

SERVICE_NAMES = (
    memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"].full_name,
    snapshot_service_pb2.DESCRIPTOR.services_by_name["SnapshotService"].full_name,
    lifecycle_service_pb2.DESCRIPTOR.services_by_name["LifecycleService"].full_name,
)
UNIX_PREFIX = "unix:"
#: Health service name of each dependency: "memoryd.component.store", ...embedder, ...wal.
COMPONENT_PREFIX = "memoryd.component."


class ListenError(RuntimeError):
    """The gRPC listener cannot be opened (address in use, a live socket, not a socket)."""

    pass


@dataclass(slots=True)
class GrpcServer:
    """The running gRPC server: its address, health service and the components it reports."""

    server: grpc.aio.Server
    health: HealthServicer
    address: str
    unix_path: Path | None
    #: Dependencies' states once ``watch`` was called (resilience/degradation.py).
    states: ComponentStates | None = None
    up: bool = False
    _publishing: set[asyncio.Task[None]] = field(default_factory=set)

    async def set_serving(self, serving: bool) -> None:
        """Overall and per-service status: SERVING only while ``serving`` and no
        critical component (the write-ahead log) is impaired."""
        self.up = serving
        ok = serving and (self.states is None or self.states.serving)
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if ok
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, status)

    def watch(self, states: ComponentStates) -> None:
        """Report each component as health service ``memoryd.component.<name>``."""
        self.states = states
        states.listen(self._component_changed)

    def _component_changed(self, state: ComponentState) -> None:
        task = asyncio.get_running_loop().create_task(self._publish(state))
        self._publishing.add(task)
        task.add_done_callback(self._publishing.discard)

    async def _publish(self, state: ComponentState) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if state.ok
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self.health.set(COMPONENT_PREFIX + state.name, status)
        if self.up:
            await self.set_serving(True)

    async def stop(self, grace_s: float) -> None:
        """Stop: health says NOT_SERVING, calls in flight get ``grace_s``, the socket file goes."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace_s)
        if self.unix_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.unix_path.unlink()


def _unix_socket_path(listen: str) -> Path | None:
    if not listen.startswith(UNIX_PREFIX):
        return None
    return Path(listen[len(UNIX_PREFIX) :].removeprefix("//")).absolute()


def _prepare_unix_socket(path: Path) -> None:
    """Remove a stale socket file; refuse to steal a live one or clobber a non-socket."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    if not stat.S_ISSOCK(mode):
        raise ListenError(f"{path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # stale: nobody is listening
        return
    finally:
        probe.close()
    raise ListenError(f"another process is listening on {path}")


def _add_port(
    server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None
) -> int:
    if credentials is None:
        return server.add_insecure_port(address)
    return server.add_secure_port(address, credentials)


async def start_server(
    *,
    listen: str,
    door: Door,
    max_message_bytes: int,
    credentials: grpc.ServerCredentials | None = None,
    states: ComponentStates | None = None,
) -> GrpcServer:
    """Serve memoryd's services through ``door`` on ``listen``; with ``credentials``
    the port speaks TLS (or mTLS)."""
    server = grpc.aio.server(
        options=[
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.so_reuseport", 0),
        ],
    )
    rpcs = Rpcs(door)
    for module, name, bindings in (
        (memory_service_pb2, "MemoryService", MEMORY_RPCS),
        (snapshot_service_pb2, "SnapshotService", SNAPSHOT_RPCS),
        (lifecycle_service_pb2, "LifecycleService", LIFECYCLE_RPCS),
    ):
        service = module.DESCRIPTOR.services_by_name[name]
        handlers = rpcs.handlers(service, bindings)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service.full_name, handlers),)
        )
        server.add_registered_method_handlers(service.full_name, handlers)
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (
            *SERVICE_NAMES,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )

    unix_path = _unix_socket_path(listen)
    if unix_path is not None:
        _prepare_unix_socket(unix_path)
        _add_port(server, f"unix:{unix_path}", credentials)
        address = f"unix:{unix_path}"
    else:
        try:
            port = _add_port(server, listen, credentials)
        except RuntimeError as exc:
            raise ListenError(f"cannot listen on {listen}: {exc}") from exc
        host = listen.rsplit(":", 1)[0]
        address = f"{host}:{port}"
    await server.start()
    if unix_path is not None:
        os.chmod(unix_path, 0o660)
    grpc_server = GrpcServer(
        server=server, health=health_servicer, address=address, unix_path=unix_path
    )
    if states is not None:
        grpc_server.watch(states)
    await grpc_server.set_serving(False)
    return grpc_server
