"""Reading real log segments back: a torn tail versus damage followed by intact entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryd.durability.wal import CHECKPOINT, SUFFIX, WriteAheadLog, encode_entry
from memoryd.durability.wal_scan import HEADER, scan_log


def write_segment(directory: Path, seqs: range, size: int = 100) -> tuple[Path, list[int]]:
    """Entries ``seqs`` with ``size``-byte payloads; returns the file and each entry's offset."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{seqs[0]:020d}{SUFFIX}"
    offsets, data = [], b""
    for seq in seqs:
        offsets.append(len(data))
        data += encode_entry(seq, bytes([seq % 251]) * size)
    path.write_bytes(data)
    return path, offsets


def flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def test_intact_log_reads_whole(tmp_path: Path) -> None:
    write_segment(tmp_path, range(1, 11))
    write_segment(tmp_path, range(11, 21))
    scan = WriteAheadLog(tmp_path).scan()
    assert [seq for seq, _ in scan.entries()] == list(range(1, 21))
    assert scan.damaged == [] and scan.torn_tail is None


@pytest.mark.parametrize("where", ["payload", "length", "seq", "crc"])
def test_damage_mid_segment_skips_exactly_the_damaged_entry(tmp_path: Path, where: str) -> None:
    path, offsets = write_segment(tmp_path, range(1, 31))
    field = {"payload": HEADER.size + 50, "length": 1, "seq": 9, "crc": 5}[where]
    flip(path, offsets[15] + field)  # entry 16
    scan = WriteAheadLog(tmp_path).scan()
    assert [seq for seq, _ in scan.entries()] == [*range(1, 16), *range(17, 31)]
    (damage,) = scan.damaged
    assert (damage.offset, damage.length) == (offsets[15], offsets[16] - offsets[15])
    assert damage.lost_seqs() == (16, 16) and damage.lost_entries() == 1
    assert damage.lost_entries(checkpoint=16) == 0  # already in the store
    assert scan.torn_tail is None


def test_several_damaged_entries_are_counted_from_the_sequence_gap(tmp_path: Path) -> None:
    path, offsets = write_segment(tmp_path, range(1, 31))
    data = bytearray(path.read_bytes())
    data[offsets[4] : offsets[9]] = bytes(offsets[9] - offsets[4])  # entries 5-9 zeroed
    path.write_bytes(bytes(data))
    (damage,) = WriteAheadLog(tmp_path).scan().damaged
    assert damage.lost_seqs() == (5, 9) and damage.offset == offsets[4]


def test_a_cut_or_zero_filled_end_of_the_last_segment_is_a_torn_tail(tmp_path: Path) -> None:
    write_segment(tmp_path, range(1, 11))
    path, offsets = write_segment(tmp_path, range(11, 21))
    data = path.read_bytes()
    path.write_bytes(data[: offsets[-1] + 30] + bytes(4096))  # half an entry, then zeros
    scan = WriteAheadLog(tmp_path).scan()
    assert [seq for seq, _ in scan.entries()] == list(range(1, 20))
    assert scan.damaged == []
    assert scan.torn_tail is not None and scan.torn_tail.offset == offsets[-1]
    assert scan.torn_tail.lost_entries() == 0


def test_an_unreadable_end_of_an_earlier_segment_is_damage(tmp_path: Path) -> None:
    first, offsets = write_segment(tmp_path, range(1, 11))
    write_segment(tmp_path, range(11, 21))
    flip(first, offsets[9] + HEADER.size + 3)  # entry 10, the first segment's last
    scan = WriteAheadLog(tmp_path).scan()
    assert scan.torn_tail is None
    (damage,) = scan.damaged
    assert damage.segment == first and damage.lost_seqs() == (10, 10)


def test_damage_at_the_start_of_a_segment_of_a_long_log(tmp_path: Path) -> None:
    base = 5_000_000_000  # far beyond any sequence gap the resync allows from 0
    path, _ = write_segment(tmp_path, range(base, base + 5))
    flip(path, 2)
    scan = scan_log([path])
    assert [seq for seq, _ in scan.entries()] == list(range(base + 1, base + 5))
    assert scan.damaged[0].lost_seqs() == (base, base)


def test_recover_drops_a_torn_tail_and_sets_damage_aside(tmp_path: Path) -> None:
    first, offsets = write_segment(tmp_path, range(1, 11))
    last, tail_offsets = write_segment(tmp_path, range(11, 21))
    flip(first, offsets[3] + HEADER.size + 1)
    last.write_bytes(last.read_bytes()[: tail_offsets[-1] + 5])
    wal = WriteAheadLog(tmp_path)
    entries = wal.recover()
    assert [seq for seq, _ in entries] == [1, 2, 3, *range(5, 20)]
    assert wal.last_seq == 19
    assert last.stat().st_size == tail_offsets[-1]  # the torn bytes are gone
    (kept,) = tmp_path.glob("damaged-*.bin")
    assert kept.read_bytes() == first.read_bytes()[offsets[3] : offsets[4]]
    about = json.loads(kept.with_suffix(".json").read_text())
    assert about["lost_seqs"] == [4, 4] and about["segment"] == first.name
    # Read again: nothing torn any more, the damage is still there (and already kept).
    again = WriteAheadLog(tmp_path).scan()
    assert again.torn_tail is None and len(again.damaged) == 1


@pytest.mark.parametrize(
    "content", [b"", b"{not json", b'{"applied": "x"}', b"[1, 2]", b'{"applied": -3}', b"\xff\xfe"]
)
def test_a_garbage_checkpoint_counts_as_zero(tmp_path: Path, content: bytes) -> None:
    write_segment(tmp_path, range(1, 6))
    (tmp_path / CHECKPOINT).write_bytes(content)
    wal = WriteAheadLog(tmp_path)
    checkpoint = wal.read_checkpoint()
    assert checkpoint.applied == 0 and checkpoint.unreadable
    assert [seq for seq, _ in wal.recover()] == [1, 2, 3, 4, 5]


def test_checkpoint_keeps_the_table_versions(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    wal.write_checkpoint(42, {"memories": 11, "records": 3})
    checkpoint = wal.read_checkpoint()
    assert (checkpoint.applied, dict(checkpoint.tables)) == (42, {"memories": 11, "records": 3})
    (tmp_path / CHECKPOINT).write_text(json.dumps({"applied": 7}))  # an older daemon's
    assert wal.read_checkpoint().tables == {}


def test_truncating_drops_the_refused_marks_of_entries_no_segment_keeps(tmp_path: Path) -> None:
    for first in (1, 11, 21):
        write_segment(tmp_path, range(first, first + 10))
    wal = WriteAheadLog(tmp_path)
    wal.recover()
    for seq in (5, 15, 25):
        wal.mark_refused(seq)
    assert wal.truncate(checkpoint=20) == 2
    assert wal.retained_from() == 21
    assert wal.refused_seqs() == {25}
