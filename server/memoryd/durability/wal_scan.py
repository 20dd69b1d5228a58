"""Reading log segments and telling a torn tail from damage.

A crash while the log was being written can leave the *last* segment ending in part
of an entry: its caller was never answered (answers come after the fsync), so that
*torn tail* is dropped. Anything else unreadable is *damage*: bytes that fail their
checksum (a flipped bit, a bad sector) with intact entries after them, in the same
segment or in a later one. Those intact entries are acknowledged writes and are
replayed; the unreadable range is copied aside and the writes it held are counted
from the gap in the sequence numbers (they are consecutive within the log), so the
loss is exact and loud (see ``WriteAheadLog.recover``).

After an unreadable entry the scan looks for the next intact one: an offset whose
header carries a sequence number just above the last intact one (found vectorised
over the whole segment), a sane length and a matching checksum.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HEADER = struct.Struct("<IIQ")
_SEQ = struct.Struct("<Q")
#: Larger payloads are corrupt (a batch of 1000 memories of 8 KiB is ~10 MiB).
MAX_ENTRY_BYTES = 256 * 2**20
#: How far past the last intact sequence number the next intact entry may be: a
#: random 8 bytes land in that window with probability ~2^-40, so resynchronising
#: almost never has to check a checksum in vain.
MAX_SEQ_GAP = 2**24


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A range of a segment that holds no intact entry."""

    segment: Path
    offset: int
    length: int
    #: Highest intact sequence number before the range (0: none in the log).
    seq_before: int
    #: Lowest intact sequence number after it (None: nothing after it in the log).
    seq_after: int | None = None

    def lost_seqs(self, checkpoint: int = 0) -> tuple[int, int] | None:
        """The (first, last) sequence numbers the range held that are above
        ``checkpoint`` (not yet in the store), None when there are none."""
        if self.seq_after is None:
            return None
        first, last = max(self.seq_before, checkpoint) + 1, self.seq_after - 1
        return (first, last) if first <= last else None

    def lost_entries(self, checkpoint: int = 0) -> int:
        seqs = self.lost_seqs(checkpoint)
        return 0 if seqs is None else seqs[1] - seqs[0] + 1

    def as_dict(self, checkpoint: int = 0) -> dict[str, object]:
        seqs = self.lost_seqs(checkpoint)
        return {
            "segment": self.segment.name,
            "offset": self.offset,
            "bytes": self.length,
            "seq_before": self.seq_before,
            "seq_after": self.seq_after,
            "lost_entries": self.lost_entries(checkpoint),
            "lost_seqs": None if seqs is None else list(seqs),
        }


@dataclass(slots=True)
class SegmentScan:
    path: Path
    size: int
    #: (seq, payload) of every intact entry, in file order.
    entries: list[tuple[int, bytes]] = field(default_factory=list)
    #: Unreadable ranges followed by an intact entry of this segment.
    damaged: list[Unreadable] = field(default_factory=list)
    #: Unreadable bytes at the end (a torn tail if this is the last segment).
    tail: Unreadable | None = None

    @property
    def good_end(self) -> int:
        """Where the readable part ends (the tail starts)."""
        return self.tail.offset if self.tail is not None else self.size


@dataclass(slots=True)
class LogScan:
    """Every segment read and classified (see the module docstring)."""

    segments: list[SegmentScan]
    #: Unreadable ranges with intact entries after them (in this or a later segment).
    damaged: list[Unreadable]
    #: Unreadable bytes ending the last segment: an interrupted write, dropped.
    torn_tail: Unreadable | None

    def entries(self) -> Iterator[tuple[int, bytes]]:
        for segment in self.segments:
            yield from segment.entries


def _entry_at(data: bytes, pos: int, min_seq: int) -> tuple[int, bytes] | None:
    """The intact entry at ``pos`` with a sequence number of at least ``min_seq``."""
    if pos + HEADER.size > len(data):
        return None
    length, crc, seq = HEADER.unpack_from(data, pos)
    start = pos + HEADER.size
    if seq < min_seq or length > MAX_ENTRY_BYTES or start + length > len(data):
        return None
    payload = data[start : start + length]
    if zlib.crc32(_SEQ.pack(seq) + payload) != crc:
        return None
    return seq, payload


def _resync(data: bytes, pos: int, last_seq: int) -> int | None:
    """The offset of the first intact entry after ``pos`` that continues the log
    (sequence number in (last_seq, last_seq + MAX_SEQ_GAP]), or None."""
    raw = np.frombuffer(data, dtype=np.uint8)
    candidates: list[np.ndarray] = []
    # The sequence number sits 8 bytes into an entry: read the file as u64 at each
    # of the 8 alignments and keep the offsets whose value fits.
    for align in range(8):
        usable = (len(raw) - align) // 8 * 8
        if usable <= 0:
            continue
        words = raw[align : align + usable].view("<u8")
        hits = np.flatnonzero((words > last_seq) & (words <= last_seq + MAX_SEQ_GAP))
        starts = align + hits * 8 - (HEADER.size - _SEQ.size)
        candidates.append(starts[starts > pos])
    if not candidates:
        return None
    for start in np.sort(np.concatenate(candidates)).tolist():
        if _entry_at(data, start, last_seq + 1) is not None:
            return int(start)
    return None


def scan_segment(path: Path, last_seq: int) -> SegmentScan:
    """Read ``path``; ``last_seq`` is the highest intact sequence number before it."""
    data = path.read_bytes()
    scan = SegmentScan(path, len(data))
    pos = 0
    while pos < len(data):
        found = _entry_at(data, pos, last_seq + 1)
        if found is not None:
            seq, payload = found
            scan.entries.append(found)
            last_seq = seq
            pos += HEADER.size + len(payload)
            continue
        nxt = _resync(data, pos, last_seq)
        if nxt is None:
            scan.tail = Unreadable(path, pos, len(data) - pos, last_seq)
            break
        seq_after = HEADER.unpack_from(data, nxt)[2]
        scan.damaged.append(Unreadable(path, pos, nxt - pos, last_seq, seq_after))
        pos = nxt
    return scan


def scan_log(segments: list[Path], after: int = 0) -> LogScan:
    """Read every segment in order (``after``: the highest sequence number known to
    be in the log before them). A segment is named by its first sequence number."""
    scans: list[SegmentScan] = []
    damaged: list[Unreadable] = []
    last = after
    # An unreadable end of a segment is damage once a later segment has an entry.
    open_tail: Unreadable | None = None
    for path in segments:
        named = int(path.stem) if path.stem.isdigit() else 0
        scan = scan_segment(path, max(last, named - 1))
        scans.append(scan)
        if scan.entries:
            first_seq = scan.entries[0][0]
            if open_tail is not None:
                damaged.append(_closed(open_tail, first_seq))
                open_tail = None
            last = scan.entries[-1][0]
        damaged.extend(scan.damaged)
        if scan.tail is not None:
            if open_tail is not None:  # no entry in this segment: still open
                damaged.append(open_tail)
            open_tail = scan.tail
    return LogScan(scans, damaged, open_tail)


def _closed(tail: Unreadable, seq_after: int) -> Unreadable:
    return Unreadable(tail.segment, tail.offset, tail.length, tail.seq_before, seq_after)
