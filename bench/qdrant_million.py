"""The `qdrant` section's 1M tier: memoryd over a Qdrant server holding a million
memories spread over a thousand agents, against qdrant-client on the same collection.

Ingesting a million memories through memoryd's API on a 2-core box would take hours
(the 10k and 100k tiers measure that path: RememberBatch with client vectors, each
batch checked for near-duplicates, at 100-200 memories a second there). So this tier
seeds the collection with memoryd's own storage code, in this process
(``QdrantStore.upsert``: the points, payload indexes and BM25 sparse vectors a
replica writes), skipping only the API, the embedder and the near-duplicate checks;
it then waits for Qdrant's optimizer to finish indexing, and measures through a
replica in shared mode, each query for a random agent:

- Recall with a client vector and with a text query (hybrid), and Remember;
- the peer: qdrant-client's filtered dense query and fused dense + BM25 query for
  the same agents, over gRPC.

    python bench/qdrant_server_bench.py --million [--agents N --per-agent M]   (alone)
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    REPO,
    VectorSource,
    channel,
    log,
    pct,
    query_text,
    recall_request,
    sentence,
    timed,
)
from qdrant_client import QdrantClient, models
from qdrant_peer import agent_filter, hybrid_latencies

from memoryd.domain.models import Memory, Partition
from memoryd.embedding.local import MODEL_ID
from memoryd.storage.base import UpsertHints
from memoryd.storage.qdrant import QdrantOptions, QdrantStore
from memoryd.storage.qdrant.schema import DENSE
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

sys.path.insert(0, str(REPO))  # tests/qdrant_server.py: the server the tests run
from tests.qdrant_server import QdrantServer

TENANT = "default"
PREFIX = "m1m_"


def _agent(a: int) -> str:
    return f"agent-{a:04d}"


def _memories(agent: str, start: int, vectors: np.ndarray, now: datetime) -> list[Memory]:
    rng = random.Random(start)
    return [
        Memory(
            id=str(uuid.uuid4()),
            tenant_id=TENANT,
            agent_id=agent,
            content=sentence(rng, start + i),
            created_at=now - timedelta(seconds=start + i),
            updated_at=now - timedelta(seconds=start + i),
            embedding_model=MODEL_ID,
            embedding_dimension=vectors.shape[1],
            vector=vectors[i],
        )
        for i in range(len(vectors))
    ]


async def seed(server: QdrantServer, agents: int, per_agent: int, source: VectorSource) -> float:
    """Write ``agents`` x ``per_agent`` memories with memoryd's store; memories/s."""
    options = QdrantOptions(
        url=server.url, grpc_port=server.grpc_port, collection_prefix=PREFIX, shared=True
    )
    store = QdrantStore.from_options(options, source.base.shape[1])
    await store.open()
    now = datetime.now(UTC)
    started = time.perf_counter()
    try:
        for a in range(agents):
            agent = _agent(a)
            batch = _memories(agent, a * per_agent, source.take(per_agent), now)
            await store.upsert(
                Partition(TENANT, agent), batch, UpsertHints(new_ids=frozenset(m.id for m in batch))
            )
            if a % 100 == 99:
                rate = (a + 1) * per_agent / (time.perf_counter() - started)
                log(f"qdrant 1M: seeded {(a + 1) * per_agent:,} ({rate:,.0f}/s)")
    finally:
        await store.close()
    return agents * per_agent / (time.perf_counter() - started)


def wait_indexed(client: QdrantClient, name: str, timeout_s: float) -> dict[str, Any]:
    """Until the optimizer is done (status green) or ``timeout_s``; what it reached."""
    started = time.perf_counter()
    while True:
        info = client.get_collection(name)
        done = info.status == models.CollectionStatus.GREEN
        if done or time.perf_counter() - started > timeout_s:
            return {
                "status": str(info.status.value),
                "points": info.points_count,
                "indexed_vectors": info.indexed_vectors_count,
                "waited_s": round(time.perf_counter() - started),
            }
        time.sleep(5)


def peer(
    server: QdrantServer, queries: np.ndarray, texts: list[str], agents: int
) -> dict[str, Any]:
    """qdrant-client's filtered dense and fused dense + BM25 queries, random agents."""
    name = f"{PREFIX}memories"
    client = QdrantClient(url=server.url, prefer_grpc=True, grpc_port=server.grpc_port)
    pick = random.Random(11)
    out: dict[str, Any] = {}
    try:
        it = iter(queries.tolist())
        out["vector"] = pct(
            timed(
                lambda: client.query_points(
                    name,
                    query=next(it),
                    using=DENSE,
                    query_filter=agent_filter(_agent(pick.randrange(agents)), TENANT),
                    limit=10,
                    with_payload=True,
                ),
                len(queries) - 5,
            )
        )
        out["text"] = hybrid_latencies(
            client, name, texts, lambda: agent_filter(_agent(pick.randrange(agents)), TENANT)
        )
    finally:
        client.close()
    return out


def through_memoryd(
    address: str, queries: np.ndarray, texts: list[str], agents: int, writes: int
) -> dict[str, Any]:
    stub = mgrpc.MemoryServiceStub(channel(address))
    pick = random.Random(11)
    it, words = iter(queries), iter(texts)
    out: dict[str, Any] = {
        "vector": pct(
            timed(
                lambda: stub.Recall(recall_request(_agent(pick.randrange(agents)), next(it))),
                len(queries) - 5,
            )
        ),
        "text": pct(
            timed(
                lambda: stub.Recall(
                    recall_request(_agent(pick.randrange(agents)), text=next(words))
                ),
                len(texts) - 5,
            )
        ),
    }
    new = iter(queries[::-1].tolist())
    n = iter(range(writes + 5))

    def remember() -> None:
        stub.Remember(
            mpb.RememberRequest(
                agent_id=_agent(pick.randrange(agents)),
                content=f"late note {next(n)}",
                embedding=next(new),
            )
        )

    out["remember"] = pct(timed(remember, min(writes, len(queries) - 5)))
    return out


def million(
    tmp: Path,
    server: QdrantServer,
    cfg: dict[str, Any],
    source: VectorSource,
    replica: Callable[[str], AbstractContextManager[str]],
) -> dict[str, Any]:
    """The tier; ``replica(prefix)``: one memoryd replica on those collections (its
    address, stopped on exit)."""
    agents, per_agent = cfg["million"]
    out: dict[str, Any] = {"memories": agents * per_agent, "agents": agents}
    log(f"qdrant 1M: seeding {agents:,} agents x {per_agent:,} with memoryd's QdrantStore")
    out["seed_per_s"] = round(asyncio.run(seed(server, agents, per_agent, source)))
    client = QdrantClient(url=server.url, prefer_grpc=True, grpc_port=server.grpc_port)
    try:
        out["index"] = wait_indexed(client, f"{PREFIX}memories", cfg["index_wait_s"])
    finally:
        client.close()
    log(f"qdrant 1M: seeded at {out['seed_per_s']}/s; index {out['index']}")
    queries = source.take(cfg["queries"])
    trng = random.Random(21)
    texts = [query_text(trng, i) for i in range(cfg["queries"])]
    with replica(PREFIX) as address:
        for i in range(10):
            mgrpc.MemoryServiceStub(channel(address)).Recall(recall_request(_agent(i), queries[i]))
        out["memoryd"] = through_memoryd(address, queries, texts, agents, cfg["writes"])
    out["peer"] = peer(server, queries, texts, agents)
    out["ratio_p50"] = {
        kind: round(out["memoryd"][kind]["p50"] / out["peer"][kind]["p50"], 2)
        for kind in ("vector", "text")
    }
    log(f"qdrant 1M: {out}")
    return out
