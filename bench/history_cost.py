"""What the memory history of as-of reads (docs/as-of.md) costs a write, in process:
Remember and SetMemory, one at a time, against a daemon started in this process
(LanceDB and the write-ahead log on a fresh data directory, the hashing embedder:
the history's cost, not the model's), with the history off, kept in memory only
(history.persist false), kept in its files written but not fsynced (history.fsync
false) and fsynced before each write is answered (the default). Modes alternate round
by round, so a busy box weighs on each alike; the medians of the rounds' per-write
medians are reported, wall time and CPU time (this process's) per write.

    .venv/bin/python bench/history_cost.py [--writes 400] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memoryd.app import App
from memoryd.config import Settings
from memoryd.observability.logging import configure_logging
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub

MODES = {
    "off": {"enabled": False},
    "memory": {"enabled": True, "persist": False},
    "written": {"enabled": True, "persist": True, "fsync": False},
    "fsynced": {"enabled": True, "persist": True, "fsync": True},
}
USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)


async def _round(mode: str, writes: int, root: Path) -> dict[str, tuple[float, float]]:
    """Per call kind: (median wall microseconds, CPU microseconds) per write."""
    settings = Settings.load(
        None,
        listen="127.0.0.1:0",
        data_dir=root / mode,
        embedder="hashing",
        history=MODES[mode],
        maintenance={"enabled": False},
        metrics={"enabled": False},
        logging={"level": "warning"},
    )
    configure_logging(settings.logging)
    app = App(settings)
    await app.start()
    out: dict[str, tuple[float, float]] = {}
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = MemoryServiceStub(channel)
            agent = "bench"
            await stub.Remember(mpb.RememberRequest(agent_id=agent, content="warm up"))
            for kind in ("remember", "set_memory"):
                times = []
                cpu = time.process_time()
                for n in range(writes):
                    started = time.perf_counter()
                    if kind == "remember":
                        await stub.Remember(
                            mpb.RememberRequest(agent_id=agent, content=f"fact {n} of {mode}")
                        )
                    else:
                        await stub.SetMemory(
                            mpb.SetMemoryRequest(
                                agent_id=agent,
                                key=f"/bench/k{n % 50}",
                                content_json=json.dumps(f"value {n}"),
                                source=USER,
                            )
                        )
                    times.append(time.perf_counter() - started)
                cpu_per = (time.process_time() - cpu) / writes
                out[kind] = (statistics.median(times) * 1e6, cpu_per * 1e6)
    finally:
        await app.stop()
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writes", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where the data directories go (a disk)")
    args = ap.parse_args()
    results: dict[str, dict[str, list[tuple[float, float]]]] = {m: {} for m in MODES}
    with tempfile.TemporaryDirectory(prefix="history-cost-", dir=args.dir) as tmp:
        for r in range(args.rounds):
            for mode in MODES:
                root = Path(tmp) / f"r{r}"
                for kind, value in (await _round(mode, args.writes, root)).items():
                    results[mode].setdefault(kind, []).append(value)
    print(f"{args.rounds} rounds of {args.writes} writes a kind, one writer (medians of rounds)")
    print(f"{'mode':8} {'kind':11} {'wall us':>9} {'cpu us':>9} {'x off':>6}")
    for mode, kinds in results.items():
        for kind, values in kinds.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            off = statistics.median(v[0] for v in results["off"][kind])
            print(f"{mode:8} {kind:11} {wall:9.0f} {cpu:9.0f} {wall / off:6.2f}")


if __name__ == "__main__":
    asyncio.run(main())
