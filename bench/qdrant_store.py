"""Store-level latency of the Qdrant backend: qdrant-client local mode and Qdrant Edge
(and LanceDB for reference) at N memories in one partition plus noise partitions.

    .venv/bin/python -m bench.qdrant_store --n 10000 [--backends local,edge,lancedb]

Prints one JSON object: per backend, upsert throughput (batches of --batch) and
p50/p95 latency of search, text_search, list and count. Data is synthetic (random unit
vectors, texts from a small vocabulary); the directory is on the real disk.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.domain.models import Memory, MemoryFilter, Partition, unit_queries
from memoryd.storage.base import ListPage, Store
from memoryd.storage.instants import from_micros
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.qdrant import QdrantOptions, QdrantStore
from memoryd.storage.qdrant.edge import edge_store

DIM = 384
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "kiwi",
    "mango",
    "river",
    "stone",
    "cloud",
    "paper",
    "lamp",
    "tiger",
]


def _memories(p: Partition, n: int, rng: np.random.Generator, start: int) -> list[Memory]:
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    out = []
    for i in range(n):
        t = from_micros(1_700_000_000_000_000 + (start + i) * 1_000)
        words = " ".join(rng.choice(WORDS, size=8))
        out.append(
            Memory(
                id=f"m{start + i:07d}",
                tenant_id=p.tenant_id,
                agent_id=p.agent_id,
                content=f"{words} item {start + i}",
                created_at=t,
                updated_at=t,
                tags=(str(rng.choice(WORDS)),),
                vector=vecs[i],
            )
        )
    return out


def _pct(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs) * 1000
    return {
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p95_ms": round(float(np.percentile(a, 95)), 2),
    }


async def _timed(fn: Callable[[], Awaitable[Any]], reps: int) -> dict[str, float]:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t)
    return _pct(times)


async def run(store: Store, n: int, batch: int, reps: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    p = Partition("bench", "agent")
    await store.open()
    try:
        # Noise: other partitions sharing the collection (10% of n, 10 partitions).
        for k in range(10):
            q = Partition(f"noise-{k}", "agent")
            await store.upsert(q, _memories(q, max(n // 100, 1), rng, 10_000_000 + k * n))
        mine = _memories(p, n, rng, 0)
        t = time.perf_counter()
        for i in range(0, n, batch):
            await store.upsert(p, mine[i : i + batch])
        upsert_s = time.perf_counter() - t
        queries = unit_queries(list(rng.normal(size=(reps, DIM))), DIM)
        it = iter(queries)
        flt = MemoryFilter()
        result: dict[str, Any] = {
            "upsert": {
                "points": n,
                "batch": batch,
                "total_s": round(upsert_s, 2),
                "per_point_ms": round(upsert_s / n * 1000, 3),
            },
            "search_top10": await _timed(lambda: store.search(p, next(it), flt, 10), reps),
            "search_top10_tag_filter": await _timed(
                lambda: store.search(p, queries[0], MemoryFilter(tags=("kiwi",)), 10), reps
            ),
            "text_search_top10": await _timed(
                lambda: store.text_search(p, "kiwi river", flt, 10), reps
            ),
            "list_page50": await _timed(lambda: store.list(p, flt, ListPage(limit=50)), reps),
            "count": await _timed(lambda: store.count(p, flt), reps),
            "get_10": await _timed(lambda: store.get(p, [m.id for m in mine[:10]]), reps),
        }
        return result
    finally:
        await store.close()


def _make(name: str, root: Path) -> Store:
    if name == "local":
        return QdrantStore.from_options(QdrantOptions(path=root / "qdrant"), DIM)
    if name == "edge":
        return edge_store(root / "edge", DIM)
    if name == "lancedb":
        return LanceDBStore(root / "lancedb", DIM)
    raise SystemExit(f"unknown backend {name}")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--backends", default="local,edge")
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"n": args.n, "dim": DIM}
    for name in args.backends.split(","):
        root = Path(tempfile.mkdtemp(prefix=f"qdrant-bench-{name}-", dir=args.dir))
        try:
            out[name] = await run(_make(name, root), args.n, args.batch, args.reps)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        print(json.dumps({name: out[name]}), flush=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
