"""Qdrant's gRPC port is configured or derived, never a silent default (issue 30, item 9).

Against the real Qdrant server (tests/qdrant_server.py) on free ports, neither of them
Qdrant's defaults. Port 6334 is held by a silent listener of this test when it is free
(it counts the connections it gets), or by whatever else holds it on this machine:

- ``storage.qdrant.url`` alone on a custom port: the daemon talks REST to that URL and
  logs why it cannot derive a gRPC port; its writes land in that server and nothing
  ever connects to 6334 (the daemon used to open gRPC there: on a shared machine
  somebody else's Qdrant);
- ``grpc_port`` set: gRPC to that port, the writes land in the same server;
- ``grpc_port`` naming a port where something other than Qdrant listens: the open
  fails, health says the store is NOT_SERVING, the start's "serving" line is a
  warning naming the degraded store, and the failure is logged with the endpoint.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import time
from collections.abc import Callable, Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from qdrant_client import QdrantClient

from memoryd.storage.settings import QDRANT_GRPC_PORT
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon, drop_collections
from tests.qdrant_server import QdrantServer

AGENT = "endpoints"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
STORE = "memoryd.component.store"


class SilentListener:
    """A TCP port that accepts connections and never answers (not a Qdrant)."""

    def __init__(self, port: int = 0) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.sock.setblocking(False)
        self.port: int = self.sock.getsockname()[1]
        self._accepted: list[socket.socket] = []

    def connections(self) -> int:
        """Connections made to it so far (accepted and kept open, unanswered)."""
        while select.select([self.sock], [], [], 0)[0]:
            with contextlib.suppress(BlockingIOError):
                self._accepted.append(self.sock.accept()[0])
        return len(self._accepted)

    def close(self) -> None:
        for conn in self._accepted:
            conn.close()
        self.sock.close()


@pytest.fixture
def default_grpc_port() -> Iterator[SilentListener | None]:
    """A silent listener on Qdrant's default gRPC port; None when something else holds it."""
    try:
        listener = SilentListener(QDRANT_GRPC_PORT)
    except OSError:
        yield None
        return
    try:
        yield listener
    finally:
        listener.close()


@pytest.fixture
def prefix(qdrant_server: QdrantServer) -> Iterator[str]:
    name = f"ep{os.getpid()}_{time.monotonic_ns() % 10**9}_"
    yield name
    drop_collections(qdrant_server, name)


def _env(server: QdrantServer, prefix: str, **qdrant: str) -> dict[str, str | None]:
    env: dict[str, str | None] = {
        "MEMORYD_EMBEDDER": "hashing",
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        "MEMORYD_STORAGE__BACKEND": "qdrant",
        "MEMORYD_STORAGE__QDRANT__URL": server.url,
        "MEMORYD_STORAGE__QDRANT__GRPC_PORT": None,
        "MEMORYD_STORAGE__QDRANT__COLLECTION_PREFIX": prefix,
        "MEMORYD_STORAGE__QDRANT__TIMEOUT_S": "2",
        "MEMORYD_DURABILITY__STORE_RETRY_MAX_S": "1",
    }
    env.update({f"MEMORYD_STORAGE__QDRANT__{k.upper()}": v for k, v in qdrant.items()})
    return env


def _status(channel: grpc.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status)


def _log_events(daemon: Daemon, event: str) -> list[dict[str, object]]:
    found = []
    for line in daemon.logs().splitlines():
        if line.startswith("{"):
            doc = json.loads(line)
            if doc.get("event") == event:
                found.append(doc)
    return found


def _points_in(server: QdrantServer, prefix: str) -> int:
    client = QdrantClient(url=server.url, prefer_grpc=False, check_compatibility=False)
    try:
        return client.count(f"{prefix}memories", exact=True).count
    finally:
        client.close()


def _remember_lands_in(daemon: Daemon, server: QdrantServer, prefix: str) -> None:
    with daemon.channel() as channel:
        assert _status(channel) == SERVING and _status(channel, STORE) == SERVING
        stub = mgrpc.MemoryServiceStub(channel)
        r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="kept in my Qdrant"))
        assert not r.degraded
    assert _points_in(server, prefix) == 1  # in this server, not in one on 6334
    (serving,) = _log_events(daemon, "serving")
    assert serving["level"] == "info" and serving["degraded"] is None


def test_a_url_on_a_custom_port_talks_rest_to_it_never_to_6334(
    qdrant_server: QdrantServer,
    prefix: str,
    default_grpc_port: SilentListener | None,
    daemon_factory: Callable[..., Daemon],
) -> None:
    assert qdrant_server.grpc_port != QDRANT_GRPC_PORT
    daemon = daemon_factory(env=_env(qdrant_server, prefix))
    daemon.start()
    _remember_lands_in(daemon, qdrant_server, prefix)
    (chosen,) = _log_events(daemon, "qdrant server")
    assert chosen["level"] == "warning" and chosen["talks"] == "REST to the url"
    assert "storage.qdrant.grpc_port" in str(chosen["because"])
    if default_grpc_port is not None:
        assert default_grpc_port.connections() == 0, "the daemon connected to 6334"
    daemon.stop()


def test_an_explicit_grpc_port_is_used(
    qdrant_server: QdrantServer,
    prefix: str,
    default_grpc_port: SilentListener | None,
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(env=_env(qdrant_server, prefix, grpc_port=str(qdrant_server.grpc_port)))
    daemon.start()
    _remember_lands_in(daemon, qdrant_server, prefix)
    (chosen,) = _log_events(daemon, "qdrant server")
    assert chosen["talks"] == f"gRPC on port {qdrant_server.grpc_port}"
    if default_grpc_port is not None:
        assert default_grpc_port.connections() == 0, "the daemon connected to 6334"
    daemon.stop()


def test_a_grpc_port_where_no_qdrant_answers_is_a_failed_open_in_health_and_the_log(
    qdrant_server: QdrantServer, prefix: str, daemon_factory: Callable[..., Daemon]
) -> None:
    impostor = SilentListener()
    try:
        daemon = daemon_factory(env=_env(qdrant_server, prefix, grpc_port=str(impostor.port)))
        daemon.start()
        with daemon.channel() as channel:
            assert _status(channel, STORE) == NOT_SERVING
            stub = mgrpc.MemoryServiceStub(channel)
            with pytest.raises(grpc.RpcError) as refused:  # shared mode: no log to keep it
                stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="nowhere to go"))
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert impostor.connections() > 0  # it tried the configured port, and only that
        (serving,) = _log_events(daemon, "serving")
        assert serving["level"] == "warning"
        degraded = serving["degraded"]
        assert isinstance(degraded, dict) and "store" in degraded, serving
        failures = [
            e
            for e in _log_events(daemon, "store call failed")
            if e.get("op") == "open" and f"gRPC port {impostor.port}" in str(e.get("where"))
        ]
        assert failures, daemon.logs()
        assert _log_events(daemon, "the store did not open; starting without it")
        daemon.stop()
    finally:
        impostor.close()
