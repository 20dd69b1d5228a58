"""The change feed (Watch, docs/watch.md) over gRPC: how fast one watcher reads, and
whether watchers that do not read slow the writers.

One daemon (LanceDB in a temp dir; the hashing embedder: the model's cost is the
`model` section's). ``events`` memories are written with RememberBatch (100 a call);
then one watcher reads them all from the oldest kept change (a catch-up read, up to
256 changes a message: the Python client decodes every one, so this is a floor of
what the daemon serves).
Then a writer's RememberBatch rate over ``write_s`` seconds, alone and with
``stalled`` watchers (on a connection of their own, as other clients) open from the
oldest change that never read a message, alternating three rounds each. Their
connection has BDP probing off, so their streams stop at HTTP/2's initial 64 KiB
window: with it on (gRPC's default), the client's transport widens the window as fast
as bytes arrive and took the whole backlog (82 messages, 4.2 MB a stream, counted in
the daemon) without the application reading any: those watchers were catching up,
not stalled. The daemon's CPU seconds per 1,000 memories written, alone and beside,
are reported too: they say what the watchers cost even when the box is busy.

Targets: >= 5,000 events/s to one watcher; writers with stalled watchers at >= 0.9x
their rate without (a stalled watcher holds one batch, never a writer).

    python bench/watch_feed.py [--events 20000] [--write-s 5] [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
from common import Daemon, channel, log, machine

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
AGENT = "watched"
BATCH = 100
TARGET_EVENTS_PER_S = 5_000.0
TARGET_WRITER_RATIO = 0.9
#: Stalled watchers start by reading one batch each (up to 1 MiB of log) and encoding
#: its first message: the writer's rate is measured once that is done.
SETTLE_S = 2.0
#: The stalled watchers' channel: no BDP probing, so a stream's window stays at
#: HTTP/2's initial 64 KiB and a watcher that does not read holds the daemon's send
#: (gRPC's default widens the window without the application reading: see above).
STALLED_OPTIONS = [("grpc.http2.bdp_probe", 0), ("grpc.max_receive_message_length", 64 << 20)]


def _batch(agent: str, n: int) -> mpb.RememberBatchRequest:
    items = [
        mpb.RememberRequest(content=f"{uuid.uuid4().hex} {uuid.uuid4().hex}", source=USER)
        for _ in range(n)
    ]
    return mpb.RememberBatchRequest(agent_id=agent, items=items)


def _load(stub: mgrpc.MemoryServiceStub, events: int) -> float:
    started = time.perf_counter()
    for _ in range(events // BATCH):
        stub.RememberBatch(_batch(AGENT, BATCH), timeout=120)
    return time.perf_counter() - started


def _catch_up(stub: mgrpc.MemoryServiceStub) -> tuple[int, float]:
    request = mpb.WatchRequest(agent_id=AGENT, start=mpb.WATCH_START_OLDEST)
    started = time.perf_counter()
    n = sum(len(m.changes) for m in stub.Watch(request, timeout=600))
    return n, time.perf_counter() - started


def _write_rate(
    stub: mgrpc.MemoryServiceStub, seconds: float, daemon: Daemon
) -> tuple[float, float]:
    """Memories written a second, and the daemon's CPU seconds per 1,000 of them."""
    agent = f"writer-{uuid.uuid4().hex[:6]}"
    cpu = daemon.cpu_s()
    written, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        stub.RememberBatch(_batch(agent, BATCH), timeout=120)
        written += BATCH
    rate = written / (time.perf_counter() - started)
    return rate, (daemon.cpu_s() - cpu) * 1000 / written


def run(tmp: Path, events: int, write_s: float, stalled: int = 4) -> dict[str, Any]:
    daemon = Daemon(tmp / "watch-feed", embedder="hashing").start()
    try:
        with channel(daemon.address) as ch:
            stub = mgrpc.MemoryServiceStub(ch)
            load_s = _load(stub, events)
            log(f"watch: {events} memories written in {load_s:.1f} s")
            read, read_s = _catch_up(stub)
            per_s = read / read_s
            log(f"watch: one watcher read {read} changes in {read_s:.2f} s ({per_s:,.0f}/s)")
            alone, beside = [], []
            for _ in range(3):
                alone.append(_write_rate(stub, write_s, daemon))
                request = mpb.WatchRequest(
                    agent_id=AGENT, start=mpb.WATCH_START_OLDEST, follow=True
                )
                # Other clients: a connection of their own, as a slow consumer has.
                with grpc.insecure_channel(daemon.address, options=STALLED_OPTIONS) as theirs:
                    watchers = mgrpc.MemoryServiceStub(theirs)
                    streams = [watchers.Watch(request, timeout=600) for _ in range(stalled)]
                    time.sleep(SETTLE_S)  # they read their first batch, then stall
                    try:
                        beside.append(_write_rate(stub, write_s, daemon))
                    finally:
                        for s in streams:
                            s.cancel()
            rate_alone = statistics.median(r for r, _ in alone)
            rate_beside = statistics.median(r for r, _ in beside)
            ratio = rate_beside / rate_alone
            log(f"watch: writer {rate_alone:,.0f}/s alone, "
                f"{rate_beside:,.0f}/s beside {stalled} stalled watchers ({ratio:.2f}x)")  # fmt: skip
    finally:
        daemon.stop()
    return {
        "events": events,
        "load_s": round(load_s, 2),
        "catch_up_events": read,
        "catch_up_s": round(read_s, 3),
        "events_per_s": round(per_s),
        "writer_alone_per_s": [round(r) for r, _ in alone],
        "writer_beside_stalled_per_s": [round(r) for r, _ in beside],
        "daemon_cpu_s_per_1k_alone": [round(c, 3) for _, c in alone],
        "daemon_cpu_s_per_1k_beside": [round(c, 3) for _, c in beside],
        "stalled_watchers": stalled,
        "writer_ratio": round(ratio, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--write-s", type=float, default=5.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memoryd-watch-") as tmp:
        result = {"machine": machine(), **run(Path(tmp), args.events, args.write_s)}
    text = json.dumps(result, indent=2)
    if args.json_out:
        args.json_out.write_text(text)
    print(text)
    ok = (
        result["events_per_s"] >= TARGET_EVENTS_PER_S
        and result["writer_ratio"] >= TARGET_WRITER_RATIO
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
