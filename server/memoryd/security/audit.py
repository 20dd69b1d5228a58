"""The audit log: append-only JSONL of every write and every denied request.

One line per event: time, request id, principal, tenant, agent, operation, the ids
or key it touched, and the outcome. Never memory content, never a credential: the
event type has no field that could carry either.

One background thread writes the file in batches. A write RPC is first *admitted*:
its ``STARTED`` event is appended and fsynced (one fsync for every event of the batch,
as the write-ahead log does) before the write runs, and the write is refused with
UNAVAILABLE when that fails (a full or broken disk): an acknowledged write always has
its event on disk, a crash included. Other events (the outcome of a call, denials)
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
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import structlog

from memoryd.domain.errors import Unavailable

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

    def to_json(self) -> str:
        data = asdict(self)
        ids = list(self.ids)
        data["ids"] = ids[:MAX_IDS]
        if len(ids) > MAX_IDS:
            data["ids_truncated"] = len(ids)
        # ASCII only: a JSONL reader never meets a raw U+2028 or control character.
        return json.dumps({k: v for k, v in data.items() if v not in ("", [])}, ensure_ascii=True)


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
        self._retained: list[AuditEvent] = []
        self.written = 0
        self.dropped = 0

    @property
    def path(self) -> Path:
        return self.directory / ACTIVE_NAME

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        self._open()
        self._thread = threading.Thread(target=self._run, name="memoryd-audit", daemon=True)
        self._thread.start()

    def record(self, event: AuditEvent) -> None:
        """Queue an event; never blocks the caller on disk I/O."""
        self._queue.put(event)

    async def admit(self, event: AuditEvent) -> None:
        """Return once ``event`` is written and fsynced; AuditUnavailable (UNAVAILABLE)
        when the file cannot take it. A write runs only after its event is admitted."""
        if self._thread is None:
            raise AuditUnavailable("the audit log is closed; nothing was stored")
        loop = asyncio.get_running_loop()
        admission = _Admission(event, loop, loop.create_future())
        self._queue.put(admission)
        await admission.done

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

    def _run(self) -> None:
        stop = False
        while not stop:
            batch: list[AuditEvent | _Admission] = []
            try:
                item = self._queue.get(timeout=_RETRY_S if self._retained else None)
            except queue.Empty:
                item = None
            while item is not None:
                if item is _STOP:
                    stop = True
                elif isinstance(item, AuditEvent | _Admission):
                    batch.append(item)
                if len(batch) >= _BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch or self._retained:
                self._write(batch)

    def _write(self, batch: list[AuditEvent | _Admission]) -> None:
        """Kept events first, then the batch; admissions are fsynced before they are
        settled. On failure, admissions fail and the other events are kept."""
        queued = [item for item in batch if isinstance(item, AuditEvent)]
        admissions = [item for item in batch if isinstance(item, _Admission)]
        events = [*self._retained, *queued, *(a.event for a in admissions)]
        lines = [(event.to_json() + "\n").encode("utf-8") for event in events]
        error: OSError | None = None
        with self._lock:
            try:
                self._append_lines(lines)
                if admissions:
                    assert self._file is not None
                    os.fsync(self._file)
            except OSError as exc:
                error = exc
        for admission in admissions:
            admission.settle(error)
        if error is None:
            self.written += len(events)
            self._retained = []
            return
        self._keep([*self._retained, *queued], error)

    def _keep(self, events: list[AuditEvent], error: OSError) -> None:
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


async def _join(thread: threading.Thread) -> None:
    """Wait for the writer without blocking the event loop."""
    await asyncio.to_thread(thread.join)


def audit_dir(configured: Path | None, data_dir: Path) -> Path:
    return configured if configured is not None else data_dir / "audit"
