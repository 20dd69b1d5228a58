"""Keyed-memory latency over gRPC: DefaultRead, GetKey and ListKeys at 1k, 10k and 100k
keys, and SetMemory.

One daemon (LanceDB in a temp dir; the hashing embedder, since no read here embeds
and SetMemory's embedding is the model's own cost, measured by the `model` section),
one agent per tier. The 1k tier is written one SetMemory at a time (timed); the
larger ones are loaded through Import (key history records, one stream), as a
restored backup would be. Keys spread over 8 directories, written over the last 30
days, importance in hundredths, one of 8 tags each.

Per tier: the first DefaultRead (it loads the partition's default-read index from
the store), then DefaultRead at the default 300 tokens, with a tag, and at 2,000
tokens; GetKey of random keys; ListKeys of one directory (page 100) and recursive
(page 100). Percentiles in ms. Target: DefaultRead p50 <= 50 ms at 100k keys.

    python bench/keyed_latency.py [--tiers 1000,10000,100000] [--reads 200] [--json-out F]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import Daemon, channel, log, machine, pct, timed

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc

DIRS = ["calendar", "preference", "contacts", "projects", "notes", "travel", "health", "work"]
TOPICS = ["dentist", "flight", "tea", "standup", "review", "budget", "gym", "birthday"]
USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
TIERS = (1_000, 10_000, 100_000)
#: The 1k tier's SetMemory calls are timed; bigger tiers are imported.
SET_MEMORY_MAX = 1_000
TARGET_P50_MS = 50.0


def content(rng: random.Random, i: int) -> str:
    topic = rng.choice(TOPICS)
    return json.dumps(
        {
            "summary": f"Note {i}: {topic} on day {rng.randint(1, 28)} at {rng.randint(7, 20)}:00",
            "type": "episode",
            "tags": [topic],
            "importance": round(rng.random(), 2),
        }
    )


def key_of(i: int) -> str:
    return f"/user/{DIRS[i % len(DIRS)]}/{i:06d}"


def _import_stream(agent: str, n: int, rng: random.Random) -> Iterator[lpb.ImportRequest]:
    now = datetime.now(UTC)
    for i in range(n):
        entry = mpb.KeyEntry(
            key=key_of(i),
            content_json=content(rng, i),
            valid=True,
            version=i + 1,
            source=USER,
            security_level=pb.SECURITY_LEVEL_INTERNAL,
        )
        entry.updated_at.FromDatetime(now - timedelta(seconds=rng.randint(0, 30 * 86_400)))
        record = lpb.ExportRecord(
            key_event=lpb.ExportedKeyEvent(agent_id=agent, entry=entry, current=True)
        )
        yield lpb.ImportRequest(record=record)


def load(ch: Any, agent: str, n: int, rng: random.Random) -> dict[str, Any]:
    """Write ``n`` keys into ``agent``; SetMemory (timed) up to SET_MEMORY_MAX."""
    started = time.perf_counter()
    if n <= SET_MEMORY_MAX:
        stub = mgrpc.MemoryServiceStub(ch)
        times = []
        for i in range(n):
            request = mpb.SetMemoryRequest(
                agent_id=agent, key=key_of(i), content_json=content(rng, i), source=USER
            )
            t0 = time.perf_counter()
            stub.SetMemory(request)
            times.append(time.perf_counter() - t0)
        return {"loaded_by": "SetMemory", "set_memory_ms": pct(times)}
    response = lgrpc.LifecycleServiceStub(ch).Import(_import_stream(agent, n, rng), timeout=3600)
    assert response.imported == n, response
    return {"loaded_by": "Import", "load_s": round(time.perf_counter() - started, 1)}


def measure(ch: Any, agent: str, n: int, reads: int, rng: random.Random) -> dict[str, Any]:
    memory = mgrpc.MemoryServiceStub(ch)
    snapshot = sgrpc.SnapshotServiceStub(ch)
    t0 = time.perf_counter()
    first = snapshot.DefaultRead(spb.DefaultReadRequest(agent_id=agent))
    first_ms = round((time.perf_counter() - t0) * 1000, 1)
    assert first.lines and first.text.startswith("[Agent Memory]")

    def default_read() -> None:
        snapshot.DefaultRead(spb.DefaultReadRequest(agent_id=agent))

    def default_read_tag() -> None:
        tag = rng.choice(TOPICS)
        snapshot.DefaultRead(spb.DefaultReadRequest(agent_id=agent, tags=[tag]))

    def default_read_2000() -> None:
        snapshot.DefaultRead(spb.DefaultReadRequest(agent_id=agent, token_limit=2000))

    def get_key() -> None:
        memory.GetKey(mpb.GetKeyRequest(agent_id=agent, key=key_of(rng.randrange(n))))

    def ls_dir() -> None:
        memory.ListKeys(
            mpb.ListKeysRequest(agent_id=agent, prefix=f"/user/{DIRS[0]}/", page_size=100)
        )

    def ls_recursive() -> None:
        memory.ListKeys(
            mpb.ListKeysRequest(agent_id=agent, prefix="/", recursive=True, page_size=100)
        )

    return {
        "keys": n,
        "default_read_lines": len(first.lines),
        "default_read_first_ms": first_ms,
        "default_read_ms": pct(timed(default_read, reads)),
        "default_read_tag_ms": pct(timed(default_read_tag, reads)),
        "default_read_2000_tokens_ms": pct(timed(default_read_2000, max(20, reads // 4))),
        "get_key_ms": pct(timed(get_key, reads)),
        "list_keys_one_dir_page_100_ms": pct(timed(ls_dir, reads)),
        "list_keys_recursive_page_100_ms": pct(timed(ls_recursive, reads)),
    }


def run(tmp: Path, tiers: tuple[int, ...] = TIERS, reads: int = 200) -> dict[str, Any]:
    """Every tier in one daemon; returns {label: figures}."""
    rng = random.Random(7)
    out: dict[str, Any] = {}
    daemon = Daemon(data_dir=tmp / "keyed-data", embedder="hashing")
    with daemon, channel(daemon.address) as ch:
        for n in tiers:
            label = f"{n // 1000}k"
            agent = f"bench-keys-{label}"
            log(f"keyed: loading {n} keys")
            loaded = load(ch, agent, n, rng)
            log(f"keyed: {label} loaded ({loaded}); reading")
            out[label] = {**loaded, **measure(ch, agent, n, reads, rng)}
            log(f"keyed {label}: {out[label]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default=",".join(str(t) for t in TIERS))
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    tiers = tuple(int(t) for t in args.tiers.split(","))
    with tempfile.TemporaryDirectory(prefix="memoryd-keyed-bench-") as tmp:
        result = {"machine": machine(), **run(Path(tmp), tiers, args.reads)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
