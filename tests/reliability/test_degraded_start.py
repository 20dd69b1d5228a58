"""Degraded, not dead (issue 20, finding 5): a daemon starts when its store cannot
take the log's replay or cannot be reached, serves what it can, refuses writes it
cannot keep, says what is not serving, and catches up in the background.

- Full disk: the data dir is a small tmpfs (mounted here; needs root, else skipped).
  20 acknowledged Remembers wait in the log, the daemon is killed, the disk filled:
  the start replays into ENOSPC (it exited 1 before). It serves: health names the
  store and the log as not serving, the 20 memories read back from the log, a write
  answers UNAVAILABLE with nothing stored; once space is freed the replay finishes by
  itself and writes are taken again.
- Qdrant unreachable: the configured URL is a closed loopback port (the daemon exited
  with a StoreError traceback before). It serves degraded: a Remember is accepted
  into the log and read back from it, a key read answers UNAVAILABLE (never "not
  found") in a clean message; with the Qdrant server from ../shared started on that
  port later, the logged write reaches Qdrant by itself.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests import qdrant_server
from tests.conftest import Daemon
from tests.small_disk import fill, mounted_tmpfs

AGENT = "degraded"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
STORE = "memoryd.component.store"
WAL = "memoryd.component.wal"


@pytest.fixture
def tmpfs_data_dir(tmp_path: Path) -> Iterator[Path]:
    """A 48 MiB tmpfs mounted as the data dir itself (the ready file and the daemon's
    log are written beside it, outside)."""
    with mounted_tmpfs(tmp_path / "data", "48m") as mount:
        yield mount


def _status(channel: grpc.Channel, service: str = "") -> int:
    stub = health_pb2_grpc.HealthStub(channel)
    return int(stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status)


def _wait_status(channel: grpc.Channel, want: int, service: str = "", within_s: float = 60) -> None:
    deadline = time.monotonic() + within_s
    while _status(channel, service) != want:
        assert time.monotonic() < deadline, f"health of {service!r} never became {want}"
        time.sleep(0.1)


def _code(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as exc:
        return exc.code(), exc.details() or ""  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, ""


def test_a_full_disk_start_serves_reads_refuses_writes_and_catches_up(
    tmpfs_data_dir: Path, tmp_path: Path, daemon_factory: Callable[..., Daemon]
) -> None:
    env = {
        "MEMORYD_EMBEDDER": "hashing",
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        "MEMORYD_AUDIT__DIR": str(tmp_path / "audit"),  # this test is about the data disk
        "MEMORYD_DURABILITY__APPLY_DELAY_MS": "10000",  # acknowledged, not yet applied
        "MEMORYD_DURABILITY__STORE_RETRY_MAX_S": "1",
    }
    daemon = daemon_factory(data_dir=tmpfs_data_dir, env=env)
    daemon.start()
    acked = {}
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        for i in range(20):
            r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content=f"kept fact {i}"))
            acked[r.memory.id] = r.memory.content
    daemon.kill()
    filler = tmpfs_data_dir / "filler"
    fill(filler)

    daemon.start()  # replays into a full disk
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        assert _status(channel, STORE) == NOT_SERVING
        _wait_status(channel, NOT_SERVING, WAL)  # the start's probe write failed
        for memory_id, content in acked.items():
            got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=memory_id))
            assert got.memory.content == content
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=AGENT, page_size=100))
        assert {m.id for m in listed.memories} == set(acked)
        code, details = _code(
            lambda: stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="while full"))
        )
        assert code == grpc.StatusCode.UNAVAILABLE and "nothing was stored" in details
        assert "no space left on device" in daemon.logs().lower()

        filler.unlink()
        _wait_status(channel, SERVING, STORE)  # the replay finished in the background
        _wait_status(channel, SERVING)
        r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="after space freed"))
        acked[r.memory.id] = r.memory.content
    daemon.kill()

    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=AGENT, page_size=100))
        assert {m.id: m.content for m in listed.memories} == acked
    daemon.stop()


def _free_port() -> int:
    return qdrant_server.free_port()


def _qdrant_binary() -> Path | None:
    """The Qdrant server binary (tests/qdrant_server.py), or None."""
    try:
        return qdrant_server.locate()
    except qdrant_server.NoQdrant:
        return None


@contextlib.contextmanager
def _qdrant_server(binary: Path, work: Path, http: int, grpc_port: int) -> Iterator[None]:
    server = qdrant_server.QdrantServer(binary, work, http_port=http, grpc_port=grpc_port)
    try:
        server.start()
        yield
    finally:
        server.kill()


def test_an_unreachable_qdrant_at_start_serves_degraded_and_catches_up(
    tmp_path: Path, daemon_factory: Callable[..., Daemon]
) -> None:
    http, grpc_port = _free_port(), _free_port()  # nothing listens there (yet)
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "hashing",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
            "MEMORYD_STORAGE__BACKEND": "qdrant",
            "MEMORYD_STORAGE__QDRANT__URL": f"http://127.0.0.1:{http}",
            "MEMORYD_STORAGE__QDRANT__GRPC_PORT": str(grpc_port),
            "MEMORYD_STORAGE__QDRANT__TIMEOUT_S": "2",
            # One replica keeping its log (shared mode has none: the next test).
            "MEMORYD_STORAGE__QDRANT__SHARED": "false",
            "MEMORYD_DURABILITY__STORE_RETRY_MAX_S": "1",
        }
    )
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        assert _status(channel, STORE) == NOT_SERVING
        assert _status(channel) == SERVING  # writes are safe: they go to the log
        r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="written while down"))
        assert [d.component for d in r.degraded] == ["store"]
        got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=r.memory.id))
        assert got.memory.content == "written while down"
        recalled = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query="written while down"))
        assert r.memory.id in [h.memory.id for h in recalled.results]
        assert "store" in [d.component for d in recalled.degraded]
        code, details = _code(lambda: stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key="/k")))
        assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
        assert "unreachable" in details and "Traceback" not in details and "/" not in details

        binary = _qdrant_binary()
        if binary is None:
            pytest.skip("no Qdrant server binary: see tests/qdrant_server.py (QDRANT_BIN)")
        with _qdrant_server(binary, tmp_path / "qdrant", http, grpc_port):
            _wait_status(channel, SERVING, STORE)  # opened and the log applied
            daemon.kill()
            daemon.start()  # a clean start against the server: the write is there
            with daemon.channel() as again:
                stub = mgrpc.MemoryServiceStub(again)
                got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=r.memory.id))
                assert got.memory.content == "written while down"
                assert _status(again, STORE) == SERVING
            daemon.stop()


def test_a_shared_replica_starting_without_qdrant_refuses_writes_and_opens_it_later(
    tmp_path: Path, daemon_factory: Callable[..., Daemon]
) -> None:
    """Shared mode keeps no log, so nothing can be accepted while Qdrant is away: the
    replica still starts (it exited with a traceback before), says the store is not
    serving, refuses writes cleanly, and opens the store by itself once it answers."""
    binary = _qdrant_binary()
    if binary is None:
        pytest.skip("no Qdrant server binary: see tests/qdrant_server.py (QDRANT_BIN)")
    http, grpc_port = _free_port(), _free_port()
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "hashing",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
            "MEMORYD_STORAGE__BACKEND": "qdrant",
            "MEMORYD_STORAGE__QDRANT__URL": f"http://127.0.0.1:{http}",
            "MEMORYD_STORAGE__QDRANT__GRPC_PORT": str(grpc_port),
            "MEMORYD_STORAGE__QDRANT__TIMEOUT_S": "2",
            "MEMORYD_DURABILITY__STORE_RETRY_MAX_S": "1",
        }
    )
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        assert _status(channel, STORE) == NOT_SERVING
        code, details = _code(
            lambda: stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="too early"))
        )
        assert code == grpc.StatusCode.UNAVAILABLE, (code, details)
        assert "unreachable" in details and "Traceback" not in details
        with _qdrant_server(binary, tmp_path / "qdrant", http, grpc_port):
            _wait_status(channel, SERVING, STORE)  # opened in the background
            r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content="in time"))
            assert not r.degraded
            listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=AGENT, page_size=10))
            assert [m.content for m in listed.memories] == ["in time"]
            daemon.stop()
