"""The memory history's journal (docs/as-of.md): one append-only file per partition
under ``<data_dir>/as_of/``, so an as-of read of an instant before a restart (or a
SIGKILL) answers what it answered then.

A file is a stream of msgpack records: a header (the partition, when its history
started and the log position then), then one record per version (the memory's
instant, log position and id, and its state or None for a deletion), one per
version of a kept record (a profile, a working memory, a session's) and a floor
record where the history stopped being complete before some instant. A version
whose vector equals its predecessor's does not repeat it (archives, supersessions
and access statistics change no vector). Appends are written at once (a SIGKILL
loses nothing written) and fsynced in groups (:meth:`HistoryJournal.sync`), which
the writes await before they are answered. Erasure and pruning rewrite a file whole
(a new file renamed over the old one), so erased bytes leave the data directory.
A torn last record (a power loss mid-append) is cut off when the file is read.

Files are named by digests of the tenant and agent ids (bounded, never "." or
"..", no id in a file name); the header says whose a file is.
"""

from __future__ import annotations

import asyncio
import builtins
import errno
import hashlib
import os
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgpack  # type: ignore[import-untyped]
import numpy as np

from memoryd.domain.models import Memory, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.memory_codec import (
    memory_doc,
    memory_from_doc,
    micros,
    record_doc,
    record_from_doc,
    req_instant,
)

#: The journal's folder under the data directory.
HISTORY_DIR = "as_of"
SUFFIX = ".versions"
#: A rewrite's new file, renamed over the old one once whole and fsynced.
_TEMPORARY = ".rewrite"
#: Open append handles kept at once (the least recently used is closed past it).
_OPEN_FILES = 128
_HEADER, _VERSION, _FLOOR, _RECORD = "s", "v", "f", "r"


@dataclass(frozen=True, slots=True)
class Version:
    """One memory as written: valid from ``at`` (and log ``position``) until the next
    version of its id; ``memory`` None: deleted then."""

    at: datetime
    position: int
    memory: Memory | None

    @property
    def gone(self) -> bool:
        return self.memory is None


@dataclass(frozen=True, slots=True)
class RecordVersion:
    """One record (a profile, a working memory, a session's) as written: valid from
    ``at`` until the next version of its (kind, key); ``record`` None: deleted then."""

    at: datetime
    position: int
    record: Record | None

    @property
    def gone(self) -> bool:
        return self.record is None


class _Timed(Protocol):
    @property
    def at(self) -> datetime: ...

    @property
    def gone(self) -> bool: ...


_K = TypeVar("_K")
_V = TypeVar("_V", bound=_Timed)
#: A record's identity in a partition: (kind, key).
RecordId = tuple[RecordKind, str]


@dataclass(slots=True)
class PartitionHistory:
    #: From when this partition's history is complete (its first write or as-of read).
    since: datetime
    #: The log position then.
    since_position: int
    #: Each id's versions, oldest first.
    versions: dict[str, list[Version]] = field(default_factory=dict)
    #: Not complete before this instant: versions dropped to keep within
    #: ``max_versions``, or a memory's state before a write could not be read.
    floor: datetime | None = None
    #: Records in its journal file that no longer hold a kept version (pruned).
    stale: int = 0
    #: Each kept record's versions, oldest first (profile, working memory, sessions).
    records: dict[RecordId, list[RecordVersion]] = field(default_factory=dict)

    def count(self) -> int:
        return sum(len(v) for v in self.versions.values()) + sum(
            len(v) for v in self.records.values()
        )

    def prune(self, cutoff: datetime) -> int:
        """Drop the versions superseded at or before ``cutoff`` (and deletions then);
        how many went."""
        n = _prune(self.versions, cutoff) + _prune(self.records, cutoff)
        self.stale += n
        return n


def _prune(versions_of: dict[_K, list[_V]], cutoff: datetime) -> int:
    n = 0
    for ident in list(versions_of):
        versions = versions_of[ident]
        first = bisect_right(versions, cutoff, key=lambda v: v.at) - 1
        if first > 0:
            n += first
            del versions[:first]
        if len(versions) == 1 and versions[0].gone and versions[0].at <= cutoff:
            n += 1
            del versions_of[ident]
    return n


def encode_record_versions(ident: RecordId, versions: Iterable[RecordVersion]) -> bytes:
    out = bytearray()
    for v in versions:
        doc = None if v.record is None else record_doc(v.record)
        out += msgpack.packb([_RECORD, micros(v.at), v.position, ident[0].value, ident[1], doc])
    return bytes(out)


def folder_name(tenant_id: str) -> str:
    """The folder of a tenant's journal files (VerifyErasure scans it)."""
    return _digest(tenant_id)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:32]


def _same_vector(a: Memory | None, b: Memory) -> bool:
    if a is None or a.vector is None or b.vector is None:
        return False
    return a.vector is b.vector or bool(np.array_equal(a.vector, b.vector))


def encode_versions(memory_id: str, versions: Iterable[Version], previous: Memory | None) -> bytes:
    """The records of ``versions`` of one id, in order, after ``previous`` (its last
    version already in the file, whose vector a version may share)."""
    out = bytearray()
    for v in versions:
        doc: dict[str, Any] | None = None
        if v.memory is not None:
            doc = memory_doc(v.memory)
            if _same_vector(previous, v.memory):
                doc["vec"] = None
                doc["same_vec"] = True
            previous = v.memory
        out += msgpack.packb([_VERSION, micros(v.at), v.position, memory_id, doc])
    return bytes(out)


def encode_floor(at: datetime) -> bytes:
    return bytes(msgpack.packb([_FLOOR, micros(at)]))


def _encode_header(partition: Partition, part: PartitionHistory) -> bytes:
    return bytes(
        msgpack.packb(
            [
                _HEADER,
                partition.tenant_id,
                partition.agent_id,
                micros(part.since),
                part.since_position,
            ]
        )
    )


def encode_partition(partition: Partition, part: PartitionHistory) -> bytes:
    """A whole file holding ``part`` as it is."""
    out = bytearray(_encode_header(partition, part))
    if part.floor is not None:
        out += encode_floor(part.floor)
    for memory_id, versions in part.versions.items():
        out += encode_versions(memory_id, versions, None)
    for ident, record_versions in part.records.items():
        out += encode_record_versions(ident, record_versions)
    return bytes(out)


def _decode(data: bytes) -> tuple[PartitionHistory | None, Partition | None, int]:
    """The history a file holds, its partition and the length of its whole records."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(data)
    part: PartitionHistory | None = None
    partition: Partition | None = None
    good = 0
    try:
        for record in unpacker:
            if record[0] == _HEADER:
                partition = Partition(record[1], record[2])
                part = PartitionHistory(req_instant(record[3]), record[4])
            elif part is not None and record[0] == _FLOOR:
                at = req_instant(record[1])
                part.floor = max(part.floor or at, at)
            elif part is not None and record[0] == _VERSION:
                _add_version(part, record)
            elif part is not None and record[0] == _RECORD:
                _, at, position, kind, key, doc = record
                part.records.setdefault((RecordKind(kind), key), []).append(
                    RecordVersion(
                        req_instant(at),
                        position,
                        None if doc is None else record_from_doc(doc),
                    )
                )
            good = unpacker.tell()
    except (msgpack.UnpackException, ValueError, IndexError, KeyError, TypeError):
        pass  # a torn or damaged tail: the records before it stand
    return part, partition, good


def _add_version(part: PartitionHistory, record: list[Any]) -> None:
    _, at, position, memory_id, doc = record
    versions = part.versions.setdefault(memory_id, [])
    memory: Memory | None = None
    if doc is not None:
        shared = doc.pop("same_vec", False)
        memory = memory_from_doc(doc)
        if shared:
            before = next((v.memory for v in reversed(versions) if v.memory is not None), None)
            memory.vector = None if before is None else before.vector
    versions.append(Version(req_instant(at), position, memory))


class HistoryJournal:
    """The memory history's files under ``root``: appended at once, fsynced in groups,
    rewritten whole by pruning and erasure."""

    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        self.root = root
        #: fsync appends before :meth:`sync` returns (off: written, not fsynced).
        self.fsync = fsync
        self._fds: dict[Partition, int] = {}
        self._dirty: set[int] = set()
        self._appended = 0
        self._synced = 0
        self._syncing: asyncio.Future[None] | None = None

    def path(self, partition: Partition) -> Path:
        return (
            self.root / folder_name(partition.tenant_id) / f"{_digest(partition.agent_id)}{SUFFIX}"
        )

    def tenant_folder(self, tenant_id: str) -> Path:
        return self.root / folder_name(tenant_id)

    # ------------------------------------------------------------------ reads

    def load(self, partition: Partition) -> PartitionHistory | None:
        """``partition``'s history as its file holds it (None: it has none). A torn
        tail is cut off the file."""
        path = self.path(partition)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        part, owner, good = _decode(data)
        if good < len(data):
            self._close(partition)
            with path.open("r+b") as f:
                f.truncate(good)
                os.fsync(f.fileno())
        if part is None or owner != partition:
            return None
        return part

    def discard_temporary(self, partition: Partition) -> None:
        """Remove what a rewrite a crash cut short left (the file it was to replace
        still stands); never while a rewrite runs."""
        self.path(partition).with_suffix(_TEMPORARY).unlink(missing_ok=True)

    def on_disk(self) -> Iterator[Partition]:
        """Every partition with a file (read from each file's header)."""
        for path in sorted(self.root.glob(f"*/*{SUFFIX}")):
            with path.open("rb") as f:
                unpacker = msgpack.Unpacker(f, raw=False, max_buffer_size=1 << 20)
                try:
                    header = next(unpacker)
                except (StopIteration, msgpack.UnpackException, ValueError):
                    continue
            if isinstance(header, list) and header and header[0] == _HEADER:
                yield Partition(header[1], header[2])

    # ------------------------------------------------------------------ writes

    def create(self, partition: Partition, part: PartitionHistory) -> None:
        """Start ``partition``'s file (its header)."""
        self.append(partition, _encode_header(partition, part))

    def append(self, partition: Partition, data: bytes) -> None:
        """Write ``data`` at the end of the file now (durable at the next :meth:`sync`)."""
        if not data:
            return
        fd = self._fd(partition)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        self._dirty.add(fd)
        self._appended += 1

    async def sync(self) -> None:
        """Return once everything appended before the call is fsynced: one fsync per
        dirty file for every caller waiting meanwhile."""
        if not self.fsync:
            return
        target = self._appended
        while self._synced < target:
            if self._syncing is None:
                self._syncing = asyncio.ensure_future(self._sync_round())
            await asyncio.shield(self._syncing)

    async def _sync_round(self) -> None:
        reached, fds = self._appended, builtins.list(self._dirty)
        self._dirty.clear()
        try:
            await asyncio.to_thread(_fsync_all, fds)
            self._synced = reached
        finally:
            self._syncing = None

    def write_temporary(self, partition: Partition, data: bytes) -> Path:
        """Write ``data`` (a whole file's records) beside the file, fsynced; off the
        event loop: nothing else touches the temporary file."""
        path = self.path(partition)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(_TEMPORARY)
        with temporary.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return temporary

    def install(self, partition: Partition, temporary: Path, tail: bytes = b"") -> None:
        """Replace the file by ``temporary`` and the records appended since it was
        written (``tail``): renamed over it, so a crash leaves one or the other."""
        if tail:
            with temporary.open("ab") as f:
                f.write(tail)
                f.flush()
                os.fsync(f.fileno())
        self._close(partition)
        path = self.path(partition)
        temporary.replace(path)
        _fsync_dir(path.parent)

    def remove(self, partition: Partition) -> bool:
        """Delete the file; whether there was one."""
        self._close(partition)
        path = self.path(partition)
        path.with_suffix(_TEMPORARY).unlink(missing_ok=True)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        _fsync_dir(path.parent)
        return True

    def close(self) -> None:
        for partition in builtins.list(self._fds):
            self._close(partition)

    def _fd(self, partition: Partition) -> int:
        fd = self._fds.pop(partition, None)
        if fd is None:
            if len(self._fds) >= _OPEN_FILES:
                self._close(next(iter(self._fds)))
            path = self.path(partition)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._fds[partition] = fd  # most recently used last
        return fd

    def _close(self, partition: Partition) -> None:
        fd = self._fds.pop(partition, None)
        if fd is None:
            return
        if fd in self._dirty or self._syncing is not None:
            # (a sync round in flight may hold it: it must not miss this fd's data)
            self._dirty.discard(fd)
            os.fsync(fd)
        os.close(fd)


def _fsync_all(fds: Sequence[int]) -> None:
    for fd in fds:
        try:
            os.fsync(fd)
        except OSError as exc:
            if exc.errno != errno.EBADF:  # closed (and so fsynced) meanwhile
                raise


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
