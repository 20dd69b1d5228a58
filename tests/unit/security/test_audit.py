"""The audit log: JSONL, drained on close, rotated by size, old files pruned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryd.security.audit import MAX_IDS, STARTED, AuditEvent, AuditLog, AuditUnavailable


def rotated_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("audit-*.jsonl"))


async def test_events_are_written_and_flushed_on_close(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    for i in range(2000):
        audit.record(
            AuditEvent(
                operation="MemoryService.Remember", outcome="OK", principal="p", ids=[str(i)]
            )
        )
    await audit.close()
    lines = (tmp_path / "audit" / "audit.jsonl").read_text().splitlines()
    assert len(lines) == 2000
    first = json.loads(lines[0])
    assert first["operation"] == "MemoryService.Remember" and first["ids"] == ["0"]
    assert "time" in first and "content" not in first
    assert (tmp_path / "audit").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "audit" / "audit.jsonl").stat().st_mode & 0o777 == 0o600


async def test_rotation_by_size_and_pruning(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path, rotate_bytes=4096, keep_files=2)
    audit.start()
    for i in range(400):
        audit.record(AuditEvent(operation="op", outcome="OK", key=f"/k/{i:05d}"))
    await audit.close()
    rotated = rotated_files(tmp_path)
    assert len(rotated) == 2
    for path in [*rotated, tmp_path / "audit.jsonl"]:
        assert path.stat().st_size <= 4096
    # The newest events survive; pruning removed the oldest files only.
    assert json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])["key"] == "/k/00399"


async def test_manual_rotate_and_reopen(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path, rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    assert audit.rotate() is None  # nothing written yet
    await audit.close()
    audit = AuditLog(tmp_path, rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    audit.record(AuditEvent(operation="op", outcome="OK"))
    await audit.close()
    assert len((tmp_path / "audit.jsonl").read_text().splitlines()) == 1


def test_large_id_lists_are_truncated() -> None:
    line = json.loads(
        AuditEvent(operation="o", outcome="OK", ids=[str(i) for i in range(MAX_IDS + 5)]).to_json()
    )
    assert len(line["ids"]) == MAX_IDS and line["ids_truncated"] == MAX_IDS + 5


async def test_a_write_is_admitted_only_once_its_event_is_on_disk(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path, rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    await audit.admit(AuditEvent(operation="MemoryService.Remember", outcome=STARTED))
    # Admitted means written (and fsynced) already, before close.
    assert json.loads((tmp_path / "audit.jsonl").read_text())["outcome"] == STARTED
    await audit.close()


async def test_a_refusing_disk_refuses_the_write_and_keeps_queued_events(tmp_path: Path) -> None:
    (tmp_path / "audit.jsonl").symlink_to("/dev/full")  # every write: ENOSPC
    audit = AuditLog(tmp_path, rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    audit.record(AuditEvent(operation="MemoryService.Forget", outcome="PERMISSION_DENIED"))
    with pytest.raises(AuditUnavailable, match="nothing was stored"):
        await audit.admit(AuditEvent(operation="MemoryService.Remember", outcome=STARTED))
    await audit.close()
    assert audit.written == 0 and audit.dropped == 0
