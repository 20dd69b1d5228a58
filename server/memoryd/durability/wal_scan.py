"""Reading log segments and telling a torn tail from damage.

A crash while the log was being written can leave the *last* segment ending in part
of an entry: its caller was never answered (answers come after the fsync), so that
*torn tail* is dropped. Anything else unreadable is *damage*: bytes that fail their
checksum (a flipped bit, a bad sector) with intact entries after them, in the same
segment or in a later one. Those intact entries are acknowledged writes and are
replayed; the unreadable range is copied aside and the writes it held are counted
from the gap in the sequence numbers (they are consecutive within the log), so the
loss is exact and loud (see ``WriteAheadLog.recover``).

Every group commit ends with a *commit record*: a header-sized record (the length
field :data:`COMMIT_MARK`, no payload) naming the group's highest sequence number,
written and fsynced with the group. It is what tells damage to the final entries from
a torn tail: a write interrupted before its fsync ends before its commit record (the
group is written front to back), so an unreadable range *followed* by an intact
commit record held acknowledged writes, up to the sequence the record names, and is
damage like any other. Logs written before commit records existed read as before
(their unreadable last bytes are a torn tail).

After an unreadable range the scan looks for the next intact entry or commit record:
an offset whose header carries a sequence number just above the last intact one
(found vectorised over the whole segment), a sane length and a matching checksum.
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
#: The length field of a commit record (no entry is this long: see MAX_ENTRY_BYTES).
COMMIT_MARK = 0xFFFF_FFFF
#: Mixed into a commit record's checksum, so that no entry header reads as one.
_COMMIT_TAG = b"memoryd-wal-commit"
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
    #: The first sequence number after what the range held: the next intact entry's,
    #: or one past the sequence a commit record after the range names (None: nothing
    #: after it in the log).
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
    #: Highest sequence number an intact commit record names (0: none).
    committed: int = 0

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

    @property
    def last_seq(self) -> int:
        """The highest sequence number the log has used: of an intact entry, or named
        by a commit record (whose entry may be damaged); 0 for an empty log."""
        return max(
            (max(s.committed, s.entries[-1][0] if s.entries else 0) for s in self.segments),
            default=0,
        )


def encode_commit(seq: int) -> bytes:
    """The commit record of a group whose highest sequence number is ``seq``."""
    return HEADER.pack(COMMIT_MARK, zlib.crc32(_COMMIT_TAG + _SEQ.pack(seq)), seq)


def _commit_at(data: bytes, pos: int, min_seq: int) -> int | None:
    """The sequence number the intact commit record at ``pos`` names, if it is at
    least ``min_seq``."""
    if pos + HEADER.size > len(data):
        return None
    length, crc, seq = HEADER.unpack_from(data, pos)
    if length != COMMIT_MARK or seq < min_seq:
        return None
    return seq if zlib.crc32(_COMMIT_TAG + _SEQ.pack(seq)) == crc else None


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
    """The offset of the first intact entry or commit record after ``pos`` that
    continues the log (sequence number in (last_seq, last_seq + MAX_SEQ_GAP]), or None."""
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
        if _commit_at(data, start, last_seq + 1) is not None:
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
        committed = _commit_at(data, pos, last_seq)
        if committed is not None:
            # Names the entry just read, or (after damage) the last one it covered.
            scan.committed = last_seq = committed
            pos += HEADER.size
            continue
        nxt = _resync(data, pos, last_seq)
        if nxt is None:
            scan.tail = Unreadable(path, pos, len(data) - pos, last_seq)
            break
        length, _, seq_after = HEADER.unpack_from(data, nxt)
        if length == COMMIT_MARK:  # the range held the group's writes up to seq_after
            seq_after += 1
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
        last = max(last, scan.committed)
        damaged.extend(scan.damaged)
        if scan.tail is not None:
            if open_tail is not None:  # no entry in this segment: still open
                damaged.append(open_tail)
            open_tail = scan.tail
    return LogScan(scans, damaged, open_tail)


def _closed(tail: Unreadable, seq_after: int) -> Unreadable:
    return Unreadable(tail.segment, tail.offset, tail.length, tail.seq_before, seq_after)
