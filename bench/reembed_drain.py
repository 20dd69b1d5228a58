"""Re-embed drain rate after an embedder outage.

A real OpenAI-compatible HTTP server on loopback (deterministic vectors, answering as
fast as it can) feeds a daemon's `openai` embedder. The server fails while N memories
are written (they land in the hashing fallback space), then recovers; the script times
how long the daemon takes to re-embed them all (watched through GetStats'
by_embedding_model counts). Usage: python bench/reembed_drain.py [--memories 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import numpy as np

from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

DIM = 384
MODEL = "drain-bench"
FALLBACK = f"hashing-v1-{DIM}"


class Provider(ThreadingHTTPServer):
    failing = False


class Handler(BaseHTTPRequestHandler):
    server: Provider

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:  # http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.server.failing:
            self.send_response(500)
            self.end_headers()
            return
        data = [
            {
                "index": i,
                "embedding": np.random.default_rng(zlib.crc32(t.encode()))
                .standard_normal(DIM)
                .tolist(),
            }
            for i, t in enumerate(body["input"])
        ]
        out = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=2000)
    args = parser.parse_args()
    provider = Provider(("127.0.0.1", 0), Handler)
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "ready"
        env = {
            **os.environ,
            "MEMORYD_EMBEDDER": "openai",
            "MEMORYD_EMBEDDING__OPENAI_URL": f"http://127.0.0.1:{provider.server_port}/v1",
            "MEMORYD_EMBEDDING__OPENAI_MODEL": MODEL,
            "MEMORYD_EMBEDDING__OPENAI_DIMENSION": str(DIM),
            "MEMORYD_EMBEDDING__CACHE_SIZE": "0",
            "MEMORYD_RESILIENCE__EMBEDDER_PROBE_AFTER_S": "0.2",
            "MEMORYD_RESILIENCE__REEMBED_INTERVAL_S": "0.2",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
            "MEMORYD_METRICS__LISTEN": "127.0.0.1:0",
            "MEMORYD_LOGGING__LEVEL": "warning",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "memoryd", "serve", "--listen", "127.0.0.1:0",
             "--data-dir", f"{tmp}/data", "--ready-file", str(ready)],
            env=env, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            while not ready.exists():
                if proc.poll() is not None:
                    raise SystemExit("daemon failed to start")
                time.sleep(0.02)
            with grpc.insecure_channel(ready.read_text()) as channel:
                memory, lifecycle = (
                    mgrpc.MemoryServiceStub(channel),
                    lgrpc.LifecycleServiceStub(channel),
                )
                provider.failing = True
                for start in range(0, args.memories, 500):
                    items = [
                        mpb.RememberRequest(content=f"outage memory {i}: note about topic {i % 37}")
                        for i in range(start, min(start + 500, args.memories))
                    ]
                    memory.RememberBatch(
                        mpb.RememberBatchRequest(agent_id="drain", items=items), timeout=120
                    )

                def fallback_count() -> int:
                    stats = lifecycle.GetStats(lpb.GetStatsRequest(agent_id="drain"))
                    return sum(c.count for c in stats.by_embedding_model if c.name == FALLBACK)

                queued = fallback_count()
                provider.failing = False
                started = time.perf_counter()
                while (left := fallback_count()) > 0:
                    if time.perf_counter() - started > 600:
                        raise SystemExit(f"drain did not finish: {left} left")
                    time.sleep(0.05)
                elapsed = time.perf_counter() - started
                result = {
                    "queued": queued,
                    "drain_s": round(elapsed, 2),
                    "per_s": round(queued / elapsed, 1),
                }
                print(json.dumps(result))
        finally:
            proc.terminate()
            proc.wait()
            provider.shutdown()


if __name__ == "__main__":
    main()
