"""A damaged write-ahead log is never read silently (issue 20, finding 3).

A real daemon acknowledges 30 Remembers and is killed before it applies them (the
background apply waits 10 s for company), so all 30 are only in the log. Then:

- one byte flipped inside entry 16, or inside the 30th, the last acknowledged one
  (issue 30: it used to pass for a torn tail): the next start replays the 29 intact
  entries (those before the damage *and* after it), sets the unreadable bytes aside
  next to the log and logs an error naming the segment, the offset and the one lost
  write; ``memoryd wal check`` reports the damage (exit 1) before the start, and after
  it counts the same one lost write, once;
- a write torn mid-way that was never acknowledged (what a crash mid-write leaves
  behind the 30 answered ones): dropped and logged as a warning, all 30 replayed;
  ``wal check`` calls it a torn tail (exit 0).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from memoryd.durability.wal import SUFFIX, encode_group
from memoryd.durability.wal_scan import COMMIT_MARK
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import REPO, Daemon

AGENT = "walcheck"
WRITES = 30
DAMAGED = 16  # 1-based: the 16th acknowledged write
ENV = {
    "MEMORYD_EMBEDDER": "hashing",
    "MEMORYD_MAINTENANCE__ENABLED": "false",
    # Acknowledged at the fsync, applied 10 s later: a SIGKILL before then leaves
    # every write in the log only.
    "MEMORYD_DURABILITY__APPLY_DELAY_MS": "10000",
}
_HEADER = struct.Struct("<IIQ")


def _remember_and_kill(daemon: Daemon) -> list[str]:
    """30 acknowledged Remembers (ids in order), then SIGKILL."""
    daemon.start()
    ids = []
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        for i in range(WRITES):
            r = stub.Remember(
                mpb.RememberRequest(agent_id=AGENT, content=f"acknowledged write {i + 1}"),
                timeout=30,
            )
            ids.append(r.memory.id)
    daemon.kill()
    return ids


def _entries(wal_dir: Path) -> tuple[Path, list[tuple[int, int, int]]]:
    """The one segment and its entries as (offset, payload length, seq)."""
    segments = sorted(wal_dir.glob(f"*{SUFFIX}"))
    assert len(segments) == 1, segments
    data = segments[0].read_bytes()
    out, pos = [], 0
    while pos + _HEADER.size <= len(data):
        length, _, seq = _HEADER.unpack_from(data, pos)
        if length == COMMIT_MARK:  # a group's commit record
            pos += _HEADER.size
            continue
        out.append((pos, length, seq))
        pos += _HEADER.size + length
    return segments[0], out


def _present(daemon: Daemon, ids: list[str]) -> list[bool]:
    found = []
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        for memory_id in ids:
            try:
                stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=memory_id), timeout=10)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
                found.append(False)
            else:
                found.append(True)
    return found


def _wal_check(data_dir: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "wal", "check", "--data-dir", str(data_dir), "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ, **ENV},
    )  # fmt: skip
    assert done.stdout, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return done.returncode, report


def _wal_check_text(data_dir: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "wal", "check", "--data-dir", str(data_dir)],
        capture_output=True, text=True, cwd=REPO, timeout=120, env={**os.environ, **ENV},
    )  # fmt: skip
    return done.stdout.splitlines()


def _log_lines(daemon: Daemon) -> list[dict[str, object]]:
    lines = []
    for line in daemon.logs().splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


@pytest.mark.parametrize("damaged", [DAMAGED, WRITES], ids=["mid-log", "last-acknowledged"])
def test_a_flipped_byte_loses_only_that_entry_and_says_so(
    daemon_factory: Callable[..., Daemon], damaged: int
) -> None:
    daemon = daemon_factory(env=ENV)
    ids = _remember_and_kill(daemon)
    segment, entries = _entries(daemon.data_dir / "wal")
    assert len(entries) == WRITES, "one log entry per acknowledged Remember, none applied"
    offset, length, seq = entries[damaged - 1]
    data = bytearray(segment.read_bytes())
    data[offset + _HEADER.size + length // 2] ^= 0x40  # inside the entry's payload
    segment.write_bytes(bytes(data))

    code, report = _wal_check(daemon.data_dir)
    assert code == 1, report
    damage = report["damaged"]
    assert isinstance(damage, list) and len(damage) == 1, report
    assert damage[0]["segment"] == segment.name
    assert damage[0]["offset"] == offset
    assert damage[0]["lost_entries"] == 1
    assert damage[0]["lost_seqs"] == [seq, seq]
    assert report["torn_tail"] is None and report["lost_writes"] == 1

    daemon.start()
    present = _present(daemon, ids)
    lost = [i + 1 for i, ok in enumerate(present) if not ok]
    assert lost == [damaged], f"writes lost: {lost}"
    errors = [
        line
        for line in _log_lines(daemon)
        if line.get("level") == "error" and "damaged" in str(line.get("event"))
    ]
    assert len(errors) == 1, daemon.logs()
    error = errors[0]
    assert error["segment"] == segment.name and error["offset"] == offset
    assert error["lost_entries"] == 1 and error["replayed_after"] == WRITES - damaged
    kept = Path(str(error["kept"]))
    assert kept.exists() and kept.parent == daemon.data_dir / "wal"
    assert data[offset : offset + 64] in kept.read_bytes()
    daemon.stop()

    # Replayed and checkpointed: the check keeps saying that one write was lost (one
    # count, whatever the checkpoint), until the kept bytes are deleted.
    code, report = _wal_check(daemon.data_dir)
    assert code == 1 and not report["ok"], report
    assert report["lost_writes"] == 1, report
    assert [(d["lost_entries"], d["kept"]) for d in report["damaged"]] == [(1, str(kept))]
    (kept_about,) = report["set_aside_damage"]
    assert kept_about["lost_entries"] == 1 and kept_about["lost_seqs"] == [seq, seq]
    text = _wal_check_text(daemon.data_dir)
    assert [line for line in text if "lost" in line] == [
        next(line for line in text if line.startswith("DAMAGED")),
        "acknowledged writes lost: 1",
    ], text
    kept.unlink()
    kept.with_suffix(".json").unlink()
    code, report = _wal_check(daemon.data_dir)
    assert code == 0 and report["ok"], report


def test_a_torn_tail_is_dropped_and_logged(daemon_factory: Callable[..., Daemon]) -> None:
    daemon = daemon_factory(env=ENV)
    ids = _remember_and_kill(daemon)
    segment, entries = _entries(daemon.data_dir / "wal")
    assert len(entries) == WRITES
    # A 31st write the crash interrupted: half of it reached the file, never answered.
    offset = segment.stat().st_size
    torn = encode_group([entries[-1][2] + 1], [b"an unanswered write " * 10])
    with open(segment, "ab") as f:
        f.write(torn[: len(torn) // 2])

    code, report = _wal_check(daemon.data_dir)
    assert code == 0, report
    assert report["damaged"] == [] and report["lost_writes"] == 0
    tail = report["torn_tail"]
    assert isinstance(tail, dict) and tail["segment"] == segment.name, report
    assert tail["offset"] == offset and tail["bytes"] == len(torn) // 2

    daemon.start()
    present = _present(daemon, ids)
    assert present == [True] * WRITES
    warnings = [
        line
        for line in _log_lines(daemon)
        if line.get("level") == "warning" and "torn tail" in str(line.get("event"))
    ]
    assert len(warnings) == 1 and warnings[0]["offset"] == offset, daemon.logs()
    assert not list((daemon.data_dir / "wal").glob("damaged-*")), "a torn tail is not damage"
    daemon.stop()
