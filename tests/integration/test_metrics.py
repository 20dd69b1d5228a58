"""Prometheus metrics of a LIVE daemon: scrape /metrics before and after real traffic
over real gRPC and check that the series moved (parsed with prometheus_client.parser)."""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from prometheus_client.parser import text_string_to_metric_families

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
MEMORY = "memoryd.v1.MemoryService"
#: Unrelated enough that remember-time deduplication keeps them apart.
FACTS = (
    "The user's sister lives in Lisbon and works as an architect",
    "Deploys to production happen on Tuesdays after the standup",
    "The quarterly budget review was moved to the fourteenth of March",
)
#: Polling budget for the background partition counter; not a performance assertion.
POLL_S = 30.0


def log_events(daemon: Daemon) -> list[dict[str, Any]]:
    events = []
    for line in daemon.logs().splitlines():
        if line.startswith("{"):
            events.append(json.loads(line))
    return events


def metrics_address(daemon: Daemon) -> str:
    (event,) = [e for e in log_events(daemon) if e["event"] == "metrics serving"]
    assert event["path"] == "/metrics"
    address: str = event["address"]
    return address


def scrape(address: str) -> Samples:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def get(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum over every series of ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


def poll(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + POLL_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def daemon(daemon_factory: type[Daemon], tmp_path: Path) -> Daemon:
    # The real local model; per-partition gauge on, at most two named partitions.
    d = daemon_factory(
        env={
            "MEMORYD_METRICS__PER_PARTITION": "true",
            "MEMORYD_METRICS__MAX_PARTITION_SERIES": "2",
            "MEMORYD_METRICS__PARTITION_REFRESH_S": "0.1",
        }
    )
    d.start()
    return d


def test_series_move_with_traffic(daemon: Daemon) -> None:
    address = metrics_address(daemon)
    before = scrape(address)
    # Before any call: degraded gauges exist at 0, nothing about a write-ahead log yet.
    for component in ("embedder", "store", "llm"):
        assert get(before, "memoryd_degraded", component=component) == 0
    assert not [n for n, _ in before if n.startswith("memoryd_wal_")]
    assert get(before, "process_resident_memory_bytes") > 0

    run = uuid.uuid4().hex[:8]
    agents = [f"m-{run}-{i}" for i in range(3)]
    with daemon.channel() as channel:
        stub = MemoryServiceStub(channel)
        for i, agent in enumerate(agents):
            for fact in FACTS[: i + 1]:  # 1, 2 and 3 memories
                stub.Remember(mpb.RememberRequest(agent_id=agent, content=fact))
        for _ in range(2):  # the second query text is an embedding cache hit
            stub.Recall(mpb.RecallRequest(agent_id=agents[2], query="which facts?"))
        with pytest.raises(grpc.RpcError) as missing:
            stub.GetMemory(mpb.GetMemoryRequest(agent_id=agents[0], id="no-such-id"))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.RpcError) as bad:
            stub.Remember(mpb.RememberRequest(agent_id=agents[0], content=""))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        value = struct_pb2.Value(string_value="dark")
        stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=agents[2], key="/ui/theme", content=value, source=USER_SOURCE_PB
            )
        )

    after = scrape(address)

    def moved(name: str, **labels: str) -> float:
        return get(after, name, **labels) - get(before, name, **labels)

    # Requests: count and latency by service, method and code.
    ok_remember = {"service": MEMORY, "method": "Remember", "code": "OK"}
    assert moved("memoryd_grpc_requests_total", **ok_remember) == 6
    assert moved("memoryd_grpc_request_duration_seconds_count", **ok_remember) == 6
    assert moved("memoryd_grpc_request_duration_seconds_sum", **ok_remember) > 0
    assert moved("memoryd_grpc_request_duration_seconds_bucket", le="+Inf", **ok_remember) == 6
    assert moved("memoryd_grpc_requests_total", service=MEMORY, method="Recall", code="OK") == 2
    assert (
        moved("memoryd_grpc_requests_total", service=MEMORY, method="GetMemory", code="NOT_FOUND")
        == 1
    )
    assert (
        moved(
            "memoryd_grpc_requests_total",
            service=MEMORY,
            method="Remember",
            code="INVALID_ARGUMENT",
        )
        == 1
    )
    assert moved("memoryd_grpc_requests_total", service=MEMORY, method="SetMemory", code="OK") == 1

    # Embedding: model calls timed with their batch sizes; the repeated query was cached.
    calls = total(after, "memoryd_embedding_duration_seconds_count") - total(
        before, "memoryd_embedding_duration_seconds_count"
    )
    assert calls >= 2
    assert total(after, "memoryd_embedding_duration_seconds_count", kind="query") >= 1
    texts = total(after, "memoryd_embedding_batch_size_sum") - total(
        before, "memoryd_embedding_batch_size_sum"
    )
    assert texts >= 5  # three distinct facts, one query, the key's content
    # Repeated facts (agents share them) and the repeated query come from the cache.
    assert moved("memoryd_cache_hits_total", cache="embedding") >= 4
    assert moved("memoryd_cache_misses_total", cache="embedding") >= 5
    assert get(after, "memoryd_cache_entries", cache="embedding") >= 5

    # Stores: latency by operation, for memories and for records (the key).
    for operation in ("upsert", "search"):
        assert (
            moved("memoryd_store_operation_duration_seconds_count", store="memories",
                  operation=operation) >= 1
        ), operation  # fmt: skip
    assert (
        total(after, "memoryd_store_operation_duration_seconds_count", store="records")
        - total(before, "memoryd_store_operation_duration_seconds_count", store="records")
        >= 1
    )
    # Every acknowledged write went through a group-committed fsync of the write-ahead log.
    assert get(after, "memoryd_wal_fsync_duration_seconds_count") >= 1
    assert get(after, "memoryd_wal_fsync_duration_seconds_sum") > 0
    assert get(after, "memoryd_wal_backlog_entries") >= 0
    # The hot cache loaded the recalled partition on its first search, then hit it.
    assert moved("memoryd_hot_cache_loads_total") >= 1
    assert moved("memoryd_cache_misses_total", cache="hot_partition") >= 1
    assert moved("memoryd_cache_hits_total", cache="hot_partition") >= 1

    # Memories per partition: the two largest named, the rest summed as _other.
    def partitions_counted() -> bool:
        s = scrape(address)
        return get(s, "memoryd_memories", tenant="default", agent=agents[2]) == 4

    poll(partitions_counted, "the per-partition gauge")
    final = scrape(address)
    # Agent 2: three facts and the key's mirror memory; agent 1: two; agent 0 (one) is
    # beyond max_partition_series=2 and summed into _other.
    assert get(final, "memoryd_memories", tenant="default", agent=agents[1]) == 2
    assert get(final, "memoryd_memories", tenant="default", agent=agents[0]) == 0
    assert get(final, "memoryd_memories", tenant="_other", agent="_other") == 1
    assert len([ls for n, ls in final if n == "memoryd_memories"]) == 3
    assert get(final, "memoryd_partitions") == 3


def test_metrics_can_be_disabled(daemon_factory: type[Daemon]) -> None:
    d = daemon_factory(env={"MEMORYD_EMBEDDER": "hashing", "MEMORYD_METRICS__ENABLED": "false"})
    d.start()
    assert not [e for e in log_events(d) if e["event"] == "metrics serving"]


def test_a_second_daemon_on_the_default_metrics_port_starts(daemon_factory: type[Daemon]) -> None:
    """Left at its default (127.0.0.1:9464), a metrics port in use falls back to a free
    one with a warning. Whichever daemon holds 9464 (or neither, when something else on
    this machine does), both start and serve their own /metrics."""
    default = {"MEMORYD_EMBEDDER": "hashing", "MEMORYD_METRICS__LISTEN": None}
    first, second = daemon_factory(env=default), daemon_factory(env=default)
    first.start()
    second.start()
    addresses = [metrics_address(first), metrics_address(second)]
    assert addresses[0] != addresses[1]
    for d, address in zip((first, second), addresses, strict=True):
        assert "memoryd_build_info" in {name for name, _ in scrape(address)}
        moved = [e for e in log_events(d) if e["event"].startswith("default metrics port in use")]
        assert bool(moved) == (address != "127.0.0.1:9464")
        if moved:
            assert moved[0]["wanted"] == "127.0.0.1:9464" and moved[0]["address"] == address
    assert addresses[1] != "127.0.0.1:9464"  # the second never gets it


def test_a_taken_metrics_port_stops_the_start(daemon_factory: type[Daemon]) -> None:
    first = daemon_factory(env={"MEMORYD_EMBEDDER": "hashing"})
    first.start()
    taken = metrics_address(first)
    second = daemon_factory(env={"MEMORYD_EMBEDDER": "hashing", "MEMORYD_METRICS__LISTEN": taken})
    with pytest.raises(RuntimeError, match="exited with 1"):
        second.start()
    assert f"cannot serve metrics on {taken}" in second.logs()
