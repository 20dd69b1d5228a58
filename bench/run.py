"""`make bench`: memoryd against the floor and the peers, in one run, on this machine.

Sections (each on a fresh daemon with LanceDB in a temp dir and the local model):
  footprint   time and CPU to SERVING, idle RSS and RSS after the first calls, with and
              without the model, and the import profile of a start (bench/footprint.py)
  model       the local model's own single-query time and batch throughput
  recall      Recall over gRPC on loopback, k = 10, filtered to the agent, vector supplied
              (recall@10 against exact NumPy), text query (new and repeated) and Remember,
              at 10k and 100k memories in one agent and at 1M over 100 agents; the
              floor (NumPy brute force over the agent's vectors + an empty gRPC round
              trip, Health Check); raw LanceDB (flat, IVF_HNSW_SQ), qdrant-client local,
              qdrant-edge
  sweep       1 / 8 / 32 / 64 concurrent grpc.aio clients on Recall at 10k: RPS, p99
  servers     grpc.aio against the sync server with a thread pool, each answering Recall
              with a prebuilt response (the framework's own cost), and grpc.aio with
              memoryd's call path: RPS and latency at 1 and 32 Go clients
  writes      RememberBatch with client vectors (1 and 8 writers) and with the local
              embedder (REALTALK turns, 100 a call, 1 and 8 writers); Remember
              single-item latency (bench/writes.py); BuildSnapshot at 10k; the write
              path beside its floor (grpc.aio + a group-committed fsynced file) and
              the previous release: SetMemory 1 and 8 writers (the 8-writer run on
              memoryd lasts --write-seconds), Remember 8 writers, a new agent's first
              write, and with --soak-minutes a soak at half capacity, plotted
              (bench/write_path.py)
  tracing     Recall and Remember p50 with tracing off and on (OTLP/gRPC to a receiver in
              the bench), alternated round by round (bench/footprint.py)
  mixed       32 Go clients on 8 agents: reads only, writes only, then mixed Remember /
              RememberBatch / SetMemory / hybrid Recall (20/5/15/60 %): RPS and
              p50/p95/p99 per method; replay rate after a SIGKILL with 10k pending
              entries; SIGTERM-to-exit with a 1,000-item batch in flight (bench/mixed.py)
  mcp         recall and remember as MCP tool calls over Streamable HTTP (the SDK's
              client) beside the same gRPC calls, interleaved call by call: p50/p99, what
              MCP adds, the daemon's CPU per call (bench/mcp_overhead.py)
  keyed       DefaultRead (first read, 300 and 2,000 tokens, with a tag), GetKey and ListKeys
              at 1k, 10k and 100k keys in one agent, SetMemory at 1k (bench/keyed_latency.py;
              --quick: 1k and 10k)
  watch       the change feed: changes/s to one catch-up watcher, a writer's rate beside
              four stalled watchers against alone (bench/watch_feed.py)
  qdrant      memoryd in shared mode over a real Qdrant server against qdrant-client on
              the same server and collection: vector and text Recall and Remember at 10k
              and 100k memories in one agent, one and three replicas, a concurrency
              sweep, and what shared mode costs (bench/qdrant_server_bench.py; --quick:
              10k). Skipped, saying why, without a Qdrant server binary
  schemas     one tenant's schema-checked SetWorkingMemory and Remember, alone and while
              two other tenants send schemas that take a whole check's CPU budget:
              p50/p99 and the loaded/unloaded ratio, with the per-tenant schema budget
              and without it (bench/schema_fairness.py)
  mem0        mem0 (infer=False, same embedder, its default local store) add and search
  quality     bench/quality.py: today's defaults (baseline commit) against the new
              ones on all of REALTALK (dev and held-out chats) and 4 MemDaily files;
              --quick: 3 chats. Embeddings cached in bench/.cache after the first run

Writes bench/results/report-<date>.md and bench/results/<date>.json (with --quick:
report-<date>-quick.md and <date>-quick.json).

    python bench/run.py [--quick] [--only recall,sweep,...] [--skip mem0,...]
                        [--write-seconds 300] [--soak-minutes 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import grpc_servers
import keyed_latency
import numpy as np
import peers
import qdrant_server_bench
import recall_throughput
import watch_feed
from common import (
    F32,
    REPO,
    Daemon,
    LocalMiniLMEmbedder,
    VectorSource,
    batches,
    calibration,
    channel,
    exact_top_k,
    health_check,
    ingest,
    log,
    machine,
    pct,
    query_text,
    recall_at_k,
    recall_request,
    sentence,
    timed,
)
from footprint import footprint, tracing_overhead
from mcp_overhead import mcp_overhead
from mixed import mixed
from report import render
from schema_fairness import schema_fairness
from write_path import run as write_path
from writes import embedder_write_texts, writes

from memoryd.embedding.local import E5SmallEmbedder, OnnxEmbedder
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
#: The Go load generator (bench/loadgen), built by `make bench`.
LOADGEN = BENCH / ".bin" / "loadgen"
SECTIONS = (
    "footprint", "model", "recall", "sweep", "servers", "writes", "tracing", "mixed", "mcp",
    "keyed", "watch", "qdrant", "schemas", "mem0", "quality",
)  # fmt: skip

FULL = {
    "tiers": [("10k", 10_000, 1), ("100k", 100_000, 1), ("1M/100 agents", 1_000_000, 100)],
    "queries": 500, "text_queries": 300, "sweep_s": 5.0, "peer_queries": 200,
    "writes": 20_000, "embed_writes": 2_000, "mem0": 1_000, "cold_starts": 3,
    "ingest_budget_s": 420, "qdrant_local_max": 10_000, "remember_calls": 200,
    "trace_memories": 10_000, "trace_rounds": 12, "trace_calls": 100,
    "mixed_memories": 1_000, "mixed_s": 60.0, "replay_entries": 10_000, "replay_write_s": 7.0,
    "mcp_memories": 10_000, "mcp_calls": 500,
    "keyed_tiers": (1_000, 10_000, 100_000), "keyed_reads": 200, "schema_rounds": 200,
    "write_s": 20.0, "write_long_s": 300.0, "watch_events": 50_000, "watch_write_s": 10.0,
}  # fmt: skip
QUICK = {
    "tiers": [("10k", 10_000, 1), ("20k/10 agents", 20_000, 10)],
    "queries": 200, "text_queries": 100, "sweep_s": 2.0, "peer_queries": 100,
    "writes": 3_000, "embed_writes": 300, "mem0": 100, "cold_starts": 1,
    "ingest_budget_s": 30, "qdrant_local_max": 0, "remember_calls": 40,
    "trace_memories": 2_000, "trace_rounds": 6, "trace_calls": 60,
    "mixed_memories": 50, "mixed_s": 5.0, "replay_entries": 2_000, "replay_write_s": 2.0,
    "mcp_memories": 1_000, "mcp_calls": 150,
    "keyed_tiers": (1_000, 10_000), "keyed_reads": 100, "schema_rounds": 40,
    "write_s": 5.0, "write_long_s": 15.0, "watch_events": 5_000, "watch_write_s": 3.0,
}  # fmt: skip
#: Concurrent RememberBatch calls while loading a tier of several agents.
INGEST_WRITERS = 4
#: The hot cache budget for the bench (the default is 1024 MB; 1M memories need more).
BUDGET_MB = 4096


def daemon_env() -> dict[str, str]:
    return {"MEMORYD_STORAGE__HOT_CACHE__MEMORY_BUDGET_MB": str(BUDGET_MB)}


# -- model -------------------------------------------------------------------------------


def model_speed(cfg: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(3)
    queries = [query_text(rng, i) for i in range(100)]
    m = cfg["embed_writes"]
    # The texts of the 1-writer phase, then those of the 8-writer phase.
    texts = embedder_write_texts(2 * m)
    phases = {"batch_per_s": texts[:m], "batch_per_s_next_turns": texts[m:]}

    async def run(model: OnnxEmbedder) -> dict[str, Any]:
        try:
            for q in queries[:5]:
                await model.embed([q])
            samples = []
            for q in queries:
                t0 = time.perf_counter()
                await model.embed([q], kind="query")
                samples.append(time.perf_counter() - t0)
            result: dict[str, Any] = {"model": model.model_id, "single_query_ms": pct(samples)}
            for key, texts in phases.items():
                t0 = time.perf_counter()
                for start, end in batches(len(texts), 100):
                    await model.embed(texts[start:end])
                result[key] = round(len(texts) / (time.perf_counter() - t0), 1)
        finally:
            await model.close()
        return result

    # The default model (e5) at the top level, MiniLM (the option from PyPI) beside it.
    result = asyncio.run(run(E5SmallEmbedder(threads=2)))
    result["minilm"] = asyncio.run(run(LocalMiniLMEmbedder(threads=2)))
    log(f"model: {result}")
    return result


# -- recall -----------------------------------------------------------------------------


def _wait_indexed(d: Daemon, partitions: int, rows: int, timeout_s: float = 600) -> float:
    """Searches run exactly while a big partition's graph is built in the background;
    the bench measures the steady state, after the build (its time is reported)."""
    if rows < 20_000:
        return 0.0
    d.wait_log("hot partition indexed", partitions, timeout_s)
    seconds = [e.get("seconds", 0.0) for e in d.log_events("hot partition indexed")]
    return round(max(seconds, default=0.0), 1)


def recall_tier(
    tmp: Path, cfg: dict[str, Any], source: VectorSource, label: str, n: int, agents: int,
    model: dict[str, Any], *, main_tier: bool,
) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {"memories": n, "agents": agents}
    per_agent = n // agents
    names = [f"agent-{a:03d}" for a in range(agents)]
    vectors = source.take(n)
    texts = [f"{sentence(random.Random(i), i)}" for i in range(n)]
    stride = per_agent  # agent a's rows start at a * stride (even if ingest stops early)
    ids: list[str] = [""] * n
    d = Daemon(tmp / f"recall-{n}" / "data", env=daemon_env()).start()
    try:
        ch = channel(d.address)
        stub = mgrpc.MemoryServiceStub(ch)
        log(f"{label}: ingesting {n} memories with client vectors")
        t0 = time.perf_counter()
        done = 0
        # Round robin over the agents; several agents' batches in flight at once (the
        # daemon commits each partition's batches in order, different ones in parallel).
        with ThreadPoolExecutor(INGEST_WRITERS) as pool:
            for start, end in batches(per_agent, 1000):

                def one(a: int, start: int = start, end: int = end) -> None:
                    rows = slice(a * per_agent + start, a * per_agent + end)
                    ids[rows] = ingest(stub, names[a], texts[rows], vectors[rows])

                list(pool.map(one, range(agents)))
                done = end
                if time.perf_counter() - t0 > cfg["ingest_budget_s"] and done < per_agent:
                    break
        out["ingest_per_s"] = round(done * agents / (time.perf_counter() - t0))
        if done < per_agent:
            # Ingest is the bottleneck: measure on what went in, and say so.
            out["ingest_limited"] = f"{done * agents} of {n} memories in {cfg['ingest_budget_s']} s"
            per_agent, n = done, done * agents
            out["memories"] = n
            log(f"{label}: ingest-limited, measuring {n} memories")
        out["rss_after_ingest_mb"] = d.rss_mb()
        log(f"{label}: ingest {out['ingest_per_s']}/s; loading partitions")
        t0 = time.perf_counter()
        for name in names:
            stub.Recall(recall_request(name, vectors[0]))
        out["load_s"] = round(time.perf_counter() - t0, 1)
        out["index_build_s"] = _wait_indexed(d, agents, per_agent)
        # Steady state: searches measured while LanceDB compacts would measure that.
        out["settle_s"] = d.settle()
        out["rss_loaded_mb"] = d.rss_mb()

        qrng = np.random.default_rng(11)
        queries = source.take(cfg["queries"])
        which = qrng.integers(0, agents, len(queries))
        requests = [recall_request(names[w], q) for w, q in zip(which, queries, strict=True)]
        for r in requests[:10]:
            stub.Recall(r)
        samples, got = [], []
        for r in requests:
            t1 = time.perf_counter()
            response = stub.Recall(r)
            samples.append(time.perf_counter() - t1)
            got.append([x.memory.id for x in response.results])
        want, floor_samples = [], []
        for w, q in zip(which, queries, strict=True):
            rows = slice(w * stride, w * stride + per_agent)
            agent_vectors, agent_ids = vectors[rows], ids[rows]
            want.append([agent_ids[i] for i in exact_top_k(agent_vectors, q, 10)])
        for w, q in zip(which[:200], queries[:200], strict=True):
            agent_vectors = vectors[w * stride : w * stride + per_agent]
            t1 = time.perf_counter()
            exact_top_k(agent_vectors, q, 10)
            floor_samples.append(time.perf_counter() - t1)
        out["vector"] = {**pct(samples), "recall_at_10": recall_at_k(got, want)}
        out["numpy_ms"] = pct(floor_samples)
        out["health_rtt_ms"] = pct(timed(health_check(ch), 300))
        out["floor_p50_ms"] = round(out["numpy_ms"]["p50"] + out["health_rtt_ms"]["p50"], 3)
        log(f"{label}: vector {out['vector']} floor {out['floor_p50_ms']} ms")

        # Text queries (hybrid, the default) at every tier: the first one of a partition
        # builds its full-text index, so a few go first and the build is waited out.
        trng = random.Random(5)
        fresh = [
            recall_request(names[0], text=query_text(trng, i))
            for i in range(cfg["text_queries"] + 3)
        ]
        for r in fresh[:3]:
            stub.Recall(r, timeout=600)
        d.settle()
        out["text_new"] = pct(timed(_caller(stub, fresh[3:]), len(fresh) - 8))
        same = recall_request(names[0], text="who likes dark blue slides?")
        out["text_cached"] = pct(timed(lambda: stub.Recall(same), cfg["text_queries"]))
        log(f"{label}: text new {out['text_new']} cached {out['text_cached']}")
        if main_tier:
            hybrid = mpb.RecallRequest(
                agent_id=names[0], query="dark blue slides on Monday", limit=10, hybrid=True
            )
            try:
                out["text_hybrid_cached"] = pct(timed(lambda: stub.Recall(hybrid), 100))
            except grpc.RpcError as exc:
                out["text_hybrid_cached"] = {"error": exc.code().name}
            out["model_single_query_p50_ms"] = model.get("single_query_ms", {}).get("p50")
            out["snapshot"] = build_snapshot(ch, names[0], queries)
            np.save(tmp / "sweep-queries.npy", queries)
            queries.astype("<f4").tofile(tmp / "sweep-queries.f32")
            out["sweep"] = sweep(d, names[0], tmp / "sweep-queries", cfg)
            out["throughput"] = recall_throughput.run(
                LOADGEN, d.address, names[0], tmp / "sweep-queries.f32", tmp, cfg["sweep_s"], log
            )
        # Last (it adds memories): Remember of a new memory into the searched agent, whose
        # duplicate lookup searches the partition as a Recall does.
        new = source.take(cfg["remember_calls"] + 5).tolist()
        fresh_ids = iter(range(len(new)))

        def remember() -> None:
            i = next(fresh_ids)
            stub.Remember(
                mpb.RememberRequest(agent_id=names[0], content=f"late note {i}", embedding=new[i])
            )

        out["remember_vector"] = pct(timed(remember, cfg["remember_calls"], warmup=5))
        log(f"{label}: Remember into the agent {out['remember_vector']}")
        ch.close()
        out["rss_end_mb"] = d.rss_mb()
    finally:
        d.stop()

    if agents == 1 or main_tier:
        peer_q = queries[: cfg["peer_queries"]]
        peer_agent = names[0]
        rows = slice(0, per_agent)
        exact = [[ids[rows][i] for i in exact_top_k(vectors[rows], q, 10)] for q in peer_q]
        keep = np.concatenate(
            [np.arange(a * stride, a * stride + per_agent) for a in range(agents)]
        )
        agent_names = [names[a // stride] for a in keep]
        vectors, ids = vectors[keep], [ids[i] for i in keep]
        for peer, fn in (
            ("lancedb", peers.lancedb_peer),
            ("qdrant_local", peers.qdrant_local_peer),
            ("qdrant_edge", peers.qdrant_edge_peer),
        ):
            if peer == "qdrant_local" and n > cfg["qdrant_local_max"]:
                continue  # filtered search in Python over the whole collection: minutes
            log(f"{label}: peer {peer}")
            # qdrant-client local mode scans in Python (~0.7 s a query at 10k): 30 do.
            count = 30 if peer == "qdrant_local" else len(peer_q)
            try:
                out[peer] = fn(
                    tmp / f"{peer}-{n}", vectors, ids, agent_names, peer_agent,
                    peer_q[:count], exact[:count],
                )  # fmt: skip
            except Exception as exc:  # a peer failing must not lose the run
                out[peer] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            log(f"{label}: {peer} {out[peer]}")
    return out


def _caller(stub: mgrpc.MemoryServiceStub, requests: list[mpb.RecallRequest]) -> Callable[[], Any]:
    it = iter(requests)
    return lambda: stub.Recall(next(it))


def build_snapshot(ch: grpc.Channel, agent: str, queries: F32) -> dict[str, Any]:
    stub = sgrpc.SnapshotServiceStub(ch)
    request = spb.BuildSnapshotRequest(
        agent_id=agent, trigger="what is planned for the offsite?", token_budget=2000
    )
    try:
        stub.BuildSnapshot(request)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
            return {"status": "not built"}
        return {"status": exc.code().name}
    return {"status": "ok", **pct(timed(lambda: stub.BuildSnapshot(request), 200))}


def sweep(d: Daemon, agent: str, queries: Path, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """Closed-loop Recall load from the Go client (bench/loadgen: a few tens of us of
    CPU per call, so the cores go to the daemon) at 1 to 64 clients, and from Python's
    grpc.aio at 32 for comparison."""
    loadgen = [str(LOADGEN)] if LOADGEN.is_file() else None
    python = [sys.executable, str(BENCH / "load.py")]
    runs = [(loadgen or python, clients) for clients in (1, 8, 32, 64)]
    if loadgen:
        runs.append((python, 32))
    rows = []
    for command, clients in runs:
        suffix = ".npy" if command is python else ".f32"
        done = subprocess.run(
            [*command, d.address, agent, f"{queries}{suffix}", str(clients), str(cfg["sweep_s"])],
            capture_output=True, text=True, cwd=REPO, timeout=600,
        )  # fmt: skip
        row = (
            json.loads(done.stdout.strip().splitlines()[-1])
            if done.returncode == 0
            else {"clients": clients, "error": done.stderr[-500:]}
        )
        row.setdefault("client", "python")
        log(f"sweep: {row}")
        rows.append(row)
    return rows


# -- gRPC server kinds ---------------------------------------------------------------------


def servers(tmp: Path, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    if not LOADGEN.is_file():
        return [{"error": f"{LOADGEN} not built (make bench builds it)"}]
    queries = tmp / "servers-queries.f32"
    rng = np.random.default_rng(5)
    rng.standard_normal((64, 384)).astype("<f4").tofile(queries)
    return grpc_servers.compare(LOADGEN, queries, cfg["sweep_s"], log)


# -- quality (bench/quality.py, written separately) ---------------------------------------


def quality(quick: bool) -> dict[str, Any]:
    """Baseline against new defaults: all of REALTALK and 4 MemDaily files (quick: 3
    chats); embeddings are cached in bench/.cache after the first run."""
    stem = "quality-quick" if quick else "quality"
    out_path = RESULTS / f"{stem}-{datetime.now(UTC):%Y-%m-%d}.json"
    args = [sys.executable, str(BENCH / "quality.py"), "--json-out", str(out_path)]
    args += ["--quick"] if quick else ["--memdaily-files", "4"]
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=3600)
    if done.returncode != 0:
        return {"status": f"failed ({done.returncode})", "stderr": done.stderr[-1500:]}
    return {"status": "ok", "markdown": done.stdout, "json": str(out_path.relative_to(REPO))}


# -- main -------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes (< 3 minutes)")
    parser.add_argument(
        "--only", default="", help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    parser.add_argument("--skip", default="", help="comma-separated sections to skip")
    parser.add_argument(
        "--write-seconds",
        type=float,
        default=None,
        help="length of memoryd's 8-writer SetMemory run (default 300, --quick 15)",
    )
    parser.add_argument(
        "--soak-minutes",
        type=float,
        default=0.0,
        help="writes section: a soak at half capacity this long (30 for the issue's; 0: none)",
    )
    args = parser.parse_args()
    cfg = dict(QUICK if args.quick else FULL)
    if args.write_seconds is not None:
        cfg["write_long_s"] = args.write_seconds
    chosen = [
        s
        for s in (args.only.split(",") if args.only else SECTIONS)
        if s and s not in args.skip.split(",")
    ]
    started = time.perf_counter()
    stamp = datetime.now(UTC)
    result: dict[str, Any] = {
        "date": stamp.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "machine": machine(),
        "sections": chosen,
    }
    result["calibration"] = {"start": calibration()}
    log(f"calibration: {result['calibration']['start']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if "footprint" in chosen:
            result["footprint"] = footprint(tmp, cfg)
        model = model_speed(cfg) if {"model", "recall", "writes"} & set(chosen) else {}
        result["model"] = model
        source = (
            VectorSource.from_model(400 if args.quick else 2000)
            if {"recall", "sweep", "writes", "tracing", "mixed", "qdrant"} & set(chosen)
            else None
        )
        if "recall" in chosen and source is not None:
            result["recall"] = {}
            for i, (label, n, agents) in enumerate(cfg["tiers"]):
                result["recall"][label] = recall_tier(
                    tmp, cfg, source, label, n, agents, model, main_tier=i == 0
                )
        if "servers" in chosen:
            result["servers"] = servers(tmp, cfg)
        if "writes" in chosen and source is not None:
            result["writes"] = writes(tmp, cfg, source, daemon_env())
            result["write_path"] = write_path(
                tmp, cfg, daemon_env(), LOADGEN, RESULTS, f"{stamp:%Y-%m-%d}", args.soak_minutes
            )
        if "tracing" in chosen and source is not None:
            result["tracing"] = tracing_overhead(tmp, cfg, source)
        if "mixed" in chosen and source is not None:
            result["mixed"] = mixed(tmp, cfg, daemon_env(), LOADGEN, source)
        if "mcp" in chosen:
            result["mcp"] = mcp_overhead(tmp, cfg["mcp_memories"], cfg["mcp_calls"])
        if "keyed" in chosen:
            result["keyed"] = keyed_latency.run(tmp, cfg["keyed_tiers"], cfg["keyed_reads"])
        if "watch" in chosen:
            result["watch"] = watch_feed.run(tmp, cfg["watch_events"], cfg["watch_write_s"])
        if "qdrant" in chosen and source is not None:
            result["qdrant"] = qdrant_server_bench.run(tmp, args.quick, source)
        if "schemas" in chosen:
            result["schemas"] = schema_fairness(tmp, cfg["schema_rounds"])
        if "mem0" in chosen:
            rng = random.Random(21)
            texts = [sentence(rng, i) for i in range(cfg["mem0"])]
            queries = [query_text(rng, i) for i in range(min(100, cfg["mem0"]))]
            log(f"mem0: {len(texts)} adds, {len(queries)} searches")
            result["mem0"] = peers.mem0_peer(tmp, texts, queries, log)
            log(f"mem0: {result['mem0']}")
        if "quality" in chosen:
            log("quality: bench/quality.py")
            result["quality"] = quality(args.quick)
    result["calibration"]["end"] = calibration()
    log(f"calibration at the end: {result['calibration']['end']}")
    result["elapsed_s"] = round(time.perf_counter() - started)
    # A quick or partial run never overwrites the day's full results (the README
    # quotes those).
    day = f"{stamp:%Y-%m-%d}" + ("-quick" if args.quick else "")
    if chosen != list(SECTIONS):
        day += "-partial"

    (RESULTS / f"{day}.json").write_text(json.dumps(result, indent=2, default=str))
    report = render(result)
    (RESULTS / f"report-{day}.md").write_text(report)
    print(report)
    log(f"wrote bench/results/report-{day}.md and {day}.json in {result['elapsed_s']} s")


if __name__ == "__main__":
    main()
