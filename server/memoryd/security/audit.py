"""The audit log: append-only JSONL of every write and every denied request.

One line per event: time, request id, principal, tenant, agent, operation, the ids
or key it touched, and the outcome. Never memory content, never a credential: the
event type has no field that could carry either.

One background thread writes the file in batches. A write RPC is first *admitted*:
its ``STARTED`` event is appended and fsynced (one fsync for every event of the batch,
as the write-ahead log does) before the write runs, and the write is refused with
UNAVAILABLE when that fails (a full or broken disk): an acknowledged write always has
its event on disk, a crash included. A write whose effects all go into one
write-ahead log entry is admitted by that entry instead (security/admission.py): its
event rides in the entry, durable with it in the log's one group fsync, and is queued
here with the entry's sequence (``wal_seq``) to be written like any other event; the
log keeps the entry until :meth:`AuditLog.sync` has made the file durable up to it,
and a start re-appends the events of the entries it replays that the file lost
(:meth:`AuditLog.restore`). Other events (the outcome of a call, denials)
are queued; one that cannot be written is kept and written again once the disk takes
it (up to ``_RETAINED_MAX`` events; past that the oldest are dropped and counted in
the log), and a write that failed half-way is cut back, so no line is torn.
``close()`` writes what is queued. The active file ``audit.jsonl`` is rotated by size
to ``audit-<UTC time>-<n>.jsonl`` (files are only ever appended to or renamed whole).
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

import structlog

from memoryd.domain.errors import Unavailable
from memoryd.tail import lines_backwards

log = structlog.get_logger("memoryd.audit")

ACTIVE_NAME = "audit.jsonl"
#: Ids recorded per event; a larger batch is recorded with ids_truncated.
MAX_IDS = 1000
_BATCH = 512
#: Queued events kept while the disk refuses them.
_RETAINED_MAX = 100_000
#: How often kept events are tried again while nothing new arrives.
_RETRY_S = 1.0
#: Outcome of the event that admits a write (its result follows in another event).
STARTED = "STARTED"
_STOP = object()
#: Bytes read from the end of an audit file at a time while looking for logged events.
_TAIL_CHUNK = 256 * 1024


class AuditUnavailable(Unavailable):
    """The audit log cannot record a write, so the write is not made."""


@dataclass(slots=True)
class _Admission:
    """An event whose writer waits until it is on disk (or failed)."""

    event: AuditEvent
    loop: asyncio.AbstractEventLoop
    done: asyncio.Future[None]

    def settle(self, error: OSError | None) -> None:
        def resolve() -> None:
            if self.done.done():
                return
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(
                    AuditUnavailable(
                        f"the audit log cannot record this write ({error.strerror or error}); "
                        "nothing was stored"
                    )
                )

        self.loop.call_soon_threadsafe(resolve)


@dataclass(slots=True)
class _Sync:
    """A marker: every event queued before it is written and fsynced when it is set."""

    done: threading.Event = field(default_factory=threading.Event)
    error: OSError | None = None


@dataclass(frozen=True, slots=True)
class AuditEvent:
    operation: str
    outcome: str
    request_id: str = ""
    principal: str = ""
    tenant: str = ""
    agent: str = ""
    peer: str = ""
    ids: Sequence[str] = ()
    key: str = ""
    #: Our own denial text (UNAUTHENTICATED / PERMISSION_DENIED), never request content.
    reason: str = ""
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    #: The write-ahead log entry the event rode in (0: it was admitted here).
    wal_seq: int = 0

    def to_json(self) -> str:
        # The fields one by one (dataclasses.asdict deep-copies: a write's hot path).
        data: dict[str, object] = {name: getattr(self, name) for name in _FIELDS}
        ids = list(self.ids)
        data["ids"] = ids[:MAX_IDS]
        if len(ids) > MAX_IDS:
            data["ids_truncated"] = len(ids)
        # ASCII only: a JSONL reader never meets a raw U+2028 or control character.
        return json.dumps(
            {k: v for k, v in data.items() if v not in ("", [], 0)}, ensure_ascii=True
        )


_FIELDS = tuple(f.name for f in fields(AuditEvent))


def with_wal_seq(line: str, seq: int) -> str:
    """An event's JSON line (``AuditEvent.to_json``: an object with fields) marked
    with its log entry."""
    return f'{line[:-1]}, "wal_seq": {int(seq)}}}'


class AuditLog:
    def __init__(self, directory: Path, *, rotate_bytes: int, keep_files: int) -> None:
        self.directory = directory
        self._rotate_bytes = rotate_bytes
        self._keep_files = keep_files
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._file: int | None = None
        self._size = 0
        self._lock = threading.Lock()  # file handle: writer thread vs rotate()
        #: Queued events the disk refused, oldest first (writer thread only).
        self._retained: list[AuditEvent | str] = []
        self.written = 0
        self.dropped = 0
        #: The last write of the file succeeded (writes ride the log only while it does).
        self.healthy = True

    @property
    def path(self) -> Path:
        return self.directory / ACTIVE_NAME

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        self._open()
        self._thread = threading.Thread(target=self._run, name="memoryd-audit", daemon=True)
        self._thread.start()

    def record(self, event: AuditEvent | str) -> None:
        """Queue an event (or its JSON line); never blocks the caller on disk I/O."""
        self._queue.put(event)

    @property
    def running(self) -> bool:
        return self._thread is not None

    def sync(self, timeout_s: float = 30.0) -> None:
        """Block (a worker thread, never the event loop) until every event queued
        before this call is written and fsynced; OSError when the file refused them.
        The write-ahead log drops no entry whose event this has not covered."""
        if self._thread is None:
            raise OSError("the audit log is closed")
        marker = _Sync()
        self._queue.put(marker)
        if not marker.done.wait(timeout_s):
            raise OSError("the audit log did not sync in time")
        if marker.error is not None:
            raise marker.error

    def restore(self, logged: Sequence[tuple[int, str]]) -> int:
        """At start, before any write: queue the events of replayed log entries
        (``(seq, line)``, in log order) that no audit file holds; returns how many.
        A crash may have lost the file's unsynced tail, never the log's entries."""
        if not logged:
            return 0
        present = logged_seqs(self.directory, min(seq for seq, _ in logged))
        missing = [(seq, line) for seq, line in logged if seq not in present]
        for seq, line in missing:
            self._queue.put(with_wal_seq(line, seq))
        if missing:
            log.warning(
                "audit events restored from the write-ahead log (the file lost its unsynced tail)",
                events=len(missing),
            )
        return len(missing)

    async def admit(self, event: AuditEvent) -> None:
        """Return once ``event`` is written and fsynced; AuditUnavailable (UNAVAILABLE)
        when the file cannot take it. A write runs only after its event is admitted."""
        await self.admit_soon(event)

    def admit_soon(self, event: AuditEvent) -> asyncio.Future[None]:
        """Queue ``event`` to be written and fsynced; the future is done once it is on
        disk (AuditUnavailable when the file cannot take it). The caller runs no write
        before the future is done (security/admission.py: a shared store's writes wait
        for it in the store's facade, so the call's reads run beside the fsync)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        if self._thread is None:
            done.set_exception(AuditUnavailable("the audit log is closed; nothing was stored"))
            return done
        self._queue.put(_Admission(event, loop, done))
        return done

    async def close(self) -> None:
        """Write everything queued, then close the file."""
        if self._thread is None:
            return
        self._queue.put(_STOP)
        thread, self._thread = self._thread, None
        await _join(thread)
        if self._retained:
            log.error("audit events not written at shutdown", lost_events=len(self._retained))
        with self._lock:
            if self._file is not None:
                try:
                    os.fsync(self._file)
                except OSError as exc:
                    log.error("audit log fsync failed at shutdown", error=exc.strerror)
                os.close(self._file)
                self._file = None

    def rotate(self) -> Path | None:
        """Start a new active file now; returns the rotated file (None if it was empty)."""
        with self._lock:
            return self._rotate_locked()

    # ------------------------------------------------------------------ writer thread

    def _open(self) -> None:
        self._file = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._size = os.fstat(self._file).st_size
        if self._size:
            self._size = _cut_torn_line(self.path, self._file, self._size)

    def _run(self) -> None:
        stop = False
        while not stop:
            batch: list[AuditEvent | str | _Admission | _Sync] = []
            try:
                item = self._queue.get(timeout=_RETRY_S if self._retained else None)
            except queue.Empty:
                item = None
            while item is not None:
                if item is _STOP:
                    stop = True
                elif isinstance(item, AuditEvent | str | _Admission | _Sync):
                    batch.append(item)
                if len(batch) >= _BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch or self._retained:
                self._write(batch)

    def _write(self, batch: list[AuditEvent | str | _Admission | _Sync]) -> None:
        """Kept events first, then the batch; admissions and sync markers are settled
        after an fsync. On failure, admissions and markers fail and the other events
        are kept."""
        queued = [item for item in batch if isinstance(item, AuditEvent | str)]
        admissions = [item for item in batch if isinstance(item, _Admission)]
        syncs = [item for item in batch if isinstance(item, _Sync)]
        events = [*self._retained, *queued, *(a.event for a in admissions)]
        lines = [(_line(event) + "\n").encode("utf-8") for event in events]
        error: OSError | None = None
        with self._lock:
            try:
                self._append_lines(lines)
                if admissions or syncs:
                    if self._file is None:
                        self._open()
                    assert self._file is not None
                    os.fsync(self._file)
            except OSError as exc:
                error = exc
        self.healthy = error is None
        for admission in admissions:
            admission.settle(error)
        for marker in syncs:
            marker.error = error
            marker.done.set()
        if error is None:
            self.written += len(events)
            self._retained = []
            return
        self._keep([*self._retained, *queued], error)

    def _keep(self, events: list[AuditEvent | str], error: OSError) -> None:
        overflow = len(events) - _RETAINED_MAX
        if overflow > 0:
            self.dropped += overflow
            log.error("audit events dropped: too many kept", dropped=overflow)
            events = events[overflow:]
        if not self._retained:  # once per outage, not per retry
            log.error("audit log write failed; events kept", error=error.strerror)
        self._retained = events

    def _append_lines(self, lines: list[bytes]) -> None:
        chunk: list[bytes] = []
        chunk_size = 0
        for line in lines:
            if self._size + chunk_size + len(line) > self._rotate_bytes and (self._size or chunk):
                self._append(chunk)
                chunk, chunk_size = [], 0
                self._rotate_locked()
            chunk.append(line)
            chunk_size += len(line)
        self._append(chunk)

    def _append(self, chunk: list[bytes]) -> None:
        """Write every byte or none: a failed write is cut back to the last whole line."""
        if not chunk:
            return
        if self._file is None:
            self._open()
        assert self._file is not None
        data = memoryview(b"".join(chunk))
        written = 0
        try:
            while written < len(data):
                written += os.write(self._file, data[written:])
        except OSError:
            if written:
                os.ftruncate(self._file, self._size)
            raise
        self._size += written

    def _rotate_locked(self) -> Path | None:
        if self._file is None or self._size == 0:
            return None
        os.fsync(self._file)
        os.close(self._file)
        self._file = None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.directory / f"audit-{stamp}.jsonl"
        n = 0
        while target.exists():
            n += 1
            target = self.directory / f"audit-{stamp}-{n}.jsonl"
        os.replace(self.path, target)
        self._open()
        self._prune()
        return target

    def _prune(self) -> None:
        if self._keep_files <= 0:
            return
        rotated = sorted(p for p in self.directory.glob("audit-*.jsonl"))
        for old in rotated[: max(0, len(rotated) - self._keep_files)]:
            old.unlink(missing_ok=True)


def _cut_torn_line(path: Path, fd: int, size: int) -> int:
    """Cut a line a crash left half-written off the end of the file (the next event
    would otherwise be glued to it); returns the size kept."""
    with open(path, "rb") as f:
        end = size - len(next(lines_backwards(f, size, _TAIL_CHUNK), b""))
    if end != size:
        os.ftruncate(fd, end)
        log.warning("audit log: a torn last line cut off", file=str(path), bytes=size - end)
    return end


def _line(event: AuditEvent | str) -> str:
    return event if isinstance(event, str) else event.to_json()


def logged_seqs(directory: Path, since: int) -> set[int]:
    """The ``wal_seq`` of every event at or after ``since`` in the audit files, read
    from the end of the newest file backwards until an earlier one shows up (events
    reach the files in log order)."""
    files = sorted(directory.glob("audit-*.jsonl"))
    active = directory / ACTIVE_NAME
    found: set[int] = set()
    for path in [active, *reversed(files)]:
        for seq in _wal_seqs_backwards(path):
            if seq < since:
                return found
            found.add(seq)
    return found


def _wal_seqs_backwards(path: Path) -> Iterator[int]:
    """The ``wal_seq`` of the events of one file, last line first."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (a generator holds it while it is read)
    except FileNotFoundError:
        return
    with f:
        for raw in lines_backwards(f, f.seek(0, os.SEEK_END), _TAIL_CHUNK):
            seq = _wal_seq(raw)
            if seq is not None:
                yield seq


def _wal_seq(raw: bytes) -> int | None:
    if b'"wal_seq"' not in raw:
        return None
    try:
        value = json.loads(raw).get("wal_seq")
    except (ValueError, AttributeError):
        return None  # a torn line
    return value if isinstance(value, int) else None


async def _join(thread: threading.Thread) -> None:
    """Wait for the writer without blocking the event loop."""
    await asyncio.to_thread(thread.join)


def audit_dir(configured: Path | None, data_dir: Path) -> Path:
    return configured if configured is not None else data_dir / "audit"
