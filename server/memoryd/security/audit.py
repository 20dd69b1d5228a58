"""The audit log: append-only JSONL of every write and every denied request.

One line per event: time, request id, principal, tenant, agent, operation, the ids
or key it touched, and the outcome. Never memory content, never a credential: the
event type has no field that could carry either.

Events are queued by the request path and written by one background thread in
batches; ``close()`` drains the queue before returning, so a clean shutdown loses
nothing. The active file ``audit.jsonl`` is rotated by size to
``audit-<UTC time>-<n>.jsonl`` (files are only ever appended to or renamed whole).
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

log = structlog.get_logger("memoryd.audit")

ACTIVE_NAME = "audit.jsonl"
#: Ids recorded per event; a larger batch is recorded with ids_truncated.
MAX_IDS = 1000
_BATCH = 512
_STOP = object()


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
        self.written = 0

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

    async def close(self) -> None:
        """Write everything queued, then close the file."""
        if self._thread is None:
            return
        self._queue.put(_STOP)
        thread, self._thread = self._thread, None
        await _join(thread)
        with self._lock:
            if self._file is not None:
                os.fsync(self._file)
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
            batch: list[AuditEvent] = []
            item = self._queue.get()
            while True:
                if item is _STOP:
                    stop = True
                elif isinstance(item, AuditEvent):
                    batch.append(item)
                if len(batch) >= _BATCH:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._write(batch)

    def _write(self, batch: list[AuditEvent]) -> None:
        lines = [(event.to_json() + "\n").encode("utf-8") for event in batch]
        with self._lock:
            try:
                chunk: list[bytes] = []
                chunk_size = 0
                for line in lines:
                    if self._size + chunk_size + len(line) > self._rotate_bytes and (
                        self._size or chunk
                    ):
                        self._append(chunk)
                        chunk, chunk_size = [], 0
                        self._rotate_locked()
                    chunk.append(line)
                    chunk_size += len(line)
                self._append(chunk)
                self.written += len(batch)
            except OSError as exc:
                # Never take the daemon down for the audit log, but say so loudly.
                log.error("audit log write failed", error=exc.strerror, lost_events=len(batch))

    def _append(self, chunk: list[bytes]) -> None:
        if not chunk:
            return
        assert self._file is not None
        data = b"".join(chunk)
        os.write(self._file, data)
        self._size += len(data)

    def _rotate_locked(self) -> Path | None:
        if self._file is None or self._size == 0:
            return None
        os.fsync(self._file)
        os.close(self._file)
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
