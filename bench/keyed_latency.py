"""Keyed-memory latency over gRPC: SetMemory, GetKey and ListKeys at N keys.

Starts a real daemon (local model, LanceDB in a temp dir), writes N keys one
SetMemory at a time from one client (each write: embed the summary, one commit of
slot + history + counter, one commit of the mirror memory), then times GetKey of
random keys and ListKeys of one directory (one level, and recursive) and of the
root. Also times a tombstone write. Prints percentiles; writes JSON with --json-out.

    python bench/keyed_latency.py [--keys 1000] [--reads 300] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Daemon, channel, machine, pct, timed
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

AGENT = "bench-keys"
DIRS = ["calendar", "preference", "contacts", "projects", "notes", "travel", "health", "work"]
TOPICS = ["dentist", "flight", "tea", "standup", "review", "budget", "gym", "birthday"]


def content(rng: random.Random, i: int) -> struct_pb2.Value:
    topic = rng.choice(TOPICS)
    value = struct_pb2.Value()
    value.struct_value.update(
        {
            "summary": f"Note {i}: {topic} on day {rng.randint(1, 28)} at {rng.randint(7, 20)}:00",
            "type": "episode",
            "tags": [topic],
            "importance": round(rng.random(), 2),
        }
    )
    return value


def key_of(i: int) -> str:
    return f"/user/{DIRS[i % len(DIRS)]}/{i:05d}"


def run(keys: int, reads: int) -> dict[str, Any]:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="memoryd-keyed-bench-") as tmp:
        daemon = Daemon(data_dir=Path(tmp) / "data", embedder="local")
        with daemon, channel(daemon.address) as ch:
            stub = mgrpc.MemoryServiceStub(ch)
            set_times = []
            started = time.perf_counter()
            for i in range(keys):
                request = mpb.SetMemoryRequest(
                    agent_id=AGENT, key=key_of(i), content=content(rng, i), source=USER_SOURCE_PB
                )
                t0 = time.perf_counter()
                stub.SetMemory(request)
                set_times.append(time.perf_counter() - t0)
            write_s = time.perf_counter() - started

            def get() -> None:
                stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key=key_of(rng.randrange(keys))))

            one_dir = f"/user/{DIRS[0]}/"
            per_dir = len(range(0, keys, len(DIRS)))
            page = min(per_dir, 500)

            def ls_dir() -> None:
                stub.ListKeys(mpb.ListKeysRequest(agent_id=AGENT, prefix=one_dir, page_size=page))

            def ls_root() -> None:
                stub.ListKeys(mpb.ListKeysRequest(agent_id=AGENT, prefix="/user/"))

            def ls_recursive_100() -> None:
                stub.ListKeys(
                    mpb.ListKeysRequest(agent_id=AGENT, prefix="/", recursive=True, page_size=100)
                )

            result = {
                "keys": keys,
                "set_memory_ms": pct(set_times),
                "set_memory_first_100_ms": pct(set_times[:100]),
                "set_memory_last_100_ms": pct(set_times[-100:]),
                "writes_per_s": round(keys / write_s, 1),
                "get_key_ms": pct(timed(get, reads)),
                f"list_keys_one_dir_{per_dir}_entries_ms": pct(timed(ls_dir, reads)),
                "list_keys_dirs_of_user_ms": pct(timed(ls_root, reads)),
                "list_keys_recursive_page_100_ms": pct(timed(ls_recursive_100, reads)),
            }
            tomb_times = []
            for i in range(min(50, keys)):
                null = struct_pb2.Value(null_value=struct_pb2.NULL_VALUE)
                request = mpb.SetMemoryRequest(
                    agent_id=AGENT, key=key_of(i), content=null, source=USER_SOURCE_PB
                )
                t0 = time.perf_counter()
                stub.SetMemory(request)
                tomb_times.append(time.perf_counter() - t0)
            result["tombstone_ms"] = pct(tomb_times)
            return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--reads", type=int, default=300)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    result = {"machine": machine(), **run(args.keys, args.reads)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json_out:
        args.json_out.write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
