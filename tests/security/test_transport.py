"""Authentication over the real transport: api_key, TLS, mTLS, SIGHUP key reload,
roles, agent lists, limits and quotas — each against a real daemon."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon
from tests.security.support import CertFactory, KeySpec, api_key_config, write_config, write_pem

DaemonFactory = Callable[..., Daemon]
POLL_DEADLINE_S = 30.0

ADMIN = KeySpec("adm-7f3c9e1d2b", "admin", "acme", "*", "restricted", ("read", "write", "admin"))
READER = KeySpec("rdr-0a8b6c4d2e", "reader", "acme", ("a1",), "internal", ("read",))
WRITER = KeySpec("wrt-3d2c1b0a9f", "writer", "acme", ("a1",), "internal", ("read", "write"))
OTHER = KeySpec("oth-5e4d3c2b1a", "other", "globex", "*", "restricted", ("read", "write"))


def code_of(fn: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    try:
        fn()
    except grpc.RpcError as error:
        return error.code(), error.details() or ""  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, ""


def remember(
    stub: mgrpc.MemoryServiceStub, key: KeySpec, agent: str, content: str, level: int = 2
) -> str:
    response = stub.Remember(
        mpb.RememberRequest(agent_id=agent, content=content, security_level=level),
        metadata=key.metadata,
    )
    return response.memory.id


@pytest.fixture
def api_daemon(daemon_factory: DaemonFactory, tmp_path: Path) -> Daemon:
    config = api_key_config(
        [ADMIN, READER, WRITER, OTHER],
        limits={"max_request_bytes": 65536, "max_content_bytes": 4096, "max_batch_size": 5},
        quotas={
            "max_memories_per_partition": 4,
            "tenants": {"globex": {"max_memories_per_partition": 6}},
        },
    )
    d = daemon_factory(config_file=write_config(tmp_path / "memoryd.yaml", config))
    d.start()
    return d


def test_api_key_principals_roles_and_agents(api_daemon: Daemon) -> None:
    with api_daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        request = mpb.ListMemoriesRequest(agent_id="a1")
        assert code_of(lambda: stub.ListMemories(request))[0] == grpc.StatusCode.UNAUTHENTICATED
        bad = (("authorization", "Bearer not-a-key"),)
        code, message = code_of(lambda: stub.ListMemories(request, metadata=bad))
        assert code == grpc.StatusCode.UNAUTHENTICATED and "not-a-key" not in message
        # Health needs no credential.
        health = health_pb2_grpc.HealthStub(channel)
        assert (
            health.Check(health_pb2.HealthCheckRequest()).status
            == health_pb2.HealthCheckResponse.SERVING
        )

        mid = remember(stub, ADMIN, "a1", "acme internal fact", level=2)
        secret = remember(stub, ADMIN, "a1", "acme restricted fact", level=4)
        # The reader: read role only, agent a1 only, clearance INTERNAL.
        seen = stub.ListMemories(request, metadata=READER.metadata).memories
        assert [m.id for m in seen] == [mid]
        code, _ = code_of(
            lambda: stub.GetMemory(
                mpb.GetMemoryRequest(agent_id="a1", id=secret), metadata=READER.metadata
            )
        )
        assert code == grpc.StatusCode.NOT_FOUND
        code, message = code_of(lambda: remember(stub, READER, "a1", "x"))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "'write'" in message
        code, _ = code_of(
            lambda: stub.ListMemories(
                mpb.ListMemoriesRequest(agent_id="a2"), metadata=READER.metadata
            )
        )
        assert code == grpc.StatusCode.PERMISSION_DENIED
        # Same agent name, other tenant: nothing of acme is visible.
        assert stub.ListMemories(request, metadata=OTHER.metadata).memories == []
        code, message = code_of(
            lambda: stub.GetMemory(
                mpb.GetMemoryRequest(agent_id="a1", id=mid), metadata=OTHER.metadata
            )
        )
        code2, message2 = code_of(
            lambda: stub.GetMemory(
                mpb.GetMemoryRequest(agent_id="a1", id="00000000-0000-4000-8000-000000000000"),
                metadata=OTHER.metadata,
            )
        )
        assert code == code2 == grpc.StatusCode.NOT_FOUND
        assert message.replace(mid, "ID") == message2.replace(
            "00000000-0000-4000-8000-000000000000", "ID"
        )
        # Writes above the caller's clearance are denied; at or below it they work.
        code, message = code_of(lambda: remember(stub, WRITER, "a1", "too secret", level=3))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "clearance" in message
        assert remember(stub, WRITER, "a1", "internal is fine", level=2)


def test_limits_and_quotas_name_the_limit(api_daemon: Daemon) -> None:
    with api_daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        big = "x" * 100_000
        code, message = code_of(lambda: remember(stub, ADMIN, "q1", big))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "65536" in message
        code, message = code_of(lambda: remember(stub, ADMIN, "q1", "y" * 5000))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "limits.max_content_bytes" in message
        items = [mpb.RememberRequest(content=f"item {i}") for i in range(6)]
        code, message = code_of(
            lambda: stub.RememberBatch(
                mpb.RememberBatchRequest(agent_id="q1", items=items), metadata=ADMIN.metadata
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "limits.max_batch_size" in message
        for i in range(4):
            remember(stub, ADMIN, "q1", f"quota filler number {i}")
        code, message = code_of(lambda: remember(stub, ADMIN, "q1", "one too many"))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "quotas.max_memories_per_partition (4)" in message
        assert (
            len(
                stub.ListMemories(
                    mpb.ListMemoriesRequest(agent_id="q1"), metadata=ADMIN.metadata
                ).memories
            )
            == 4
        )
        # globex's override allows 6.
        for i in range(6):
            remember(stub, OTHER, "q1", f"globex filler {i}")
        code, message = code_of(lambda: remember(stub, OTHER, "q1", "seventh"))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "(6)" in message


def wait_until(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + POLL_DEADLINE_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        time.sleep(0.05)


def test_sighup_reloads_the_keys_file(daemon_factory: DaemonFactory, tmp_path: Path) -> None:
    keys_file = tmp_path / "keys.json"
    first = KeySpec("first-key-91b2", "first", "acme", "*", "internal", ("read", "write"))
    second = KeySpec("second-key-77c4", "second", "acme", "*", "internal", ("read",))
    keys_file.write_text(json.dumps([first.entry()]))
    # Only SIGHUP here (the audit trail below counts reloads); polling: the next test.
    auth = {"mode": "api_key", "keys_file": str(keys_file), "keys_file_poll_s": 0}
    config = {"embedder": "hashing", "auth": auth}
    d = daemon_factory(config_file=write_config(tmp_path / "memoryd.yaml", config))
    d.start()
    assert d.process is not None
    with d.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)

        def works(key: KeySpec) -> bool:
            code, _ = code_of(
                lambda: stub.ListMemories(
                    mpb.ListMemoriesRequest(agent_id="a"), metadata=key.metadata
                )
            )
            assert code in (grpc.StatusCode.OK, grpc.StatusCode.UNAUTHENTICATED)
            return code == grpc.StatusCode.OK

        assert works(first) and not works(second)
        tmp = keys_file.with_suffix(".tmp")
        tmp.write_text(json.dumps([first.entry(), second.entry()]))
        tmp.replace(keys_file)
        os.kill(d.process.pid, signal.SIGHUP)
        wait_until(lambda: works(second))
        assert works(first)
        tmp.write_text(json.dumps([second.entry()]))
        tmp.replace(keys_file)
        os.kill(d.process.pid, signal.SIGHUP)
        wait_until(lambda: not works(first))
        assert works(second)
        # A broken file keeps the keys in force.
        keys_file.write_text("[{not json")
        os.kill(d.process.pid, signal.SIGHUP)
        wait_until(lambda: "api keys not reloaded" in d.logs())
        assert works(second) and not works(first)
    assert d.stop() == 0
    audit = (d.data_dir / "audit" / "audit.jsonl").read_text()
    reloads = [json.loads(line) for line in audit.splitlines() if "auth.reload_keys" in line]
    assert [r["outcome"] for r in reloads] == ["OK", "OK", "FAILED"]
    for key in (first, second):
        assert key.raw not in audit and key.raw not in d.logs()


def test_a_rotated_keys_file_is_picked_up_without_a_signal(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    """A Kubernetes Secret update swaps the mounted file behind a symlink; the daemon
    notices the new file by itself (auth.keys_file_poll_s) and nobody sends SIGHUP."""
    secret = tmp_path / "secret"
    old_dir, new_dir = secret / "..v1", secret / "..v2"
    old_dir.mkdir(parents=True)
    new_dir.mkdir()
    old = KeySpec("old-key-3a1f", "old", "acme", "*", "internal", ("read", "write"))
    new = KeySpec("new-key-5c9d", "new", "acme", "*", "internal", ("read", "write"))
    (old_dir / "keys.json").write_text(json.dumps([old.entry()]))
    (new_dir / "keys.json").write_text(json.dumps([new.entry()]))
    (secret / "..data").symlink_to(old_dir.name)
    (secret / "keys.json").symlink_to("..data/keys.json")
    auth = {"mode": "api_key", "keys_file": str(secret / "keys.json"), "keys_file_poll_s": 0.2}
    config = {"embedder": "hashing", "auth": auth}
    d = daemon_factory(config_file=write_config(tmp_path / "memoryd.yaml", config))
    d.start()
    with d.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)

        def code(key: KeySpec) -> grpc.StatusCode:
            request = mpb.ListMemoriesRequest(agent_id="a")
            return code_of(lambda: stub.ListMemories(request, metadata=key.metadata))[0]

        assert code(old) == grpc.StatusCode.OK
        assert code(new) == grpc.StatusCode.UNAUTHENTICATED
        # What the kubelet does: a new ..data link, renamed over the old one.
        (secret / "..data_tmp").symlink_to(new_dir.name)
        (secret / "..data_tmp").replace(secret / "..data")
        wait_until(lambda: code(new) == grpc.StatusCode.OK)
        assert code(old) == grpc.StatusCode.UNAUTHENTICATED
    assert d.stop() == 0
    audit = (d.data_dir / "audit" / "audit.jsonl").read_text()
    reloads = [json.loads(line) for line in audit.splitlines() if "auth.reload_keys" in line]
    assert [r["outcome"] for r in reloads] == ["OK"]


# ---------------------------------------------------------------------- TLS / mTLS


@pytest.fixture(scope="module")
def ca() -> CertFactory:
    return CertFactory()


def tls_files(ca: CertFactory, directory: Path) -> dict[str, str]:
    cert, key = write_pem(
        directory, "server", ca.issue("localhost", dns=["localhost"], ips=["127.0.0.1"])
    )
    ca_file = directory / "ca.crt"
    ca_file.write_bytes(ca.ca_pem)
    return {"cert_file": str(cert), "key_file": str(key), "client_ca_file": str(ca_file)}


def secure_channel(
    d: Daemon, ca: CertFactory, client: tuple[bytes, bytes] | None = None
) -> grpc.Channel:
    creds = grpc.ssl_channel_credentials(
        root_certificates=ca.ca_pem,
        private_key=client[1] if client else None,
        certificate_chain=client[0] if client else None,
    )
    return grpc.secure_channel(d.address, creds)


def test_server_only_tls_with_api_keys(
    daemon_factory: DaemonFactory, tmp_path: Path, ca: CertFactory
) -> None:
    tls = tls_files(ca, tmp_path)
    tls.pop("client_ca_file")
    config = api_key_config([ADMIN])
    config["auth"]["tls"] = tls
    d = daemon_factory(config_file=write_config(tmp_path / "memoryd.yaml", config))
    d.start()
    with secure_channel(d, ca) as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        mid = remember(stub, ADMIN, "a1", "over tls")
        got = stub.GetMemory(mpb.GetMemoryRequest(agent_id="a1", id=mid), metadata=ADMIN.metadata)
        assert got.memory.content == "over tls"
    # A plaintext client cannot talk to the TLS port.
    with d.channel() as plain:
        code, _ = code_of(
            lambda: mgrpc.MemoryServiceStub(plain).ListMemories(
                mpb.ListMemoriesRequest(agent_id="a1"), metadata=ADMIN.metadata, timeout=5
            )
        )
        assert code == grpc.StatusCode.UNAVAILABLE


def test_mtls_maps_certificates_to_tenants(
    daemon_factory: DaemonFactory, tmp_path: Path, ca: CertFactory
) -> None:
    config = {
        "embedder": "hashing",
        "auth": {
            "mode": "mtls",
            "tls": tls_files(ca, tmp_path),
            "mtls": {
                "subjects": [
                    {
                        "subject": "client-a",
                        "name": "a",
                        "tenant_id": "tenant-a",
                        "clearance": "restricted",
                    },
                    {
                        "subject": "spiffe://test/client-b",
                        "name": "b",
                        "tenant_id": "tenant-b",
                        "clearance": "restricted",
                    },
                ]
            },
        },
    }
    d = daemon_factory(config_file=write_config(tmp_path / "memoryd.yaml", config))
    d.start()
    a = ca.issue("client-a")
    b = ca.issue("unmapped-cn-b", uris=["spiffe://test/client-b"])
    stranger = ca.issue("stranger")
    with secure_channel(d, ca, (a.cert, a.key)) as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        mid = stub.Remember(mpb.RememberRequest(agent_id="x", content="tenant a secret")).memory.id
        assert [
            m.id for m in stub.ListMemories(mpb.ListMemoriesRequest(agent_id="x")).memories
        ] == [mid]
    with secure_channel(d, ca, (b.cert, b.key)) as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        assert stub.ListMemories(mpb.ListMemoriesRequest(agent_id="x")).memories == []
        code, message = code_of(lambda: stub.GetMemory(mpb.GetMemoryRequest(agent_id="x", id=mid)))
        assert code == grpc.StatusCode.NOT_FOUND and "tenant a secret" not in message
    with secure_channel(d, ca, (stranger.cert, stranger.key)) as channel:
        code, message = code_of(
            lambda: mgrpc.MemoryServiceStub(channel).ListMemories(
                mpb.ListMemoriesRequest(agent_id="x")
            )
        )
        assert code == grpc.StatusCode.UNAUTHENTICATED and "not mapped" in message
    # No client certificate: the handshake itself fails.
    with secure_channel(d, ca) as channel:
        code, _ = code_of(
            lambda: mgrpc.MemoryServiceStub(channel).ListMemories(
                mpb.ListMemoriesRequest(agent_id="x"), timeout=5
            )
        )
        assert code == grpc.StatusCode.UNAVAILABLE
    # A certificate from another CA with a mapped name is rejected too.
    rogue = CertFactory().issue("client-a")
    with secure_channel(d, ca, (rogue.cert, rogue.key)) as channel:
        code, _ = code_of(
            lambda: mgrpc.MemoryServiceStub(channel).ListMemories(
                mpb.ListMemoriesRequest(agent_id="x"), timeout=5
            )
        )
        assert code == grpc.StatusCode.UNAVAILABLE
