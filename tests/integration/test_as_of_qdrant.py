"""As-of reads on the real Qdrant server (docs/as-of.md, "Shared mode"): a daemon that
owns its collections keeps the memory history and reads as of an earlier instant;
replicas sharing the collections answer UNIMPLEMENTED saying why (each would see only
its own writes), while their ordinary reads go on."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
from google.protobuf import timestamp_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from tests.qdrant_server import QdrantServer
from tests.security.support import api_key_config, write_config

from ..conftest import Daemon, drop_collections, qdrant_daemon_env
from .test_watch import A_ADMIN, fresh_agent, remember, stub


def _daemon(root: Path, name: str, server: QdrantServer, shared: str) -> Daemon:
    config = write_config(
        root / f"{name}.yaml", api_key_config([A_ADMIN], maintenance={"enabled": False})
    )
    env = qdrant_daemon_env(server, f"a{os.getpid()}_{name}_", shared=shared)
    return Daemon(data_dir=root / name, env=env, config_file=config)


@pytest.fixture(scope="module")
def daemons(
    tmp_path_factory: pytest.TempPathFactory, qdrant_server: QdrantServer
) -> Iterator[tuple[Daemon, Daemon]]:
    root = tmp_path_factory.mktemp("as-of-qdrant")
    owner = _daemon(root, "owner", qdrant_server, "false")
    replica = _daemon(root, "replica", qdrant_server, "true")
    try:
        owner.start()
        replica.start()
        yield owner, replica
    finally:
        owner.kill()
        replica.kill()
        for name in ("owner", "replica"):
            drop_collections(qdrant_server, f"a{os.getpid()}_{name}_")


def _recall(daemon: Daemon, agent: str, when: datetime | None) -> list[str]:
    request = mpb.RecallRequest(agent_id=agent, query="tea", limit=5)
    if when is not None:
        stamp = timestamp_pb2.Timestamp()
        stamp.FromDatetime(when)
        request.as_of.CopyFrom(pb.AsOf(time=stamp))
    channel, memory = stub(daemon)
    with channel:
        found = memory.Recall(request, metadata=A_ADMIN.metadata).results
        return sorted(r.memory.content for r in found)


def test_a_daemon_owning_its_collections_reads_as_of(daemons: tuple[Daemon, Daemon]) -> None:
    owner, _ = daemons
    agent = fresh_agent()
    remember(owner, agent, "The user drinks green tea")
    time.sleep(0.01)
    instant = datetime.now(UTC)
    time.sleep(0.01)
    remember(owner, agent, "The user drinks black tea")
    assert _recall(owner, agent, instant) == ["The user drinks green tea"]
    assert len(_recall(owner, agent, None)) == 2


def test_shared_replicas_say_as_of_is_not_offered(daemons: tuple[Daemon, Daemon]) -> None:
    _, replica = daemons
    agent = fresh_agent()
    remember(replica, agent, "The user drinks green tea")
    with pytest.raises(grpc.RpcError) as err:
        _recall(replica, agent, datetime.now(UTC))
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "share the store" in (err.value.details() or "")
    assert _recall(replica, agent, None) == ["The user drinks green tea"]
