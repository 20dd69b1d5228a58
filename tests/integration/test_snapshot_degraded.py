"""BuildSnapshot says when it was served degraded (issue 20, finding 6): with the
embedding provider down, the semantic section's query is embedded in the hashing
fallback space, and the response names the embedder (it answered ``degraded: []``)."""

from __future__ import annotations

from collections.abc import Callable

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub
from tests.conftest import Daemon
from tests.reliability.test_embedder_outage import DIM, MODEL, Provider, provider

__all__ = ["provider"]  # the fixture, shared with the outage test

AGENT = "snap-degraded"


def test_a_snapshot_built_on_the_fallback_embedder_says_so(
    provider: Provider, daemon_factory: Callable[..., Daemon]
) -> None:
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "openai",
            "MEMORYD_EMBEDDING__OPENAI_URL": f"http://127.0.0.1:{provider.server_port}/v1",
            "MEMORYD_EMBEDDING__OPENAI_MODEL": MODEL,
            "MEMORYD_EMBEDDING__OPENAI_DIMENSION": str(DIM),
            "MEMORYD_EMBEDDING__OPENAI_TIMEOUT_S": "1",
            "MEMORYD_EMBEDDING__CACHE_SIZE": "0",
            "MEMORYD_RESILIENCE__EMBEDDER_TIMEOUT_S": "1",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
        }
    )
    daemon.start()
    with daemon.channel() as channel:
        memory = MemoryServiceStub(channel)
        snapshots = SnapshotServiceStub(channel)
        memory.Remember(mpb.RememberRequest(agent_id=AGENT, content="The dentist is on Monday."))
        request = spb.BuildSnapshotRequest(agent_id=AGENT, trigger="when is the dentist?")
        healthy = snapshots.BuildSnapshot(request, timeout=30)
        assert list(healthy.degraded) == []

        provider.mode = "fail"
        degraded = snapshots.BuildSnapshot(request, timeout=30)
        assert "embedder" in {d.component for d in degraded.degraded}, degraded.degraded
        assert degraded.text  # still served
