"""A log that knows what it acknowledged (issue 30, item 5).

A real log written by the group-commit writer (entries in groups of 1-3, each group
ending in its commit record), then one byte flipped in the length, checksum,
sequence number or payload of each entry in turn, the last acknowledged one
included: every case is damage losing exactly that write (never a torn tail), the
start replays the rest and keeps the bytes aside, and ``wal check`` counts the loss
once, before and after the start. A partial write that was never acknowledged, cut
at every byte (and zero-filled, as a power loss leaves it), is still a torn tail:
dropped with a warning, nothing reported lost. A log written before commit records
existed reads as before.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from memoryd.durability.wal import SUFFIX, WriteAheadLog, encode_entry, encode_group
from memoryd.durability.wal_check import check_log, describe
from memoryd.durability.wal_scan import COMMIT_MARK, HEADER

#: Entries per group commit: a lone entry, groups, and a lone last entry.
GROUPS = (1, 3, 1, 2, 1)
ENTRIES = sum(GROUPS)
#: Byte offsets within an entry, by field (payloads are PAYLOAD bytes).
PAYLOAD = 24
FIELDS = {
    "length": 0,
    "length-high": 3,
    "crc": 5,
    "seq": 8,
    "payload-first": HEADER.size,
    "payload-middle": HEADER.size + PAYLOAD // 2,
    "payload-last": HEADER.size + PAYLOAD - 1,
}


def payload(seq: int) -> bytes:
    return f"acknowledged write {seq:05d}".encode().ljust(PAYLOAD, b".")


async def write_real_log(directory: Path) -> None:
    """ENTRIES acknowledged writes in GROUPS, by the daemon's writer (one fsync a group)."""
    wal = WriteAheadLog(directory)
    wal.recover()
    wal.start()
    seq = 0
    for size in GROUPS:
        waiters = []
        for _ in range(size):
            seq += 1
            waiters.append(wal.submit(payload(seq))[1])
        for done in waiters:
            await done
    await wal.close()


def layout(segment: Path) -> tuple[dict[int, int], int]:
    """Each entry's offset by sequence number, and how many commit records follow them."""
    data = segment.read_bytes()
    offsets: dict[int, int] = {}
    commits = pos = 0
    while pos < len(data):
        length, _, seq = HEADER.unpack_from(data, pos)
        if length == COMMIT_MARK:
            commits += 1
            pos += HEADER.size
        else:
            offsets[seq] = pos
            pos += HEADER.size + length
    return offsets, commits


@pytest.fixture(scope="module")
def real_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("wal") / "wal"
    asyncio.run(write_real_log(directory))
    return directory


def copy_of(real_log: Path, tmp_path: Path) -> tuple[Path, Path]:
    directory = tmp_path / "wal"
    shutil.copytree(real_log, directory)
    (segment,) = directory.glob(f"*{SUFFIX}")
    return directory, segment


def flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x5A
    path.write_bytes(bytes(data))


def test_the_writer_ends_every_group_with_a_commit_record(real_log: Path) -> None:
    (segment,) = real_log.glob(f"*{SUFFIX}")
    offsets, commits = layout(segment)
    assert sorted(offsets) == list(range(1, ENTRIES + 1))
    assert commits == len(GROUPS)
    scan = WriteAheadLog(real_log).scan()
    assert [seq for seq, _ in scan.entries()] == list(range(1, ENTRIES + 1))
    assert scan.damaged == [] and scan.torn_tail is None and scan.last_seq == ENTRIES


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("seq", range(1, ENTRIES + 1))
def test_damage_to_any_acknowledged_entry_is_counted_once_never_a_torn_tail(
    real_log: Path, tmp_path: Path, seq: int, field: str
) -> None:
    directory, segment = copy_of(real_log, tmp_path)
    offsets, _ = layout(segment)
    flip(segment, offsets[seq] + FIELDS[field])

    before = check_log(directory)
    assert before.scan.torn_tail is None, "an acknowledged entry is never a torn tail"
    (damage,) = before.scan.damaged
    assert damage.offset == offsets[seq] and damage.lost_seqs() == (seq, seq)
    assert not before.ok and before.lost_writes() == 1
    assert before.as_dict()["lost_writes"] == 1

    wal = WriteAheadLog(directory)
    size = segment.stat().st_size
    with capture_logs() as logs:
        replayed = wal.recover()
    assert [s for s, _ in replayed] == [s for s in range(1, ENTRIES + 1) if s != seq]
    assert wal.last_seq == ENTRIES, "a sequence number is never used twice"
    (error,) = [e for e in logs if e["log_level"] == "error"]
    assert error["lost_entries"] == 1 and error["lost_seqs"] == (seq, seq)
    assert not [e for e in logs if "torn tail" in e["event"]]
    assert segment.stat().st_size == size, "nothing cut off the segment"

    # After the start (and once the checkpoint moved past it): still one write lost.
    for checkpoint in (0, ENTRIES):
        wal.write_checkpoint(checkpoint)
        after = check_log(directory)
        assert not after.ok and after.lost_writes() == 1
        doc = after.as_dict()
        assert doc["lost_writes"] == 1
        assert [d["lost_entries"] for d in doc["damaged"]] == [1]  # type: ignore[attr-defined]
        lines = describe(after)
        counted = [line for line in lines if "lost" in line]
        assert counted == [
            next(line for line in lines if line.startswith("DAMAGED")),
            "acknowledged writes lost: 1",
        ], lines
        assert f"1 acknowledged write(s) lost (seq {seq}..{seq})" in counted[0]


@pytest.mark.parametrize("zero_filled", [False, True])
def test_a_partial_write_never_acknowledged_is_a_torn_tail_at_every_cut(
    real_log: Path, tmp_path: Path, zero_filled: bool
) -> None:
    directory, segment = copy_of(real_log, tmp_path)
    acknowledged = segment.read_bytes()
    unanswered = encode_group([ENTRIES + 1, ENTRIES + 2], [payload(101), payload(102)])
    for cut in range(1, len(unanswered)):
        torn = unanswered[:cut] + (bytes(4096 - cut) if zero_filled else b"")
        segment.write_bytes(acknowledged + torn)
        check = check_log(directory)
        assert check.ok and check.lost_writes() == 0 and check.scan.damaged == [], cut
        with capture_logs() as logs:
            replayed = [s for s, _ in WriteAheadLog(directory).recover()]
        assert replayed[:ENTRIES] == list(range(1, ENTRIES + 1)), cut
        assert not [e for e in logs if e["log_level"] == "error"], (cut, logs)
        assert not list(directory.glob("damaged-*")), cut
        assert check_log(directory).scan.torn_tail is None  # dropped


def test_a_log_written_before_commit_records_reads_as_before(tmp_path: Path) -> None:
    """Entries only: an unreadable last entry is a torn tail, mid-log damage is damage."""
    directory = tmp_path / "wal"
    directory.mkdir()
    old = directory / f"{1:020d}{SUFFIX}"
    data = [encode_entry(seq, payload(seq)) for seq in range(1, 11)]
    old.write_bytes(b"".join(data))
    flip(old, len(b"".join(data[:4])) + HEADER.size + 2)  # entry 5
    old_scan = WriteAheadLog(directory).scan()
    assert [d.lost_seqs() for d in old_scan.damaged] == [(5, 5)]
    assert old_scan.torn_tail is None
    with open(old, "ab") as f:
        f.write(encode_entry(11, payload(11))[:-3])
    wal = WriteAheadLog(directory)
    assert [s for s, _ in wal.recover()] == [1, 2, 3, 4, *range(6, 11)]
    assert wal.last_seq == 10
