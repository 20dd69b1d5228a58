"""`make bench` section `qdrant`: memoryd over a real Qdrant server, against
qdrant-client querying the same server directly (the peer), in one run.

A Qdrant server (tests/qdrant_server.py: QDRANT_BIN, else ../shared/qdrant's build,
else `qdrant` on PATH; its storage on this machine's disk) holds one agent's memories
per tier (10k and 100k; --quick: 10k). memoryd runs in shared mode (what the Helm
chart deploys), first one replica, then three over the same collections:

- Recall with a client vector (k = 10, filtered to the agent), Recall with a text
  query (the default hybrid: dense + BM25 in one Query API request), Remember with a
  client vector: p50 / p99 through one replica, and memoryd / peer ratios, the peer
  being qdrant-client's own filtered dense query, BM25 (sparse + IDF) query and single
  point upsert against memoryd's collection;
- a closed-loop sweep (the Go load generator, bench/loadgen) of vector Recall at 1, 8
  and 32 clients against one replica and spread over three, beside the peer's asyncio
  client at the same concurrency (RPS ratios);
- at 10k, what shared mode costs: SetMemory, Remember and Recall p50 with one replica
  in shared mode, with shared mode off (the local log and in-process locks), and off
  with the hot cache in front of Qdrant (what shared mode gives up), with the hashing
  embedder so the model's time does not hide the coordination.

- (full run only) 1M memories over 1,000 agents: bench/qdrant_million.py (seeded with
  memoryd's own store code, not through the API: ingesting through the API runs at
  the 10k and 100k tiers' measured rate, hours for a million on this box).

    python bench/qdrant_server_bench.py [--quick]     (or make bench ARGS="--only qdrant")
    python bench/qdrant_server_bench.py --million     (the 1M tier alone)
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_writes
from common import (
    REPO,
    Daemon,
    VectorSource,
    channel,
    ingest,
    log,
    pct,
    query_text,
    recall_request,
    sentence,
    timed,
)
from google.protobuf import struct_pb2
from qdrant_client import AsyncQdrantClient, QdrantClient, models
from qdrant_peer import agent_filter, hybrid_latencies

from memoryd.storage.qdrant.schema import DENSE
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

sys.path.insert(0, str(REPO))  # tests/qdrant_server.py: the server the tests run
import qdrant_report
from qdrant_million import million

from tests.qdrant_server import (
    SHARED_SHA256,
    VERSION,
    NoQdrant,
    QdrantServer,
    locate,
    shared_archive,
    start_server,
)

BENCH = Path(__file__).resolve().parent
LOADGEN = BENCH / ".bin" / "loadgen"
AGENT = "bench-agent"
SOURCE = pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT, name="bench")
FULL = {"tiers": (10_000, 100_000), "queries": 300, "writes": 200, "sweep_s": 5.0,
        "clients": (1, 8, 32), "million": (1000, 1000), "index_wait_s": 1800}  # fmt: skip
QUICK = {"tiers": (10_000,), "queries": 100, "writes": 60, "sweep_s": 2.0,
         "clients": (1, 8)}  # fmt: skip


def build(binary: Path) -> str:
    """Which Qdrant this is (the report says so)."""
    done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    version = (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 else ""
    if binary.parent.name == f"qdrant-{VERSION}" and shared_archive().is_file():
        return (
            f"{version or 'qdrant ' + VERSION} from {shared_archive()} (built from Qdrant's "
            f"source with its perf profile, no LTO; sha256 {SHARED_SHA256[:12]}...)"
        )
    return f"{version or 'qdrant'} at {binary}"


def _env(server: QdrantServer, prefix: str, **extra: str) -> dict[str, str]:
    return {
        "MEMORYD_STORAGE__BACKEND": "qdrant",
        "MEMORYD_STORAGE__QDRANT__URL": server.url,
        "MEMORYD_STORAGE__QDRANT__GRPC_PORT": str(server.grpc_port),
        "MEMORYD_STORAGE__QDRANT__COLLECTION_PREFIX": prefix,
        "MEMORYD_PAGE_TOKEN_SECRET": "b" * 32,
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        **extra,
    }


_replica_dirs = iter(range(1 << 30))


@contextmanager
def replicas(
    tmp: Path, env: dict[str, str], count: int, embedder: str = "local"
) -> Iterator[list[Daemon]]:
    """``count`` memoryd processes on ``env``'s collections, stopped on exit."""
    started: list[Daemon] = []
    try:
        for _ in range(count):
            data = tmp / f"replica-{next(_replica_dirs)}" / "data"
            started.append(Daemon(data, embedder=embedder, env=env).start())
        yield started
    finally:
        for d in started:
            d.stop()


def _one_replica(tmp: Path, server: QdrantServer) -> Callable[[str], AbstractContextManager[str]]:
    """One replica on a collection prefix, as a context manager of its address."""

    @contextmanager
    def replica(prefix: str) -> Iterator[str]:
        with replicas(tmp, _env(server, prefix), 1) as (daemon,):
            yield daemon.address

    return replica


# -- the peer: qdrant-client on the same server and collection ---------------------------


def peer(
    server: QdrantServer, prefix: str, queries: np.ndarray, texts: list[str], writes: int
) -> dict[str, Any]:
    """qdrant-client against memoryd's own collection: the same filtered dense query;
    for a text query the same work as memoryd's default (hybrid) Recall
    (qdrant_peer.hybrid_latencies); and a single point upsert with wait=true. All over
    gRPC."""
    name = f"{prefix}memories"
    client = QdrantClient(url=server.url, prefer_grpc=True, grpc_port=server.grpc_port)
    flt = agent_filter(AGENT)
    out: dict[str, Any] = {}
    try:
        it = iter(queries.tolist())
        out["vector"] = pct(
            timed(lambda: client.query_points(name, query=next(it), using=DENSE, query_filter=flt,
                                              limit=10, with_payload=True), len(queries) - 5)
        )  # fmt: skip
        out["text"] = hybrid_latencies(client, name, texts, lambda: flt)
        rng = np.random.default_rng(3)
        vectors = rng.standard_normal((writes + 5, queries.shape[1])).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        ids = iter(range(writes + 5))
        # Its own collection (the same dense vector), so memoryd's stays memoryd's.
        scratch = f"{prefix}peer_writes"
        dense = models.VectorParams(size=queries.shape[1], distance=models.Distance.DOT)
        client.create_collection(scratch, vectors_config={DENSE: dense})

        def upsert() -> None:
            i = next(ids)
            point = models.PointStruct(
                id=str(uuid.uuid4()),
                vector={DENSE: vectors[i].tolist()},
                payload={"tenant_id": "default", "agent_id": AGENT, "content": f"peer note {i}"},
            )
            client.upsert(scratch, [point], wait=True, ordering=models.WriteOrdering.STRONG)

        out["upsert"] = pct(timed(upsert, writes))
    finally:
        client.close()
    return out


async def _peer_sweep(
    server: QdrantServer, name: str, queries: list[list[float]], clients: int, seconds: float
) -> dict[str, Any]:
    client = AsyncQdrantClient(url=server.url, prefer_grpc=True, grpc_port=server.grpc_port)
    flt = agent_filter(AGENT)
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker(c: int) -> None:
        n = c
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            await client.query_points(name, query=queries[n % len(queries)], using=DENSE,
                                      query_filter=flt, limit=10, with_payload=True)  # fmt: skip
            latencies.append(time.perf_counter() - t0)
            n += clients

    started = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in range(clients)))
    elapsed = time.perf_counter() - started
    await client.close()
    return {"clients": clients, "rps": round(len(latencies) / elapsed, 1), **pct(latencies)}


# -- memoryd -----------------------------------------------------------------------------


def _loadgen(addresses: list[str], queries: Path, clients: int, seconds: float) -> dict[str, Any]:
    """The Go load generator against each address at once, clients split evenly."""
    if not LOADGEN.is_file():
        return {"clients": clients, "error": f"{LOADGEN} not built (make bench builds it)"}
    share = [clients // len(addresses) + (1 if i < clients % len(addresses) else 0)
             for i in range(len(addresses))]  # fmt: skip
    procs = [
        subprocess.Popen([str(LOADGEN), a, AGENT, str(queries), str(n), str(seconds)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        for a, n in zip(addresses, share, strict=True) if n
    ]  # fmt: skip
    rows = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        if p.returncode != 0:
            return {"clients": clients, "error": stderr[-300:]}
        rows.append(json.loads(stdout.strip().splitlines()[-1]))
    return {
        "clients": clients,
        "replicas": len(addresses),
        "rps": round(sum(r["rps"] for r in rows), 1),
        "p50": round(max(r["p50"] for r in rows), 3),
        "p99": round(max(r["p99"] for r in rows), 3),
        "errors": sum(r["errors"] for r in rows),
    }


def _latencies(
    stub: mgrpc.MemoryServiceStub,
    queries: np.ndarray,
    texts: list[str],
    writes: int,
    source: VectorSource,
) -> dict[str, Any]:
    it = iter(queries)
    out: dict[str, Any] = {
        "vector": pct(
            timed(lambda: stub.Recall(recall_request(AGENT, next(it))), len(queries) - 5)
        ),
    }
    words = iter(texts)
    out["text"] = pct(
        timed(lambda: stub.Recall(recall_request(AGENT, text=next(words))), len(texts) - 5)
    )
    new = source.take(writes + 5).tolist()
    n = iter(range(writes + 5))

    def remember() -> None:
        i = next(n)
        stub.Remember(
            mpb.RememberRequest(agent_id=AGENT, content=f"late note {i}", embedding=new[i])
        )

    out["remember"] = pct(timed(remember, writes))
    return out


def _set_memory_p50(stub: mgrpc.MemoryServiceStub, writes: int) -> dict[str, Any]:
    k = iter(range(writes + 5))

    def one() -> None:
        i = next(k)
        stub.SetMemory(
            mpb.SetMemoryRequest(agent_id=AGENT, key=f"/bench/k{i % 20}",
                                 content=struct_pb2.Value(string_value=f"value {i}"), source=SOURCE)
        )  # fmt: skip

    return pct(timed(one, writes))


def tier(
    tmp: Path, server: QdrantServer, n: int, cfg: dict[str, Any], source: VectorSource
) -> dict[str, Any]:
    prefix = f"b{n}_"
    out: dict[str, Any] = {"memories": n}
    vectors = source.take(n)
    texts = [sentence(random.Random(i), i) for i in range(n)]
    queries = source.take(cfg["queries"])
    qpath = tmp / f"queries-{n}.f32"
    queries.astype("<f4").tofile(qpath)
    trng = random.Random(9)
    text_queries = [query_text(trng, i) for i in range(cfg["queries"])]
    env = _env(server, prefix)
    with replicas(tmp, env, 1) as (first,):
        ch = channel(first.address)
        stub = mgrpc.MemoryServiceStub(ch)
        log(f"qdrant {n}: ingesting through one shared replica")
        t0 = time.perf_counter()
        ingest(stub, AGENT, texts, vectors, batch=500)
        out["ingest_per_s"] = round(n / (time.perf_counter() - t0))
        log(f"qdrant {n}: {out['ingest_per_s']}/s; measuring one replica")
        for _ in range(10):
            stub.Recall(recall_request(AGENT, queries[0]))
        out["one_replica"] = _latencies(stub, queries, text_queries, cfg["writes"], source)
        out["peer"] = peer(server, prefix, queries, text_queries, cfg["writes"])
        out["ratio_p50"] = {
            name: round(out["one_replica"][mine]["p50"] / out["peer"][theirs]["p50"], 2)
            for name, mine, theirs in (("vector", "vector", "vector"), ("text", "text", "text"),
                                       ("remember", "remember", "upsert"))
        }  # fmt: skip
        log(f"qdrant {n}: {out['one_replica']} peer {out['peer']} ratios {out['ratio_p50']}")
        sweep: list[dict[str, Any]] = []
        for clients in cfg["clients"]:
            mine = _loadgen([first.address], qpath, clients, cfg["sweep_s"])
            theirs = asyncio.run(
                _peer_sweep(server, f"{prefix}memories", queries.tolist(), clients, cfg["sweep_s"])
            )
            sweep.append({"replicas": 1, "memoryd": mine, "peer": theirs,
                          "rps_ratio": round(mine.get("rps", 0) / max(theirs["rps"], 1e-9), 2)})  # fmt: skip
            log(f"qdrant {n} sweep: {sweep[-1]}")
        ch.close()
        with replicas(tmp, env, 2) as more:
            addresses = [first.address, *(d.address for d in more)]
            three = mgrpc.MemoryServiceStub(channel(more[0].address))
            out["third_replica"] = _latencies(three, queries, text_queries, cfg["writes"], source)
            for clients in cfg["clients"]:
                mine = _loadgen(addresses, qpath, clients, cfg["sweep_s"])
                theirs = asyncio.run(
                    _peer_sweep(
                        server, f"{prefix}memories", queries.tolist(), clients, cfg["sweep_s"]
                    )
                )
                sweep.append({"replicas": 3, "memoryd": mine, "peer": theirs,
                              "rps_ratio": round(mine.get("rps", 0) / max(theirs["rps"], 1e-9), 2)})  # fmt: skip
                log(f"qdrant {n} sweep: {sweep[-1]}")
        out["sweep"] = sweep
    return out


def shared_mode_cost(
    tmp: Path, server: QdrantServer, cfg: dict[str, Any], source: VectorSource
) -> dict[str, Any]:
    """One replica at 10k: shared mode, shared mode off (log + in-process locks), and
    off with the hot cache (what a replica gives up to see the others' writes). The
    hashing embedder, so the writes' coordination is not hidden behind the model (text
    queries cost an embedding on neither side)."""
    n = 10_000
    vectors = source.take(n)
    texts = [sentence(random.Random(i), i) for i in range(n)]
    queries = source.take(cfg["queries"])
    trng = random.Random(4)
    text_queries = [query_text(trng, i) for i in range(cfg["queries"])]
    modes = {
        "shared": {},
        "single_replica": {"MEMORYD_STORAGE__QDRANT__SHARED": "false"},
        "single_replica_hot_cache": {"MEMORYD_STORAGE__QDRANT__SHARED": "false",
                                     "MEMORYD_STORAGE__HOT_CACHE__ENABLED": "true"},
    }  # fmt: skip
    out: dict[str, Any] = {}
    for mode, extra in modes.items():
        prefix = f"m{mode[:6]}{len(out)}_"
        with replicas(tmp, _env(server, prefix, **extra), 1, embedder="hashing") as (d,):
            stub = mgrpc.MemoryServiceStub(channel(d.address))
            ingest(stub, AGENT, texts, vectors, batch=500)
            for _ in range(10):
                stub.Recall(recall_request(AGENT, queries[0]))
            row = _latencies(stub, queries, text_queries, cfg["writes"], source)
            row["set_memory"] = _set_memory_p50(stub, cfg["writes"])
            out[mode] = {k: v["p50"] for k, v in row.items()}
            log(f"qdrant cost {mode}: {out[mode]}")
    base = out["single_replica"]
    out["shared_over_single_p50"] = {k: round(out["shared"][k] / base[k], 2) for k in base}
    hot = out["single_replica_hot_cache"]
    out["shared_over_hot_cache_p50"] = {k: round(out["shared"][k] / hot[k], 2) for k in hot}
    return out


def run(tmp: Path, quick: bool, source: VectorSource) -> dict[str, Any]:
    cfg = QUICK if quick else FULL
    try:
        binary = locate()
    except NoQdrant as exc:
        return {"status": f"skipped: {exc}"}
    workdir = tmp / "qdrant-server"
    server = start_server(binary, workdir)
    out: dict[str, Any] = {"qdrant": build(binary), "shared_mode": True, "tiers": {}}
    try:
        out["writes"] = writes(tmp, server, quick, source)
        for n in cfg["tiers"]:
            out["tiers"][f"{n // 1000}k"] = tier(tmp, server, n, cfg, source)
        out["cost"] = shared_mode_cost(tmp, server, cfg, source)
        if "million" in cfg:
            out["million"] = million(tmp, server, cfg, source, _one_replica(tmp, server))
        else:
            out["not_run"] = "the 1M tier (a full run has it: make bench ARGS='--only qdrant')"
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def writes(tmp: Path, server: QdrantServer, quick: bool, source: VectorSource) -> dict[str, Any]:
    """Shared-mode writes against qdrant-client's (bench/qdrant_writes.py)."""
    return qdrant_writes.run(
        tmp, server.url, server.grpc_port, lambda prefix: _env(server, prefix), quick, source
    )


def run_million(tmp: Path, cfg: dict[str, Any], source: VectorSource) -> dict[str, Any]:
    """The 1M tier alone, on a new server."""
    binary = locate()
    server = start_server(binary, tmp / "qdrant-server")
    try:
        out = million(tmp, server, cfg, source, _one_replica(tmp, server))
    finally:
        server.stop()
    return {**out, "qdrant": build(binary)}


def main() -> None:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--million", action="store_true", help="only the 1M tier; then its report table"
    )
    parser.add_argument(
        "--writes", action="store_true", help="only the shared-mode writes; then their lines"
    )
    parser.add_argument("--agents", type=int, default=1000, help="the 1M tier's agents")
    parser.add_argument("--per-agent", type=int, default=1000, help="memories per agent")
    args = parser.parse_args()
    source = VectorSource.from_model(400 if args.quick else 2000)
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-qdrant-") as tmp:
        if args.writes:
            server = start_server(locate(), Path(tmp) / "qdrant-server")
            try:
                result = writes(Path(tmp), server, args.quick, source)
            finally:
                server.stop()
            print(json.dumps(result, indent=2))
            print("\n".join(qdrant_writes.lines(result)))
            return
        if not args.million:
            print(json.dumps(run(Path(tmp), args.quick, source), indent=2))
            return
        out = run_million(Path(tmp), {**FULL, "million": (args.agents, args.per_agent)}, source)
    print(json.dumps(out, indent=2))
    print("\n".join(qdrant_report.million_lines(out)))


if __name__ == "__main__":
    main()
