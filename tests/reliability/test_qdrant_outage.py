"""A real Qdrant server goes away under a daemon and comes back (same ports, same
storage): a single replica keeps accepting memory writes into its log (a key write
too: it keeps the slots it wrote, so it needs no store read) and applies them when
the server returns; a shared replica refuses them (an acknowledgement means Qdrant
has the write) and takes them again once the server is back."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon, qdrant_daemon_env
from tests.qdrant_server import NoQdrant, QdrantServer, locate, start_server

AGENT = "outage"
SOURCE = pb.Provenance(kind=pb.PROVENANCE_KIND_USER, name="outage test")
NO_SCHEDULE = {"MEMORYD_EMBEDDER": "hashing", "MEMORYD_MAINTENANCE__ENABLED": "false"}


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[QdrantServer]:
    """A Qdrant server of this test alone (it is killed and restarted)."""
    try:
        binary = locate()
    except NoQdrant as exc:
        pytest.skip(str(exc))
    server = start_server(binary, tmp_path / "qdrant")
    try:
        yield server
    finally:
        server.kill()


def _restart(server: QdrantServer) -> None:
    """Start the killed server again on its ports and storage."""
    server.start()


def _degraded(response: mpb.RememberResponse | mpb.SetMemoryResponse) -> set[str]:
    return {d.component for d in response.degraded}


def _until(cond: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def test_a_single_replica_logs_writes_while_qdrant_is_down(
    daemon_factory: Callable[..., Daemon], own_server: QdrantServer
) -> None:
    env = {
        **NO_SCHEDULE,
        **qdrant_daemon_env(own_server, "outage_", timeout_s="2", shared="false"),
    }
    daemon = daemon_factory(env=env)
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        before = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="before the outage"))
        assert not _degraded(before)
        stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key="/k",
                content=struct_pb2.Value(string_value="first"),
                source=SOURCE,
            )
        )

        own_server.kill()
        during = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="during the outage"))
        assert "store" in _degraded(during)
        # A key write needs the key's slot, which this single replica (the store's only
        # writer) keeps since it wrote the key: it needs no store read, so it is taken
        # into the log like any other write and acknowledged with the next version
        # (docs/qdrant-and-replicas.md: "keeps the log and buffers writes through an
        # outage, as on LanceDB"); it must survive the outage (checked below).
        key_write = stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key="/k",
                content=struct_pb2.Value(string_value="during the outage"),
                source=SOURCE,
            )
        ).entry
        assert key_write.version == 2 and key_write.content.string_value == "during the outage"
        read_back = stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/k")).entry
        assert (read_back.version, read_back.content.string_value) == (2, "during the outage")
        # The daemon's own log answers for what the store has not got yet.
        got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=during.memory.id))
        assert got.memory.content == "during the outage"

        _restart(own_server)

        health = health_pb2_grpc.HealthStub(channel)

        def store_serving() -> bool:
            request = health_pb2.HealthCheckRequest(service="memoryd.component.store")
            status = health.Check(request).status
            return bool(status == health_pb2.HealthCheckResponse.SERVING)

        _until(store_serving)  # the logged writes are applied
    assert daemon.stop() == 0
    # A new daemon with an empty log reads everything from the server.
    fresh = daemon_factory(env=env)
    fresh.start()
    with fresh.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        for memory in (before.memory, during.memory):
            got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=memory.id))
            assert got.memory.content == memory.content
        # The key write acknowledged during the outage was applied, over version 1.
        key = stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/k")).entry
        assert (key.version, key.content.string_value) == (2, "during the outage")
    assert fresh.stop() == 0


def test_shared_replicas_refuse_writes_while_qdrant_is_down(
    daemon_factory: Callable[..., Daemon], own_server: QdrantServer
) -> None:
    """Shared mode: an acknowledgement means Qdrant has the write. While it is down a
    write is UNAVAILABLE (nothing buffered on the replica's disk), reads say they are
    degraded, and once it is back the same daemon takes writes again."""
    env = {
        **NO_SCHEDULE,
        **qdrant_daemon_env(own_server, "shared_", timeout_s="2", shared="true"),
        "MEMORYD_PAGE_TOKEN_SECRET": "s" * 32,
    }
    daemon = daemon_factory(env=env)
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        before = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="before the outage"))

        own_server.kill()
        with pytest.raises(grpc.RpcError) as refused:
            stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="during the outage"))
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        with pytest.raises(grpc.RpcError) as refused_key:
            stub.SetMemory(
                mpb.SetMemoryRequest(
                    agent_id=AGENT,
                    key="/k",
                    content=struct_pb2.Value(string_value="refused"),
                    source=SOURCE,
                )
            )
        assert refused_key.value.code() == grpc.StatusCode.UNAVAILABLE
        recalled = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query="outage"))
        assert "store" in {d.component for d in recalled.degraded}
        request = health_pb2.HealthCheckRequest(service="memoryd.component.store")
        assert health.Check(request).status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert not (daemon.data_dir / "wal").exists()  # nothing was logged locally

        _restart(own_server)

        def writes_again() -> bool:
            try:
                stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="after the outage"))
            except grpc.RpcError:
                return False
            return True

        _until(writes_again)
        _until(lambda: health.Check(request).status == health_pb2.HealthCheckResponse.SERVING)
        got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=before.memory.id))
        assert got.memory.content == "before the outage"
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=AGENT, page_size=10))
        assert sorted(m.content for m in listed.memories) == [
            "after the outage",
            "before the outage",
        ]
    assert daemon.stop() == 0
