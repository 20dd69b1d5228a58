"""Recall latency over gRPC at 10k memories in one agent, and the daemon's footprint.

Starts a real daemon (local model, LanceDB in a temp dir), ingests N memories through
RememberBatch, then measures Recall with a supplied vector, with a text query (every
query new, so the embedding cache never hits) and with a repeated text query.
Prints percentiles; writes JSON with --json-out. Usage:

    python bench/recall_latency.py [--memories 10000] [--queries 300]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import numpy as np

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

SUBJECTS = [
    "The user",
    "Alice",
    "Bob",
    "The team",
    "My manager",
    "The customer",
    "Our CI",
    "The agent",
]
VERBS = [
    "prefers",
    "dislikes",
    "asked about",
    "scheduled",
    "forgot",
    "reviewed",
    "deployed",
    "mentioned",
]
OBJECTS = [
    "dark blue slides",
    "the quarterly report",
    "a dentist appointment",
    "PostgreSQL upgrades",
    "oat milk coffee",
    "the Berlin offsite",
    "weekly one-on-ones",
    "TypeScript strict mode",
    "the hiking trip",
    "a new laptop",
    "the billing bug",
    "Friday deploys",
]


def sentence(rng: random.Random, i: int) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentiles(samples_s: list[float]) -> dict[str, float]:
    arr = np.array(samples_s) * 1000
    return {f"p{p}": round(float(np.percentile(arr, p)), 3) for p in (50, 95, 99)}


def start_daemon(data_dir: Path, embedder: str) -> tuple[subprocess.Popen[bytes], str]:
    ready = data_dir.parent / "ready"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memoryd",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            str(data_dir),
            "--ready-file",
            str(ready),
            "--embedder",
            embedder,
        ],
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MEMORYD_LOGGING__LEVEL": "warning"},
    )
    started = time.perf_counter()
    while not ready.exists():
        if proc.poll() is not None:
            raise SystemExit("daemon failed to start")
        time.sleep(0.01)
    print(f"cold start to SERVING ({embedder}): {time.perf_counter() - started:.2f} s")
    return proc, ready.read_text()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    rng = random.Random(7)
    report: dict[str, object] = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    }

    with tempfile.TemporaryDirectory() as tmp:
        proc_h, _ = start_daemon(Path(tmp) / "h" / "data", "hashing")
        report["idle_rss_mb_without_model"] = round(rss_mb(proc_h.pid), 1)
        proc_h.terminate()
        proc_h.wait()

        proc, address = start_daemon(Path(tmp) / "l" / "data", "local")
        report["idle_rss_mb_with_model"] = round(rss_mb(proc.pid), 1)
        try:
            with grpc.insecure_channel(address) as channel:
                stub = mgrpc.MemoryServiceStub(channel)
                texts = [sentence(rng, i) for i in range(args.memories)]
                started = time.perf_counter()
                for i in range(0, len(texts), 500):
                    items = [mpb.RememberRequest(content=t) for t in texts[i : i + 500]]
                    stub.RememberBatch(mpb.RememberBatchRequest(agent_id="bench", items=items))
                ingest_s = time.perf_counter() - started
                report["ingest_per_s_local_model"] = round(args.memories / ingest_s, 1)
                report["rss_mb_after_ingest"] = round(rss_mb(proc.pid), 1)

                dim = 384
                vectors = (
                    np.random.default_rng(1).standard_normal((args.queries, dim)).astype(np.float32)
                )
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

                def timed(requests: list[mpb.RecallRequest]) -> list[float]:
                    for r in requests[:10]:
                        stub.Recall(r)  # warm-up
                    samples = []
                    for r in requests:
                        t0 = time.perf_counter()
                        stub.Recall(r)
                        samples.append(time.perf_counter() - t0)
                    return samples

                vec_reqs = [
                    mpb.RecallRequest(agent_id="bench", query_embedding=v.tolist(), limit=10)
                    for v in vectors
                ]
                report["recall_vector_ms"] = percentiles(timed(vec_reqs))
                text_reqs = [
                    mpb.RecallRequest(
                        agent_id="bench",
                        query=f"what does {rng.choice(SUBJECTS)} think about {rng.choice(OBJECTS)}? #{i}",
                        limit=10,
                    )
                    for i in range(args.queries)
                ]
                report["recall_text_ms"] = percentiles(timed(text_reqs))
                same = [
                    mpb.RecallRequest(
                        agent_id="bench", query="who likes dark blue slides?", limit=10
                    )
                ] * args.queries
                report["recall_text_cached_ms"] = percentiles(timed(same))
        finally:
            proc.terminate()
            proc.wait()

    print(json.dumps(report, indent=2))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
