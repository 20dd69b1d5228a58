"""Three memoryd replicas over one real Qdrant server, eight clients each, writing five
keys (SetMemory with and without if_version), one working-memory scope (merges) and
one session (appends) through replicas chosen at random: the stored histories agree
with every answer a client got (see replica_history.py). With the replicas' shared
mode off (each one's own locks and version counter, as before issue 25) the same
load breaks them: the check can fail.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator

import grpc
import pytest
from google.protobuf import struct_pb2

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc
from tests.conftest import Daemon, daemon_store_env
from tests.reliability import replica_history

REPLICAS, CLIENTS_PER_REPLICA, OPS_PER_CLIENT = 3, 8, 30


_ADDRESSES: dict[int, str] = {}


def _address(stub: mgrpc.MemoryServiceStub) -> str:
    return _ADDRESSES[id(stub)]


def _replicas(
    daemon_factory: Callable[..., Daemon], env: dict[str, str | None]
) -> Iterator[list[mgrpc.MemoryServiceStub]]:
    common = {
        "MEMORYD_EMBEDDER": "hashing",
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        "MEMORYD_PAGE_TOKEN_SECRET": "h" * 32,
        **env,
    }
    daemons = [daemon_factory(env=common) for _ in range(REPLICAS)]
    for d in daemons:
        d.start()
    channels = [grpc.insecure_channel(d.address) for d in daemons]
    stubs = [mgrpc.MemoryServiceStub(c) for c in channels]
    _ADDRESSES.update({id(s): d.address for s, d in zip(stubs, daemons, strict=True)})
    try:
        yield stubs
    finally:
        for c in channels:
            c.close()
        for d in daemons:
            assert d.stop() == 0


@pytest.mark.slow
def test_replicas_keep_every_guarantee_of_one_process(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    with daemon_store_env("qdrant-server", request, shared="true") as env:
        for stubs in _replicas(daemon_factory, env):
            ledger = replica_history.run(stubs, REPLICAS * CLIENTS_PER_REPLICA, OPS_PER_CLIENT)
            findings = replica_history.check(stubs[0], ledger)
    print(
        f"\nhistory check: {findings.acknowledged_versions} SetMemory acknowledged, "
        f"{len(ledger.merges)} merges, {len(ledger.appended)} messages; refused "
        f"{dict(ledger.refused)}"
    )
    assert ledger.unexpected == []
    assert findings.violations == {}
    assert findings.acknowledged_versions > 100 and ledger.merges and ledger.appended


@pytest.mark.slow
def test_the_check_fails_when_each_replica_trusts_its_own_locks(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    """Shared mode off: per-process locks and counters, as every replica had before.
    The check must find what the issue measured (duplicate versions, lost updates)."""
    with daemon_store_env("qdrant-server", request, shared="false") as env:
        for stubs in _replicas(daemon_factory, env):
            ledger = replica_history.run(stubs, REPLICAS * CLIENTS_PER_REPLICA, OPS_PER_CLIENT)
            findings = replica_history.check(stubs[0], ledger)
    print(f"\nwithout shared mode: {findings.violations}")
    assert findings.duplicate_versions


def _remember_everywhere(
    stubs: list[mgrpc.MemoryServiceStub], agent: str, texts: list[str], threads: int
) -> tuple[list[str], Counter[str]]:
    """Every text remembered by ``threads`` clients at once, each through a random
    replica (``{client}`` in a text becomes the client's number); returns the ids
    answered and the refusals by status."""
    ids: list[str] = []
    refused: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def client(seed: int) -> None:
        rng = random.Random(seed)
        start.wait()
        for template in texts:
            stub = rng.choice(stubs)
            text = template.format(client=seed)
            try:
                r = stub.Remember(mpb.RememberRequest(agent_id=agent, content=text), timeout=60)
            except grpc.RpcError as exc:
                with lock:
                    refused[exc.code().name] += 1
                continue
            with lock:
                ids.append(r.memory.id)

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return ids, refused


def _stored(stub: mgrpc.MemoryServiceStub, agent: str) -> list[str]:
    page = stub.ListMemories(mpb.ListMemoriesRequest(agent_id=agent, page_size=500), timeout=60)
    return [m.id for m in page.memories]


@pytest.mark.slow
def test_duplicates_merge_and_quotas_count_once_across_replicas(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    """The same fact (exactly, and nearly: case, spacing, punctuation) remembered at
    once through every replica becomes one memory; a memory quota admits exactly its
    limit however the writes are spread over the replicas."""
    quota = {"MEMORYD_QUOTAS__MAX_MEMORIES_PER_PARTITION": "40"}
    with daemon_store_env("qdrant-server", request, shared="true") as env:
        for stubs in _replicas(daemon_factory, {**env, **quota}):
            variants = [
                "The deploy freeze starts on Friday at noon",
                "the deploy freeze starts on friday at noon",
                "The deploy  freeze starts on Friday at noon.",
            ]
            ids, refused = _remember_everywhere(stubs, "dup", variants, threads=12)
            assert not refused
            assert len(set(ids)) == 1, f"{len(set(ids))} memories for one fact"
            assert _stored(stubs[0], "dup") == [ids[0]]

            texts = [
                f"client {{client}} noted fact {i}: {['kiwi', 'mango', 'lamp', 'river'][i % 4]}"
                for i in range(8)
            ]
            ids, refused = _remember_everywhere(stubs, "quota", texts, threads=9)
            stored = _stored(stubs[0], "quota")
            assert len(stored) == 40, len(stored)  # exactly the quota, never more
            assert set(ids) == set(stored)
            assert set(refused) == {"RESOURCE_EXHAUSTED"}


@pytest.mark.slow
def test_a_read_on_one_replica_sees_a_write_acknowledged_by_another(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    """Nothing a replica keeps in memory hides another replica's write: keys (and the
    default-read index, loaded before the write), working memory and memories."""
    with daemon_store_env("qdrant-server", request, shared="true") as env:
        for stubs in _replicas(daemon_factory, env):
            writer, reader = stubs[0], stubs[1]
            reads = sgrpc.SnapshotServiceStub(grpc.insecure_channel(_address(reader)))
            source = replica_history.SOURCE
            for i in range(20):
                key = f"/raw/k{i % 4}"
                value = struct_pb2.Value(string_value=f"value {i}")
                if i == 1:  # the reader's default-read index is loaded by now
                    reads.DefaultRead(spb.DefaultReadRequest(agent_id="raw", token_limit=2000))
                written = writer.SetMemory(
                    mpb.SetMemoryRequest(agent_id="raw", key=key, content=value, source=source)
                ).entry
                got = reader.GetKey(mpb.GetKeyRequest(agent_id="raw", key=key)).entry
                assert (got.version, got.content.string_value) == (written.version, f"value {i}")
                lines = reads.DefaultRead(
                    spb.DefaultReadRequest(agent_id="raw", token_limit=2000)
                ).lines
                assert {line.key: line.content_json for line in lines}[key] == f'"value {i}"'
                content = struct_pb2.Struct()
                content.update({f"f{i}": i})
                writer.SetWorkingMemory(
                    mpb.SetWorkingMemoryRequest(
                        agent_id="raw", scope=replica_history.SCOPE, content=content
                    )
                )
                wm = reader.GetWorkingMemory(
                    mpb.GetWorkingMemoryRequest(agent_id="raw", scope=replica_history.SCOPE)
                ).working_memory
                assert wm.version == i + 1 and f"f{i}" in wm.content
                memory = writer.Remember(
                    mpb.RememberRequest(agent_id="raw", content=f"note {i} on the {key}")
                ).memory
                seen = reader.GetMemory(mpb.GetMemoryRequest(agent_id="raw", id=memory.id))
                assert seen.memory.content == memory.content
