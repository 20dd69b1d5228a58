"""The change feed's source: the write-ahead log's visible entries, read in order from
the segments on disk (docs/watch.md).

The entry a write's group fsync made durable is the record the feed reads: there is no
second journal, so a change is in the feed if and only if it is in the log. An entry
is *visible* once it and every earlier one is durable and decided (applied, answered,
or refused): ``Durability.visible_seq``. Entries the store refused before their caller
was answered are skipped (``refused``). Readers take no lock a writer needs: they read
closed segments and the written prefix of the open one, and wait on :class:`Signal`,
which the write path sets, when they have read everything visible. Their reads run in
a thread of the feed's own (``ChangeLog.read``), never in the loop's default executor,
whose threads the write path uses.
"""

from __future__ import annotations

import asyncio
import enum
import struct
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from memoryd.domain.errors import DataLoss, FailedPrecondition, Unavailable
from memoryd.durability.ops import Op, decode
from memoryd.durability.wal import WriteAheadLog
from memoryd.durability.wal_scan import COMMIT_MARK, HEADER, MAX_ENTRY_BYTES

_SEQ = struct.Struct("<Q")
#: Entries and payload bytes one read takes at most (a slow watcher holds one batch).
BATCH_ENTRIES = 256
BATCH_BYTES = 2**20
#: Threads reading for every watcher of the daemon together. Watchers catching up
#: read and decode as fast as their clients take (a client's transport may take
#: megabytes it never reads): in the loop's default executor (6 threads on 2 cores)
#: N of them held N of the threads the write path's own thread work (embedding, the
#: store) queues for, and ran N GIL-holding decoders beside the loop; beside ten, a
#: writer kept 0.14x its rate, 0.29x with one feed thread (bench/results/
#: report-watch-2026-11-29.md). One thread serves them in turn (FIFO: a follower's
#: small read waits at most for one batch of each watcher before it).
READ_THREADS = 1


class _Stop(enum.Enum):
    #: Nothing more is visible or written yet.
    WAIT = "wait"
    #: The open segment is complete and a later one exists.
    END = "end"


class Signal:
    """Wakes every waiter when something became visible (set on the write path:
    cheap, never waits)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    def current(self) -> asyncio.Event:
        """The event the next ``notify`` sets: take it before checking what to wait for."""
        return self._event


@dataclass(frozen=True, slots=True)
class LoggedEntry:
    """One visible log entry: its sequence and its operations in order."""

    seq: int
    ops: list[Op]


class CursorExpired(FailedPrecondition):
    """The changes after a cursor are no longer kept."""


class ChangeLog:
    """What watchers read: the log, how far it is visible, and what was refused."""

    def __init__(self, wal: WriteAheadLog, visible: Callable[[], int], refused: set[int]) -> None:
        self.wal = wal
        self._visible = visible
        #: Sequences of durable entries the store refused before they were answered.
        self.refused = refused
        self.signal = Signal()
        self._reads = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="memoryd-feed")
        self._closed = False

    @property
    def log_id(self) -> str:
        return self.wal.log_id

    def visible_seq(self) -> int:
        """Every entry at or below it is durable and decided."""
        return self._visible()

    def retained_from(self) -> int:
        return self.wal.retained_from()

    def last_seq(self) -> int:
        return self.wal.last_seq

    def reader(self, after: int) -> ChangeReader:
        """A reader of the entries after ``after`` (CursorExpired: no longer kept)."""
        return ChangeReader(self, after)

    async def read(self, reader: ChangeReader, visible: int, marker: bytes) -> list[LoggedEntry]:
        """``reader.read(visible, marker)`` in the feed's thread (a watch cancelled
        while its read waits for the thread drops the read)."""
        if self._closed:
            raise Unavailable("the server is shutting down; watch again from your cursor")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reads, reader.read, visible, marker)

    def close(self) -> None:
        """Stop the feed's thread (reads not started are dropped)."""
        self._closed = True
        self._reads.shutdown(wait=False, cancel_futures=True)

    async def wait(self, seen: int) -> None:
        """Return once the visible sequence is past ``seen``."""
        while True:
            event = self.signal.current()
            if self.visible_seq() > seen:
                return
            await event.wait()


def expired(retained_from: int) -> CursorExpired:
    return CursorExpired(
        "cursor expired: the feed keeps changes from sequence "
        f"{retained_from} (durability.feed_retention_mb); read the current state "
        "(ListMemories, ListKeys) and watch from a fresh cursor"
    )


class ChangeReader:
    """Reads visible entries after a position, segment after segment; ``read`` does
    file I/O (run it in a thread); ``close`` when done.

    A reader holds no file between reads: it keeps the segment's path and offset and
    opens it again on the next read. A watcher that stopped reading (its message not
    taken) would otherwise keep its segment's disk space after retention deleted it
    (an open file outlives its name), up to a segment a watcher; a segment deleted
    under it makes it *expired* when it reads on, like any cursor behind retention."""

    def __init__(self, log: ChangeLog, after: int) -> None:
        self._log = log
        #: The last sequence read.
        self.after = after
        self._path: Path | None = None
        self._first = 0
        self._file: BinaryIO | None = None
        self._offset = 0
        #: The segment at ``_path`` was read to its end: the next read opens the next.
        self._ended = False
        if after + 1 < log.retained_from():
            raise expired(log.retained_from())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def read(self, visible: int, marker: bytes = b"") -> list[LoggedEntry]:
        """The next visible entries (at most a batch) whose payload holds ``marker``
        (``ops.partition_marker``: others are passed over undecoded), in order; []
        when there are none yet."""
        out: list[LoggedEntry] = []
        size = 0
        try:
            while len(out) < BATCH_ENTRIES and size < BATCH_BYTES and self.after < visible:
                if self._file is None and not self._open():
                    break
                item = self._next(visible)
                if item is _Stop.WAIT:
                    break
                if item is _Stop.END:
                    self.close()
                    self._ended = True
                    continue
                assert not isinstance(item, _Stop)
                seq, payload = item
                if seq <= self.after:
                    continue
                self.after = seq
                size += len(payload)
                if seq not in self._log.refused and marker in payload:
                    out.append(LoggedEntry(seq, decode(payload)))
        finally:
            self.close()
        return out

    def _open(self) -> bool:
        """Open the segment read last again where the last read stopped, or the next
        one (:meth:`_open_next`: also when the one read last was deleted since)."""
        if self._path is not None and not self._ended:
            try:
                self._file = open(self._path, "rb")  # noqa: SIM115 - closed by read
                return True
            except FileNotFoundError:
                pass  # retention deleted it: _open_next says whether anything was lost
        if not self._open_next():
            return False
        self._ended = False
        return True

    def _open_next(self) -> bool:
        """Open the segment holding the entry after ``after`` (or the one after the
        segment just read); False when there is none yet."""
        segments = self._log.wal.segments()
        if self._path is None:
            held = [(first, p) for first, p in segments if first <= self.after + 1]
            chosen = held[-1] if held else (segments[0] if segments else None)
        else:
            later = [(first, p) for first, p in segments if first > self._first]
            chosen = later[0] if later else None
            if chosen is not None and not self._path.exists() and chosen[0] > self.after + 1:
                # The segment read was deleted, and others with it: changes are gone.
                raise expired(self._log.retained_from())
        if chosen is None:
            return False
        if chosen[0] > self.after + 1 and self._path is None:
            raise expired(self._log.retained_from())
        self._first, self._path = chosen
        try:
            self._file = open(self._path, "rb")  # noqa: SIM115 - closed by read
        except FileNotFoundError:
            raise expired(self._log.retained_from()) from None
        self._offset = 0
        return True

    def _next(self, visible: int) -> tuple[int, bytes] | _Stop:
        """The next entry of the open segment, or why there is none."""
        f = self._file
        assert f is not None and self._path is not None
        while True:
            f.seek(self._offset)
            header = f.read(HEADER.size)
            if len(header) < HEADER.size:
                return _Stop.END if self._has_later() else _Stop.WAIT
            length, crc, seq = HEADER.unpack(header)
            if length == COMMIT_MARK:
                self._offset += HEADER.size
                continue
            if seq > visible:
                return _Stop.WAIT
            payload = f.read(length) if length <= MAX_ENTRY_BYTES else b""
            if len(payload) != length or zlib.crc32(_SEQ.pack(seq) + payload) != crc:
                raise DataLoss(
                    f"the change feed cannot read the log after sequence {self.after} "
                    f"(segment {self._path.name}, offset {self._offset}: damaged); "
                    "read the current state and watch from a fresh cursor"
                )
            self._offset += HEADER.size + length
            return seq, payload

    def _has_later(self) -> bool:
        return any(first > self._first for first, _ in self._log.wal.segments())
