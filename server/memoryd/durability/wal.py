"""The write-ahead log: append-only segments of checksummed entries, group commit.

On disk (``<data_dir>/wal/``): segments ``<first seq:020d>.wal``, each a run of entries
``length:u32 | crc32:u32 | seq:u64 | payload`` (little endian; the crc covers seq and
payload), every group of them followed by a commit record naming its highest sequence.
Only the last segment can end in a torn write after a crash (bytes after the last
commit record that hold no intact entry); it is cut off at start. Any other
unreadable range is damage, the final entries included when a commit record follows
them: copied aside, the writes it held counted and logged, and the intact entries
after it replayed (see wal_scan.py).
``checkpoint`` holds the highest sequence whose entry and every earlier one is
applied *and* durable in the store, and the LanceDB table versions that hold them;
segments wholly at or below it are deleted once the segments after them hold
``retain_bytes`` (the change feed reads the kept ones: docs/watch.md). An unreadable checkpoint counts as 0
(replay is idempotent), with a warning.

Group commit: ``submit`` assigns the next sequence number and queues the payload;
one writer task takes everything queued, writes it with its commit record and calls
``fsync`` once, in a worker thread (never on the event loop), then resolves every
waiter. A failed write
or fsync fails the whole group, cuts the segment back to its last durable entry and
starts a new segment on the next attempt; nothing of the failed group is ever read
back.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import struct
import threading
import uuid
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.durability.wal_scan import (
    HEADER,
    LogScan,
    Unreadable,
    encode_commit,
    scan_log,
    scan_segment,
)

log = structlog.get_logger(__name__)

SUFFIX = ".wal"
CHECKPOINT = "checkpoint"
#: File name prefix of a logged entry the store rejected on replay (kept, never read).
REJECTED_PREFIX = "rejected-"
#: File name prefix of an unreadable range of a segment, copied aside at start.
DAMAGED_PREFIX = "damaged-"
#: File name prefix of the mark of an entry the store refused before its caller was
#: answered (the caller heard why): the change feed skips it.
REFUSED_PREFIX = "refused-"
#: The log's identity (a uuid made with the directory): what a change feed cursor
#: names, so that a cursor of another log (another replica) is refused.
LOG_ID = "log-id"


class WalUnusable(OSError):
    """The log cannot be written (disk full, read-only, I/O error)."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What the store holds durably: every entry up to ``applied``."""

    applied: int = 0
    #: LanceDB table -> the version that held every entry up to ``applied`` when the
    #: store's files were synced (a rollback below it would lose checkpointed writes).
    tables: Mapping[str, int] = field(default_factory=dict)
    #: Why the checkpoint file could not be read (``applied`` is then 0).
    unreadable: str = ""

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"applied": self.applied, "tables": dict(self.tables)}
        if self.unreadable:
            out["unreadable"] = self.unreadable
        return out


def load_checkpoint(directory: Path) -> Checkpoint:
    """The checkpoint in ``directory``; an absent one is 0, a garbage one too (with
    ``unreadable`` saying why: replaying from the start is idempotent)."""
    try:
        text = (directory / CHECKPOINT).read_text()
    except FileNotFoundError:
        return Checkpoint()
    except (OSError, UnicodeDecodeError) as exc:
        return Checkpoint(unreadable=f"{type(exc).__name__}: {exc}")
    try:
        doc = json.loads(text)
        applied = int(doc["applied"])
        tables = {str(k): int(v) for k, v in dict(doc.get("tables") or {}).items()}
        if applied < 0:
            raise ValueError(f"negative sequence {applied}")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return Checkpoint(unreadable=f"{type(exc).__name__}: {exc}")
    return Checkpoint(applied, tables)


@dataclass(slots=True)
class _Queued:
    seq: int
    payload: bytes
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def encode_entry(seq: int, payload: bytes) -> bytes:
    body = struct.pack("<Q", seq) + payload
    return HEADER.pack(len(payload), zlib.crc32(body), seq) + payload


def encode_group(seqs: list[int], payloads: list[bytes]) -> bytes:
    """One group commit's bytes: its entries, then the commit record naming the last."""
    entries = b"".join(map(encode_entry, seqs, payloads))
    return entries + encode_commit(seqs[-1])


def read_segment(path: Path) -> Iterator[tuple[int, bytes]]:
    """(seq, payload) of every intact entry of one segment."""
    yield from scan_segment(path, 0).entries


def damage_file(directory: Path, damage: Unreadable) -> Path:
    """Where an unreadable range is copied aside (never read by a replay)."""
    return directory / f"{DAMAGED_PREFIX}{damage.segment.stem}-{damage.offset:012d}.bin"


class WriteAheadLog:
    def __init__(
        self, directory: Path, *, segment_bytes: int = 64 * 2**20, retain_bytes: int = 0
    ) -> None:
        self.directory = directory
        self.segment_bytes = segment_bytes
        #: Bytes of segments kept past the checkpoint, newest first (the change feed).
        self.retain_bytes = retain_bytes
        #: This log's identity (read or made by ``recover``).
        self.log_id = ""
        self._next_seq = 1
        #: Highest sequence written and fsynced.
        self.durable_seq = 0
        #: Highest sequence in a segment (set under ``_io_lock``, unlike durable_seq).
        self._written_seq = 0
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._io_lock = threading.Lock()
        self._file: int | None = None
        self._file_path: Path | None = None
        self._file_size = 0
        #: Why the last write failed (None while the log is usable).
        self.error: str | None = None
        self.last_sync_s = 0.0
        self.groups = 0
        #: Called after each successful group fsync with its duration (metrics).
        self.on_sync: Callable[[float], None] | None = None
        #: Segments truncate must keep (a damaged range not yet copied aside).
        self._pinned: set[Path] = set()
        #: The checkpoint ``recover`` started from.
        self.recovered = Checkpoint()

    # -- recovery ------------------------------------------------------------------

    def segments(self) -> list[tuple[int, Path]]:
        found = []
        for p in self.directory.glob(f"*{SUFFIX}"):
            with contextlib.suppress(ValueError):
                found.append((int(p.stem), p))
        return sorted(found)

    def read_checkpoint(self) -> Checkpoint:
        return load_checkpoint(self.directory)

    def scan(self, after: int = 0) -> LogScan:
        """Every segment read and classified, nothing changed (``memoryd wal check``)."""
        return scan_log([p for _, p in self.segments()], after)

    def set_aside(self, seq: int, payload: bytes) -> Path:
        """Keep entry ``seq``'s payload (``durability.ops.decode``-able) durably in
        the log's directory under a name no replay reads."""
        path = self.directory / f"{REJECTED_PREFIX}{seq:020d}.bin"
        with open(path, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        fsync_dir(self.directory)
        return path

    def write_checkpoint(self, seq: int, tables: Mapping[str, int] | None = None) -> None:
        """Atomically: temp file, fsync, rename, fsync the directory."""
        tmp = self.directory / (CHECKPOINT + ".tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps({"applied": seq, "tables": dict(tables or {})}))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.directory / CHECKPOINT)
        fsync_dir(self.directory)

    def recover(self) -> list[tuple[int, bytes]]:
        """Every intact entry after the checkpoint, in order; sets the next sequence.

        A torn tail is cut off the last segment; a damaged range is copied aside (a
        segment whose copy failed is kept past the checkpoint) and both are logged
        with what they held."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.log_id = self._identity()
        checkpoint = self.recovered = self.read_checkpoint()
        if checkpoint.unreadable:
            log.warning(
                "write-ahead log checkpoint unreadable; replaying the whole log "
                "(replay is idempotent)",
                file=str(self.directory / CHECKPOINT),
                error=checkpoint.unreadable,
            )
        scan = self.scan()
        if scan.torn_tail is not None:
            self._drop_torn_tail(scan.torn_tail)
        for damage in scan.damaged:
            self._set_damage_aside(scan, damage, checkpoint.applied)
        entries = [(seq, p) for seq, p in scan.entries() if seq > checkpoint.applied]
        entries.sort(key=lambda e: e[0])
        # Past a damaged final entry too: a sequence number is never used twice.
        last = max(checkpoint.applied, scan.last_seq)
        self._next_seq = last + 1
        self.durable_seq = self._written_seq = last
        return entries

    def _identity(self) -> str:
        """The log's id, made (durably) on its first start."""
        path = self.directory / LOG_ID
        with contextlib.suppress(FileNotFoundError, ValueError):
            return uuid.UUID(path.read_text().strip()).hex
        made = uuid.uuid4().hex
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(made + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(self.directory)
        return made

    def mark_refused(self, seq: int) -> None:
        """Record durably that entry ``seq`` was refused before its caller was answered."""
        path = self.directory / f"{REFUSED_PREFIX}{seq:020d}"
        with open(path, "wb") as f:
            os.fsync(f.fileno())
        fsync_dir(self.directory)

    def refused_seqs(self) -> set[int]:
        """The sequences ``mark_refused`` recorded."""
        found = set()
        for path in self.directory.glob(f"{REFUSED_PREFIX}*"):
            with contextlib.suppress(ValueError):
                found.add(int(path.name.removeprefix(REFUSED_PREFIX)))
        return found

    def _drop_torn_tail(self, tail: Unreadable) -> None:
        """Cut an interrupted write off the last segment (its caller was never answered)."""
        with open(tail.segment, "r+b") as f:
            f.truncate(tail.offset)
            f.flush()
            os.fsync(f.fileno())
        log.warning(
            "write-ahead log torn tail dropped (an interrupted write, never acknowledged)",
            segment=tail.segment.name,
            offset=tail.offset,
            bytes=tail.length,
        )

    def _set_damage_aside(self, scan: LogScan, damage: Unreadable, checkpoint: int) -> None:
        kept = damage_file(self.directory, damage)
        if kept.exists() and not damage.lost_entries(checkpoint):
            return  # copied aside (and its loss logged) by an earlier start
        if not damage.lost_entries(checkpoint) and damage.seq_after is not None:
            log.warning(
                "write-ahead log damaged where its writes are already in the store; nothing lost",
                segment=damage.segment.name,
                offset=damage.offset,
                bytes=damage.length,
            )
            return
        with open(damage.segment, "rb") as src:
            src.seek(damage.offset)
            data = src.read(damage.length)
        try:
            with open(kept, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            kept.with_suffix(".json").write_text(json.dumps(damage.as_dict(checkpoint)))
            fsync_dir(self.directory)
        except OSError as exc:
            # The segment itself stays until the copy is made: never deleted by truncate.
            self._pinned.add(damage.segment)
            log.error("could not copy damaged log range aside", error=str(exc))
        resumed = damage.seq_after if damage.seq_after is not None else 2**64
        replayed_after = sum(1 for seq, _ in scan.entries() if seq >= resumed and seq > checkpoint)
        log.error(
            "write-ahead log damaged: the writes in this range cannot be read and are "
            "lost; the intact entries after it are replayed",
            segment=damage.segment.name,
            offset=damage.offset,
            bytes=damage.length,
            lost_entries=damage.lost_entries(checkpoint),
            lost_seqs=damage.lost_seqs(checkpoint),
            replayed_after=replayed_after,
            kept=str(kept),
        )

    def truncate(self, checkpoint: int, *, retain_bytes: int | None = None) -> int:
        """Delete segments whose entries are all at or below ``checkpoint`` and that
        the segments after them hold ``retain_bytes`` (None: the log's own) past;
        returns how many."""
        retain = self.retain_bytes if retain_bytes is None else retain_bytes
        with self._io_lock:
            segs = self.segments()
            sizes = [_size(path) for _, path in segs]
            newer = list(itertools.accumulate(reversed(sizes[1:])))[::-1]  # after each
            removed = 0
            for i, ((_, path), (next_first, _)) in enumerate(itertools.pairwise(segs)):
                if (
                    next_first - 1 <= checkpoint
                    and newer[i] >= retain
                    and path not in (self._file_path, *self._pinned)
                ):
                    path.unlink(missing_ok=True)
                    removed += 1
            if removed:
                self._drop_refused_marks_before(self.retained_from())
            return removed

    def _drop_refused_marks_before(self, first_kept: int) -> None:
        """Refused marks of entries no kept segment holds: nothing reads them again."""
        for seq in self.refused_seqs():
            if seq < first_kept:
                (self.directory / f"{REFUSED_PREFIX}{seq:020d}").unlink(missing_ok=True)

    def seal(self) -> None:
        """End the current segment: a new one starts now, named after the next entry
        to be written, so every entry written so far sits in segments ``truncate`` may
        drop once they are checkpointed (an erasure drops them all)."""
        with self._io_lock:
            self._open_segment(self._written_seq + 1)

    def retained_from(self) -> int:
        """The first sequence the kept segments hold (past the last one: none kept)."""
        segs = self.segments()
        return segs[0][0] if segs else self.last_seq + 1

    # -- writing -------------------------------------------------------------------

    def append_offline(self, payloads: list[bytes]) -> list[int]:
        """With no writer running (the daemon stopped): write ``payloads`` as new
        entries after every one in the log, in a new segment, fsynced with its
        directory. Returns their sequence numbers."""
        self.recover()
        seqs = [self._next_seq + i for i in range(len(payloads))]
        if not payloads:
            return seqs
        path = self.directory / f"{seqs[0]:020d}{SUFFIX}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(encode_group(seqs, payloads))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(self.directory)
        self.durable_seq = self._written_seq = seqs[-1]
        self._next_seq = seqs[-1] + 1
        return seqs

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._task = asyncio.create_task(self._run(), name="wal-writer")

    def submit(self, payload: bytes) -> tuple[int, asyncio.Future[None]]:
        """Queue ``payload``; its sequence now, a future resolved once it is durable."""
        if self._task is None:
            raise WalUnusable("the write-ahead log is closed")
        item = _Queued(self._next_seq, payload)
        self._next_seq += 1
        self._queue.put_nowait(item)
        return item.seq, item.done

    @property
    def last_seq(self) -> int:
        return self._next_seq - 1

    async def close(self) -> None:
        if self._task is None:
            return
        await self._queue.join()
        await cancel_and_wait(self._task)
        self._task = None
        with self._io_lock:
            self._close_file()

    async def _run(self) -> None:
        while True:
            group = [await self._queue.get()]
            while not self._queue.empty():
                group.append(self._queue.get_nowait())
            data = encode_group([q.seq for q in group], [q.payload for q in group])
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                await asyncio.to_thread(self._write_sync, group[0].seq, group[-1].seq, data)
            except OSError as exc:
                self.error = f"{type(exc).__name__}: {exc.strerror or exc}"
                log.error("write-ahead log write failed", error=self.error, entries=len(group))
                for q in group:
                    if not q.done.done():
                        q.done.set_exception(WalUnusable(exc.errno or 0, self.error))
            else:
                self.error = None
                self.last_sync_s = loop.time() - started
                self.groups += 1
                self.durable_seq = group[-1].seq
                if self.on_sync is not None:
                    self.on_sync(self.last_sync_s)
                for q in group:
                    if not q.done.done():
                        q.done.set_result(None)
            finally:
                for _ in group:
                    self._queue.task_done()

    def _write_sync(self, first_seq: int, last_seq: int, data: bytes) -> None:
        with self._io_lock:
            if self._file is None or self._file_size >= self.segment_bytes:
                self._open_segment(first_seq)
            assert self._file is not None
            good = self._file_size
            try:
                view = memoryview(data)
                while view:
                    written = os.write(self._file, view)
                    view = view[written:]
                os.fsync(self._file)
            except OSError:
                # Cut the failed group off (best effort) and never write behind it:
                # after a failed fsync the kernel may have dropped the dirty pages.
                with contextlib.suppress(OSError):
                    os.ftruncate(self._file, good)
                    os.fsync(self._file)
                self._close_file()
                raise
            self._file_size += len(data)
            self._written_seq = last_seq

    def _open_segment(self, first_seq: int) -> None:
        self._close_file()
        path = self.directory / f"{first_seq:020d}{SUFFIX}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fsync_dir(self.directory)
        except OSError:
            os.close(fd)
            raise
        self._file, self._file_path, self._file_size = fd, path, os.fstat(fd).st_size

    def _close_file(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                os.close(self._file)
        self._file = None
        self._file_path = None
