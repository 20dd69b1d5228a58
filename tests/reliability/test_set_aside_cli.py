"""`memoryd wal set-aside` / `requeue` on real data dirs with real daemons.

A write the store rejected on replay is kept next to the log (``rejected-<seq>.bin``).
The CLI lists it, refuses to touch the log while a daemon holds the data dir, and once
requeued the next start applies it; one the store still rejects is set aside again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import grpc
import numpy as np
import pytest

from memoryd.durability.ops import decode, encode
from memoryd.durability.wal import SUFFIX, WriteAheadLog, read_segment
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import REPO, Daemon

AGENT = "set-aside"
ENV = {"MEMORYD_EMBEDDER": "hashing", "MEMORYD_MAINTENANCE__ENABLED": "false"}


def wal_cli(*args: str, answer: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", "wal", *args],
        capture_output=True, text=True, cwd=REPO, timeout=120,
        env={**os.environ, **ENV}, input=answer,
    )  # fmt: skip


def listed(data_dir: Path) -> list[dict[str, object]]:
    done = wal_cli("set-aside", "--data-dir", str(data_dir), "--json")
    assert done.returncode == 0, done.stderr
    entries: list[dict[str, object]] = json.loads(done.stdout)["entries"]
    return entries


def get(daemon: Daemon, memory_id: str) -> mpb.Memory | None:
    with daemon.channel() as ch:
        try:
            stub = mgrpc.MemoryServiceStub(ch)
            got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=memory_id), timeout=10)
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.NOT_FOUND
            return None
    return got.memory


def logged_upsert(daemon_factory: type[Daemon], tmp_path: Path) -> tuple[str, bytes]:
    """A real Remember's log entry (payload) and its memory id, from a first daemon."""
    d = daemon_factory(data_dir=tmp_path / "source", env=ENV)
    d.start()
    with d.channel() as ch:
        r = mgrpc.MemoryServiceStub(ch).Remember(
            mpb.RememberRequest(agent_id=AGENT, content="the orchid needs water on Sundays"),
            timeout=10,
        )
    d.kill()  # no shutdown: the log keeps its segment
    for path in sorted((tmp_path / "source" / "wal").glob(f"*{SUFFIX}")):
        for _, payload in read_segment(path):
            ops = decode(payload)
            if any(m.id == r.memory.id for op in ops for m in op.memories):
                return r.memory.id, payload
    raise AssertionError("the Remember is not in the log")


def test_a_set_aside_write_is_listed_requeued_and_applied(
    daemon_factory: type[Daemon], tmp_path: Path
) -> None:
    memory_id, payload = logged_upsert(daemon_factory, tmp_path)
    data = tmp_path / "data"
    (data / "wal").mkdir(parents=True)
    WriteAheadLog(data / "wal").set_aside(7, payload)
    (entry,) = listed(data)
    assert entry["seq"] == 7
    assert entry["ops"] == [
        {"kind": "upsert", "tenant": "default", "agent": AGENT, "count": 1, "targets": [memory_id]}
    ]

    d = daemon_factory(data_dir=data, env=ENV)
    d.start()
    assert get(d, memory_id) is None  # set aside: not in the store
    refused = wal_cli("requeue", "--all", "--yes", "--data-dir", str(data))
    assert refused.returncode == 1 and "stop it first" in refused.stderr
    assert len(listed(data)) == 1  # untouched while the daemon runs
    d.stop()

    declined = wal_cli("requeue", "7", "--data-dir", str(data), answer="n\n")
    assert declined.returncode == 1 and f"upsert 1 in default/{AGENT}" in declined.stdout
    assert len(listed(data)) == 1  # asked, declined: untouched
    done = wal_cli("requeue", "7", "--yes", "--json", "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    (moved,) = json.loads(done.stdout)["requeued"]
    assert moved["seq"] == 7 and moved["new_seq"] > 0
    assert listed(data) == []

    d.start()
    got = get(d, memory_id)
    assert got is not None and got.content == "the orchid needs water on Sundays"
    d.stop()


def test_a_requeued_write_the_store_still_rejects_is_set_aside_again(
    daemon_factory: type[Daemon], tmp_path: Path
) -> None:
    memory_id, payload = logged_upsert(daemon_factory, tmp_path)
    (op,) = decode(payload)
    # A vector of the wrong dimension: the store will never take it.
    bad = dataclasses.replace(
        op.memories[0], id="bad-" + memory_id, vector=np.ones(3, dtype=np.float32)
    )
    data = tmp_path / "data"
    (data / "wal").mkdir(parents=True)
    WriteAheadLog(data / "wal").append_offline([encode([dataclasses.replace(op, memories=(bad,))])])

    d = daemon_factory(data_dir=data, env=ENV)
    d.start()  # replays the log: the entry is set aside, the daemon serves
    assert get(d, bad.id) is None
    d.stop()
    (first,) = listed(data)
    assert first["ops"][0]["targets"] == [bad.id]  # type: ignore[index]

    done = wal_cli("requeue", "--all", "--yes", "--data-dir", str(data))
    assert done.returncode == 0 and "requeued 1 entries" in done.stdout
    d.start()
    assert get(d, bad.id) is None
    d.stop()
    (second,) = listed(data)
    assert int(second["seq"]) > int(first["seq"])  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name the sequence numbers"),
        (("3", "--all"), "name the sequence numbers"),
        (("--all", "--json"), "pass --yes"),
    ],
)
def test_requeue_arguments_are_checked(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    done = wal_cli("requeue", *args, "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2 and message in done.stderr


def test_requeue_with_nothing_set_aside_says_so(tmp_path: Path) -> None:
    done = wal_cli("requeue", "--all", "--yes", "--data-dir", str(tmp_path / "data"))
    wal = tmp_path / "data" / "wal"
    assert done.returncode == 0
    assert done.stdout.strip() == f"nothing to requeue: no set-aside entries in {wal}"
    assert not list(wal.glob(f"*{SUFFIX}"))  # no segment written


def test_requeue_of_an_unknown_or_unreadable_entry_writes_nothing(tmp_path: Path) -> None:
    wal = tmp_path / "data" / "wal"
    wal.mkdir(parents=True)
    (wal / "rejected-00000000000000000009.bin").write_bytes(b"not msgpack ops")
    (entry,) = listed(tmp_path / "data")
    assert entry["seq"] == 9 and "error" in entry
    unknown = wal_cli("requeue", "4", "--yes", "--data-dir", str(tmp_path / "data"))
    assert unknown.returncode == 1 and "no set-aside entry 4" in unknown.stderr
    damaged = wal_cli("requeue", "--all", "--yes", "--data-dir", str(tmp_path / "data"))
    assert damaged.returncode == 1 and "do not decode" in damaged.stderr
    assert not list(wal.glob(f"*{SUFFIX}"))  # no segment written
