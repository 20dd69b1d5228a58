"""`make bench`'s write phases: RememberBatch with client vectors (1 and 8 writers)
and with the local embedder (REALTALK turns, 1 and 8 writers), and single Remember
latency, on one daemon, durable (write log on). Requests are built before the clock."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import grpc
from common import (
    Daemon,
    VectorSource,
    batches,
    channel,
    log,
    pct,
    remember_batch_request,
    sentence,
    timed,
)
from quality import load_realtalk

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc


def embedder_write_texts(n: int) -> list[str]:
    """The texts of the local-embedder write phase, the model's own throughput measured
    on the same ones: the first ``n`` REALTALK turns, real chat messages. (The
    templated sentences used before were ~30% near-duplicates of one another, the same
    template with another note number, so that phase measured merges as much as
    writes.)"""
    texts = [turn.text for turn in load_realtalk().turns][:n]
    if len(texts) < n:
        raise ValueError(f"REALTALK has {len(texts)} turns; {n} asked for")
    return texts


def concurrently(address: str, writers: list[list[mpb.RememberBatchRequest]]) -> float:
    """Seconds to send each writer's batches in order, the writers side by side."""

    async def run() -> float:
        async with grpc.aio.insecure_channel(address) as ach:
            stub = mgrpc.MemoryServiceStub(ach)

            async def writer(requests: list[mpb.RememberBatchRequest]) -> None:
                for request in requests:
                    await stub.RememberBatch(request, timeout=600)

            started = time.perf_counter()
            await asyncio.gather(*(writer(w) for w in writers))
            return time.perf_counter() - started

    return asyncio.run(run())


def writes(
    tmp: Path, cfg: dict[str, Any], source: VectorSource, env: dict[str, str]
) -> dict[str, Any]:
    """The `writes` section of `make bench` on a daemon of its own (``env``)."""
    out: dict[str, Any] = {"write_log": "on (every acknowledged batch fsynced to the log)"}
    n = cfg["writes"]
    vectors = source.take(n)
    texts = [sentence(random.Random(10**6 + i), 10**6 + i) for i in range(n)]
    # Requests are built before the clock starts: filling a 1,000-item request's
    # repeated floats from Python costs the client ~25 ms (reported), which is the
    # client's work, not the daemon's (a Go or TypeScript client pays a fraction).
    t0 = time.perf_counter()
    one_writer = [
        remember_batch_request("writer-0", texts[start:end], vectors[start:end])
        for start, end in batches(n, 1000)
    ]
    out["client_build_ms_per_1000"] = round((time.perf_counter() - t0) * 1000 / len(one_writer), 1)
    per = n // 8
    eight_writers = []
    for w in range(8):
        wt, wv = texts[w * per : (w + 1) * per], source.take(per)
        eight_writers.append(
            [
                remember_batch_request(f"writer-{w + 1}", wt[start:end], wv[start:end])
                for start, end in batches(per, 1000)
            ]
        )
    with Daemon(tmp / "writes" / "data", env=env) as d:
        ch = channel(d.address)
        stub = mgrpc.MemoryServiceStub(ch)
        t0 = time.perf_counter()
        for request in one_writer:
            stub.RememberBatch(request, timeout=600)
        out["batch_vectors_1_writer_per_s"] = round(n / (time.perf_counter() - t0))
        log(f"writes: 1 writer {out['batch_vectors_1_writer_per_s']}/s")

        # Each phase starts in a steady state: the previous one's background work
        # (LanceDB compaction, index refresh) is waited out and reported.
        out["settle_before_8_writers_s"] = d.settle()
        out["batch_vectors_8_writers_per_s"] = round(
            per * 8 / concurrently(d.address, eight_writers)
        )
        log(f"writes: 8 writers {out['batch_vectors_8_writers_per_s']}/s")

        out["settle_before_embedder_s"] = d.settle()
        m = cfg["embed_writes"]
        turns = embedder_write_texts(2 * m)
        etexts = turns[:m]
        merged = 0
        t0 = time.perf_counter()
        for start, end in batches(m, 100):
            response = stub.RememberBatch(
                remember_batch_request("writer-embed", etexts[start:end], None), timeout=600
            )
            merged += sum(r.deduplicated for r in response.results)
        out["batch_local_embedder_per_s"] = round(m / (time.perf_counter() - t0), 1)
        # Near-duplicate turns ("ok", "haha") are merged into the memory they repeat.
        out["batch_local_embedder_merged"] = merged
        log(f"writes: local embedder {out['batch_local_embedder_per_s']}/s")

        # Eight writers on the next turns (the same ones would only be merged).
        out["settle_before_embedder_8_writers_s"] = d.settle()
        later = turns[m:]
        per_writer = m // 8
        embed_writers = [
            [
                remember_batch_request(f"writer-embed-{w}", chunk[start:end], None)
                for start, end in batches(per_writer, 100)
            ]
            for w in range(8)
            for chunk in [later[w * per_writer : (w + 1) * per_writer]]
        ]
        seconds = concurrently(d.address, embed_writers)
        out["batch_local_embedder_8_writers_per_s"] = round(per_writer * 8 / seconds, 1)
        log(f"writes: local embedder, 8 writers {out['batch_local_embedder_8_writers_per_s']}/s")

        # Single writes in the steady state, not under the bulk writes' compaction.
        out["settle_s"] = d.settle()
        calls = cfg["remember_calls"]
        single = source.take(calls + 5).tolist()
        it = iter(range(calls + 5))

        def remember_vector() -> None:
            i = next(it)
            stub.Remember(
                mpb.RememberRequest(agent_id="single", content=f"single {i}", embedding=single[i])
            )

        out["remember_vector_ms"] = pct(timed(remember_vector, calls, warmup=5))
        trng = random.Random(9)
        out["remember_text_ms"] = pct(
            timed(
                lambda: stub.Remember(
                    mpb.RememberRequest(
                        agent_id="single-text", content=sentence(trng, trng.randrange(10**9))
                    )
                ),
                100,
            )
        )
        log(f"writes: Remember {out['remember_vector_ms']} text {out['remember_text_ms']}")
        ch.close()
    return out
