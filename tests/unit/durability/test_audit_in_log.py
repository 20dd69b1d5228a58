"""One durable record per write (issue 31): a write's STARTED audit event rides in the
write-ahead log entry that carries the write, so one group fsync makes both durable;
the audit file is synced before the log drops the entry, and a start re-appends the
events the file lost. The door admits a write this way only for operations whose
effects all go through the log, and only while the audit file takes events."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from memoryd.domain.models import Memory, Partition, SecurityLevel, utcnow
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableStore
from memoryd.durability.ops import decode_entry
from memoryd.durability.wal import SUFFIX, WriteAheadLog, read_segment
from memoryd.operations import Call, Door, Services
from memoryd.operations.auth import Transport
from memoryd.operations.definition import Effect, Operation
from memoryd.resilience.degradation import ComponentStates
from memoryd.security.admission import Admission, riding, uncarried
from memoryd.security.audit import STARTED, AuditEvent, AuditLog
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore

P = Partition("t", "a")
DIM = 8
WRITER = Principal("writer", "t", frozenset({"a"}), SecurityLevel.RESTRICTED, frozenset(Role))


def memory(i: int) -> Memory:
    now = utcnow()
    vector = np.zeros(DIM, dtype=np.float32)
    vector[i % DIM] = 1.0
    return Memory(
        id=f"m{i}", tenant_id=P.tenant_id, agent_id=P.agent_id, content=f"note {i}",
        created_at=now, updated_at=now, vector=vector,
    )  # fmt: skip


def started(request_id: str) -> AuditEvent:
    return AuditEvent(operation="MemoryService.Remember", outcome=STARTED, request_id=request_id)


def audit_lines(directory: Path) -> list[dict[str, Any]]:
    path = directory / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def open_core(tmp: Path, audit: AuditLog, *, checkpoint_s: float = 3600.0) -> Durability:
    store, records = InMemoryStore(DIM), InMemoryRecordStore()
    await store.open()
    await records.open()
    core = Durability(
        WriteAheadLog(tmp / "wal"),
        store,
        records,
        states=ComponentStates(),
        store_dir=tmp,
        checkpoint_interval_s=checkpoint_s,
        audit=audit,
    )
    await core.open()
    return core


@pytest.fixture
async def audit(tmp_path: Path) -> AsyncIterator[AuditLog]:
    log = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
    log.start()
    yield log
    await log.close()


def logged_entries(wal_dir: Path) -> list[tuple[int, list[str]]]:
    out = []
    for segment in sorted(wal_dir.glob(f"*{SUFFIX}")):
        for seq, payload in read_segment(segment):
            out.append((seq, decode_entry(payload)[1]))
    return out


async def test_a_write_and_its_audit_event_are_made_durable_by_one_fsync(
    tmp_path: Path, audit: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await open_core(tmp_path, audit)
    store = DurableStore(core, dimension=DIM)
    await store.upsert(P, [memory(0)])  # opens the log's segment (and syncs its directory)
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])
    with riding([Admission(started("r1"), audit)]):
        await store.upsert(P, [memory(1)])
    assert len(fsyncs) == 1  # the log's group fsync: no fsync of the audit file of its own
    monkeypatch.setattr(os, "fsync", real_fsync)
    [(seq, events)] = [e for e in logged_entries(tmp_path / "wal") if e[1]]
    assert json.loads(events[0])["request_id"] == "r1"
    await asyncio.to_thread(audit.sync)
    [line] = audit_lines(tmp_path / "audit")
    assert line["request_id"] == "r1" and line["outcome"] == STARTED and line["wal_seq"] == seq
    await core.close()


async def test_writes_in_one_group_share_the_fsync_and_each_carries_its_own_event(
    tmp_path: Path, audit: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    core = await open_core(tmp_path, audit)
    store = DurableStore(core, dimension=DIM)
    await store.upsert(P, [memory(0)])
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])

    async def write(i: int) -> None:
        with riding([Admission(started(f"r{i}"), audit)]):
            await store.upsert(P, [memory(i)])

    await asyncio.gather(*(write(i) for i in range(1, 9)))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert len(fsyncs) < 8  # the writers shared group fsyncs (one or two groups)
    carried = {
        json.loads(line)["request_id"]
        for _, lines in logged_entries(tmp_path / "wal")
        for line in lines
    }
    assert carried == {f"r{i}" for i in range(1, 9)}
    await core.close()


async def test_an_admission_rides_in_the_first_entry_only(tmp_path: Path, audit: AuditLog) -> None:
    core = await open_core(tmp_path, audit)
    store = DurableStore(core, dimension=DIM)
    admission = Admission(started("r1"), audit)
    with riding([admission]):
        await store.upsert(P, [memory(1)])
        assert uncarried() == [] and admission.carried
        await store.upsert(P, [memory(2)])
    assert [len(events) for _, events in logged_entries(tmp_path / "wal")] == [1, 0]
    await core.close()


async def test_a_start_restores_the_events_the_audit_file_lost(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    core = await open_core(tmp_path, audit)
    store = DurableStore(core, dimension=DIM)
    for i in range(3):
        with riding([Admission(started(f"r{i}"), audit)]):
            await store.upsert(P, [memory(i)])
    await audit.close()
    # A crash lost the audit file's unsynced tail: the last event is gone.
    path = tmp_path / "audit" / "audit.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:10])  # and the line before torn
    await core.close()  # no checkpoint: the audit log cannot be synced

    for _ in range(2):  # a second start finds every event present: nothing doubled
        audit = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
        audit.start()
        core = await open_core(tmp_path, audit)
        await core.close()  # a checkpoint now: the audit file is synced first
        await audit.close()
        found = [e.get("request_id") for e in _parsed(path)]
        assert sorted(r for r in found if r) == ["r0", "r1", "r2"], found
    assert WriteAheadLog(tmp_path / "wal").read_checkpoint().applied == 3


def _parsed(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # the torn line the crash left
    return out


async def test_no_checkpoint_drops_an_entry_whose_event_the_audit_file_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "audit.jsonl").symlink_to("/dev/full")  # every write: ENOSPC
    audit = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    core = await open_core(tmp_path, audit, checkpoint_s=0.02)
    store = DurableStore(core, dimension=DIM)
    with riding([Admission(started("r1"), audit)]):
        await store.upsert(P, [memory(1)])
    await asyncio.sleep(0.3)  # many checkpoint rounds
    assert core.checkpoint == 0 and not audit.healthy
    await core.close()
    await audit.close()
    assert WriteAheadLog(tmp_path / "wal").read_checkpoint().applied == 0


# -- the door ---------------------------------------------------------------------------


class Sidecar:
    mode = "sidecar"
    uses_auth_context = False

    def authenticate(self, transport: Transport) -> Principal:
        return WRITER


def write_op(run: Callable[[], Any], *, in_log: bool) -> Operation[int, None]:
    async def go(services: Services, scope: CallScope, value: int) -> None:
        await run()

    return Operation(
        name="MemoryService.Remember", effect=Effect.WRITE, run=go, audit_in_log=in_log
    )


async def test_the_door_lets_the_log_carry_the_event_of_a_write_that_reaches_it(
    tmp_path: Path, audit: AuditLog
) -> None:
    core = await open_core(tmp_path, audit)
    store = DurableStore(core, dimension=DIM)
    door = Door(Services(memories=cast(Any, None)), Sidecar(), audit=audit, audit_rides_log=True)
    await door.run(
        write_op(lambda: store.upsert(P, [memory(1)]), in_log=True), _call("r1"), "a", lambda: 0
    )
    await door.run(write_op(lambda: asyncio.sleep(0), in_log=True), _call("r2"), "a", lambda: 0)
    await door.run(
        write_op(lambda: store.upsert(P, [memory(2)]), in_log=False), _call("r3"), "a", lambda: 0
    )
    await asyncio.to_thread(audit.sync)
    outcomes = [
        (e["request_id"], e["outcome"], "wal_seq" in e) for e in audit_lines(tmp_path / "audit")
    ]
    carried = [_ for _ in logged_entries(tmp_path / "wal") if _[1]]
    assert [json.loads(events[0])["request_id"] for _, events in carried] == ["r1"]
    # r1 rode in its entry; r2 wrote nothing (its event is recorded as is); r3's
    # operation is not marked: admitted by the audit log's own fsync.
    assert outcomes == [
        ("r1", STARTED, True), ("r1", "OK", False),
        ("r2", STARTED, False), ("r2", "OK", False),
        ("r3", STARTED, False), ("r3", "OK", False),
    ]  # fmt: skip
    await core.close()


def _call(request_id: str) -> Call:
    return Call(request_id, "/test/op", Transport(metadata=(), peer="ipv4:127.0.0.1:1"))
