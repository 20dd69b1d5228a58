"""The log's disk fills up: writes are UNAVAILABLE (never silently dropped), health
is NOT_SERVING, nothing acknowledged is lost, and freeing space restores service.

The write-ahead log lives on a small tmpfs (mounted here; needs root, else skipped).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon
from tests.small_disk import fill, mounted_tmpfs

AGENT = "diskfull"


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "walfs", "2m") as mount:
        yield mount


def _status(channel: grpc.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status)


def _wait_status(channel: grpc.Channel, want: int, service: str = "") -> None:
    deadline = time.monotonic() + 30
    while _status(channel, service) != want:
        assert time.monotonic() < deadline, f"health of {service!r} never became {want}"
        time.sleep(0.05)


def test_full_log_disk_refuses_writes_and_recovers(
    small_fs: Path, daemon_factory: Callable[..., Daemon]
) -> None:
    wal_dir = small_fs / "wal"
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "hashing",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
            "MEMORYD_DURABILITY__WAL_DIR": str(wal_dir),
        }
    )
    daemon.start()
    serving = health_pb2.HealthCheckResponse.SERVING
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        acked = {}
        for i in range(20):
            r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content=f"before full {i}"))
            acked[r.memory.id] = r.memory.content
        assert _status(channel) == serving

        filler = small_fs / "filler"
        fill(filler)
        with pytest.raises(grpc.RpcError) as err:
            stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="while full " + "x" * 4000))
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "write-ahead log unusable" in (err.value.details() or "")
        assert "nothing was stored" in (err.value.details() or "")
        _wait_status(channel, not_serving)
        assert _status(channel, "memoryd.component.wal") == not_serving
        # Reads still work; the refused write is not there.
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=AGENT, page_size=100))
        assert sorted(m.id for m in listed.memories) == sorted(acked)

        os.unlink(filler)
        _wait_status(channel, serving)  # the log's probe write succeeded
        r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="after space freed"))
        acked[r.memory.id] = r.memory.content
    daemon.kill()  # no clean shutdown: everything must come from the log or the store

    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=AGENT, page_size=100))
        assert {m.id: m.content for m in listed.memories} == acked
    daemon.stop()
