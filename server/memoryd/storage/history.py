"""The memory history behind as-of reads (docs/as-of.md): every version of every
memory, each valid from the instant (and log position) it was written until the next
one, kept for ``history.retention_hours``.

:class:`HistoryStore` is a store layer in front of the services' store: every write
that reaches the store through it (upserts, conditional writes, deletes, access
statistics) is recorded as the after-image of each memory it touched (a delete as
a ``None`` image), after the store took it. A partition's history starts on its first
write (or as-of read) in this process, without reading anything: a memory's stored
state becomes its first version (valid since that start) only when something first
writes it, read then by id, so a partition's first write costs what any write costs
and only written memories are held twice. Before the start, and before the retention
horizon, nothing is known: :meth:`MemoryHistory.horizon` says from when a partition
can be read as of.

:meth:`MemoryHistory.valid_at` selects the memories as they were at an instant
(created, updated, archived, superseded; deleted ones absent): each written one's
version then, and every other stored memory as it is (it has not changed since).
An erasure removes every version of what it erases (:meth:`MemoryHistory.erase`), so
no as-of read can bring erased content back.
"""

from __future__ import annotations

import asyncio
import builtins
import heapq
import itertools
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta

from memoryd.domain.models import (
    AccessUpdate,
    Clock,
    Memory,
    Partition,
    utcnow,
)
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.checks import count_access
from memoryd.storage.history_journal import (
    HistoryJournal,
    PartitionHistory,
    RecordId,
    RecordVersion,
    Version,
    encode_floor,
    encode_partition,
    encode_record_versions,
    encode_versions,
)
from memoryd.storage.memory_records import encode_doc
from memoryd.storage.write_stamp import WriteStamp

__all__ = ["MemoryHistory", "RecordVersion", "Version"]


class MemoryHistory:
    """Every partition's memory versions since it started, pruned past the retention
    and, beyond ``max_versions`` in all, the oldest superseded ones first (moving the
    horizon of the partitions they were of). ``position`` gives the log position a
    write just reached (the write-ahead log's last sequence; a counter without a
    log). With a ``journal`` every change is also appended to the partition's file
    (history_journal.py), and a partition is read from it the first time it is
    touched after a start (one partition at a time, never all at once)."""

    def __init__(
        self,
        retention: timedelta,
        *,
        clock: Clock = utcnow,
        position: Callable[[], int] | None = None,
        max_versions: int | None = None,
        journal: HistoryJournal | None = None,
    ) -> None:
        self.retention = retention
        self.max_versions = max_versions
        self.journal = journal
        #: Versions added since the total was last checked against ``max_versions``.
        self._added = 0
        self._clock = clock
        counter = itertools.count(1)
        self._position = position or (lambda: next(counter))
        self._parts: dict[Partition, PartitionHistory] = {}
        #: Records appended to a partition's file while it is being rewritten.
        self._tails: dict[Partition, bytearray] = {}
        #: One rewrite at a time (pruning and erasure; both off the write path).
        self._rewriting = asyncio.Lock()
        #: The files not loaded that pruning has yet to visit this round.
        self._unvisited: builtins.list[Partition] = []
        #: Partitions started whose file is not written yet: it is created by their
        #: first record, so that a read (which starts a partition to fix its horizon)
        #: leaves no file behind for an agent never written.
        self._unheaded: set[Partition] = set()

    async def load(self, partition: Partition) -> None:
        """Read ``partition``'s file in a worker thread unless it is loaded, so that
        the first touch after a start does not hold the event loop for a large file
        (the calls below then find it in memory)."""
        if self.journal is None or partition in self._parts:
            return
        if not self._rewriting.locked():
            self.journal.discard_temporary(partition)
        part = await asyncio.to_thread(self.journal.load, partition)
        if part is not None and partition not in self._parts:  # not loaded meanwhile
            self._adopt(partition, part)

    def _get(self, partition: Partition) -> PartitionHistory | None:
        """The partition's history: in memory, or read from its file (once)."""
        part = self._parts.get(partition)
        if part is None and self.journal is not None:
            if not self._rewriting.locked():
                self.journal.discard_temporary(partition)
            part = self.journal.load(partition)
            if part is not None:
                self._adopt(partition, part)
        return part

    def _adopt(self, partition: Partition, part: PartitionHistory) -> None:
        """Keep ``part``, read from its file, pruned as it would have been."""
        part.prune(self._clock() - self.retention)
        if part.floor is not None:
            part.prune(part.floor)
        self._parts[partition] = part

    def _append(self, partition: Partition, data: bytes) -> None:
        if self.journal is None:
            return
        if partition in self._unheaded:
            self._unheaded.discard(partition)
            self.journal.create(partition, self._parts[partition])
        self.journal.append(partition, data)
        tail = self._tails.get(partition)
        if tail is not None:
            tail += data

    def _add(
        self, partition: Partition, part: PartitionHistory, memory_id: str, v: Version
    ) -> None:
        versions = part.versions.setdefault(memory_id, [])
        if self.journal is not None:
            previous = versions[-1].memory if versions else None
            self._append(partition, encode_versions(memory_id, (v,), previous))
        versions.append(v)

    async def synced(self) -> None:
        """Return once every change so far is fsynced in its file (no journal: now)."""
        if self.journal is not None:
            await self.journal.sync()

    # ------------------------------------------------------------------ writes

    def start(self, partition: Partition) -> None:
        """Start ``partition``'s history now unless it has started (here or in its
        file): nothing is read; what was stored then is taken as it is until written
        (:meth:`before`)."""
        if self._get(partition) is None:
            part = PartitionHistory(self._clock(), self._position())
            self._parts[partition] = part
            if self.journal is not None:
                self._unheaded.add(partition)

    def unwritten(self, partition: Partition, ids: Iterable[str]) -> builtins.list[str]:
        """Those of ``ids`` with no version yet: their stored state is their first."""
        part = self._get(partition)
        if part is None:
            return []
        return [i for i in dict.fromkeys(ids) if i not in part.versions]

    def restart(self, partition: Partition) -> None:
        """From now on only: what came before is not known for some memories."""
        part = self._get(partition)
        if part is not None:
            part.floor = self._clock()
            self._append(partition, encode_floor(part.floor))

    def before(self, partition: Partition, stored: Sequence[Memory]) -> None:
        """Memories as stored before their first write since the start: each valid
        since then (it has not changed since, or it would have a version)."""
        part = self._get(partition)
        if part is None:
            return
        for m in stored:
            if m.id not in part.versions:
                self._add(partition, part, m.id, Version(part.since, part.since_position, _kept(m)))
        self._grew(len(stored))

    def record(
        self,
        partition: Partition,
        written: Sequence[Memory] = (),
        deleted: Sequence[str] = (),
        *,
        conditioned: frozenset[str] = frozenset(),
        stamp: WriteStamp | None = None,
    ) -> None:
        """``written`` (after-images) and ``deleted`` ids, at the write's ``stamp``
        (None: now, at the log's last position). A ``conditioned`` id keeps its
        stored access statistics above its own, as a conditional write stores it
        (storage/conditional.py: keep_counters)."""
        part = self._get(partition)
        if part is None:
            return
        at, position = self._stamped(stamp)
        for m in written:
            kept = _kept(m)
            versions = part.versions.get(m.id)
            if m.id in conditioned and versions and (before := versions[-1].memory):
                kept.access_count = max(kept.access_count, before.access_count)
                if before.accessed_at and (
                    kept.accessed_at is None or before.accessed_at > kept.accessed_at
                ):
                    kept.accessed_at = before.accessed_at
            self._add(partition, part, m.id, Version(_after(versions, at), position, kept))
        for memory_id in deleted:
            versions = part.versions.get(memory_id)
            if versions and versions[-1].memory is not None:
                gone = Version(_after(versions, at), position, None)
                self._add(partition, part, memory_id, gone)
        self._grew(len(written) + len(deleted))

    def _stamped(self, stamp: WriteStamp | None) -> tuple[datetime, int]:
        """A write's instant and log position: its stamp's (storage/write_stamp.py),
        or, unstamped (no log), now and the last position."""
        if stamp is None:
            return self._clock(), self._position()
        return stamp.at, stamp.position

    def record_access(self, partition: Partition, updates: Mapping[str, AccessUpdate]) -> None:
        """Access statistics flushed to the store: a version with the new counts (the
        recency of a later recall reads them)."""
        part = self._get(partition)
        if part is None:
            return
        at, position = self._clock(), self._position()
        for memory_id, update in updates.items():
            versions = part.versions.get(memory_id)
            current = versions[-1].memory if versions else None
            if versions is None or current is None:
                continue
            kept = current.copy()
            count_access(kept, update)
            self._add(partition, part, memory_id, Version(at, position, kept))
        self._grew(len(updates))

    def unwritten_records(
        self, partition: Partition, kind: RecordKind, keys: Iterable[str]
    ) -> builtins.list[str]:
        """Those of ``keys`` with no version yet: their stored state is their first."""
        part = self._get(partition)
        if part is None:
            return []
        return [k for k in dict.fromkeys(keys) if (kind, k) not in part.records]

    def record_records(
        self,
        partition: Partition,
        written: Sequence[Record] = (),
        deleted: Sequence[RecordId] = (),
        *,
        before: bool = False,
        stamp: WriteStamp | None = None,
    ) -> None:
        """Records ``written`` and ``deleted`` at the write's ``stamp`` (None: now);
        with ``before``: records as stored before their first write since the start
        (valid since then)."""
        part = self._get(partition)
        if part is None:
            return
        at, position = (part.since, part.since_position) if before else self._stamped(stamp)
        changes = [((r.kind, r.key), RecordVersion(at, position, r)) for r in written]
        changes += [(ident, RecordVersion(at, position, None)) for ident in deleted]
        for ident, v in changes:
            versions = part.records.setdefault(ident, [])
            if versions and v.at < versions[-1].at:  # a concurrent write recorded first
                v = RecordVersion(versions[-1].at, v.position, v.record)
            if (before and versions) or (v.record is None and (not versions or versions[-1].gone)):
                continue
            self._append(partition, encode_record_versions(ident, (v,)))
            versions.append(v)
        self._grew(len(changes))

    def record_at(
        self, partition: Partition, ident: RecordId, instant: datetime, stored: Record | None
    ) -> Record | None:
        """Record ``ident`` as it was at ``instant`` (None: absent then), given what
        is ``stored`` now (one never written since the start was then as it is now)."""
        part = self._get(partition)
        versions = None if part is None else part.records.get(ident)
        if versions is None:
            return stored
        i = bisect_right(versions, instant, key=lambda v: v.at)
        return versions[i - 1].record if i else None

    # ------------------------------------------------------------------ reads

    def horizon(self, partition: Partition) -> datetime | None:
        """The earliest instant ``partition`` can be read as of (None: not seeded)."""
        part = self._get(partition)
        if part is None:
            return None
        return max(part.since, self._clock() - self.retention, part.floor or part.since)

    def instant_of(self, partition: Partition, position: int) -> datetime | None:
        """When the partition's last change at or before log ``position`` was recorded
        (None: none was, since it was seeded)."""
        part = self._get(partition)
        if part is None:
            return None
        found: datetime | None = None
        for versions in part.versions.values():
            for v in versions:
                if v.position <= position and (found is None or v.at > found):
                    found = v.at
        return found

    def valid_at(
        self, partition: Partition, instant: datetime, stored: Sequence[Memory] = ()
    ) -> builtins.list[Memory]:
        """The memories of ``partition`` as they were at ``instant`` (deleted ones
        absent), given what is ``stored`` now (a memory never written since the start
        was then as it is now); each a copy the caller may keep."""
        part = self._get(partition)
        if part is None:
            return []
        # One created after ``instant`` was not there then: a write the log replayed
        # at a start after a crash cut it short, before its version was recorded.
        out = [m.copy() for m in stored if m.id not in part.versions and m.created_at <= instant]
        for versions in part.versions.values():
            i = bisect_right(versions, instant, key=lambda v: v.at)
            if i and (m := versions[i - 1].memory) is not None:
                out.append(m.copy())
        return out

    def recorded(
        self, partition: Partition, memory_id: str, since: datetime, until: datetime
    ) -> bool:
        """Whether a version of ``memory_id`` was recorded from ``since`` to ``until``."""
        part = self._get(partition)
        versions = () if part is None else part.versions.get(memory_id, ())
        return any(since <= v.at <= until for v in versions)

    def first_at_version(self, partition: Partition, memory_id: str, version: int) -> Memory | None:
        """A copy of the first state of ``memory_id`` recorded at its ``version`` (the
        memory's own counter), whenever that was; None: none was."""
        part = self._get(partition)
        for v in () if part is None else part.versions.get(memory_id, ()):
            if v.memory is not None and v.memory.version == version:
                return v.memory.copy()
        return None

    # ------------------------------------------------------------------ upkeep

    async def prune(self, *, files: int = 8) -> int:
        """Drop the versions no as-of read within the retention can select: those
        superseded before the horizon (the one valid at the horizon stays); then
        rewrite at most ``files`` journal files holding dropped versions (a bounded
        slice: the rest at the next call), the ones not loaded visited in turn.
        Returns how many versions were dropped from memory."""
        cutoff = self._clock() - self.retention
        dropped = sum(self._prune_before(cutoff).values())
        if self.journal is None:
            return dropped
        budget = files
        for partition, part in builtins.list(self._parts.items()):
            if budget and part.stale:
                budget -= 1
                await self._rewrite(partition, part)
        if budget and not self._unvisited:
            self._unvisited = [
                p for p in await asyncio.to_thread(_on_disk, self.journal) if p not in self._parts
            ]
        while budget and self._unvisited:
            budget -= 1
            await self._prune_file(self._unvisited.pop(), cutoff)
        return dropped

    async def _prune_file(self, partition: Partition, cutoff: datetime) -> None:
        """Prune a file not loaded, reading it off the event loop (and not keeping it
        loaded: its next use reads the rewritten file)."""
        journal = self.journal
        assert journal is not None
        part = await asyncio.to_thread(journal.load, partition)
        if part is None or partition in self._parts:
            return  # loaded meanwhile: pruned as loaded next time
        part.prune(cutoff)
        if part.floor is not None:
            part.prune(part.floor)
        if part.stale:
            await self._rewrite(partition, part)

    async def _rewrite(self, partition: Partition, part: PartitionHistory) -> None:
        """Replace the partition's file by one holding ``part`` as it is now; records
        appended meanwhile follow it into the new file."""
        journal = self.journal
        assert journal is not None
        async with self._rewriting:
            copy = PartitionHistory(
                part.since,
                part.since_position,
                {i: builtins.list(v) for i, v in part.versions.items()},
                part.floor,
            )
            part.stale = 0
            self._unheaded.discard(partition)  # the new file starts with its header
            self._tails[partition] = bytearray()
            try:
                temporary = await asyncio.to_thread(
                    lambda: journal.write_temporary(partition, encode_partition(partition, copy))
                )
                journal.install(partition, temporary, bytes(self._tails[partition]))
            finally:
                del self._tails[partition]

    def _prune_before(self, cutoff: datetime) -> dict[Partition, int]:
        """Drop the versions superseded at or before ``cutoff`` (and deletions then);
        how many went, per partition."""
        dropped: dict[Partition, int] = {}
        for partition, part in self._parts.items():
            n = part.prune(cutoff)
            if n:
                dropped[partition] = n
        return dropped

    def _grew(self, added: int) -> None:
        """Count ``added`` versions; past a tenth of ``max_versions`` since the last
        check, check the total (a scan: amortised over the versions added)."""
        if self.max_versions is None:
            return
        self._added += added
        if self._added >= max(1, self.max_versions // 10):
            self._added = 0
            self._bound(self.max_versions)

    def _bound(self, limit: int) -> None:
        """Over ``limit`` versions: drop the oldest superseded ones down to 90 % of it.
        The partitions they were of can be read as of their cutoff onwards only (a
        floor record in their files says so; pruning rewrites them)."""
        total = self.version_count()
        if total <= limit:
            return
        excess = total - limit * 9 // 10
        ends = [
            end
            for part in self._parts.values()
            for versions in part.versions.values()
            for end in _superseded_at(versions)
        ]
        ends += [
            end
            for part in self._parts.values()
            for record_versions in part.records.values()
            for end in _superseded_at(record_versions)
        ]
        if not ends:
            return
        cutoff = heapq.nsmallest(min(excess, len(ends)), ends)[-1]
        for partition in self._prune_before(cutoff):
            part = self._parts[partition]
            part.floor = max(part.floor or cutoff, cutoff)
            self._append(partition, encode_floor(part.floor))

    async def erase(
        self,
        partition: Partition,
        ids: Sequence[str],
        records: Sequence[RecordId] = (),
        *,
        dry_run: bool = False,
    ) -> int:
        """Remove every version of memories ``ids`` and of ``records`` (from memory
        and from the partition's file, rewritten without them); returns how many
        versions were (with ``dry_run``: would be) removed."""
        await self.load(partition)
        part = self._get(partition)
        if part is None:
            return 0
        if dry_run:
            return sum(len(part.versions.get(i, ())) for i in set(ids)) + sum(
                len(part.records.get(r, ())) for r in set(records)
            )
        removed = sum(len(part.versions.pop(i, ())) for i in set(ids))
        removed += sum(len(part.records.pop(r, ())) for r in set(records))
        if removed and self.journal is not None:
            await self._rewrite(partition, part)
        return removed

    async def erase_partition(self, partition: Partition, *, dry_run: bool = False) -> int:
        """Remove the whole partition's history, its file included; returns how many
        versions it held. It is started again (empty) by its next write: nothing
        older is known."""
        await self.load(partition)
        part = self._get(partition)
        if part is None:
            return 0
        held = part.count()
        if not dry_run:
            async with self._rewriting:
                self._parts.pop(partition, None)
                self._unheaded.discard(partition)
                if self.journal is not None:
                    self.journal.remove(partition)
        return held

    def file_of(self, partition: Partition) -> str | None:
        """The partition's journal file, relative to the journal's root (None: none)."""
        if self.journal is None:
            return None
        return str(self.journal.path(partition).relative_to(self.journal.root))

    def holding(
        self, partition: Partition, text: str
    ) -> tuple[builtins.list[str], builtins.list[RecordId]]:
        """The memory ids and records any of whose versions holds ``text`` (any letter
        case) in a memory's content, metadata, tags or namespace or a record's
        document, as an erasure by subject matches them: it must remove a superseded
        version that mentions it too."""
        part = self._get(partition)
        if part is None:
            return [], []
        needle = text.casefold()
        ids = [
            memory_id
            for memory_id, versions in part.versions.items()
            if any(v.memory is not None and needle in _searchable(v.memory) for v in versions)
        ]
        records = [
            ident
            for ident, record_versions in part.records.items()
            if any(
                v.record is not None and needle in encode_doc(v.record.doc).casefold()
                for v in record_versions
            )
        ]
        return ids, records

    def keyed_under(self, partition: Partition, directory: str) -> builtins.list[str]:
        """Ids any of whose versions is the mirror of a key under ``directory`` (a
        normalised prefix ending in "/"; "/": every key)."""
        part = self._get(partition)
        if part is None:
            return []
        return [
            memory_id
            for memory_id, versions in part.versions.items()
            if any(
                v.memory is not None and v.memory.key and v.memory.key.startswith(directory)
                for v in versions
            )
        ]

    def version_count(self) -> int:
        """Versions held in memory (the partitions loaded)."""
        return sum(p.count() for p in self._parts.values())


def _on_disk(journal: HistoryJournal) -> builtins.list[Partition]:
    return builtins.list(journal.on_disk())


def _after(versions: Sequence[Version] | None, at: datetime) -> datetime:
    """``at``, or the memory's last version's instant if that is later (a concurrent
    write to the same memory recorded first): a memory's versions stay in order."""
    if versions and versions[-1].at > at:
        return versions[-1].at
    return at


def _superseded_at(versions: Sequence[Version | RecordVersion]) -> Iterator[datetime]:
    """When each version stopped being valid: its successor's instant (and a final
    deletion's own: after it the id is gone)."""
    for after in versions[1:]:
        yield after.at
    if versions and versions[-1].gone:
        yield versions[-1].at


def _kept(m: Memory) -> Memory:
    """A copy of ``m`` that its writer's later changes do not reach."""
    kept = m.copy()
    kept.metadata = dict(m.metadata)
    return kept


def _searchable(m: Memory) -> str:
    return "\n".join((m.content, m.metadata_text(), *m.tags, m.namespace)).casefold()
