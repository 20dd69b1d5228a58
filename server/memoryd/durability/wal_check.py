"""``memoryd wal check``: what the next start would find in the log, changing nothing.

Reports the checkpoint (or why it cannot be read), every segment, the entries the
next start replays, a torn tail (dropped at start: an interrupted, unacknowledged
write), damaged ranges (the writes they held are lost; the start copies the bytes
aside and replays the intact entries after them), the damaged ranges earlier starts
copied aside, and the writes set aside because the store rejected them.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

from memoryd.durability.set_aside import set_aside_entries
from memoryd.durability.wal import DAMAGED_PREFIX, Checkpoint, WriteAheadLog
from memoryd.durability.wal_scan import LogScan, Unreadable

Doc = dict[str, object]


@dataclass(frozen=True, slots=True)
class LogCheck:
    directory: Path
    checkpoint: Checkpoint
    scan: LogScan
    #: Damaged ranges earlier starts copied aside (their description files).
    kept: list[Doc]
    set_aside_writes: int

    @property
    def ok(self) -> bool:
        """False when writes were or will be lost (damage above the checkpoint, or
        kept aside by a start), or the checkpoint is unreadable."""
        applied = self.checkpoint.applied
        losing = any(d.lost_entries(applied) for d in self.scan.damaged)
        return not losing and not self.kept and not self.checkpoint.unreadable

    def to_replay(self) -> int:
        return sum(1 for seq, _ in self.scan.entries() if seq > self.checkpoint.applied)

    def as_dict(self) -> Doc:
        applied = self.checkpoint.applied
        tail = self.scan.torn_tail
        return {
            "wal_dir": str(self.directory),
            "ok": self.ok,
            "checkpoint": self.checkpoint.as_dict(),
            "segments": [
                {
                    "name": s.path.name,
                    "bytes": s.size,
                    "entries": len(s.entries),
                    "first_seq": s.entries[0][0] if s.entries else None,
                    "last_seq": s.entries[-1][0] if s.entries else None,
                }
                for s in self.scan.segments
            ],
            "entries_to_replay": self.to_replay(),
            "torn_tail": None if tail is None else tail.as_dict(applied),
            "damaged": [d.as_dict(applied) for d in self.scan.damaged],
            "set_aside_damage": self.kept,
            "set_aside_writes": self.set_aside_writes,
        }


def check_log(directory: Path) -> LogCheck:
    wal = WriteAheadLog(directory)
    present = directory.is_dir()
    return LogCheck(
        directory,
        wal.read_checkpoint(),
        wal.scan() if present else LogScan([], [], None),
        _kept_damage(directory) if present else [],
        len(set_aside_entries(directory)) if present else 0,
    )


def _kept_damage(directory: Path) -> list[Doc]:
    found: list[Doc] = []
    for path in sorted(directory.glob(f"{DAMAGED_PREFIX}*.bin")):
        about: Doc = {"file": str(path), "bytes": path.stat().st_size}
        with contextlib.suppress(OSError, ValueError):  # optional: the bytes matter
            about.update(json.loads(path.with_suffix(".json").read_text()))
        found.append(about)
    return found


def _lost(d: Unreadable, checkpoint: int) -> str:
    seqs = d.lost_seqs(checkpoint)
    span = f" (seq {seqs[0]}..{seqs[1]})" if seqs else ""
    return f"{d.lost_entries(checkpoint)} acknowledged write(s) lost{span}"


def describe(check: LogCheck) -> list[str]:
    """The report as lines for a terminal."""
    cp = check.checkpoint
    lines = [f"write-ahead log {check.directory}"]
    if cp.unreadable:
        lines.append(
            f"checkpoint UNREADABLE ({cp.unreadable}): the next start replays the whole "
            "log (idempotent)"
        )
    else:
        lines.append(f"checkpoint: seq {cp.applied}")
    for s in check.scan.segments:
        span = f" (seq {s.entries[0][0]}..{s.entries[-1][0]})" if s.entries else ""
        lines.append(f"  {s.path.name}: {s.size} bytes, {len(s.entries)} entries{span}")
    lines.append(f"entries the next start replays: {check.to_replay()}")
    tail = check.scan.torn_tail
    if tail is not None:
        lines.append(
            f"torn tail: {tail.segment.name} offset {tail.offset}, {tail.length} bytes "
            "(an interrupted write, never acknowledged; dropped at start)"
        )
    for d in check.scan.damaged:
        lines.append(
            f"DAMAGED: {d.segment.name} offset {d.offset}, {d.length} bytes: "
            f"{_lost(d, cp.applied)}; the next start copies the bytes aside and replays "
            "the intact entries after them"
        )
    for k in check.kept:
        lines.append(
            f"damaged range kept aside: {k['file']} ({k.get('lost_entries', '?')} write(s) "
            "lost); delete it once inspected"
        )
    if check.set_aside_writes:
        lines.append(
            f"writes set aside by the store: {check.set_aside_writes} (memoryd wal set-aside)"
        )
    lines.append("ok" if check.ok else "NOT OK")
    return lines
