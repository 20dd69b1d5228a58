"""The live memory_root: keyed memory as files, kept up to date by the daemon.

On by default (``keys.mirror``), each partition has ``<memory_root>/<tenant>/<agent>/``
(``<data_dir>/memory_root`` unless ``keys.mirror_dir`` says) in the layout of tree.py
(``log.jsonl``, ``index/``, ``state.jsonl``), for an agent's own ``ls``, ``grep``,
``jq`` and ``cat``:

- each committed write appends its envelope to ``log.jsonl`` and replaces the key's
  ``index/`` file atomically (a tombstone removes it; its directory stays, as every
  directory of a key still stored does, tombstones included);
- a key whose ``content.expired_at`` passes leaves ``index/`` at that time;
- ``state.jsonl`` is rewritten atomically by every repair (at start, after
  compaction and other lifecycle rewrites): it is the compacted state as of the last
  repair, while ``index/`` and ``log.jsonl`` are the live view.

Keys above ``keys.mirror_clearance`` (INTERNAL by default) are left out: whoever
can read the directory reads what is in it.

A person's edit of an index file is read back, never reverted: a file whose envelope
still names the key's stored version but whose ``content`` differs was edited by hand
(the mirror only ever writes the stored content), so a repair (at start, after
Compact and other rewrites) leaves it in place and, once the partition's lock is
released, writes the new content as the key's next version (provenance ``file``,
conditional on that version: a write made since wins and the edit is logged). A file
that no longer parses as an envelope is replaced (and logged).

Otherwise it is a mirror: the store is the source of truth. A repair checks a partition's
files against the store and fixes them: missing log lines appended from the key
history (a torn last line cut), index files written, replaced or removed, state
rewritten, directories of no stored key removed when empty. A partition directory
named the way it was before file names kept UTF-8 (percent-encoded ids) is renamed
first, and its index/ renamed by the repair. Repairs run for every partition at start (in the background: a crash
between a store commit and the file update is repaired then) and after each
lifecycle rewrite; a partition's first write after start, or after a failed file
update, waits for its repair. A file error never fails a write: it is logged and
the partition is repaired on its next write.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import json
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.config import LimitsSettings
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyEntry, KeyWrite
from memoryd.domain.models import (
    Clock,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    utcnow,
)
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.domain.records import RecordKind
from memoryd.service.common import scanning
from memoryd.service.common.undecodable import decodable
from memoryd.service.common.validation import Violations
from memoryd.service.keyed.docs import COUNTER_KEY, entry_from, mirror_fields
from memoryd.service.keyed.keys import quoted_segment
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.keyed.tree import (
    INDEX_DIR,
    LOG_FILE,
    STATE_FILE,
    TMP_PREFIX,
    atomic_write,
    envelope_line,
    index_file,
    key_directories,
    partition_dir,
    remove_file,
    state_text,
)
from memoryd.storage.records import RecordStore
from memoryd.tail import lines_backwards

log = structlog.get_logger(__name__)

#: Writes a hand-edited index file's content back (the key's stored entry, the new
#: content as JSON data, the file's path below the memory_root).
EditReader = Callable[[Partition, KeyEntry, Any, str], Awaitable[None]]

SCAN_BATCH = 10_000
#: Bytes read from the end of log.jsonl at a time to find its last line.
_TAIL_CHUNK = 64 * 1024


@dataclass(slots=True)
class _PartitionMirror:
    directory: Path
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Checked against the store since start (or since the last rewrite / failure).
    repaired: bool = False
    #: The version of the last line of log.jsonl.
    logged: int = 0
    #: A background repair is waiting to start (rewrites in a row share it).
    scheduled: bool = False


#: A hand-edited index file: the key's stored entry, the file's content, its path.
_Edit = tuple[KeyEntry, Any, Path]


def hand_edit(text: str, entry: KeyEntry) -> tuple[Any] | None:
    """The content of an index file edited by hand, in a 1-tuple (its content may be
    null); None when the file is not an edit of ``entry``'s envelope (a stale or
    broken file, which the store's state replaces)."""
    try:
        held = json.loads(text)
    except ValueError:
        log.warning("key mirror: an index file that is not JSON is replaced", key=entry.key)
        return None
    if not isinstance(held, dict) or "content" not in held:
        return None
    if held.get("key") != entry.key or held.get("version") != entry.version:
        return None
    content = held["content"]
    return None if content == entry.content else (content,)


def keyed_read_back(
    keyed: KeyedMemoryService, clearance: SecurityLevel, clock: Callable[[], datetime] = utcnow
) -> EditReader:
    """Hand edits written as the key's next version through ``keyed`` (provenance
    ``file``, conditional on the version the file showed), as a caller cleared to
    the mirror's clearance."""

    async def write(partition: Partition, entry: KeyEntry, content: Any, path: str) -> None:
        principal = Principal(
            "memory-root",
            partition.tenant_id,
            frozenset({partition.agent_id}),
            clearance,
            frozenset({Role.READ, Role.WRITE}),
        )
        source = Provenance(ProvenanceKind.FILE, name=path, retrieved_at=clock(), locator=path)
        write = KeyWrite(
            key=entry.key,
            content=Json.from_value(content, "content"),
            source=source,
            if_version=entry.version,
            security_level=entry.security_level,
            namespace=entry.namespace,
        )
        await keyed.set(CallScope(principal, partition), write)
        log.info("key mirror: hand edit read back", key=entry.key, version=entry.version)

    return write


def _expires_at(entry: KeyEntry, limits: LimitsSettings) -> datetime | None:
    if not entry.valid:
        return None
    return mirror_fields(entry.content, limits, Violations()).expires_at


def last_logged_version(path: Path) -> int:
    """The version of the last complete line of ``path`` (0: none); a torn last line
    (a crash in the middle of an append) is cut off."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    with open(path, "rb+") as f:
        lines = lines_backwards(f, size, _TAIL_CHUNK)
        torn = next(lines, b"")
        if torn:
            f.truncate(size - len(torn))
        last = next(lines, None)
        if last is None:  # no complete line at all
            return 0
        try:
            version: int = json.loads(last)["version"]
        except (ValueError, KeyError, TypeError):
            # Not a line the mirror wrote: start the log again from the history.
            f.truncate(0)
            return 0
        return version


def _adopt_quoted(root: Path, partition: Partition) -> None:
    """Rename a partition's directory named as before UTF-8 names were kept
    (keys.quoted_segment) to its name now, so an agent keeps its tree; its index/
    names are then fixed by the repair like any other difference."""
    directory = partition_dir(root, partition)
    before = root / quoted_segment(partition.tenant_id, leaf=False)
    before = before / quoted_segment(partition.agent_id, leaf=False)
    if before == directory or directory.exists() or not before.is_dir():
        return
    directory.parent.mkdir(parents=True, exist_ok=True)
    before.rename(directory)
    with contextlib.suppress(OSError):  # another agent of the tenant is still there
        before.parent.rmdir()


@dataclass(eq=False)
class KeyMirror:
    """The file mirror of every partition's keys under ``root`` (a KeyObserver)."""

    root: Path
    records: RecordStore
    limits: LimitsSettings
    _: KW_ONLY
    clearance: SecurityLevel = SecurityLevel.INTERNAL
    clock: Clock = utcnow

    def __post_init__(self) -> None:
        self._partitions: dict[Partition, _PartitionMirror] = {}
        #: (expires_at, partition, key, version) of index files to remove then.
        self._expiry: list[tuple[datetime, str, str, str, int]] = []
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._expirer: asyncio.Task[None] | None = None
        #: Repairs completed (tests wait for them).
        self.repairs = 0
        #: Set by the builder once the keyed service exists (it observes this mirror).
        self.read_back: EditReader | None = None

    # ------------------------------------------------------------------ life cycle

    async def start(self) -> None:
        """Create the root and repair every partition in the background."""
        await asyncio.to_thread(self.root.mkdir, parents=True, exist_ok=True)
        self._expirer = asyncio.create_task(self._expire_loop(), name="key-mirror-expiry")
        self._spawn(self._repair_all())

    def _shown(self, entry: KeyEntry) -> bool:
        return entry.security_level <= self.clearance

    async def close(self) -> None:
        for task in [*self._tasks, self._expirer]:
            await cancel_and_wait(task)
        self._tasks.clear()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _repair_all(self) -> None:
        for partition in await self.records.list_partitions():
            await self._repair_logged(partition)
            await scanning.pause()

    async def _repair_logged(self, partition: Partition) -> None:
        """A background repair: a failure is logged; the next write tries again."""
        try:
            await self.repair(partition)
        except Exception:
            log.exception(
                "key mirror repair failed",
                tenant=partition.tenant_id,
                agent=partition.agent_id,
            )

    # ------------------------------------------------------------------ observer

    async def key_written(self, partition: Partition, entry: KeyEntry) -> None:
        mirror = self._mirror(partition)
        edits: list[_Edit] | None = None
        async with mirror.lock:
            if not mirror.repaired:
                edits = await self._repair_locked(partition, mirror)  # includes this write
            else:
                try:
                    await asyncio.to_thread(self._apply_write, mirror, entry)
                except OSError:
                    mirror.repaired = False
                    raise
        if edits is not None:  # the repair scheduled every expiry
            # Not awaited: this runs inside the keyed service's write, which the
            # read-back's own write would wait for.
            self._spawn(self._read_edits(partition, edits))
            return
        expires = _expires_at(entry, self.limits)
        if expires is not None:
            self._schedule(partition, entry, expires)

    async def keys_rewritten(self, partition: Partition) -> None:
        mirror = self._mirror(partition)
        mirror.repaired = False
        if not mirror.scheduled:  # an import rewrites in many batches: one repair
            mirror.scheduled = True
            self._spawn(self._repair_logged(partition))

    # ------------------------------------------------------------------ repair

    async def repair(self, partition: Partition) -> None:
        """Check the partition's files against the store and fix what differs."""
        mirror = self._mirror(partition)
        async with mirror.lock:
            mirror.scheduled = False  # a rewrite from now on needs another repair
            edits = await self._repair_locked(partition, mirror)
        await self._read_edits(partition, edits)

    async def _read_edits(self, partition: Partition, edits: list[_Edit]) -> None:
        """Write each hand edit back (outside the partition's lock: the write comes
        back to this mirror as an observer)."""
        for entry, content, path in edits:
            if self.read_back is None:
                log.warning("key mirror: hand edit left unread", file=str(path))
                continue
            try:
                await self.read_back(partition, entry, content, str(path.relative_to(self.root)))
            except Exception:  # a write since wins (it replaces the file); logged
                log.exception("key mirror: hand edit not written back", key=entry.key)

    async def _repair_locked(self, partition: Partition, mirror: _PartitionMirror) -> list[_Edit]:
        found = await self.records.get_records(partition, RecordKind.COUNTER, [COUNTER_KEY])
        stored = found[0].version if found else 0
        current: list[KeyEntry] = []
        async for page in scanning.scan_records(
            self.records, partition, RecordKind.KEY, SCAN_BATCH
        ):
            current.extend(e for e in decodable(page, entry_from) if self._shown(e))
        await asyncio.to_thread(_adopt_quoted, self.root, partition)
        logged = await asyncio.to_thread(last_logged_version, mirror.directory / LOG_FILE)
        missing: list[KeyEntry] = []
        if logged != stored:
            missing = await self._events_after(partition, 0 if logged > stored else logged)
        now = self.clock()
        live = [
            e
            for e in current
            if e.valid and ((x := _expires_at(e, self.limits)) is None or x > now)
        ]
        edits: list[_Edit] = []
        changed = await asyncio.to_thread(
            self._rewrite,
            mirror.directory,
            {e.key for e in current},
            live,
            missing,
            logged > stored,
            edits,
        )
        mirror.logged = max([stored, *(e.version for e in missing)])
        mirror.repaired = True
        self.repairs += 1
        for e in live:
            expires = _expires_at(e, self.limits)
            if expires is not None:
                self._schedule(partition, e, expires)
        log.info(
            "key mirror repaired",
            tenant=partition.tenant_id,
            agent=partition.agent_id,
            keys=len(live),
            log_lines_added=len(missing),
            files_changed=changed,
            hand_edits=len(edits),
        )
        return edits

    async def _events_after(self, partition: Partition, version: int) -> list[KeyEntry]:
        """Every write after ``version`` still in the key history, in version order."""
        events: list[KeyEntry] = []
        async for page in scanning.scan_records(
            self.records, partition, RecordKind.KEY_EVENT, SCAN_BATCH
        ):
            events.extend(
                e for e in decodable(page, entry_from) if e.version > version and self._shown(e)
            )
        events.sort(key=lambda e: e.version)
        return events

    def _rewrite(
        self,
        directory: Path,
        keys: set[str],
        live: list[KeyEntry],
        missing: list[KeyEntry],
        restart_log: bool,
        edits: list[_Edit],
    ) -> int:
        """Bring ``directory`` to the store's state (``keys``: every key slot shown,
        tombstones included, whose directories stay), but for files edited by hand,
        added to ``edits``; returns how many files changed."""
        index_root = directory / INDEX_DIR
        index_root.mkdir(parents=True, exist_ok=True)
        log_path = directory / LOG_FILE
        if restart_log:  # the log is ahead of the store: it is another history
            log_path.unlink(missing_ok=True)
        if missing:
            with open(log_path, "a", encoding="utf-8") as out:
                out.writelines(envelope_line(e) for e in missing)
        expected = {index_file(index_root, e.key): envelope_line(e) for e in live}
        entries = {index_file(index_root, e.key): e for e in live}
        folders = key_directories(index_root, keys)
        changed = 0
        for folder, subfolders, names in os.walk(index_root, topdown=False):
            for name in names:
                path = Path(folder, name)
                want = expected.get(path)
                if want is None or name.startswith(TMP_PREFIX):
                    remove_file(path)
                    changed += 1
                elif (text := path.read_text(encoding="utf-8")) != want:
                    edited = hand_edit(text, entries[path])
                    if edited is not None:
                        edits.append((entries[path], edited[0], path))
                    else:
                        atomic_write(path, want)
                        changed += 1
                expected.pop(path, None)
            for name in subfolders:  # left by keys no longer stored, or an older naming
                path = Path(folder, name)
                if path not in folders and not any(path.iterdir()):
                    path.rmdir()
                    changed += 1
        for path in folders:
            path.mkdir(parents=True, exist_ok=True)
        for path, text in expected.items():
            atomic_write(path, text)
            changed += 1
        state = state_text(live)
        state_path = directory / STATE_FILE
        if not state_path.exists() or state_path.read_text(encoding="utf-8") != state:
            atomic_write(state_path, state)
            changed += 1
        return changed

    # ------------------------------------------------------------------ writes

    def _apply_write(self, mirror: _PartitionMirror, entry: KeyEntry) -> None:
        directory = mirror.directory
        index_root = directory / INDEX_DIR
        shown = self._shown(entry)
        line = envelope_line(entry)
        if shown and entry.version > mirror.logged:
            with open(directory / LOG_FILE, "a", encoding="utf-8") as out:
                out.write(line)
            mirror.logged = entry.version
        target = index_file(index_root, entry.key)
        expires = _expires_at(entry, self.limits)
        if shown and entry.valid and (expires is None or expires > self.clock()):
            atomic_write(target, line)
        else:  # a tombstone, expired, or now above the mirror's clearance
            remove_file(target)

    # ------------------------------------------------------------------ expiry

    def _schedule(self, partition: Partition, entry: KeyEntry, expires: datetime) -> None:
        item = (expires, partition.tenant_id, partition.agent_id, entry.key, entry.version)
        heapq.heappush(self._expiry, item)
        if self._expiry[0] is item:
            self._wake.set()

    async def _expire_loop(self) -> None:
        while True:
            self._wake.clear()
            delay = None
            if self._expiry:
                delay = max(0.0, (self._expiry[0][0] - self.clock()).total_seconds())
            if delay is None or delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)
                continue
            _, tenant, agent, key, version = heapq.heappop(self._expiry)
            try:
                await self._expire(Partition(tenant, agent), key, version)
            except OSError:
                log.exception("key mirror: removing an expired key's file failed", key=key)

    async def _expire(self, partition: Partition, key: str, version: int) -> None:
        mirror = self._mirror(partition)
        async with mirror.lock:
            index_root = mirror.directory / INDEX_DIR
            target = index_file(index_root, key)

            def remove_if_current() -> bool:
                try:
                    held = json.loads(target.read_text(encoding="utf-8"))
                except FileNotFoundError:
                    return False
                if held.get("version") != version:
                    return False
                return remove_file(target)

            if await asyncio.to_thread(remove_if_current):
                log.info(
                    "key mirror: expired key removed from index",
                    tenant=partition.tenant_id,
                    agent=partition.agent_id,
                    key=key,
                    version=version,
                )

    # ------------------------------------------------------------------ helpers

    def _mirror(self, partition: Partition) -> _PartitionMirror:
        mirror = self._partitions.get(partition)
        if mirror is None:
            directory = partition_dir(self.root, partition)
            mirror = self._partitions[partition] = _PartitionMirror(directory)
        return mirror
