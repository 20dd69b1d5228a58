"""What MCP adds over gRPC: the same recall and remember, by the same daemon, as an MCP
tool call over Streamable HTTP (the official SDK's client) and as a gRPC call, in one
run, interleaved call by call (the order flips every call, so both see the same load).

Both send text (the daemon embeds it; the query texts repeat, so recall's embeddings
come from the cache after the warm-up, as a busy agent's would), both are async clients
in one event loop. Reported: p50/p99 per transport and the p50 difference in ms
(target: MCP adds <= 2 ms).

    python bench/mcp_overhead.py [calls]      # prints the JSON result
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import httpx2
from common import Daemon, log, pct, query_text, sentence
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

AGENT = "mcp-bench"
#: Calls per block when the daemon's CPU per call is read.
BLOCK = 50


def _mcp_url(d: Daemon) -> str:
    return str(d.log_events('"serving"')[-1]["mcp"])


async def _measure(d: Daemon, memories: int, calls: int) -> dict[str, Any]:
    rng = random.Random(7)
    queries = [query_text(rng, i) for i in range(100)]
    async with (
        grpc.aio.insecure_channel(d.address) as channel,
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(_mcp_url(d), http_client=http)) as mcp,
    ):
        stub = mgrpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        for start in range(0, memories, 500):
            items = [
                mpb.RememberRequest(content=sentence(rng, i)) for i in range(start, start + 500)
            ]
            await stub.RememberBatch(mpb.RememberBatchRequest(agent_id=AGENT, items=items))
        counter = iter(range(memories, 10**9))

        async def grpc_recall() -> None:
            await stub.Recall(mpb.RecallRequest(agent_id=AGENT, query=rng.choice(queries), limit=5))

        async def mcp_recall() -> None:
            r = await mcp.call_tool(
                "recall", {"query": rng.choice(queries), "limit": 5, "agent_id": AGENT}
            )
            assert not r.is_error, r.content

        async def grpc_remember() -> None:
            text = sentence(rng, next(counter))
            await stub.Remember(mpb.RememberRequest(agent_id=AGENT, content=text))

        async def mcp_remember() -> None:
            r = await mcp.call_tool(
                "remember", {"content": sentence(rng, next(counter)), "agent_id": AGENT}
            )
            assert not r.is_error, r.content

        ops: dict[str, dict[str, Callable[[], Awaitable[None]]]] = {
            "recall": {"grpc": grpc_recall, "mcp": mcp_recall},
            "remember": {"grpc": grpc_remember, "mcp": mcp_remember},
        }
        samples: dict[str, dict[str, list[float]]] = {n: {"grpc": [], "mcp": []} for n in ops}
        cpu: dict[str, dict[str, float]] = {n: {"grpc": 0.0, "mcp": 0.0} for n in ops}
        for name, pair in ops.items():
            for _ in range(30):  # warm up: connections, the embedding cache
                for op in pair.values():
                    await op()
            for i in range(calls):
                for transport in ("grpc", "mcp") if i % 2 == 0 else ("mcp", "grpc"):
                    t0 = time.perf_counter()
                    await pair[transport]()
                    samples[name][transport].append(time.perf_counter() - t0)
            # The daemon's CPU per call, in alternating blocks (load-independent).
            for _ in range(4):
                for transport in ("grpc", "mcp"):
                    before = d.cpu_s()
                    for _ in range(BLOCK):
                        await pair[transport]()
                    cpu[name][transport] += d.cpu_s() - before
    out: dict[str, Any] = {"memories": memories, "calls": calls}
    for name, by in samples.items():
        g, m = pct(by["grpc"]), pct(by["mcp"])
        per_call = {t: round(cpu[name][t] / (4 * BLOCK) * 1e6) for t in ("grpc", "mcp")}
        out[name] = {
            "grpc": g,
            "mcp": m,
            "mcp_adds_p50_ms": round(m["p50"] - g["p50"], 3),
            "daemon_cpu_us_per_call": per_call,
            "mcp_adds_cpu_ms": round((per_call["mcp"] - per_call["grpc"]) / 1000, 3),
        }
    return out


def mcp_overhead(tmp: Path, memories: int = 2_000, calls: int = 300) -> dict[str, Any]:
    """One daemon (local model, MCP on), recall and remember over both transports."""
    d = Daemon(tmp / "mcp" / "data", env={"MEMORYD_MCP__LISTEN": "127.0.0.1:0"}).start()
    try:
        result = asyncio.run(_measure(d, memories, calls))
    finally:
        d.stop()
    log(f"mcp: {result}")
    return result


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="memoryd-mcp-bench-") as tmp:
        n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
        print(json.dumps(mcp_overhead(Path(tmp), calls=n), indent=2))
