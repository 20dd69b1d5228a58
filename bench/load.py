"""Closed-loop load on Recall from grpc.aio clients (run as a subprocess by run.py, so
the clients' CPU is not the orchestrator's). Prints one JSON line.

    python bench/load.py ADDRESS AGENT QUERIES.npy CONCURRENCY SECONDS
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import grpc
import numpy as np

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc


async def main(
    address: str, agent: str, queries: np.ndarray, concurrency: int, seconds: float
) -> None:
    requests = [mpb.RecallRequest(agent_id=agent, query_embedding=q, limit=10) for q in queries]
    channels = [grpc.aio.insecure_channel(address) for _ in range(min(4, concurrency))]
    stubs = [mgrpc.MemoryServiceStub(c) for c in channels]
    for stub in stubs:
        await stub.Recall(requests[0])
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def client(i: int) -> None:
        nonlocal errors
        stub = stubs[i % len(stubs)]
        n = i
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            try:
                await stub.Recall(requests[n % len(requests)])
            except grpc.aio.AioRpcError:
                errors += 1
                continue
            latencies.append(time.perf_counter() - t0)
            n += concurrency

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(concurrency)))
    elapsed = time.perf_counter() - started
    for c in channels:
        await c.close()
    arr = np.asarray(latencies) * 1000
    print(
        json.dumps(
            {
                "clients": concurrency,
                "rps": round(len(latencies) / elapsed, 1),
                "p50": round(float(np.percentile(arr, 50)), 3),
                "p99": round(float(np.percentile(arr, 99)), 3),
                "errors": errors,
            }
        )
    )


if __name__ == "__main__":
    address, agent, path, concurrency, seconds = sys.argv[1:6]
    asyncio.run(main(address, agent, np.load(path), int(concurrency), float(seconds)))
