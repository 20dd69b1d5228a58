"""The daemon process: health, reflection, unimplemented RPCs, restarts, SIGTERM, sockets."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from memoryd_proto.v1 import lifecycle_service_pb2, memory_service_pb2, snapshot_service_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

SERVICES = ["memoryd.v1.MemoryService", "memoryd.v1.SnapshotService", "memoryd.v1.LifecycleService"]
HASHING = {"MEMORYD_EMBEDDER": "hashing"}


def test_health_reports_each_service(shared_daemon) -> None:  # type: ignore[no-untyped-def]
    with shared_daemon.channel() as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for name in ["", *SERVICES]:
            resp = stub.Check(health_pb2.HealthCheckRequest(service=name))
            assert resp.status == health_pb2.HealthCheckResponse.SERVING, name


def test_client_built_only_from_reflection(shared_daemon) -> None:  # type: ignore[no-untyped-def]
    """No project code: descriptors come from the daemon's reflection service."""
    with shared_daemon.channel() as channel:
        pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
        service = pool.FindServiceByName("memoryd.v1.MemoryService")

        def call(method_name: str, body: dict[str, object]) -> dict[str, object]:
            method = service.methods_by_name[method_name]
            request_cls = message_factory.GetMessageClass(method.input_type)
            response_cls = message_factory.GetMessageClass(method.output_type)
            rpc = channel.unary_unary(
                f"/{service.full_name}/{method.name}",
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=response_cls.FromString,
            )
            response = rpc(json_format.ParseDict(body, request_cls()))
            return json_format.MessageToDict(response, preserving_proto_field_name=True)

        call(
            "Remember", {"agent_id": "reflect", "content": "Reflection clients can store memories"}
        )
        call("Remember", {"agent_id": "reflect", "content": "Bananas are yellow"})
        found = call(
            "Recall",
            {"agent_id": "reflect", "query": "can a reflection client store things?", "limit": 2},
        )
        results = found["results"]
        assert isinstance(results, list)
        assert results[0]["memory"]["content"] == "Reflection clients can store memories"
        assert results[0]["components"]["similarity"] > 0


def test_every_rpc_of_the_contract_is_served(shared_daemon) -> None:  # type: ignore[no-untyped-def]
    """No RPC of the v1 contract answers UNIMPLEMENTED any more: an empty request reaches
    a real handler (which rejects it or answers)."""
    modules = (memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2)
    with shared_daemon.channel() as channel:
        for module in modules:
            for service in module.DESCRIPTOR.services_by_name.values():
                for method in service.methods:
                    request_cls = message_factory.GetMessageClass(method.input_type)
                    path = f"/{service.full_name}/{method.name}"
                    kwargs = {
                        "request_serializer": lambda m: m.SerializeToString(),
                        "response_deserializer": lambda b: b,
                    }
                    try:
                        if method.client_streaming:
                            channel.stream_unary(path, **kwargs)(iter([request_cls()]), timeout=30)
                        elif method.server_streaming:
                            list(channel.unary_stream(path, **kwargs)(request_cls(), timeout=30))
                        else:
                            channel.unary_unary(path, **kwargs)(request_cls(), timeout=30)
                    except grpc.RpcError as err:
                        assert err.code() != grpc.StatusCode.UNIMPLEMENTED, (
                            f"{path}: {err.details()}"
                        )


def test_memories_survive_a_restart_and_sigterm_exits_zero(daemon_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data_dir = tmp_path / "persist"
    first = daemon_factory(data_dir=data_dir, env=HASHING)
    first.start()
    with first.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        ids = [
            r.memory.id
            for r in stub.RememberBatch(
                mpb.RememberBatchRequest(
                    agent_id="p",
                    items=[mpb.RememberRequest(content=f"persistent fact {i}") for i in range(10)],
                )
            ).results
        ]
        stub.Recall(
            mpb.RecallRequest(agent_id="p", query="persistent fact 3")
        )  # buffered access stats
    assert first.stop() == 0

    second = daemon_factory(data_dir=data_dir, env=HASHING)
    second.start()
    with second.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id="p", page_size=100)).memories
        assert sorted(m.id for m in listed) == sorted(ids)
        # The access statistics buffered before SIGTERM were flushed on shutdown.
        assert sum(m.access_count for m in listed) >= 1
    assert second.stop() == 0


def test_second_daemon_on_the_same_data_dir_is_refused(daemon_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data_dir = tmp_path / "locked"
    daemon_factory(data_dir=data_dir, env=HASHING).start()
    with pytest.raises(RuntimeError, match="another memoryd is using"):
        daemon_factory(data_dir=data_dir, env=HASHING).start()


def test_unix_socket_listener_replaces_stale_socket(daemon_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sock_path = tmp_path / "run" / "memoryd.sock"
    sock_path.parent.mkdir()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock_path))
    stale.close()  # leaves a socket file nobody listens on
    d = daemon_factory(env=HASHING, listen=f"unix:{sock_path}")
    assert d.start() == f"unix:{sock_path}"
    assert stat.S_IMODE(os.stat(sock_path).st_mode) == 0o660
    with d.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        stub.Remember(mpb.RememberRequest(agent_id="s", content="over a unix socket"))
        assert stub.Recall(mpb.RecallRequest(agent_id="s", query="unix socket")).results
    assert d.stop() == 0
    assert not sock_path.exists()


def test_the_hot_cache_budget_is_logged_and_configurable(daemon_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Without a setting it follows the container's memory limit (storage/budget.py);
    a setting wins. Either way the start-up log says which."""
    env = {**HASHING, "MEMORYD_STORAGE__HOT_CACHE__MEMORY_BUDGET_MB": "77"}
    d = daemon_factory(env=env)
    d.start()
    assert d.stop() == 0
    [event] = [json.loads(line) for line in d.logs().splitlines() if "hot cache budget" in line]
    assert event["mb"] == 77 and event["configured"] is True


def test_the_daemon_warns_about_unknown_variables(tmp_path: Path) -> None:
    """`memoryd serve` logs the typo, then fails on the bad listen address (no start)."""
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "serve", "--listen", "256.0.0.1:x", "--data-dir",
         str(tmp_path / "data")],
        env={**os.environ, "MEMORYD_STORAGE__BACKEN": "qdrant", "MEMORYD_LOGGING__FORMAT": "json"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    warnings = [
        json.loads(line)
        for line in (done.stdout + done.stderr).splitlines()
        if line.startswith("{") and "unknown setting" in line
    ]
    assert [w["variable"] for w in warnings] == ["MEMORYD_STORAGE__BACKEN"]
