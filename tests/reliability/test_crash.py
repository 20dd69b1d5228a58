"""kill -9 under concurrent write load loses no acknowledged write and half-applies nothing.

A real daemon takes Remember, RememberBatch and SetMemory calls from several threads
and is killed with SIGKILL at a random moment, many times. After each restart:
every write acknowledged in that cycle reads back exactly (keys with their mirror
memory); every unacknowledged batch is all there or not at all; every key that
exists has its mirror. At the end everything acknowledged in any cycle is checked
once more.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
import pytest
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import DAEMON_STORES, Daemon, daemon_store_env

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

AGENT = "crash"
THREADS = 4
#: Kill cycles per store (each restarts the daemon twice; a restart is the slow part).
CYCLES = {"lancedb": 15, "qdrant-server": 8}
BATCH = 3


@dataclass
class Ledger:
    """What the clients were told (acknowledged) and what they only attempted."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    memories: dict[str, str] = field(default_factory=dict)  # id -> content
    batches: dict[str, list[str]] = field(default_factory=dict)  # namespace -> ids
    keys: dict[str, str] = field(default_factory=dict)  # key -> value
    attempted_batches: set[str] = field(default_factory=set)
    attempted_keys: set[str] = field(default_factory=set)


def _load(
    stub: mgrpc.MemoryServiceStub, ledger: Ledger, worker: str, stop: threading.Event
) -> None:
    rng = random.Random(worker)
    n = 0
    while not stop.is_set():
        n += 1
        tag = f"{worker}-{n}"
        choice = rng.random()
        try:
            if choice < 0.4:
                content = f"single memory {tag}"
                r = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content=content), timeout=10)
                with ledger.lock:
                    ledger.memories[r.memory.id] = content
            elif choice < 0.7:
                ns = f"b-{tag}"
                with ledger.lock:
                    ledger.attempted_batches.add(ns)
                items = [
                    mpb.RememberRequest(
                        agent_id=AGENT, content=f"batch {tag} item {i}", namespace=ns
                    )
                    for i in range(BATCH)
                ]
                rb = stub.RememberBatch(
                    mpb.RememberBatchRequest(agent_id=AGENT, items=items), timeout=10
                )
                with ledger.lock:
                    ledger.batches[ns] = [x.memory.id for x in rb.results]
                    for x in rb.results:
                        ledger.memories[x.memory.id] = x.memory.content
            else:
                key = f"/crash/{worker}/k{n}"
                value = f"value of {tag}"
                with ledger.lock:
                    ledger.attempted_keys.add(key)
                stub.SetMemory(
                    mpb.SetMemoryRequest(
                        agent_id=AGENT,
                        key=key,
                        content=struct_pb2.Value(string_value=value),
                        source=USER_SOURCE_PB,
                    ),
                    timeout=10,
                )
                with ledger.lock:
                    ledger.keys[key] = value
        except grpc.RpcError:
            return  # the daemon is gone: this write was not acknowledged


def _check_memories(stub: mgrpc.MemoryServiceStub, memories: dict[str, str]) -> None:
    for memory_id, content in memories.items():
        got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=memory_id), timeout=10)
        assert got.memory.content == content, memory_id


def _check_key(
    stub: mgrpc.MemoryServiceStub, key: str, value: str | None, *, shared: bool = False
) -> bool:
    """Whether ``key`` exists; if so its mirror memory exists too (and the value matches).
    Shared mode (no local log): a write killed between the key and its mirror was not
    acknowledged and may have left the key without its mirror; the key's next write
    settles it, which is checked instead."""
    try:
        entry = stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key=key), timeout=10).entry
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
        assert value is None, f"acknowledged key {key} lost"
        return False
    if value is not None:
        assert entry.content.string_value == value
    request = mpb.GetMemoryRequest(agent_id=AGENT, id=entry.memory_id)
    try:
        mirror = stub.GetMemory(request, timeout=10)
    except grpc.RpcError as exc:
        if not (shared and value is None and exc.code() == grpc.StatusCode.NOT_FOUND):
            raise
        settled = struct_pb2.Value(string_value=f"settled {key}")
        stub.SetMemory(
            mpb.SetMemoryRequest(agent_id=AGENT, key=key, content=settled, source=USER_SOURCE_PB),
            timeout=10,
        )
        mirror = stub.GetMemory(request, timeout=10)
        assert mirror.memory.content == f"settled {key}"
        return True
    assert entry.content.string_value in mirror.memory.content, f"{key}: mirror differs"
    return True


def _batch_size(stub: mgrpc.MemoryServiceStub, namespace: str) -> int:
    page = stub.ListMemories(
        mpb.ListMemoriesRequest(agent_id=AGENT, namespace=namespace, page_size=10), timeout=10
    )
    return len(page.memories)


@pytest.mark.parametrize("store", DAEMON_STORES)
def test_sigkill_under_load_loses_no_acknowledged_write(
    daemon_factory: Callable[..., Daemon], store: str, request: pytest.FixtureRequest
) -> None:
    with daemon_store_env(store, request) as env:
        _sigkill_cycles(daemon_factory, env, CYCLES[store], shared=store != "lancedb")


def _sigkill_cycles(
    daemon_factory: Callable[..., Daemon],
    store_env: dict[str, str | None],
    cycles: int,
    *,
    shared: bool,
) -> None:
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "hashing",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
            **store_env,
        }
    )
    rng = random.Random(6)
    total = Ledger()
    checked = 0
    daemon.start()
    for cycle in range(cycles):
        ledger = Ledger()
        stop = threading.Event()
        with daemon.channel() as channel:
            stub = mgrpc.MemoryServiceStub(channel)
            workers = [
                threading.Thread(target=_load, args=(stub, ledger, f"c{cycle}t{t}", stop))
                for t in range(THREADS)
            ]
            for w in workers:
                w.start()
            # A random moment: some cycles die early (replay of a young log), some late.
            stop.wait(rng.uniform(0.2, 1.5))
            assert daemon.process is not None
            daemon.process.kill()  # SIGKILL
            daemon.process.wait()
            daemon.process = None
            stop.set()
            for w in workers:
                w.join()

        daemon.start()
        with daemon.channel() as channel:
            stub = mgrpc.MemoryServiceStub(channel)
            _check_memories(stub, ledger.memories)
            for key, value in ledger.keys.items():
                _check_key(stub, key, value)
            for ns in ledger.attempted_batches:
                size = _batch_size(stub, ns)
                assert size in (0, BATCH), f"batch {ns} half applied: {size} of {BATCH}"
                if ns in ledger.batches:
                    assert size == BATCH
            for key in ledger.attempted_keys - ledger.keys.keys():
                _check_key(stub, key, None, shared=shared)  # absent, or with its mirror
        checked += len(ledger.memories) + len(ledger.keys)
        total.memories.update(ledger.memories)
        total.keys.update(ledger.keys)

    daemon.stop()  # a clean shutdown, then one more start: the final check
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        _check_memories(stub, total.memories)
        for key, value in total.keys.items():
            _check_key(stub, key, value)
    daemon.stop()
    print(
        f"\ncrash test: {cycles} SIGKILL cycles, {checked} acknowledged writes verified after "
        f"their crash, {len(total.memories) + len(total.keys)} re-verified at the end"
    )
    assert checked > cycles  # the load really ran
