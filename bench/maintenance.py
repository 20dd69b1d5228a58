"""Snapshot and maintenance costs over gRPC, against a real daemon (local model,
LanceDB in a temp dir).

1. BuildSnapshot latency with 10k memories in the agent (plus a profile, working
   memory and a session): every section, default budget (500), markdown and XML;
   the trigger text is embedded by the daemon, as a client would send it.
2. RunMaintenance on an agent with 100k memories: wall time, and Recall latency
   (p50/p99) measured concurrently from another thread, both on another agent and
   on the agent being maintained, against the same recalls with the daemon idle.
   The 100k memories are set up so every step has work: 2% created 400 days ago
   (retention_days 365), 1% expiring, tags giving 40 groups of ~2,500 (merge
   threshold 50) with 1% near-duplicates to merge, and max_entries 10,000 (the
   default), so ~87k are archived.

Memories are written with client vectors shaped like real MiniLM embeddings
(common.VectorSource) and remember-time dedup off, so loading 100k takes seconds
instead of embedding 100k texts; the maintained data is the same either way.

    python bench/maintenance.py [--snapshot-memories 10000] [--maintenance-memories 100000]
                                [--snapshots 200] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    F32,
    Daemon,
    VectorSource,
    batches,
    channel,
    machine,
    pct,
    query_text,
    recall_request,
    sentence,
    timed,
)
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub

SNAP_AGENT = "bench-snapshot"
MAINT_AGENT = "bench-maintenance"
TAGS = [f"topic-{i:02d}" for i in range(40)]


def load(
    stub: MemoryServiceStub,
    agent: str,
    n: int,
    vectors: VectorSource,
    *,
    seed: int,
    aged: float = 0.0,
    expiring: float = 0.0,
    duplicates: float = 0.0,
) -> tuple[float, datetime]:
    """Write n memories in batches of 1000; returns the seconds taken and when the
    last expiring memory expires."""
    rng = random.Random(seed)
    started = time.perf_counter()
    last_expiry = datetime.now(UTC)
    for start, end in batches(n, 1000):
        now = datetime.now(UTC)
        vecs: F32 = vectors.take(end - start)
        items = []
        for j, i in enumerate(range(start, end)):
            text = sentence(rng, i)
            vec = vecs[j]
            if duplicates and rng.random() < duplicates and j:
                # A near-duplicate of the previous memory (same tags, tiny change).
                text, vec = items[-1].content + " again", vecs[j - 1] + np.float32(0.01) * vecs[j]
                vec = vec / np.linalg.norm(vec)
            item = mpb.RememberRequest(
                content=text,
                embedding=vec,
                tags=[TAGS[i % len(TAGS)]]
                if not (duplicates and text.endswith(" again"))
                else items[-1].tags,
                importance=round(rng.random(), 2),
            )
            if aged and rng.random() < aged:
                item.created_at.FromDatetime(now - timedelta(days=400))
            elif expiring and rng.random() < expiring:
                last_expiry = now + timedelta(seconds=30)
                item.expires_at.FromDatetime(last_expiry)
            items.append(item)
        stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items), timeout=600)
    return time.perf_counter() - started, last_expiry


def setup_snapshot_agent(memory: MemoryServiceStub) -> None:
    memory.SetProfile(
        mpb.SetProfileRequest(
            agent_id=SNAP_AGENT,
            content="# Assistant\nYou help one user plan their work. Be concise; cite memories.",
        )
    )
    content = struct_pb2.Struct()
    content.update(
        {"goal": "prepare the quarterly report", "step": 3, "open": ["figures", "slides"]}
    )
    memory.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=SNAP_AGENT, scope=pb.WorkingMemoryScope(thread_id="t1"), content=content
        )
    )
    for i in range(5):
        memory.Remember(
            mpb.RememberRequest(
                agent_id=SNAP_AGENT,
                content=f"Pinned rule {i}: always confirm dates with the user before booking.",
                tags=["pinned"],
            )
        )
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=SNAP_AGENT,
            session_id="s1",
            messages=[
                mpb.SessionMessage(
                    role=mpb.MESSAGE_ROLE_USER if i % 2 == 0 else mpb.MESSAGE_ROLE_ASSISTANT,
                    content=f"Turn {i}: let's go through the figures for section {i}.",
                )
                for i in range(12)
            ],
        )
    )


def bench_snapshot(snapshot: SnapshotServiceStub, n: int) -> dict[str, Any]:
    rng = random.Random(7)
    out: dict[str, Any] = {}
    for name, fmt in (("markdown", spb.SNAPSHOT_FORMAT_MARKDOWN), ("xml", spb.SNAPSHOT_FORMAT_XML)):
        last: list[spb.BuildSnapshotResponse] = []

        def call(fmt: int = fmt, last: list[spb.BuildSnapshotResponse] = last) -> None:
            response = snapshot.BuildSnapshot(
                spb.BuildSnapshotRequest(
                    agent_id=SNAP_AGENT,
                    trigger=query_text(rng, rng.randrange(10_000)),
                    scope=pb.WorkingMemoryScope(thread_id="t1"),
                    session_id="s1",
                    format=fmt,  # type: ignore[arg-type]
                ),
                timeout=60,
            )
            last[:] = [response]

        out[name] = pct(timed(call, n, warmup=10))
        out[name]["tokens_used"] = last[0].tokens_used
        out[name]["items"] = len(last[0].items)
    return out


class RecallLoad:
    """Recalls in a loop from a thread until stopped; keeps each call's latency."""

    def __init__(self, address: str, agent: str, seed: int) -> None:
        self.address, self.agent = address, agent
        self.rng = random.Random(seed)
        self.samples: list[float] = []
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with channel(self.address) as ch:
            stub = MemoryServiceStub(ch)
            while not self._stop.is_set():
                request = recall_request(
                    self.agent, text=query_text(self.rng, self.rng.randrange(10**6))
                )
                t0 = time.perf_counter()
                try:
                    stub.Recall(request, timeout=60)
                except Exception:
                    self.errors += 1
                    continue
                self.samples.append(time.perf_counter() - t0)
                time.sleep(0.01)  # ~ a busy agent, not a flood

    def __enter__(self) -> RecallLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def recall_baseline(address: str, agent: str, seconds: float) -> dict[str, Any]:
    with RecallLoad(address, agent, seed=1) as load:
        time.sleep(seconds)
    return pct(load.samples)


def warm_up(daemon: Daemon) -> float:
    """Load both agents into the daemon's hot cache and wait for the 100k agent's HNSW
    graph, so the idle baseline is not a cold start; returns seconds taken."""
    started = time.perf_counter()
    with channel(daemon.address) as ch:
        stub = MemoryServiceStub(ch)
        for agent in (SNAP_AGENT, MAINT_AGENT):
            stub.Recall(recall_request(agent, text="warm up"), timeout=600)
    if not daemon.wait_log("hot partition indexed", 1, timeout_s=1800):
        print("warning: the HNSW graph was not built in time", file=sys.stderr)
    return time.perf_counter() - started


def bench_maintenance(address: str, lifecycle: LifecycleServiceStub) -> dict[str, Any]:
    baseline = {
        "other_agent": recall_baseline(address, SNAP_AGENT, 15),
        "maintained_agent": recall_baseline(address, MAINT_AGENT, 15),
    }
    phases: list[tuple[str, float]] = []
    with RecallLoad(address, SNAP_AGENT, 2) as other, RecallLoad(address, MAINT_AGENT, 3) as same:
        started = time.perf_counter()
        result = None
        for event in lifecycle.RunMaintenance(
            lpb.RunMaintenanceRequest(agent_id=MAINT_AGENT, retention_days=365), timeout=7200
        ):
            if event.WhichOneof("event") == "progress":
                if not phases or phases[-1][0] != event.progress.phase:
                    phases.append((event.progress.phase, time.perf_counter() - started))
            else:
                result = event.result
        wall = time.perf_counter() - started
    assert result is not None
    return {
        "wall_s": round(wall, 2),
        "phases_started_at_s": {name: round(at, 2) for name, at in phases},
        "result": {
            "archived": result.archived,
            "deleted_by_retention": result.deleted_by_retention,
            "expired": result.expired,
            "compacted": result.compacted,
        },
        "recall_idle_ms": baseline,
        "recall_during_ms": {
            "other_agent": pct(other.samples),
            "maintained_agent": pct(same.samples),
        },
        "recall_errors": other.errors + same.errors,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot-memories", type=int, default=10_000)
    parser.add_argument("--maintenance-memories", type=int, default=100_000)
    parser.add_argument("--snapshots", type=int, default=200)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()

    report: dict[str, Any] = {"machine": machine(), "args": vars(args) | {"json_out": None}}
    vectors = VectorSource.from_model(2000)
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-") as tmp:
        env = {
            "MEMORYD_DEDUP__ENABLED": "false",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
            "MEMORYD_METRICS__LISTEN": "127.0.0.1:0",
        }
        with Daemon(Path(tmp) / "data", env=env) as daemon, channel(daemon.address) as ch:
            memory = MemoryServiceStub(ch)
            snapshot = SnapshotServiceStub(ch)
            lifecycle = LifecycleServiceStub(ch)

            took, _ = load(memory, SNAP_AGENT, args.snapshot_memories, vectors, seed=11)
            setup_snapshot_agent(memory)
            print(f"loaded {args.snapshot_memories} memories in {took:.1f}s", file=sys.stderr)
            report["snapshot"] = {
                "memories": args.snapshot_memories,
                "budget": 500,
                "latency_ms": bench_snapshot(snapshot, args.snapshots),
            }
            print(json.dumps(report["snapshot"], indent=2), file=sys.stderr)

            took, expiry = load(
                memory,
                MAINT_AGENT,
                args.maintenance_memories,
                vectors,
                seed=12,
                aged=0.02,
                expiring=0.01,
                duplicates=0.01,
            )
            print(f"loaded {args.maintenance_memories} memories in {took:.1f}s", file=sys.stderr)
            time.sleep(max(0.0, (expiry - datetime.now(UTC)).total_seconds()) + 1)
            warm = warm_up(daemon)
            report["maintenance"] = {
                "memories": args.maintenance_memories,
                "load_s": round(took, 1),
                "warm_up_s": round(warm, 1),
                **bench_maintenance(daemon.address, lifecycle),
            }
            stats = lifecycle.GetStats(lpb.GetStatsRequest(agent_id=MAINT_AGENT))
            report["maintenance"]["after"] = {
                "memories": stats.memories,
                "archived": stats.archived,
            }
            report["daemon_rss_mb"] = daemon.rss_mb()
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
