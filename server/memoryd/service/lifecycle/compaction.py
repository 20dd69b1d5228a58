"""Compact: purge tombstones and expired items, merge near-duplicates, rotate key
history, optimise the store.

Keys. Tombstoned slots go, and so do slots whose ``content.expired_at`` has passed
(with the long-term memory mirroring them): GetKey, ListKeys and the file mirror's
index and state then no longer show them; their writes stay in the key history
(``history_policy``). Each compaction logs the keys it removed (key, ts, valid,
source; never content).

Merging. Live, non-keyed memories are grouped by (tag, namespace, security level);
every group with more than ``merge_group_threshold`` members is searched for
near-duplicates (cosine >= ``merge_similarity``, default the dedup threshold) with
the store's own vector search, newest members first. A cluster (a memory and its
unmerged near-duplicates) becomes one memory, deterministically: the newest
content (and its id and vector), the union of the tags, the highest importance, the
sum of access counts, the earliest creation and latest access time, version + 1,
``supersedes`` = the newest absorbed id and ``metadata["memoryd:derived_from"]`` =
every absorbed id (earlier merges' included). Merges never cross namespaces or
security levels, and never touch keyed memories (their slot owns them) or archived
ones.

Key history (``maintenance.history_policy``): "keep" keeps every write; "archive"
appends writes older than ``history_archive_after_days`` - except each key's latest,
which is its current state - to ``<history_dir>/<tenant>/<agent>/key-history-<date>
.jsonl`` and then deletes them from the store.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import structlog

from memoryd.domain.keyed import KeyEntry
from memoryd.domain.lifecycle import CompactOptions, CompactResult, Progress
from memoryd.domain.limits import MAX_COUNT, next_version
from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel, unit_queries
from memoryd.domain.records import Record, RecordKind
from memoryd.service.agent_state.working import purge_expired_records
from memoryd.service.common import scanning
from memoryd.service.common.memory_writes import Changes
from memoryd.service.common.undecodable import decodable
from memoryd.service.keyed.docs import EVENT_SEPARATOR, entry_from, source_summary
from memoryd.service.keyed.keys import quoted_segment
from memoryd.service.keyed.tree import ts_text
from memoryd.service.lifecycle import bulk
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.storage.base import Nearest, compact

log = structlog.get_logger(__name__)

DERIVED_FROM = "memoryd:derived_from"
#: Removed keys named in a compaction's log line (of each kind).
_LOGGED_KEYS = 50
#: Ids kept in DERIVED_FROM (the newest), so metadata stays small.
MAX_DERIVED_IDS = 100
#: Neighbours looked up per group member.
NEIGHBOURS = 10
#: Group members searched per store call.
SEARCH_BATCH = 512

GroupKey = tuple[str, str, SecurityLevel]


def merged_memory(survivor: Memory, absorbed: list[Memory], now: datetime, max_tags: int) -> Memory:
    """``survivor`` (the newest of its cluster) absorbing ``absorbed`` (newest first)."""
    cluster = [survivor, *absorbed]
    tags = list(dict.fromkeys(t for m in cluster for t in m.tags))[:max_tags]
    derived: list[str] = []
    for m in cluster:
        earlier = m.metadata.get(DERIVED_FROM)
        if isinstance(earlier, list):
            derived.extend(str(i) for i in earlier)
    derived.extend(m.id for m in absorbed)
    derived = list(dict.fromkeys(derived))[-MAX_DERIVED_IDS:]
    accessed = [m.accessed_at for m in cluster if m.accessed_at is not None]
    return replace(
        survivor,
        tags=tuple(tags),
        importance=max(m.importance for m in cluster),
        access_count=min(MAX_COUNT, sum(m.access_count for m in cluster)),
        accessed_at=max(accessed) if accessed else None,
        created_at=min(m.created_at for m in cluster),
        metadata={**survivor.metadata, DERIVED_FROM: derived},
        supersedes=absorbed[0].id,
        version=next_version(survivor.version),
        updated_at=now,
    )


def _newest_first(m: Memory) -> tuple[float, str]:
    return (-m.updated_at.timestamp(), m.id)


class Compactor:
    def __init__(self, deps: LifecycleDeps) -> None:
        self._deps = deps

    async def compact(
        self, partition: Partition, ceiling: SecurityLevel, options: CompactOptions
    ) -> AsyncIterator[Progress | CompactResult]:
        deps = self._deps
        now = deps.clock()
        yield Progress("tombstones", message="purging tombstoned and expired keys")
        tombstones, expired_keys = await self.purge_keys(partition, ceiling, now)
        yield Progress("expired", message="purging expired memories, working memory, sessions")
        expired = expired_keys + await self.purge_expired(partition, ceiling, now)
        merged = 0
        async for event in self.merge(partition, ceiling, options, now):
            if isinstance(event, Progress):
                yield event
            else:
                merged = event
        history = 0
        if deps.settings.history_policy == "archive":
            yield Progress("history", message="archiving old key history")
            history = await self.archive_history(partition, now)
        yield Progress("optimize", message="optimising the store")
        optimized = await self.optimize()
        yield CompactResult(
            tombstones_purged=tombstones,
            expired_purged=expired,
            merged=merged,
            store_optimized=optimized,
            history_archived=history,
        )

    # ------------------------------------------------------------------ purging

    async def purge_tombstones(self, partition: Partition, ceiling: SecurityLevel) -> int:
        """Tombstoned key slots (expired ones too); returns the tombstones purged."""
        tombstones, _ = await self.purge_keys(partition, ceiling, self._deps.clock())
        return tombstones

    async def purge_keys(
        self, partition: Partition, ceiling: SecurityLevel, now: datetime
    ) -> tuple[int, int]:
        """Tombstoned key slots, and slots whose content expired before ``now`` with
        their long-term memories: (tombstones, expired) purged."""
        deps = self._deps
        if deps.keyed is None:
            return await self._purge_keys(partition, ceiling, now)
        async with deps.keyed.exclusive(partition):
            return await self._purge_keys(partition, ceiling, now)

    async def _purge_keys(
        self, partition: Partition, ceiling: SecurityLevel, now: datetime
    ) -> tuple[int, int]:
        deps = self._deps
        dead: list[KeyEntry] = []
        expired: list[KeyEntry] = []
        async for page in scanning.scan_records(
            deps.records, partition, RecordKind.KEY, deps.batch
        ):
            for record, entry in _entries(page):
                if entry.security_level > ceiling:
                    continue
                if not entry.valid:
                    dead.append(entry)
                elif record.expired(now):
                    expired.append(entry)
        tombstones = await bulk.delete_records(
            deps, partition, RecordKind.KEY, [e.key for e in dead]
        )
        gone = await bulk.delete_records(deps, partition, RecordKind.KEY, [e.key for e in expired])
        await bulk.delete(deps, partition, [e.memory_id for e in expired if e.memory_id])
        if dead or expired:
            log.info(
                "key compaction",
                tenant=partition.tenant_id,
                agent=partition.agent_id,
                tombstones=tombstones,
                expired=gone,
                keys=[_logged(e, "tombstone") for e in dead[:_LOGGED_KEYS]]
                + [_logged(e, "expired") for e in expired[:_LOGGED_KEYS]],
            )
        return tombstones, gone

    async def purge_expired(
        self, partition: Partition, ceiling: SecurityLevel, now: datetime
    ) -> int:
        """Expired memories (not keyed ones: their slot owns them), working-memory
        scopes and sessions; returns how many went."""
        deps = self._deps
        flt = MemoryFilter(include_archived=True, max_security_level=ceiling)
        expired: list[str] = []
        async for page in scanning.scan(deps.store, partition, flt):
            expired.extend(
                m.id for m in page if m.expires_at is not None and m.expires_at <= now and not m.key
            )
        gone = await bulk.delete(deps, partition, expired)
        for kind in (RecordKind.WORKING, RecordKind.SESSION):
            gone += await purge_expired_records(deps.records, partition, kind, now)
        return gone

    # ------------------------------------------------------------------ merging

    async def merge_groups(
        self, partition: Partition, ceiling: SecurityLevel, threshold: int, now: datetime
    ) -> dict[GroupKey, list[str]]:
        """The groups above ``threshold``, each its members' ids, newest first (one
        scan of the partition)."""
        groups: dict[GroupKey, list[tuple[float, str]]] = {}
        flt = MemoryFilter(max_security_level=ceiling, not_expired_at=now)
        async for page in scanning.scan(self._deps.store, partition, flt):
            for m in page:
                if m.key:
                    continue
                for tag in m.tags:
                    groups.setdefault((tag, m.namespace, m.security_level), []).append(
                        _newest_first(m)
                    )
        return {
            group: [memory_id for _, memory_id in sorted(members)]
            for group, members in groups.items()
            if len(members) > threshold
        }

    async def merge(
        self,
        partition: Partition,
        ceiling: SecurityLevel,
        options: CompactOptions,
        now: datetime,
    ) -> AsyncIterator[Progress | int]:
        """Yields progress, then the number of memories absorbed."""
        deps = self._deps
        threshold = options.merge_group_threshold or deps.settings.merge_group_threshold
        similarity = options.merge_similarity or deps.settings.merge_similarity
        if similarity is None:
            similarity = deps.dedup.threshold
        groups = await self.merge_groups(partition, ceiling, threshold, now)
        total = sum(len(members) for members in groups.values())
        done = absorbed_total = 0
        yield Progress("merge", 0, total, f"{len(groups)} tag groups above {threshold}")
        absorbed: set[str] = set()
        for group in sorted(groups, key=lambda g: (g[0], g[1], int(g[2]))):
            tag, namespace, level = group
            flt = MemoryFilter(
                namespace=namespace, tags=(tag,), max_security_level=level, not_expired_at=now
            )
            members = groups[group]
            for start in range(0, len(members), SEARCH_BATCH):
                batch = [i for i in members[start : start + SEARCH_BATCH] if i not in absorbed]
                absorbed_total += await self._merge_batch(
                    partition, flt, level, batch, similarity, absorbed, now
                )
                done += len(members[start : start + SEARCH_BATCH])
                yield Progress("merge", done, total, f"tag {tag!r}")
        yield absorbed_total

    async def _merge_batch(
        self,
        partition: Partition,
        flt: MemoryFilter,
        level: SecurityLevel,
        batch: list[str],
        similarity: float,
        absorbed: set[str],
        now: datetime,
    ) -> int:
        """Merge each of ``batch`` (ids, newest first) with its near-duplicates."""
        deps = self._deps
        if not batch:
            return 0
        found = await deps.store.get(partition, batch, with_vectors=True)
        queries = [m for m in found if m.vector is not None and not m.archived]
        if not queries:
            return 0
        vectors = unit_queries([m.vector for m in queries], deps.embedder.dimension)
        hits = await deps.store.search_many(partition, vectors, flt, Nearest(NEIGHBOURS + 1))
        plans: dict[str, list[Memory]] = {}
        for m, neighbours in zip(queries, hits, strict=True):
            if m.id in absorbed:
                continue
            dups = [
                h.memory
                for h in neighbours
                if h.memory.id != m.id
                and h.memory.id not in absorbed
                and h.similarity >= similarity
                and h.memory.security_level == level
                and not h.memory.key
                and not h.memory.archived
            ]
            if not dups:
                continue
            cluster = sorted([m, *dups], key=_newest_first)
            survivor, others = cluster[0], cluster[1:]
            plans[survivor.id] = others
            absorbed.update(o.id for o in others)
            absorbed.add(survivor.id)  # merged once per pass: its neighbours changed
        if not plans:
            return 0
        return await self._absorb(partition, plans, now)

    async def _absorb(
        self, partition: Partition, plans: dict[str, list[Memory]], now: datetime
    ) -> int:
        """Each survivor absorbs its cluster, in one conditional write with the
        absorbed memories' deletes (service/common/memory_writes.py). A memory changed
        since the search found it is left out of its cluster (its new text may not
        repeat the survivor's), and one changed meanwhile makes the batch start over."""
        max_tags = self._deps.limits.max_tags
        seen = {o.id: o.version for others in plans.values() for o in others}

        async def absorb(current: Mapping[str, Memory]) -> Changes:
            upserts: list[Memory] = []
            deletes: list[str] = []
            for survivor_id, others in plans.items():
                survivor = current.get(survivor_id)
                absorbed = [
                    current[o.id]
                    for o in others
                    if o.id in current
                    and current[o.id].version == seen[o.id]
                    and not current[o.id].archived
                ]
                if survivor is None or survivor.archived or not absorbed:
                    continue
                upserts.append(merged_memory(survivor, absorbed, now, max_tags))
                deletes.extend(m.id for m in absorbed)
            return Changes(upserts, deletes)

        ids = [*plans, *seen]
        written = await self._deps.writes.modify(partition, ids, absorb)
        return len(written.deletes)

    # ------------------------------------------------------------------ history

    async def archive_history(self, partition: Partition, now: datetime) -> int:
        deps = self._deps
        cutoff = now - timedelta(days=deps.settings.history_archive_after_days)
        old: list[Record] = []
        previous: Record | None = None
        async for page in scanning.scan_records(
            deps.records, partition, RecordKind.KEY_EVENT, deps.batch
        ):
            for record in page:
                # Events sort by key then version: the last one of a key is its latest.
                if (
                    previous is not None
                    and _key_of(previous) == _key_of(record)
                    and previous.updated_at < cutoff
                ):
                    old.append(previous)
                previous = record
        if not old:
            return 0
        await asyncio.to_thread(self._append_archive, partition, old)
        return await bulk.delete_records(
            deps, partition, RecordKind.KEY_EVENT, [r.key for r in old]
        )

    def _append_archive(self, partition: Partition, events: list[Record]) -> None:
        folder = archive_folder(self._deps.history_dir, partition)
        folder.mkdir(parents=True, exist_ok=True)
        by_day: dict[str, list[Record]] = {}
        for r in events:
            by_day.setdefault(r.updated_at.date().isoformat(), []).append(r)
        for day, records in sorted(by_day.items()):
            path: Path = folder / f"key-history-{day}.jsonl"
            with open(path, "a", encoding="utf-8") as out:
                for r in records:
                    line = {
                        "tenant": partition.tenant_id,
                        "agent": partition.agent_id,
                        "key": _key_of(r),
                        "version": r.version,
                        "updated_at": r.updated_at.isoformat(),
                        "doc": r.doc,
                    }
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
                out.flush()
                os.fsync(out.fileno())

    # ------------------------------------------------------------------ store

    async def optimize(self) -> bool:
        """Compact the stores' files and drop old versions, where the backend can."""
        done = False
        for target in (self._deps.store, self._deps.records):
            # A backend extra (LanceDB), not part of the protocols; every layer in
            # front of the backend defines it explicitly.
            done = await compact(target) or done
        return done


def archive_folder(history_dir: Path, partition: Partition) -> Path:
    """``<history_dir>/<tenant>/<agent>``, each id encoded as a file name (never "." or
    "..", never a "/"), and checked to stay inside ``history_dir``."""
    folder = (
        history_dir
        / quoted_segment(partition.tenant_id, leaf=False)
        / quoted_segment(partition.agent_id, leaf=False)
    )
    root = history_dir.resolve()
    if folder.resolve().parent.parent != root:
        raise ValueError(f"archive folder of {partition} would leave {root}")
    return folder


def _entries(page: Sequence[Record]) -> list[tuple[Record, KeyEntry]]:
    """Each KEY record with its entry, leaving out (reported) those that no longer
    decode: compaction must go on past them."""
    return [(r, e) for r in page for e in decodable([r], entry_from)]


def _logged(entry: KeyEntry, reason: str) -> dict[str, object]:
    """A removed key in the compaction's log line (never its content)."""
    return {
        "key": entry.key,
        "ts": ts_text(entry.updated_at),
        "valid": entry.valid,
        "source": source_summary(entry.source),
        "removed": reason,
    }


def _key_of(record: Record) -> str:
    return record.key.split(EVENT_SEPARATOR, 1)[0]
