"""The grpc.aio server: memoryd's services, health per service, reflection, listeners."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from memoryd.api.auth import Authenticator
from memoryd.api.interceptors import CallInterceptor
from memoryd.api.memory_servicer import MemoryServicer
from memoryd.api.snapshot_lifecycle_servicers import LifecycleServicer, SnapshotServicer
from memoryd.service.memory import MemoryService
from memoryd_proto.v1 import lifecycle_service_pb2, memory_service_pb2, snapshot_service_pb2
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc

SERVICE_NAMES = (
    memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"].full_name,
    snapshot_service_pb2.DESCRIPTOR.services_by_name["SnapshotService"].full_name,
    lifecycle_service_pb2.DESCRIPTOR.services_by_name["LifecycleService"].full_name,
)
UNIX_PREFIX = "unix:"


class ListenError(RuntimeError):
    pass


@dataclass(slots=True)
class GrpcServer:
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    address: str
    unix_path: Path | None

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, status)

    async def stop(self, grace_s: float) -> None:
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


async def start_server(
    *, listen: str, service: MemoryService, authenticator: Authenticator, max_message_bytes: int
) -> GrpcServer:
    server = grpc.aio.server(
        interceptors=[CallInterceptor(authenticator)],
        options=[
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.so_reuseport", 0),
        ],
    )
    mgrpc.add_MemoryServiceServicer_to_server(MemoryServicer(service), server)  # type: ignore[no-untyped-call]
    sgrpc.add_SnapshotServiceServicer_to_server(SnapshotServicer(), server)  # type: ignore[no-untyped-call]
    lgrpc.add_LifecycleServiceServicer_to_server(LifecycleServicer(), server)  # type: ignore[no-untyped-call]
    health_servicer = health.aio.HealthServicer()
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
        server.add_insecure_port(f"unix:{unix_path}")
        address = f"unix:{unix_path}"
    else:
        try:
            port = server.add_insecure_port(listen)
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
    await grpc_server.set_serving(False)
    return grpc_server
