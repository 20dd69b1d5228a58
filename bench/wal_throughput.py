"""Writes/s with the write-ahead log on and off (durability.wal_enabled), or with
another boolean setting on and off (``--setting``, e.g. MEMORYD_HISTORY__ENABLED: the
memory history of as-of reads, docs/as-of.md).

Starts a real daemon per mode (hashing embedder: the log's cost, not the model's,
is measured) and drives it from several client threads for a fixed time, with
single Remember calls and with RememberBatch calls of ``--batch`` items.

    .venv/bin/python bench/wal_throughput.py --seconds 10 --threads 8 --batch 50
    .venv/bin/python bench/wal_throughput.py --setting MEMORYD_HISTORY__ENABLED
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon


def _drive(address: str, seconds: float, threads: int, batch: int) -> float:
    """Memories written per second over ``seconds``."""
    import grpc

    counts = [0] * threads
    deadline = time.monotonic() + seconds

    def worker(i: int) -> None:
        with grpc.insecure_channel(address) as channel:
            stub = mgrpc.MemoryServiceStub(channel)
            n = 0
            while time.monotonic() < deadline:
                n += 1
                if batch <= 1:
                    stub.Remember(mpb.RememberRequest(agent_id="bench", content=f"w{i} {n}"))
                    counts[i] += 1
                else:
                    items = [mpb.RememberRequest(content=f"w{i} {n} {j}") for j in range(batch)]
                    stub.RememberBatch(mpb.RememberBatchRequest(agent_id="bench", items=items))
                    counts[i] += batch

    started = time.monotonic()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(counts) / (time.monotonic() - started)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--setting", default="MEMORYD_DURABILITY__WAL_ENABLED")
    ap.add_argument("--listen", default="127.0.0.1:0", help="the daemon's gRPC address")
    args = ap.parse_args()
    for value in ("true", "false"):
        daemon = Daemon(
            data_dir=Path(tempfile.mkdtemp()) / "data",
            env={
                "MEMORYD_EMBEDDER": "hashing",
                "MEMORYD_MAINTENANCE__ENABLED": "false",
                "MEMORYD_DEDUP__ENABLED": "false",
                "MEMORYD_DURABILITY__WAL_ENABLED": "true",
                args.setting: value,
            },
            listen=args.listen,
        )
        daemon.start()
        try:
            single = _drive(daemon.address, args.seconds, args.threads, 1)
            batched = _drive(daemon.address, args.seconds, args.threads, args.batch)
        finally:
            daemon.stop()
        print(
            f"{args.setting}={value}: Remember {single:,.0f} writes/s ({args.threads} threads); "
            f"RememberBatch x{args.batch} {batched:,.0f} memories/s"
        )


if __name__ == "__main__":
    main()
