"""Shared pieces of the bench: the machine, percentiles, a daemon in a subprocess,
the data set (texts and vectors), and gRPC helpers."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import platform
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd.embedding.local import LocalMiniLMEmbedder
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

REPO = Path(__file__).resolve().parent.parent
DIM = 384
F32 = np.ndarray[Any, np.dtype[np.float32]]


# -- the machine -----------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    versions = {}
    for dist in (
        "grpcio",
        "protobuf",
        "lancedb",
        "numpy",
        "onnxruntime",
        "usearch",
        "qdrant-client",
    ):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        # Other work on the box skews every number: say how busy it was at the start.
        "load_average_1m_at_start": round(os.getloadavg()[0], 2),
        "ram_gb": round(mem_kb / 2**20, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": versions,
    }


def calibration() -> dict[str, float]:
    """A few seconds of fixed work, timed: this shared machine's speed drifts by tens of
    percent between runs, so a report carries it (at its start and end) and readers can
    tell a slow machine from a slow build. The product is the floor's kind of work;
    "cold" flushes the caches first, as the requests between two recalls do."""
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((10_000, 384), dtype=np.float32)
    query = rng.standard_normal(384, dtype=np.float32)
    flush = np.ones(16 * 2**20, dtype=np.float32)  # 64 MB, more than any L3 here
    hot, cold, loop = [], [], []
    for _ in range(5):
        matrix @ query
    for _ in range(200):
        t0 = time.perf_counter()
        matrix @ query
        hot.append(time.perf_counter() - t0)
    for _ in range(30):
        flush += 1.0
        t0 = time.perf_counter()
        matrix @ query
        cold.append(time.perf_counter() - t0)
    for _ in range(20):
        t0 = time.perf_counter()
        sum(i * i for i in range(100_000))
        loop.append(time.perf_counter() - t0)
    return {
        "product_10k_hot_us": round(float(np.median(hot)) * 1e6, 1),
        "product_10k_cold_us": round(float(np.median(cold)) * 1e6, 1),
        "python_loop_ms": round(float(np.median(loop)) * 1e3, 2),
    }


# -- statistics ------------------------------------------------------------------


def pct(samples_s: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 in milliseconds."""
    if not samples_s:
        return {"p50": float("nan"), "p95": float("nan"), "p99": float("nan"), "n": 0}
    arr = np.asarray(samples_s) * 1000
    out = {f"p{p}": round(float(np.percentile(arr, p)), 3) for p in (50, 95, 99)}
    out["n"] = len(samples_s)
    return out


def timed(fn: Callable[[], Any], n: int, warmup: int = 5) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def recall_at_k(got: Sequence[Sequence[str]], want: Sequence[Sequence[str]]) -> float:
    scores = [len(set(g) & set(w)) / max(1, len(w)) for g, w in zip(got, want, strict=True)]
    return round(float(np.mean(scores)), 4) if scores else float("nan")


def cpu_s(pid: int) -> float:
    """CPU seconds process ``pid`` used so far (user + system, all threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


# -- the daemon ------------------------------------------------------------------


@dataclass
class Daemon:
    """A memoryd process on 127.0.0.1:<ephemeral> with its own data dir; its JSON log
    goes to ``<data_dir>.log`` (the bench reads "hot partition indexed" from it)."""

    data_dir: Path
    embedder: str = "e5"
    env: dict[str, str] = field(default_factory=dict)
    #: The gRPC address (an ephemeral port unless a run on a shared box is given a range).
    listen: str = "127.0.0.1:0"
    process: subprocess.Popen[bytes] | None = None
    address: str = ""
    cold_start_s: float = 0.0

    @property
    def log_path(self) -> Path:
        return self.data_dir.with_suffix(".log")

    def start(self, timeout_s: float = 120) -> Daemon:
        ready = self.data_dir.with_suffix(".ready")
        ready.unlink(missing_ok=True)
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "MEMORYD_LOGGING__FORMAT": "json",
            "MEMORYD_EMBEDDER": self.embedder,
            **self.env,
        }
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memoryd",
                "serve",
                "--listen",
                self.listen,
                "--data-dir",
                str(self.data_dir),
                "--ready-file",
                str(ready),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log_path.open("ab"),
            cwd=REPO,
        )
        deadline = time.monotonic() + timeout_s
        while not ready.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"memoryd exited:\n{self.log_path.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("memoryd did not start in time")
            time.sleep(0.005)
        self.cold_start_s = time.perf_counter() - started
        self.address = ready.read_text()
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def cpu_s(self) -> float:
        """CPU seconds the daemon used so far (user + system, all threads)."""
        return cpu_s(self.pid)

    def settle(self, timeout_s: float = 120.0, busy: float = 0.05) -> float:
        """Wait until the daemon's background work after an ingest (LanceDB compaction,
        index refresh, log checkpoints) is done: under ``busy`` of a core for 1 s.
        Returns the seconds waited (reported: it is part of the cost of ingesting)."""
        started = time.perf_counter()
        while time.perf_counter() - started < timeout_s:
            before = self.cpu_s()
            time.sleep(1.0)
            if self.cpu_s() - before < busy:
                break
        return round(time.perf_counter() - started, 1)

    def log_events(self, event: str) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if event in line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out

    def wait_log(self, event: str, count: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if len(self.log_events(event)) >= count:
                return True
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> Daemon:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def channel(address: str) -> grpc.Channel:
    return grpc.insecure_channel(
        address,
        options=[
            ("grpc.max_send_message_length", 64 << 20),
            ("grpc.max_receive_message_length", 64 << 20),
        ],
    )


def health_check(ch: grpc.Channel) -> Callable[[], Any]:
    stub = health_pb2_grpc.HealthStub(ch)
    request = health_pb2.HealthCheckRequest(service="")
    return lambda: stub.Check(request)


# -- the data ----------------------------------------------------------------------

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
    "dark blue slides", "the quarterly report", "a dentist appointment", "PostgreSQL upgrades",
    "oat milk coffee", "the Berlin offsite", "weekly one-on-ones", "TypeScript strict mode",
    "the hiking trip", "a new laptop", "the billing bug", "Friday deploys",
]  # fmt: skip
WHEN = ["on Monday", "last week", "in March", "after the demo", "every sprint", "before lunch"]


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def sentence(rng: random.Random, i: int) -> str:
    return (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"{rng.choice(WHEN)} (note {i})"
    )


def query_text(rng: random.Random, i: int) -> str:
    return f"what does {rng.choice(SUBJECTS)} think about {rng.choice(OBJECTS)}? #{i}"


class VectorSource:
    """Vectors shaped like real MiniLM embeddings: each is a random mix of two real
    embeddings (of generated sentences) plus noise of a third of its norm, so the data
    has the clustered structure of real text (HNSW's behaviour depends on it) while
    no two vectors are near-duplicates (the daemon would merge those)."""

    def __init__(self, base: F32, seed: int) -> None:
        self.base = base
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_model(cls, n_base: int, seed: int = 0) -> VectorSource:
        return cls(embed_texts([sentence(random.Random(seed + i), i) for i in range(n_base)]), seed)

    def take(self, n: int) -> F32:
        rng, base = self.rng, self.base
        a = rng.integers(0, len(base), n)
        b = rng.integers(0, len(base), n)
        w = rng.uniform(0.5, 1.0, (n, 1)).astype(np.float32)
        x = base[a] * w + base[b] * (1 - w)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        noise = rng.standard_normal((n, base.shape[1]), dtype=np.float32)
        noise *= 0.35 / np.linalg.norm(noise, axis=1, keepdims=True)
        x += noise
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        return x.astype(np.float32)


def embed_texts(texts: Sequence[str], threads: int = 2) -> F32:
    """The daemon's own local model, in this process (same weights, same pooling)."""

    async def run() -> F32:
        model = LocalMiniLMEmbedder(threads=threads)
        try:
            out: F32 = await model.embed(list(texts))
            return out
        finally:
            await model.close()

    return asyncio.run(run())


def exact_top_k(vectors: F32, query: F32, k: int) -> np.ndarray[Any, np.dtype[np.intp]]:
    """The floor's search: one matrix-vector product and a partial sort."""
    sims = vectors @ query
    top = np.argpartition(-sims, k - 1)[:k]
    result: np.ndarray[Any, np.dtype[np.intp]] = top[np.argsort(-sims[top])]
    return result


# -- writing through the daemon -----------------------------------------------------


def batches(n: int, size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, size):
        yield start, min(n, start + size)


def remember_batch_request(
    agent: str, texts: Sequence[str], vectors: F32 | None
) -> mpb.RememberBatchRequest:
    # One tolist() for the batch: a repeated float field filled from a NumPy row
    # converts each element separately (~55 ms per 1,000 rows against ~20).
    rows: list[list[float]] = [[]] * len(texts) if vectors is None else vectors.tolist()
    items = [
        mpb.RememberRequest(content=t, embedding=row) for t, row in zip(texts, rows, strict=True)
    ]
    return mpb.RememberBatchRequest(agent_id=agent, items=items)


def ingest(
    stub: mgrpc.MemoryServiceStub,
    agent: str,
    texts: Sequence[str],
    vectors: F32,
    batch: int = 1000,
) -> list[str]:
    """RememberBatch with client vectors; the ids in input order."""
    ids: list[str] = []
    for start, end in batches(len(texts), batch):
        response = stub.RememberBatch(
            remember_batch_request(agent, texts[start:end], vectors[start:end]), timeout=600
        )
        ids.extend(r.memory.id for r in response.results)
    return ids


def recall_request(agent: str, vector: F32 | None = None, text: str = "") -> mpb.RecallRequest:
    return mpb.RecallRequest(
        agent_id=agent,
        query=text,
        query_embedding=[] if vector is None else vector,
        limit=10,
    )
