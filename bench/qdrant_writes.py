"""`make bench` section `qdrant`, shared-mode writes: what a write costs in Qdrant
requests and in time, against qdrant-client writing the same points to the same
server in the same run (bench/qdrant_server_bench.py runs this first).

One replica in shared mode on fresh collections (client vectors, so no model time):

- SetMemory and Remember: p50 / p99 ms, and Qdrant requests per write as Qdrant itself
  counts them (its telemetry: gRPC responses by method, read before and after);
- RememberBatch, batches of 500: memories/s, the replica's CPU per memory, and the
  Qdrant requests per batch (by method) and per memory;
- the floor: qdrant-client (sync, gRPC, wait=true, strong ordering as memoryd writes)
  upserting the same points (memoryd's payload, dense and BM25 vectors) into a
  collection with memoryd's schema: one point at a time, and in batches of 500; and
  a deduplicating ingest's floor: each batch's 500 filtered nearest-neighbour
  searches (what RememberBatch's near-duplicate lookup asks the server) in one
  request, then its upsert;
- two replicas writing one agent's keys at once (4 clients each): SetMemory/s and
  p50 / p99 (the agent's keys lease changes hands between them).

The machine is shared: the load average is recorded at the start and the end, and
the ratios (memoryd / floor) are what compares across runs.

    python bench/qdrant_server_bench.py --writes [--quick]     (this part alone)
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import grpc
import numpy as np
from common import Daemon, VectorSource, channel, ingest, log, pct, sentence, timed
from google.protobuf import struct_pb2
from qdrant_client import QdrantClient, models

from memoryd.domain.models import Memory, Partition
from memoryd.storage.qdrant import sparse
from memoryd.storage.qdrant.schema import AGENT as AGENT_FIELD
from memoryd.storage.qdrant.schema import (
    DENSE,
    SPARSE,
    TENANT,
    memory_collection,
    memory_payload,
    memory_point_id,
)
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

AGENT = "bench-writer"
SOURCE = pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT, name="bench")
BATCH = 500
#: The agent of the deduplicating ingest's floor (a partition of its own, empty at first).
DEDUP_AGENT = "bench-floor-dedup"
FULL = {"writes": 200, "ingest": 10_000, "contention_s": 10.0}
QUICK = {"writes": 60, "ingest": 2_000, "contention_s": 4.0}
#: Targets (issue 31), against the floor measured in the same run.
MAX_SET_MEMORY_REQUESTS = 4
MAX_REMEMBER_OVER_UPSERT = 3.0
MIN_INGEST_PER_S = 2_000


def qdrant_requests(url: str) -> Counter[str]:
    """Qdrant's own count of the gRPC requests it answered, by method."""
    with urllib.request.urlopen(f"{url}/telemetry?details_level=2", timeout=10) as r:
        responses = json.loads(r.read())["result"]["requests"]["grpc"]["responses"]
    return Counter(
        {method: sum(c["count"] for c in codes.values()) for method, codes in responses.items()}
    )


def _counted(
    url: str, fn: Callable[[], Any], n: int
) -> tuple[list[float], float, dict[str, float]]:
    """``fn`` timed ``n`` times (after a warm-up): latencies, Qdrant requests per call,
    and per call by method."""
    for _ in range(5):
        fn()
    before = qdrant_requests(url)
    samples = timed(fn, n, warmup=0)
    spent = qdrant_requests(url) - before
    by_method = {m.rsplit("/", 1)[-1]: round(c / n, 2) for m, c in spent.items()}
    return samples, round(spent.total() / n, 2), by_method


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _replicas(tmp: Path, env: dict[str, str], count: int) -> Iterator[list[Daemon]]:
    started: list[Daemon] = []
    try:
        for i in range(count):
            data = tmp / f"writes-{env['MEMORYD_STORAGE__QDRANT__COLLECTION_PREFIX']}{i}" / "data"
            started.append(Daemon(data, embedder="hashing", env=env).start())
        yield started
    finally:
        for d in started:
            d.stop()


def _one_replica(d: Daemon, url: str, cfg: dict[str, Any], source: VectorSource) -> dict[str, Any]:
    stub = mgrpc.MemoryServiceStub(channel(d.address))
    out: dict[str, Any] = {}
    keys = iter(range(1 << 30))

    def set_memory() -> None:
        i = next(keys)
        stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=AGENT,
                key=f"/bench/k{i % 20}",
                content=struct_pb2.Value(string_value=f"value {i}"),
                source=SOURCE,
            )
        )

    samples, per_call, by_method = _counted(url, set_memory, cfg["writes"])
    out["set_memory"] = {**pct(samples), "qdrant_requests": per_call, "by_method": by_method}
    vectors = source.take(cfg["writes"] + 5).tolist()
    notes = iter(range(len(vectors)))

    def remember() -> None:
        i = next(notes)
        stub.Remember(
            mpb.RememberRequest(agent_id=AGENT, content=f"late note {i}", embedding=vectors[i])
        )

    samples, per_call, by_method = _counted(url, remember, cfg["writes"])
    out["remember"] = {**pct(samples), "qdrant_requests": per_call, "by_method": by_method}
    log(f"qdrant writes: SetMemory {out['set_memory']} Remember {out['remember']}")

    n = cfg["ingest"]
    texts = [sentence(random.Random(i), i) for i in range(n)]
    batch_vectors = source.take(n)
    before = qdrant_requests(url)
    cpu, started = _cpu_s(d.pid), time.perf_counter()
    ingest(stub, "bench-ingest", texts, batch_vectors, batch=BATCH)
    elapsed = time.perf_counter() - started
    spent = qdrant_requests(url) - before
    batches = -(-n // BATCH)
    out["remember_batch"] = {
        "memories": n,
        "per_s": round(n / elapsed),
        "replica_cpu_ms_per_memory": round(1000 * (_cpu_s(d.pid) - cpu) / n, 3),
        "qdrant_requests_per_batch": round(spent.total() / batches, 2),
        "qdrant_requests_per_memory": round(spent.total() / n, 4),
        "by_method_per_batch": {
            m.rsplit("/", 1)[-1]: round(c / batches, 2) for m, c in spent.items()
        },
    }
    log(f"qdrant writes: RememberBatch {out['remember_batch']}")
    return out


def _dimension(source: VectorSource) -> int:
    return int(source.base.shape[1])


def _points(source: VectorSource, n: int, agent: str = "bench-floor") -> list[models.PointStruct]:
    """``n`` points of ``agent`` as memoryd writes them (payload, dense and BM25 vectors)."""
    now = datetime.now(UTC)
    partition = Partition("default", agent)
    points = []
    for i, vector in enumerate(source.take(n)):
        m = Memory(
            id=str(uuid.uuid4()),
            tenant_id=partition.tenant_id,
            agent_id=partition.agent_id,
            content=sentence(random.Random(i), i),
            created_at=now,
            updated_at=now,
            vector=vector,
            embedding_model="bench",
            embedding_dimension=len(vector),
        )
        vectors: dict[str, Any] = {DENSE: np.asarray(vector, dtype=np.float32).tolist()}
        text = sparse.document_vector(m.content)
        if text is not None:
            vectors[SPARSE] = text
        points.append(
            models.PointStruct(
                id=memory_point_id(partition, m.id), vector=vectors, payload=memory_payload(m)
            )
        )
    return points


def floor(
    url: str, grpc_port: int, prefix: str, cfg: dict[str, Any], source: VectorSource
) -> dict[str, Any]:
    """qdrant-client writing memoryd's points into a collection of memoryd's schema."""
    spec = memory_collection(f"{prefix}floor_", _dimension(source))
    client = QdrantClient(url=url, prefer_grpc=True, grpc_port=grpc_port)
    strong = models.WriteOrdering.STRONG
    try:
        client.create_collection(
            spec.name,
            vectors_config={
                DENSE: models.VectorParams(size=_dimension(source), distance=models.Distance.DOT)
            },
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            hnsw_config=spec.hnsw,
        )
        for field, params in spec.indexes.items():
            client.create_payload_index(spec.name, field, params, wait=True)
        singles = iter(_points(source, cfg["writes"] + 5))
        upsert = pct(
            timed(
                lambda: client.upsert(spec.name, [next(singles)], wait=True, ordering=strong),
                cfg["writes"],
            )
        )
        points = _points(source, cfg["ingest"])
        started = time.perf_counter()
        for i in range(0, len(points), BATCH):
            client.upsert(spec.name, points[i : i + BATCH], wait=True, ordering=strong)
        per_s = round(len(points) / (time.perf_counter() - started))
        fresh = _points(source, cfg["ingest"], DEDUP_AGENT)
        searched = _search_then_upsert(client, spec.name, fresh)
    finally:
        client.close()
    out = {"upsert": upsert, "batch_upsert_per_s": per_s, "search_then_upsert_per_s": searched}
    log(f"qdrant writes floor: {out}")
    return out


def _search_then_upsert(client: QdrantClient, name: str, points: list[models.PointStruct]) -> int:
    """Memories/s of a deduplicating ingest's server work alone: per batch, each
    point's 4 nearest above 0.95 among its agent's (one request), then the upsert."""
    agent = models.Filter(
        must=[
            models.FieldCondition(key=key, match=models.MatchValue(value=value))
            for key, value in ((TENANT, "default"), (AGENT_FIELD, DEDUP_AGENT))
        ]
    )
    strong = models.WriteOrdering.STRONG
    started = time.perf_counter()
    for i in range(0, len(points), BATCH):
        batch = points[i : i + BATCH]
        searches = [
            models.QueryRequest(
                query=cast(dict[str, list[float]], p.vector)[DENSE],
                using=DENSE,
                filter=agent,
                limit=4,
                score_threshold=0.95,
                with_payload=True,
            )
            for p in batch
        ]
        client.query_batch_points(name, searches)
        client.upsert(name, batch, wait=True, ordering=strong)
    return round(len(points) / (time.perf_counter() - started))


def contention(stubs: list[mgrpc.MemoryServiceStub], seconds: float) -> dict[str, Any]:
    """4 clients per replica writing one agent's keys for ``seconds``."""
    latencies: list[float] = []
    refused: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client(c: int) -> None:
        stub, n = stubs[c % len(stubs)], 0
        while time.perf_counter() < deadline:
            request = mpb.SetMemoryRequest(
                agent_id="bench-contended", key=f"/k{n % 8}",
                content=struct_pb2.Value(string_value=f"c{c} n{n}"), source=SOURCE,
            )  # fmt: skip
            t0 = time.perf_counter()
            try:
                stub.SetMemory(request, timeout=60)
            except grpc.RpcError as exc:
                with lock:
                    refused[exc.code().name] += 1
                continue
            with lock:
                latencies.append(time.perf_counter() - t0)
            n += 1

    threads = [threading.Thread(target=client, args=(c,)) for c in range(4 * len(stubs))]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    return {"per_s": round(len(latencies) / elapsed, 1), **pct(latencies), "refused": dict(refused)}


def run(
    tmp: Path,
    url: str,
    grpc_port: int,
    env_for: Callable[[str], dict[str, str]],
    quick: bool,
    source: VectorSource,
) -> dict[str, Any]:
    cfg = QUICK if quick else FULL
    prefix = f"w{uuid.uuid4().hex[:6]}_"
    out: dict[str, Any] = {"load_average_at_start": round(os.getloadavg()[0], 2)}
    with _replicas(tmp, env_for(prefix), 1) as (d,):
        out["one_replica"] = _one_replica(d, url, cfg, source)
    out["floor"] = floor(url, grpc_port, prefix, cfg, source)
    with _replicas(tmp, env_for(f"{prefix}c_"), 2) as two:
        out["two_replicas_one_agent"] = contention(
            [mgrpc.MemoryServiceStub(channel(d.address)) for d in two], cfg["contention_s"]
        )
    log(f"qdrant writes: two replicas on one agent {out['two_replicas_one_agent']}")
    out["load_average_at_end"] = round(os.getloadavg()[0], 2)
    mine, theirs = out["one_replica"], out["floor"]
    out["ratios"] = {
        "remember_p50_over_upsert_p50": round(mine["remember"]["p50"] / theirs["upsert"]["p50"], 2),
        "set_memory_p50_over_upsert_p50": round(
            mine["set_memory"]["p50"] / theirs["upsert"]["p50"], 2
        ),
        "remember_batch_over_batch_upsert": round(
            mine["remember_batch"]["per_s"] / theirs["batch_upsert_per_s"], 2
        ),
    }
    return out


# -- the report ---------------------------------------------------------------------------


def target_rows(w: dict[str, Any] | None) -> list[tuple[str, str, str, bool | None]]:
    """(target, goal, measured, met) rows for the report's first table."""
    if not w or "one_replica" not in w:
        return []
    one, ratios, fl = w["one_replica"], w["ratios"], w["floor"]
    requests = one["set_memory"]["qdrant_requests"]
    over = ratios["remember_p50_over_upsert_p50"]
    rate = one["remember_batch"]["per_s"]
    return [
        ("Shared mode: Qdrant requests per SetMemory", f"≤ {MAX_SET_MEMORY_REQUESTS}",
         f"{requests} ({one['set_memory']['by_method']})",
         round(requests) <= MAX_SET_MEMORY_REQUESTS),
        ("Shared mode: Remember p50 vs qdrant-client's upsert p50", f"≤ {MAX_REMEMBER_OVER_UPSERT}x",
         f"{one['remember']['p50']} ms = {over}x ({fl['upsert']['p50']} ms)",
         over <= MAX_REMEMBER_OVER_UPSERT),
        ("Shared mode: RememberBatch per replica", f"≥ {MIN_INGEST_PER_S:,}/s",
         f"{rate:,}/s = {ratios['remember_batch_over_batch_upsert']}x qdrant-client's batch "
         f"upsert ({fl['batch_upsert_per_s']:,}/s); its searches + upsert "
         f"{fl.get('search_then_upsert_per_s', '—')}/s",
         rate >= MIN_INGEST_PER_S),
    ]  # fmt: skip


def _met(ok: bool) -> str:
    return "yes" if ok else "no"


def _target_lines(w: dict[str, Any]) -> list[str]:
    """The three shared-mode targets, each beside its measure and the floor."""
    one, fl, ratios = w["one_replica"], w["floor"], w["ratios"]
    requests = one["set_memory"]["qdrant_requests"]
    over = ratios["remember_p50_over_upsert_p50"]
    batch = one["remember_batch"]
    searched = fl.get("search_then_upsert_per_s")
    return [
        "",
        "| target (issue 31) | measured | floor | target | met |",
        "|---|---|---|---|---|",
        f"| Qdrant requests per SetMemory (the lease's occasional reads spread over the "
        f"writes) | {requests} {one['set_memory']['by_method']} | | ≤ {MAX_SET_MEMORY_REQUESTS} "
        f"| {_met(round(requests) <= MAX_SET_MEMORY_REQUESTS)} |",
        f"| Remember p50 ÷ qdrant-client's upsert p50 | {over}x ({one['remember']['p50']} ms; "
        f"{one['remember']['qdrant_requests']} requests) | {fl['upsert']['p50']} ms | "
        f"≤ {MAX_REMEMBER_OVER_UPSERT}x | {_met(over <= MAX_REMEMBER_OVER_UPSERT)} |",
        f"| RememberBatch memories/s per replica | {batch['per_s']:,} "
        f"({batch.get('qdrant_requests_per_batch', '—')} requests per batch of {BATCH}) | "
        f"batch upsert {fl['batch_upsert_per_s']:,}; searches + upsert {searched or '—'} | "
        f"≥ {MIN_INGEST_PER_S:,} | {_met(batch['per_s'] >= MIN_INGEST_PER_S)} |",
    ]


def lines(w: dict[str, Any] | None) -> list[str]:
    if not w or "one_replica" not in w:
        return []
    one, fl, two = w["one_replica"], w["floor"], w["two_replicas_one_agent"]

    def pp(p: dict[str, Any]) -> str:
        return f"{p['p50']} / {p['p99']}"

    return [
        "",
        "Shared-mode writes (bench/qdrant_writes.py; one replica, client vectors; load "
        f"average {w['load_average_at_start']} at the start, {w['load_average_at_end']} at "
        "the end). The floor is qdrant-client writing the same points (memoryd's payload, "
        "dense and BM25 vectors) to a collection of memoryd's schema on the same server, "
        'wait=true, strong ordering; its "searches + upsert" asks, per batch of '
        f"{BATCH}, each point's 4 nearest above 0.95 among its agent's (one request) before "
        "the upsert: the server's share of a deduplicating ingest. Qdrant requests as Qdrant "
        "counts them (telemetry).",
        *_target_lines(w),
        "",
        "| write | p50 / p99 ms | Qdrant requests per write | floor p50 / p99 ms | ratio p50 |",
        "|---|---|---|---|---|",
        f"| SetMemory | {pp(one['set_memory'])} | {one['set_memory']['qdrant_requests']} "
        f"{one['set_memory']['by_method']} | {pp(fl['upsert'])} | "
        f"{w['ratios']['set_memory_p50_over_upsert_p50']} |",
        f"| Remember | {pp(one['remember'])} | {one['remember']['qdrant_requests']} "
        f"{one['remember']['by_method']} | {pp(fl['upsert'])} | "
        f"{w['ratios']['remember_p50_over_upsert_p50']} |",
        "",
        f"RememberBatch (batches of {BATCH}): {one['remember_batch']['per_s']:,} memories/s "
        f"({one['remember_batch']['replica_cpu_ms_per_memory']} ms of the replica's CPU per "
        f"memory; Qdrant requests per batch "
        f"{one['remember_batch'].get('by_method_per_batch', '—')}) against qdrant-client's "
        f"batch upsert {fl['batch_upsert_per_s']:,}/s: "
        f"{w['ratios']['remember_batch_over_batch_upsert']}x. Two replicas writing one "
        f"agent's keys (4 clients each): {two['per_s']} SetMemory/s, p50 / p99 "
        f"{pp(two)} ms, refused {two['refused'] or 'none'}.",
    ]
