"""What MCP adds over gRPC: the same recall and remember, by the same daemon, as an MCP
tool call over Streamable HTTP (the official SDK's client) and as a gRPC call, in one
run, interleaved call by call (the order rotates every call, so all see the same load).

Both send text (the daemon embeds it; the query texts repeat, so recall's embeddings
come from the cache after the warm-up, as a busy agent's would), both are async clients
in one event loop. Reported: p50/p99 per transport and the p50 difference in ms
(target: MCP adds <= 2 ms), and the CPU per call of the daemon and of this process (the
clients), in alternating blocks of one transport's calls.

``--against REV`` (or ``against=``) also starts a daemon from REV's server/ (``git
archive``, run from this venv on PYTHONPATH) on the same data and interleaves its calls
with this tree's: a before/after of the MCP path in one run, under one load.

    python bench/mcp_overhead.py [calls] [--against REV]      # prints the JSON result
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx2
from common import REPO, Daemon, log, pct, query_text, sentence
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

AGENT = "mcp-bench"
#: Calls per block when the CPU per call is read.
BLOCK = 50
TRANSPORTS = ("grpc", "mcp")
OPS = ("recall", "remember")

Op = Callable[[], Awaitable[None]]


@dataclass
class Target:
    """One daemon and its clients: its ops per (op name, transport)."""

    name: str
    daemon: Daemon
    ops: dict[str, dict[str, Op]] = field(default_factory=dict)
    samples: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {n: {t: [] for t in TRANSPORTS} for n in OPS}
    )
    daemon_cpu: dict[str, dict[str, float]] = field(
        default_factory=lambda: {n: dict.fromkeys(TRANSPORTS, 0.0) for n in OPS}
    )
    client_cpu: dict[str, dict[str, float]] = field(
        default_factory=lambda: {n: dict.fromkeys(TRANSPORTS, 0.0) for n in OPS}
    )

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        calls = 4 * BLOCK
        for name, by in self.samples.items():
            g, m = pct(by["grpc"]), pct(by["mcp"])
            daemon = {t: round(self.daemon_cpu[name][t] / calls * 1e6) for t in TRANSPORTS}
            client = {t: round(self.client_cpu[name][t] / calls * 1e6) for t in TRANSPORTS}
            out[name] = {
                "grpc": g,
                "mcp": m,
                "mcp_adds_p50_ms": round(m["p50"] - g["p50"], 3),
                "daemon_cpu_us_per_call": daemon,
                "mcp_adds_cpu_ms": round((daemon["mcp"] - daemon["grpc"]) / 1000, 3),
                "client_cpu_us_per_call": client,
                "mcp_adds_client_cpu_ms": round((client["mcp"] - client["grpc"]) / 1000, 3),
            }
        return out


def _mcp_url(d: Daemon) -> str:
    return str(d.log_events('"serving"')[-1]["mcp"])


@asynccontextmanager
async def _connected(target: Target, rng: random.Random, queries: list[str]) -> AsyncIterator[None]:
    """The target's gRPC and MCP clients, and its ops on them."""
    counter = iter(range(10**6, 10**9))
    async with (
        grpc.aio.insecure_channel(target.daemon.address) as channel,
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(_mcp_url(target.daemon), http_client=http)) as mcp,
    ):
        stub = mgrpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]

        async def grpc_recall() -> None:
            await stub.Recall(mpb.RecallRequest(agent_id=AGENT, query=rng.choice(queries), limit=5))

        async def mcp_recall() -> None:
            arguments = {"query": rng.choice(queries), "limit": 5, "agent_id": AGENT}
            r = await mcp.call_tool("recall", arguments)
            assert not r.is_error, r.content

        async def grpc_remember() -> None:
            text = sentence(rng, next(counter))
            await stub.Remember(mpb.RememberRequest(agent_id=AGENT, content=text))

        async def mcp_remember() -> None:
            arguments = {"content": sentence(rng, next(counter)), "agent_id": AGENT}
            r = await mcp.call_tool("remember", arguments)
            assert not r.is_error, r.content

        target.ops = {
            "recall": {"grpc": grpc_recall, "mcp": mcp_recall},
            "remember": {"grpc": grpc_remember, "mcp": mcp_remember},
        }
        yield


async def _seed(d: Daemon, memories: int) -> None:
    rng = random.Random(7)  # the same memories in every daemon
    async with grpc.aio.insecure_channel(d.address) as channel:
        stub = mgrpc.MemoryServiceStub(channel)  # type: ignore[no-untyped-call]
        for start in range(0, memories, 500):
            items = [
                mpb.RememberRequest(content=sentence(rng, i))
                for i in range(start, min(start + 500, memories))
            ]
            await stub.RememberBatch(mpb.RememberBatchRequest(agent_id=AGENT, items=items))


async def _measure(targets: list[Target], memories: int, calls: int) -> None:
    rng = random.Random(8)
    queries = [query_text(rng, i) for i in range(100)]
    for t in targets:
        await _seed(t.daemon, memories)
    async with AsyncExitStack() as stack:
        for t in targets:
            await stack.enter_async_context(_connected(t, rng, queries))
        slots = [(t, transport) for t in targets for transport in TRANSPORTS]
        for name in OPS:
            for _ in range(30):  # warm up: connections, the embedding cache
                for t, transport in slots:
                    await t.ops[name][transport]()
            for i in range(calls):
                shift = i % len(slots)
                for t, transport in slots[shift:] + slots[:shift]:
                    t0 = time.perf_counter()
                    await t.ops[name][transport]()
                    t.samples[name][transport].append(time.perf_counter() - t0)
            # CPU per call, in alternating blocks (load-independent): the daemon's from
            # /proc, the clients' (this process) from process_time.
            for _ in range(4):
                for t, transport in slots:
                    daemon0, client0 = t.daemon.cpu_s(), time.process_time()
                    for _ in range(BLOCK):
                        await t.ops[name][transport]()
                    t.daemon_cpu[name][transport] += t.daemon.cpu_s() - daemon0
                    t.client_cpu[name][transport] += time.process_time() - client0


@contextmanager
def _code_of(rev: str) -> Iterator[Path]:
    """REV's server/ in a temporary directory (for PYTHONPATH)."""
    with tempfile.TemporaryDirectory(prefix="memoryd-mcp-against-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "server"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp) / "server"


@contextmanager
def _code_or_none(rev: str | None) -> Iterator[Path | None]:
    """REV's server/, or None without one."""
    if rev is None:
        yield None
        return
    with _code_of(rev) as code:
        yield code


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def mcp_overhead(
    tmp: Path, memories: int = 2_000, calls: int = 300, against: str | None = None
) -> dict[str, Any]:
    """One daemon (local model, MCP on), recall and remember over both transports; with
    ``against``, a second daemon of that revision interleaved with it."""
    env = {"MEMORYD_MCP__LISTEN": "127.0.0.1:0"}
    with _code_or_none(against) as old_code:
        targets = [Target("this tree", Daemon(tmp / "mcp" / "data", env=env))]
        if old_code is not None:
            old_env = {**env, "PYTHONPATH": str(old_code)}
            targets.append(Target(str(against), Daemon(tmp / "mcp-against" / "data", env=old_env)))
        try:
            for t in targets:
                t.daemon.start()
            load_before = _load()
            asyncio.run(_measure(targets, memories, calls))
        finally:
            for t in targets:
                t.daemon.stop()
    result: dict[str, Any] = {"memories": memories, "calls": calls, **targets[0].result()}
    result["load_average"] = {"start": load_before, "end": _load()}
    if against is not None:
        result["against"] = {"rev": against, **targets[1].result()}
    log(f"mcp: {result}")
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("calls", nargs="?", type=int, default=300)
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--against", help="a git revision whose daemon runs beside this tree's")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memoryd-mcp-bench-") as tmp:
        out = mcp_overhead(Path(tmp), args.memories, args.calls, args.against)
        json.dump(out, sys.stdout, indent=2)
        print()
