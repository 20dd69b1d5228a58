"""``memoryd wal check``: what the next start would find in the log, changing nothing.

Reports the checkpoint (or why it cannot be read), every segment, the entries the
next start replays, a torn tail (dropped at start: an interrupted, unacknowledged
write), damaged ranges (the writes they held are lost; the start copies the bytes
aside and replays the intact entries after them), the damaged ranges earlier starts
copied aside, and the writes set aside because the store rejected them.

Each lost write is counted once: a damaged range an earlier start copied aside
counts the writes that start lost (the checkpoint has moved past them since), one
not yet copied the writes the next start will lose; the report ends with the total.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

from memoryd.durability.set_aside import set_aside_entries
from memoryd.durability.wal import DAMAGED_PREFIX, Checkpoint, WriteAheadLog, damage_file
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
        return not self.lost_writes() and not self.kept and not self.checkpoint.unreadable

    def to_replay(self) -> int:
        return sum(1 for seq, _ in self.scan.entries() if seq > self.checkpoint.applied)

    def kept_file(self, damage: Unreadable) -> Doc | None:
        """What an earlier start kept of ``damage`` (None: not copied aside yet)."""
        name = str(damage_file(self.directory, damage))
        return next((k for k in self.kept if k["file"] == name), None)

    def lost(self, damage: Unreadable) -> tuple[int, list[int] | None]:
        """(how many, first and last seq) of the acknowledged writes ``damage`` held
        that are lost: as counted when they were copied aside, else from now on."""
        kept = self.kept_file(damage)
        count = None if kept is None else kept_count(kept)
        if kept is not None and count is not None:
            seqs = kept.get("lost_seqs")
            return count, list(seqs) if isinstance(seqs, list) else None
        seqs = damage.lost_seqs(self.checkpoint.applied)
        return damage.lost_entries(self.checkpoint.applied), None if seqs is None else list(seqs)

    def kept_elsewhere(self) -> list[Doc]:
        """Kept ranges whose bytes are no longer in the log (their segment deleted)."""
        in_log = {str(damage_file(self.directory, d)) for d in self.scan.damaged}
        return [k for k in self.kept if k["file"] not in in_log]

    def lost_writes(self) -> int:
        """Every acknowledged write lost or about to be, each counted once."""
        in_log = sum(self.lost(d)[0] for d in self.scan.damaged)
        return in_log + sum(kept_count(k) or 0 for k in self.kept_elsewhere())

    def _damage_dict(self, damage: Unreadable) -> Doc:
        kept = self.kept_file(damage)
        count, seqs = self.lost(damage)
        out = damage.as_dict(self.checkpoint.applied)
        out.update(lost_entries=count, lost_seqs=seqs, kept=None if kept is None else kept["file"])
        return out

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
            "damaged": [self._damage_dict(d) for d in self.scan.damaged],
            "set_aside_damage": self.kept,
            "set_aside_writes": self.set_aside_writes,
            "lost_writes": self.lost_writes(),
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


def kept_count(kept: Doc) -> int | None:
    """The writes a kept damaged range held (None when its description is missing)."""
    count = kept.get("lost_entries")
    return count if isinstance(count, int) else None


def _lost(count: int, seqs: object) -> str:
    span = f" (seq {seqs[0]}..{seqs[1]})" if isinstance(seqs, list) and len(seqs) == 2 else ""
    return f"{count} acknowledged write(s) lost{span}"


def _damage_line(check: LogCheck, d: Unreadable) -> str:
    where = f"DAMAGED: {d.segment.name} offset {d.offset}, {d.length} bytes: "
    kept = check.kept_file(d)
    count, seqs = check.lost(d)
    if kept is not None:
        return (
            f"{where}{_lost(count, seqs)}; kept aside in {kept['file']} (delete it once inspected)"
        )
    if not count:
        return f"{where}its writes are already in the store; nothing lost"
    return (
        f"{where}{_lost(count, seqs)}; the next start copies the bytes aside and replays "
        "the intact entries after them"
    )


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
    lines.extend(_damage_line(check, d) for d in check.scan.damaged)
    for k in check.kept_elsewhere():
        count = kept_count(k)
        lost = (
            "an unknown number of writes lost"
            if count is None
            else _lost(count, k.get("lost_seqs"))
        )
        lines.append(f"damaged range kept aside: {k['file']}: {lost}; delete it once inspected")
    if check.set_aside_writes:
        lines.append(
            f"writes set aside by the store: {check.set_aside_writes} (memoryd wal set-aside)"
        )
    lines.append(f"acknowledged writes lost: {check.lost_writes()}")
    lines.append("ok" if check.ok else "NOT OK")
    return lines
