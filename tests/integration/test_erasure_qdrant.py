"""Erase on the real Qdrant server with two replicas sharing the collections
(storage.qdrant.shared, docs/erasure.md "Shared Qdrant"): one replica erases a subject,
and afterwards no point of any of the daemon's collections holds it (a scroll of every
point's payload over Qdrant's own API), the other replica reads and exports nothing of
it, no replica's data directory holds a byte of it, and the receipt says what could not be shredded there (no local log, no table
versions: 0)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator

import grpc
import pytest
from qdrant_client import QdrantClient

from memoryd.service.lifecycle.erasure import SHREDDED
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.qdrant_server import QdrantServer

from ..conftest import Daemon, drop_collections, qdrant_daemon_env
from .test_erasure import byte_count, export, seed


def _prefix() -> str:
    return f"e{os.getpid()}_"


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, qdrant_server: QdrantServer
) -> Iterator[tuple[Daemon, Daemon]]:
    root = tmp_path_factory.mktemp("erase-qdrant")
    env = {
        **qdrant_daemon_env(qdrant_server, _prefix(), shared="true"),
        "MEMORYD_MAINTENANCE__ENABLED": "false",
    }
    first = Daemon(data_dir=root / "first", env=env)
    second = Daemon(data_dir=root / "second", env=env)
    try:
        first.start()
        second.start()
        yield first, second
    finally:
        first.kill()
        second.kill()
        drop_collections(qdrant_server, _prefix())


def points_holding(server: QdrantServer, needle: str) -> dict[str, int]:
    """Points of the daemon's collections whose payload holds ``needle``, by collection
    (every point scrolled through Qdrant's REST API)."""
    client = QdrantClient(url=server.url, prefer_grpc=False, check_compatibility=False)
    found: dict[str, int] = {}
    try:
        for collection in client.get_collections().collections:
            if not collection.name.startswith(_prefix()):
                continue
            offset = None
            while True:
                points, offset = client.scroll(
                    collection.name, limit=256, offset=offset, with_payload=True
                )
                hits = sum(needle in json.dumps(p.payload, ensure_ascii=False) for p in points)
                if hits:
                    found[collection.name] = found.get(collection.name, 0) + hits
                if offset is None:
                    break
    finally:
        client.close()
    return found


def test_a_subject_erased_by_one_replica_is_gone_from_every_point(
    replicas: tuple[Daemon, Daemon], qdrant_server: QdrantServer
) -> None:
    first, second = replicas
    marker, agent = f"zqqd{uuid.uuid4().hex[:12]}", f"qd-{uuid.uuid4().hex[:8]}"
    seed(first, agent, marker)
    before = points_holding(qdrant_server, marker)
    assert sum(before.values()) >= 7, before  # memories, key, session, state, profile...
    with second.channel() as channel:
        life = LifecycleServiceStub(channel)
        dry = life.Erase(lpb.EraseRequest(agent_id=agent, subject=marker, dry_run=True))
        assert points_holding(qdrant_server, marker) == before  # a dry run changes nothing
        receipt = life.Erase(lpb.EraseRequest(agent_id=agent, subject=marker))
    places = {p.name: p.count for p in receipt.places}
    assert list(receipt.ids) == list(dry.ids) and len(receipt.ids) == 4  # 3 + the key's mirror
    assert places["records.key"] == 1 and places["records.session"] == 1
    # What Qdrant keeps on its own disk is not the daemon's to shred or to prove.
    assert {place: places[place] for place in SHREDDED} == dict.fromkeys(SHREDDED, 0)
    assert points_holding(qdrant_server, marker) == {}
    with first.channel() as channel:
        memory = MemoryServiceStub(channel)
        with pytest.raises(grpc.RpcError) as gone:
            memory.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=receipt.ids[0]))
        assert gone.value.code() == grpc.StatusCode.NOT_FOUND
    assert marker.encode() not in export(first, agent_id=agent)
    # No replica keeps a local copy (no log, no memory_root in shared mode).
    for replica in replicas:
        assert byte_count(replica.data_dir, marker.encode()) == {}
