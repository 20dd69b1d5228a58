"""The audit log's disk fills up (issue 20, finding 8d): a write whose event cannot be
recorded is refused (UNAVAILABLE, nothing stored) rather than acknowledged without a
trail; reads go on; once space is back, writes are admitted again, and every
acknowledged write has its STARTED and OK events in the audit log.

The audit directory lives on a small tmpfs (mounted here; needs root, else skipped).
Run on LanceDB (the event rides in the write-ahead log entry) and on a real Qdrant
server in shared mode (no log: the event is fsynced beside the call's reads and
every write waits for it, security/admission.py; skipped without a server).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import DAEMON_STORES, Daemon, daemon_store_env
from tests.security.support import write_config
from tests.small_disk import fill, mounted_tmpfs

AGENT = "audited"


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    with mounted_tmpfs(tmp_path / "auditfs", "1m") as mount:
        yield mount


def remember(memory: MemoryServiceStub, request_id: str) -> grpc.StatusCode:
    try:
        memory.Remember(
            mpb.RememberRequest(agent_id=AGENT, content=f"audited write {request_id}"),
            metadata=(("x-request-id", request_id),),
            timeout=30,
        )
    except grpc.RpcError as error:
        return error.code()  # type: ignore[attr-defined, no-any-return]
    return grpc.StatusCode.OK


@pytest.mark.parametrize("store", DAEMON_STORES)
def test_no_write_is_acknowledged_without_its_audit_event(
    small_fs: Path,
    daemon_factory: Callable[..., Daemon],
    tmp_path: Path,
    store: str,
    request: pytest.FixtureRequest,
) -> None:
    with daemon_store_env(store, request) as env:
        _acknowledged_with_events(small_fs, daemon_factory, tmp_path, env)


def _acknowledged_with_events(
    small_fs: Path,
    daemon_factory: Callable[..., Daemon],
    tmp_path: Path,
    env: dict[str, str | None],
) -> None:
    audit_dir = small_fs / "audit"
    config = write_config(
        tmp_path / "memoryd.yaml",
        {
            "embedder": "hashing",
            "audit": {"dir": str(audit_dir)},
            "maintenance": {"enabled": False},
        },
    )
    daemon = daemon_factory(data_dir=tmp_path / "data", config_file=config, env=env)
    daemon.start()
    acknowledged: list[str] = []
    refused: list[str] = []
    with daemon.channel() as channel:
        memory = MemoryServiceStub(channel)
        stats = LifecycleServiceStub(channel)
        for _ in range(3):
            rid = uuid.uuid4().hex
            assert remember(memory, rid) == grpc.StatusCode.OK
            acknowledged.append(rid)

        fill(small_fs / "filler")
        # The audit file's last page may still hold a few events: those writes go on.
        for _ in range(100):
            rid = uuid.uuid4().hex
            code = remember(memory, rid)
            if code != grpc.StatusCode.OK:
                break
            acknowledged.append(rid)
        assert code == grpc.StatusCode.UNAVAILABLE, code
        refused.append(rid)
        for _ in range(5):  # and from then on, every write is refused
            rid = uuid.uuid4().hex
            assert remember(memory, rid) == grpc.StatusCode.UNAVAILABLE
            refused.append(rid)
        # Nothing of a refused write is stored; reads are served.
        count = stats.GetStats(lpb.GetStatsRequest(agent_id=AGENT), timeout=30).memories
        assert count == len(acknowledged)

        (small_fs / "filler").unlink()
        deadline = time.monotonic() + 30
        while True:  # the disk is back: the next write is admitted
            rid = uuid.uuid4().hex
            if remember(memory, rid) == grpc.StatusCode.OK:
                acknowledged.append(rid)
                break
            refused.append(rid)
            assert time.monotonic() < deadline, "writes were never admitted again"
            time.sleep(0.1)
    assert daemon.stop() == 0

    events = [
        json.loads(line)
        for path in sorted(audit_dir.glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    outcomes: dict[str, list[str]] = {}
    for event in events:
        if event["operation"] == "MemoryService.Remember":
            outcomes.setdefault(event["request_id"], []).append(event["outcome"])
    for rid in acknowledged:
        assert outcomes.get(rid) == ["STARTED", "OK"], (rid, outcomes.get(rid))
    for rid in refused:  # recorded once the disk took events again; never as done
        assert "OK" not in outcomes.get(rid, []) and "STARTED" not in outcomes.get(rid, [])
