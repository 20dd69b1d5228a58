"""Damaged LanceDB files and a garbage checkpoint at start (issue 20, finding 4).

Real daemons, real files:

- the newest manifest of ``memories`` cut short (what a power loss leaves): the start
  moves it aside, rolls the table back to the newest readable version and replays
  the rest from the log; nothing acknowledged is missing;
- a data file the checkpointed version needs is gone: rolling back would lose
  checkpointed, acknowledged writes that are no longer in the log, so the start is
  refused with a message that says so, and nothing is changed (with the file back,
  the next start serves everything);
- a garbage ``wal/checkpoint``: counted as 0 with a warning, the whole log replayed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.durability.lance_check import table_versions
from memoryd.durability.wal import load_checkpoint
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon

AGENT = "damage"
BASE_ENV = {
    "MEMORYD_EMBEDDER": "hashing",
    "MEMORYD_MAINTENANCE__ENABLED": "false",
    "MEMORYD_DURABILITY__APPLY_BEHIND": "0",  # every write is a table version at once
}


def _batches(daemon: Daemon, prefix: str, batches: int, size: int) -> dict[str, str]:
    written = {}
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        for b in range(batches):
            items = [
                mpb.RememberRequest(agent_id=AGENT, content=f"{prefix} batch {b} item {i}")
                for i in range(size)
            ]
            r = stub.RememberBatch(mpb.RememberBatchRequest(agent_id=AGENT, items=items))
            written.update({x.memory.id: x.memory.content for x in r.results})
    return written


def _stored(daemon: Daemon) -> dict[str, str]:
    found: dict[str, str] = {}
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        token = ""
        while True:
            page = stub.ListMemories(
                mpb.ListMemoriesRequest(agent_id=AGENT, page_size=500, page_token=token)
            )
            found.update({m.id: m.content for m in page.memories})
            token = page.next_page_token
            if not token:
                return found


def _newest_manifest(table: Path) -> Path:
    def version(p: Path) -> int:
        n = int(p.stem)
        return 2**64 - 1 - n if n > 2**63 else n

    return max((table / "_versions").glob("*.manifest"), key=version)


def test_a_truncated_newest_manifest_rolls_back_and_replays(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(env=BASE_ENV)
    daemon.start()
    acked = _batches(daemon, "checkpointed", 2, 50)
    assert daemon.stop() == 0  # the final checkpoint records the table versions
    lancedb = daemon.data_dir / "lancedb"
    floor = load_checkpoint(daemon.data_dir / "wal").tables["memories"]
    assert floor == table_versions(lancedb)["memories"]

    # No checkpoint during this run: its writes stay in the log.
    daemon.env = {**BASE_ENV, "MEMORYD_DURABILITY__CHECKPOINT_INTERVAL_S": "3600"}
    daemon.start()
    acked |= _batches(daemon, "logged", 3, 10)
    daemon.kill()
    newest = _newest_manifest(lancedb / "memories.lance")
    newest.write_bytes(newest.read_bytes()[:10])

    daemon.env = BASE_ENV
    daemon.start()
    assert _stored(daemon) == acked
    assert "LanceDB table manifest unreadable" in daemon.logs()
    daemon.stop()


def test_a_rollback_below_the_checkpoint_is_refused(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(env=BASE_ENV)
    daemon.start()
    acked = _batches(daemon, "checkpointed", 4, 100)
    assert daemon.stop() == 0
    table = daemon.data_dir / "lancedb" / "memories.lance"
    newest_data = max((table / "data").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    saved = newest_data.read_bytes()
    newest_data.unlink()
    files_before = sorted(p for p in table.rglob("*") if p.is_file())

    with pytest.raises(RuntimeError, match="exited with 1") as refused:
        daemon.start()
    message = str(refused.value)
    assert "rolling back would lose acknowledged writes" in message
    assert "memories" in message and "Traceback" not in message
    assert sorted(p for p in table.rglob("*") if p.is_file()) == files_before

    newest_data.write_bytes(saved)  # restored from a backup
    daemon.start()
    assert _stored(daemon) == acked
    daemon.stop()


def test_a_garbage_checkpoint_replays_the_whole_log(
    daemon_factory: Callable[..., Daemon],
) -> None:
    env = {**BASE_ENV, "MEMORYD_DURABILITY__APPLY_BEHIND": "256"}
    env["MEMORYD_DURABILITY__APPLY_DELAY_MS"] = "10000"  # acknowledged, not applied
    daemon = daemon_factory(env=env)
    daemon.start()
    acked = _batches(daemon, "checkpointed", 1, 10)
    daemon.kill()
    checkpoint = daemon.data_dir / "wal" / "checkpoint"
    checkpoint.write_bytes(b'{"applied": \x00\xff garbage')

    daemon.env = BASE_ENV
    daemon.start()
    assert _stored(daemon) == acked
    warnings = [
        json.loads(line)
        for line in daemon.logs().splitlines()
        if line.startswith("{") and "checkpoint unreadable" in line
    ]
    assert warnings and warnings[0]["level"] == "warning", daemon.logs()
    daemon.stop()
    assert load_checkpoint(checkpoint.parent).unreadable == ""  # written anew
    assert os.stat(checkpoint).st_size > 0
