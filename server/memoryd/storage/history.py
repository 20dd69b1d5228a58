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

import builtins
import heapq
import itertools
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import (
    AccessUpdate,
    Clock,
    Memory,
    MemoryFilter,
    MemoryOrder,
    Partition,
    utcnow,
)
from memoryd.storage.base import NO_HINTS, ListPage, PartitionUpsert, Store, UpsertHints
from memoryd.storage.conditional import ConditionalWrite
from memoryd.storage.delegating import DelegatingStore

#: Memories read per page when an as-of read lists what is stored.
_PAGE = 1000
_EVERYTHING = MemoryFilter(include_archived=True)


@dataclass(frozen=True, slots=True)
class Version:
    """One memory as written: valid from ``at`` (and log ``position``) until the next
    version of its id; ``memory`` None: deleted then."""

    at: datetime
    position: int
    memory: Memory | None


@dataclass(slots=True)
class _Partition:
    #: From when this partition's history is complete (its first write or as-of read).
    since: datetime
    #: The log position then.
    since_position: int
    #: Each id's versions, oldest first.
    versions: dict[str, list[Version]] = field(default_factory=dict)
    #: Not complete before this instant: versions dropped to keep within
    #: ``max_versions``, or a memory's state before a write could not be read.
    floor: datetime | None = None


class MemoryHistory:
    """Every partition's memory versions since it started, pruned past the retention
    and, beyond ``max_versions`` in all, the oldest superseded ones first (moving the
    horizon of the partitions they were of). ``position`` gives the log position a
    write just reached (the write-ahead log's last sequence; a counter without a
    log)."""

    def __init__(
        self,
        retention: timedelta,
        *,
        clock: Clock = utcnow,
        position: Callable[[], int] | None = None,
        max_versions: int | None = None,
    ) -> None:
        self.retention = retention
        self.max_versions = max_versions
        #: Versions added since the total was last checked against ``max_versions``.
        self._added = 0
        self._clock = clock
        counter = itertools.count(1)
        self._position = position or (lambda: next(counter))
        self._parts: dict[Partition, _Partition] = {}

    # ------------------------------------------------------------------ writes

    def start(self, partition: Partition) -> None:
        """Start ``partition``'s history now unless it has started: nothing is read;
        what was stored then is taken as it is until written (:meth:`before`)."""
        if partition not in self._parts:
            self._parts[partition] = _Partition(self._clock(), self._position())

    def unwritten(self, partition: Partition, ids: Iterable[str]) -> builtins.list[str]:
        """Those of ``ids`` with no version yet: their stored state is their first."""
        part = self._parts.get(partition)
        if part is None:
            return []
        return [i for i in dict.fromkeys(ids) if i not in part.versions]

    def restart(self, partition: Partition) -> None:
        """From now on only: what came before is not known for some memories."""
        part = self._parts.get(partition)
        if part is not None:
            part.floor = self._clock()

    def before(self, partition: Partition, stored: Sequence[Memory]) -> None:
        """Memories as stored before their first write since the start: each valid
        since then (it has not changed since, or it would have a version)."""
        part = self._parts.get(partition)
        if part is None:
            return
        for m in stored:
            if m.id not in part.versions:
                part.versions[m.id] = [Version(part.since, part.since_position, _kept(m))]
        self._grew(len(stored))

    def record(
        self,
        partition: Partition,
        written: Sequence[Memory] = (),
        deleted: Sequence[str] = (),
        *,
        conditioned: frozenset[str] = frozenset(),
    ) -> None:
        """``written`` (after-images) and ``deleted`` ids, now. A ``conditioned`` id
        keeps its stored access statistics above its own, as a conditional write
        stores it (storage/conditional.py: keep_counters)."""
        part = self._parts.get(partition)
        if part is None:
            return
        at, position = self._clock(), self._position()
        for m in written:
            kept = _kept(m)
            versions = part.versions.get(m.id)
            if m.id in conditioned and versions and (before := versions[-1].memory):
                kept.access_count = max(kept.access_count, before.access_count)
                if before.accessed_at and (
                    kept.accessed_at is None or before.accessed_at > kept.accessed_at
                ):
                    kept.accessed_at = before.accessed_at
            part.versions.setdefault(m.id, []).append(Version(at, position, kept))
        for memory_id in deleted:
            versions = part.versions.get(memory_id)
            if versions and versions[-1].memory is not None:
                versions.append(Version(at, position, None))
        self._grew(len(written) + len(deleted))

    def record_access(self, partition: Partition, updates: Mapping[str, AccessUpdate]) -> None:
        """Access statistics flushed to the store: a version with the new counts (the
        recency of a later recall reads them)."""
        part = self._parts.get(partition)
        if part is None:
            return
        at, position = self._clock(), self._position()
        for memory_id, update in updates.items():
            versions = part.versions.get(memory_id)
            current = versions[-1].memory if versions else None
            if versions is None or current is None:
                continue
            kept = current.copy()
            kept.access_count += update.count
            if kept.accessed_at is None or update.last_accessed_at > kept.accessed_at:
                kept.accessed_at = update.last_accessed_at
            versions.append(Version(at, position, kept))
        self._grew(len(updates))

    # ------------------------------------------------------------------ reads

    def horizon(self, partition: Partition) -> datetime | None:
        """The earliest instant ``partition`` can be read as of (None: not seeded)."""
        part = self._parts.get(partition)
        if part is None:
            return None
        return max(part.since, self._clock() - self.retention, part.floor or part.since)

    def instant_of(self, partition: Partition, position: int) -> datetime | None:
        """When the partition's last change at or before log ``position`` was recorded
        (None: none was, since it was seeded)."""
        part = self._parts.get(partition)
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
        part = self._parts.get(partition)
        if part is None:
            return []
        out = [m.copy() for m in stored if m.id not in part.versions]
        for versions in part.versions.values():
            i = bisect_right(versions, instant, key=lambda v: v.at)
            if i and (m := versions[i - 1].memory) is not None:
                out.append(m.copy())
        return out

    def partitions(self) -> builtins.list[Partition]:
        return list(self._parts)

    # ------------------------------------------------------------------ upkeep

    def prune(self) -> int:
        """Drop the versions no as-of read within the retention can select: those
        superseded before the horizon (the one valid at the horizon stays). Returns
        how many were dropped."""
        return sum(self._prune_before(self._clock() - self.retention).values())

    def _prune_before(self, cutoff: datetime) -> dict[Partition, int]:
        """Drop the versions superseded at or before ``cutoff`` (and deletions then);
        how many went, per partition."""
        dropped: dict[Partition, int] = {}
        for partition, part in self._parts.items():
            n = 0
            for memory_id in list(part.versions):
                versions = part.versions[memory_id]
                first = bisect_right(versions, cutoff, key=lambda v: v.at) - 1
                if first > 0:
                    n += first
                    del versions[:first]
                if len(versions) == 1 and versions[0].memory is None and versions[0].at <= cutoff:
                    n += 1
                    del part.versions[memory_id]
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
        The partitions they were of can be read as of their cutoff onwards only."""
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
        if not ends:
            return
        cutoff = heapq.nsmallest(min(excess, len(ends)), ends)[-1]
        for partition in self._prune_before(cutoff):
            part = self._parts[partition]
            part.floor = max(part.floor or cutoff, cutoff)

    def erase(self, partition: Partition, ids: Sequence[str], *, dry_run: bool = False) -> int:
        """Remove every version of ``ids``; returns how many versions were (with
        ``dry_run``: would be) removed."""
        part = self._parts.get(partition)
        if part is None:
            return 0
        if dry_run:
            return sum(len(part.versions.get(i, ())) for i in set(ids))
        return sum(len(part.versions.pop(i, ())) for i in set(ids))

    def erase_partition(self, partition: Partition, *, dry_run: bool = False) -> int:
        """Remove the whole partition's history; returns how many versions it held.
        It is seeded again (empty) by its next write: nothing older is known."""
        part = self._parts.get(partition)
        if part is None:
            return 0
        if not dry_run:
            del self._parts[partition]
        return sum(len(v) for v in part.versions.values())

    def holding(self, partition: Partition, text: str) -> builtins.list[str]:
        """Ids any of whose versions holds ``text`` (any letter case) in its content,
        metadata, tags or namespace, as an erasure by subject matches memories: it must
        remove a superseded version that mentions it too."""
        part = self._parts.get(partition)
        if part is None:
            return []
        needle = text.casefold()
        return [
            memory_id
            for memory_id, versions in part.versions.items()
            if any(v.memory is not None and needle in _searchable(v.memory) for v in versions)
        ]

    def version_count(self) -> int:
        return sum(len(v) for p in self._parts.values() for v in p.versions.values())


def history_of(store: Store) -> MemoryHistory | None:
    """The history ``store`` records into (None: it records none)."""
    return store.history if isinstance(store, HistoryStore) else None


def _superseded_at(versions: Sequence[Version]) -> Iterator[datetime]:
    """When each version stopped being valid: its successor's instant (and a final
    deletion's own: after it the id is gone)."""
    for after in versions[1:]:
        yield after.at
    if versions and versions[-1].memory is None:
        yield versions[-1].at


def _kept(m: Memory) -> Memory:
    """A copy of ``m`` that its writer's later changes do not reach."""
    kept = m.copy()
    kept.metadata = dict(m.metadata)
    return kept


def _searchable(m: Memory) -> str:
    return "\n".join((m.content, m.metadata_text(), *m.tags, m.namespace)).casefold()


async def stored_memories(store: Store, partition: Partition) -> builtins.list[Memory]:
    """Every stored memory of ``partition``, archived ones included, with vectors."""
    out: builtins.list[Memory] = []
    wanted = ListPage(MemoryOrder.CREATED_ASC, limit=_PAGE)
    while True:
        page = await store.list(partition, _EVERYTHING, wanted)
        if page:
            out.extend(await store.get(partition, [m.id for m in page], with_vectors=True))
        if len(page) < _PAGE:
            return out
        wanted = wanted.following(page[-1])


class HistoryStore(DelegatingStore):
    """The services' store, recording every write's after-images in ``history`` (and,
    at a memory's first write since the start, its stored state before it)."""

    def __init__(self, inner: Store, history: MemoryHistory) -> None:
        super().__init__(inner)
        self.history = history

    async def _before(self, partition: Partition, ids: Iterable[str]) -> None:
        self.history.start(partition)
        unwritten = self.history.unwritten(partition, ids)
        if not unwritten:
            return
        try:
            stored = await self.inner.get(partition, unwritten, with_vectors=True)
        except Unavailable:
            # The write goes ahead without the store (to the log, in an outage); what
            # these memories were before it is not known, so the partition's history
            # is complete from now on only.
            self.history.restart(partition)
            return
        self.history.before(partition, stored)

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        # An id the caller knows is new has no stored state to keep: no lookup.
        await self._before(partition, (m.id for m in memories if m.id not in hints.new_ids))
        await super().upsert(partition, memories, hints)
        self.history.record(partition, memories)

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        for w in writes:
            await self._before(w.partition, (m.id for m in w.memories))
        await super().upsert_many(writes)
        for w in writes:
            self.history.record(w.partition, w.memories)

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        touched = [*(m.id for m in write.memories), *write.delete]
        await self._before(write.partition, touched)
        conflicts = await super().upsert_if(write)
        if not conflicts:
            self.history.record(
                write.partition,
                write.memories,
                write.delete,
                conditioned=frozenset(write.expected),
            )
        return conflicts

    async def delete(self, partition: Partition, ids: Sequence[str]) -> builtins.list[str]:
        await self._before(partition, ids)
        deleted = await super().delete(partition, ids)
        self.history.record(partition, deleted=deleted)
        return deleted

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        await self._before(partition, updates)
        await super().record_access(partition, updates)
        self.history.record_access(partition, updates)
