"""Shared mode's writes on a real Qdrant server, counted by the server itself.

- What a write costs in Qdrant requests, read from Qdrant's own telemetry (gRPC
  responses by method) around a run of writes through one replica that holds the
  agent's leases (taken once per burst, not per write): a SetMemory four (slot,
  event and counter, one per collection, and the mirror memory), five with
  ``if_version`` (the slot is read); a Remember three (the exact and near duplicate
  lookups, then the upsert); a RememberBatch of 200 a few per batch, not per item
  (its lookups batched, 64 vectors a request, and one upsert).
- Two replicas writing one key at once, plain and with ``if_version``: every
  acknowledged write is in the key's history at the version it was answered with,
  versions are unique and increase along the history and along each client's writes,
  the slot holds the last one, a conditional write replaced exactly the version it
  named, and the key's mirror memory holds the slot's value.
"""

from __future__ import annotations

import json
import threading
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator

import grpc
import pytest
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon, daemon_store_env
from tests.qdrant_server import QdrantServer

SOURCE = pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT, name="shared writes test")
#: Leases held through the whole run: the counts are of the writes, not of the
#: hand-overs a loaded box's pauses would add (lease_linger_s is tested in
#: tests/unit/service/test_partition_lease.py).
HELD = {
    "MEMORYD_STORAGE__QDRANT__LEASE_LINGER_S": "5",
    "MEMORYD_STORAGE__QDRANT__LEASE_TURN_S": "60",
    "MEMORYD_STORAGE__QDRANT__LEASE_TTL_S": "600",
}
COMMON = {
    "MEMORYD_EMBEDDER": "hashing",
    "MEMORYD_MAINTENANCE__ENABLED": "false",
    "MEMORYD_PAGE_TOKEN_SECRET": "w" * 32,
}
WRITES = 12
#: A RememberBatch's items, and the Qdrant requests it may cost (per batch, not per item).
BATCH, BATCH_REQUESTS = 200, 16
#: One lease taken again per phase (a take is three requests): a pause of the loaded
#: CI box longer than lease_linger_s's ceiling (5 s) between two writes gives the
#: lease back. The bounds stay far below the 9 requests per write of before.
RETAKE = 3


def _grpc_requests(server: QdrantServer) -> Counter[str]:
    """Qdrant's count of the gRPC requests it answered, by method
    ("/qdrant.Points/Upsert")."""
    url = f"{server.url}/telemetry?details_level=2"
    with urllib.request.urlopen(url, timeout=10) as r:
        responses = json.loads(r.read())["result"]["requests"]["grpc"]["responses"]
    return Counter(
        {
            method: sum(code["count"] for code in codes.values())
            for method, codes in responses.items()
        }
    )


def _set(
    stub: mgrpc.MemoryServiceStub, agent: str, key: str, value: str, **kw: int
) -> mpb.KeyEntry:
    request = mpb.SetMemoryRequest(
        agent_id=agent, key=key, content=struct_pb2.Value(string_value=value), source=SOURCE, **kw
    )
    return stub.SetMemory(request, timeout=60).entry


@pytest.fixture
def replicas(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> Iterator[tuple[QdrantServer, list[mgrpc.MemoryServiceStub]]]:
    server: QdrantServer = request.getfixturevalue("qdrant_server")
    with daemon_store_env("qdrant-server", request, shared="true") as env:
        daemons = [daemon_factory(env={**COMMON, **HELD, **env}) for _ in range(2)]
        for d in daemons:
            d.start()
        channels = [grpc.insecure_channel(d.address) for d in daemons]
        try:
            yield server, [mgrpc.MemoryServiceStub(c) for c in channels]
        finally:
            for c in channels:
                c.close()
            for d in daemons:
                assert d.stop() == 0


@pytest.mark.slow
def test_a_write_costs_few_qdrant_requests(
    replicas: tuple[QdrantServer, list[mgrpc.MemoryServiceStub]],
) -> None:
    server, (stub, _) = replicas
    _set(stub, "count", "/warm", "takes the keys lease")
    stub.Remember(mpb.RememberRequest(agent_id="count", content="takes the memories lease"))

    before = _grpc_requests(server)
    for i in range(WRITES):  # new keys and rewrites of one
        _set(stub, "count", f"/k{i}" if i % 2 else "/same", f"value {i}")
    plain = _grpc_requests(server) - before
    assert plain.total() <= 4 * WRITES + RETAKE, plain

    before = _grpc_requests(server)
    for i in range(WRITES):
        current = stub.GetKey(mpb.GetKeyRequest(agent_id="count", key="/same")).entry
        _set(stub, "count", "/same", f"checked {i}", if_version=current.version)
    # Less the GetKeys' own reads.
    checked = _grpc_requests(server) - before - Counter({"/qdrant.Points/Get": WRITES})
    assert checked.total() <= 5 * WRITES + RETAKE, checked

    before = _grpc_requests(server)
    for i in range(WRITES):
        stub.Remember(mpb.RememberRequest(agent_id="count", content=f"a note about {i} things"))
    remembered = _grpc_requests(server) - before
    assert remembered.total() <= 3 * WRITES + RETAKE, remembered

    items = [mpb.RememberRequest(content=f"batch note {i}: {i * 7919 % 1000} things") for i in range(BATCH)]  # fmt: skip
    before = _grpc_requests(server)
    stub.RememberBatch(mpb.RememberBatchRequest(agent_id="count", items=items), timeout=120)
    batched = _grpc_requests(server) - before
    # The exact lookup, ceil(200 / 64) = 4 near-duplicate and at most 4 relation
    # lookups, the upsert (and a conditional write's reads when a relation is found).
    assert batched.total() <= BATCH_REQUESTS + RETAKE, batched
    print(f"\nQdrant requests per write: SetMemory {plain}, with if_version {checked}, "
          f"Remember {remembered} (each over {WRITES} writes); RememberBatch of {BATCH}: "
          f"{batched}")  # fmt: skip


@pytest.mark.slow
def test_two_replicas_writing_one_key(
    replicas: tuple[QdrantServer, list[mgrpc.MemoryServiceStub]],
) -> None:
    _, stubs = replicas
    key, agent = "/contended", "one-key"
    acked: list[tuple[int, int, str, int | None, int]] = []  # client, n, value, if_version, version
    refused: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(8)

    def client(c: int) -> None:
        stub = stubs[c % 2]
        start.wait()
        for n in range(15):
            value, if_version = f"c{c} n{n}", None
            try:
                if n % 3 == 0:  # on the version just read, through the other replica
                    other = stubs[(c + 1) % 2]
                    try:
                        got = other.GetKey(mpb.GetKeyRequest(agent_id=agent, key=key), timeout=60)
                        if_version = got.entry.version
                    except grpc.RpcError as exc:
                        assert exc.code() == grpc.StatusCode.NOT_FOUND
                        if_version = 0
                    entry = _set(stub, agent, key, value, if_version=if_version)
                else:
                    entry = _set(stub, agent, key, value)
            except grpc.RpcError as exc:
                with lock:
                    refused[exc.code().name] += 1
                continue
            with lock:
                acked.append((c, n, value, if_version, entry.version))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert set(refused) <= {"FAILED_PRECONDITION"}, refused
    history = [
        (e.version, e.content.string_value)
        for e in stubs[0]
        .KeyHistory(mpb.KeyHistoryRequest(agent_id=agent, key=key, page_size=500))
        .entries
    ]
    versions = [v for v, _ in history]
    assert versions == sorted(set(versions))  # unique, increasing
    assert len(acked) == len(history) and len(acked) > 80
    for _, _, value, if_version, version in acked:
        at = history.index((version, value))  # every acknowledged write, at its version
        if if_version is not None:
            assert (history[at - 1][0] if at else 0) == if_version
    for c in range(8):
        mine = [v for cc, _, _, _, v in sorted(acked, key=lambda w: w[1]) if cc == c]
        assert mine == sorted(mine)
    for stub in stubs:
        slot = stub.GetKey(mpb.GetKeyRequest(agent_id=agent, key=key)).entry
        assert (slot.version, slot.content.string_value) == history[-1]
        mirror = stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=slot.memory_id)).memory
        assert mirror.content == history[-1][1]
