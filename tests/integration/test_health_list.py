"""grpc.health.v1 List on a live daemon (Kubernetes probes use Check; List is the
snapshot grpc-proto added, which grpcio-health-checking leaves UNIMPLEMENTED)."""

from __future__ import annotations

from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.conftest import Daemon


def test_health_list_names_every_service_and_component(daemon_factory: type[Daemon]) -> None:
    d = daemon_factory(env={"MEMORYD_EMBEDDER": "hashing"})
    d.start()
    with d.channel() as channel:
        listed = health_pb2_grpc.HealthStub(channel).List(
            health_pb2.HealthListRequest(), timeout=10
        )
    statuses = {name: r.status for name, r in listed.statuses.items()}
    assert set(statuses) >= {
        "",
        "memoryd.v1.MemoryService",
        "memoryd.v1.SnapshotService",
        "memoryd.v1.LifecycleService",
        "memoryd.component.wal",
        "memoryd.component.store",
    }
    assert set(statuses.values()) == {health_pb2.HealthCheckResponse.SERVING}
