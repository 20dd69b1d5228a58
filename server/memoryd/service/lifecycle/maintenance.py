"""RunMaintenance, and the daemon's schedule for it.

One run over a partition:
1. expire: delete expired memories (not keyed ones), working-memory scopes, sessions;
2. retention: with ``retention_days``, delete memories created before then (keyed
   memories excepted: their slot owns them);
3. capacity: with ``max_entries``, when more memories are live (unarchived), archive
   the lowest-scored excess. Pinned (tag ``pinned``) and keyed memories are never
   archived. Score = 0.5 importance + 0.3 recency (half-life 30 days since the last
   access or update) + 0.2 use (log-scaled access count, 1 from 50 accesses); ties
   go oldest first;
3b. consolidate (``consolidation.enabled``, or the request's ``consolidate``): groups of
   related older memories condensed into one each, the originals archived
   (consolidation.py);
3c. compress (``compression.enabled``, on by default): the layered-memory design's
   policy, memories 90 days untouched and accessed fewer than 5 times, grouped by
   type, each group of 3 or more condensed into 1 to 3 (consolidation.py, by_type);
3d. tag compaction (``tag_compaction_threshold``, 50 by default; seed 003's
   ``_compact_tag_groups``): a tag group with more live memories than the threshold,
   whatever their age, is consolidated (the originals archived, undo kept); a run
   with ``consolidate`` false skips it;
4. compact (compaction.py) when needed: this run changed something, a key slot is a
   tombstone or its content has expired, or a tag group is above the merge
   threshold;
5. record the finish time (a COUNTER record "maintenance": GetStats reports it).

The scheduler runs every ``interval_s`` (shifted by up to +-``jitter`` of it, so a
fleet of daemons does not run in step), over every partition one at a time, with
every batch a separate store call and a turn for requests in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime, timedelta

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.config import MaintenanceSettings
from memoryd.domain.lifecycle import (
    CompactOptions,
    CompactResult,
    ConsolidateOptions,
    ConsolidateResult,
    MaintenanceOptions,
    MaintenanceResult,
    Progress,
)
from memoryd.domain.limits import next_version
from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.snapshot import PINNED_TAG
from memoryd.service.common import scanning
from memoryd.service.keyed.docs import is_live
from memoryd.service.lifecycle import bulk
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.compaction import Compactor
from memoryd.service.lifecycle.consolidation import Consolidator
from memoryd.storage.history_stores import history_of

log = structlog.get_logger(__name__)

MAINTENANCE_KEY = "maintenance"
#: Longest retention_days: "now - days" must stay a valid datetime (and 100 years is
#: longer than any retention policy).
MAX_DAYS = 36_500
_LN2 = math.log(2.0)
RECENCY_HALF_LIFE = timedelta(days=30)
_USE_SATURATION = math.log1p(50)


def retention_score(m: Memory, now: datetime) -> float:
    last = max(m.updated_at, m.accessed_at) if m.accessed_at else m.updated_at
    age = max(0.0, (now - last).total_seconds())
    recency = math.exp(-_LN2 * age / RECENCY_HALF_LIFE.total_seconds())
    use = min(1.0, math.log1p(m.access_count) / _USE_SATURATION)
    return 0.5 * m.importance + 0.3 * recency + 0.2 * use


async def last_maintenance(deps: LifecycleDeps, partition: Partition) -> datetime | None:
    found = await deps.records.get_records(partition, RecordKind.COUNTER, [MAINTENANCE_KEY])
    return found[0].updated_at if found else None


class Maintainer:
    def __init__(
        self, deps: LifecycleDeps, compactor: Compactor, consolidator: Consolidator
    ) -> None:
        self._deps = deps
        self._compactor = compactor
        self._consolidator = consolidator

    async def run(
        self, partition: Partition, ceiling: SecurityLevel, options: MaintenanceOptions
    ) -> AsyncIterator[Progress | MaintenanceResult]:
        deps = self._deps
        s = deps.settings
        now = deps.clock()
        max_entries = options.max_entries or s.max_entries
        retention_days = options.retention_days or s.retention_days

        yield Progress("expire", message="deleting expired items")
        expired = await self._compactor.purge_expired(partition, ceiling, now)

        deleted = 0
        if retention_days:
            yield Progress(
                "retention", message=f"deleting memories older than {retention_days} days"
            )
            cutoff = now - timedelta(days=retention_days)
            flt = MemoryFilter(
                include_archived=True, created_before=cutoff, max_security_level=ceiling
            )
            old: list[str] = []
            async for page in scanning.scan(deps.store, partition, flt):
                old.extend(m.id for m in page if not m.key)
            deleted = await bulk.delete(deps, partition, old)

        archived = 0
        if max_entries:
            yield Progress("capacity", message=f"keeping at most {max_entries} live memories")
            archived = await self._archive_excess(partition, ceiling, max_entries, now)

        runs: list[ConsolidateOptions] = []
        if s.consolidation.enabled if options.consolidate is None else options.consolidate:
            runs.append(ConsolidateOptions())
        if s.compression.enabled:
            runs.append(compression_options(s))
        threshold = s.tag_compaction_threshold
        if threshold and options.consolidate is not False:
            crowded = await self._consolidator.crowded_tags(partition, ceiling, threshold)
            if crowded:
                runs.append(
                    ConsolidateOptions(min_age_days=0, min_group_size=threshold + 1, tags=crowded)
                )
        condensed: list[ConsolidateResult] = []
        for run in runs:
            async for step in self._consolidator.run(partition, ceiling, run):
                if isinstance(step, ConsolidateResult):
                    condensed.append(step)
                else:
                    yield step
        consolidated = sum(r.consolidated for r in condensed)

        compacted = False
        changed = expired + deleted + archived + consolidated
        if changed or await self._needs_compaction(partition, ceiling, now):
            async for event in self._compactor.compact(partition, ceiling, CompactOptions()):
                if isinstance(event, CompactResult):
                    compacted = True
                else:
                    yield Progress(f"compact:{event.phase}", event.done, event.total, event.message)

        finished = deps.clock()
        await self._mark(partition, finished)
        yield MaintenanceResult(
            archived=archived,
            deleted_by_retention=deleted,
            expired=expired,
            compacted=compacted,
            finished_at=finished,
            consolidated=consolidated,
            degraded=tuple(dict.fromkeys(d for r in condensed for d in r.degraded)),
        )

    async def _archive_excess(
        self, partition: Partition, ceiling: SecurityLevel, max_entries: int, now: datetime
    ) -> int:
        deps = self._deps
        flt = MemoryFilter(max_security_level=ceiling, not_expired_at=now)
        live = 0
        scored: list[tuple[float, float, str]] = []
        async for page in scanning.scan(deps.store, partition, flt):
            live += len(page)
            scored.extend(
                (retention_score(m, now), m.created_at.timestamp(), m.id)
                for m in page
                if not m.key and PINNED_TAG not in m.tags
            )
        excess = live - max_entries
        if excess <= 0:
            return 0
        scored.sort()
        chosen = [memory_id for _, _, memory_id in scored[:excess]]

        def archive(m: Memory) -> Memory | None:
            if m.archived or m.security_level > ceiling:
                return None
            m.archived = True
            m.version = next_version(m.version)
            m.updated_at = now
            return m

        return await bulk.rewrite(deps, partition, chosen, archive)

    async def _needs_compaction(
        self, partition: Partition, ceiling: SecurityLevel, now: datetime
    ) -> bool:
        deps = self._deps
        async for page in scanning.scan_records(
            deps.records, partition, RecordKind.KEY, deps.batch
        ):
            if any(not is_live(r) or r.expired(now) for r in page):
                return True
        groups = await self._compactor.merge_groups(
            partition, ceiling, deps.settings.merge_group_threshold, now
        )
        return bool(groups)

    async def _mark(self, partition: Partition, when: datetime) -> None:
        records = self._deps.records
        found = await records.get_records(partition, RecordKind.COUNTER, [MAINTENANCE_KEY])
        version = next_version(found[0].version) if found else 1
        marker = Record(RecordKind.COUNTER, MAINTENANCE_KEY, {}, version, when)
        await records.put_records(partition, [marker])


@dataclass(eq=False)
class MaintenanceScheduler:
    """Runs maintenance over every partition on a schedule (a daemon component)."""

    deps: LifecycleDeps
    maintainer: Maintainer
    _: KW_ONLY
    #: Seeds the jitter of the schedule (None: a random one).
    seed: int | None = None
    #: Told (duration in seconds, outcome) after each partition's run (metrics).
    on_run: Callable[[float, str], None] | None = None
    #: Told each partition maintained (memory.md / learnings.md are refreshed:
    #: an edit is read in even when nothing else is written).
    maintained: Callable[[Partition], None] | None = None

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: When the last scheduled pass over every partition finished.
        self.last_run_at: datetime | None = None
        self.runs = 0

    def start(self) -> None:
        self._stop.clear()
        self._task = asyncio.create_task(self._loop(), name="maintenance-scheduler")

    async def close(self) -> None:
        """Stop; a partition being maintained is cut off between two batches (every
        batch is a complete write, and the next run picks up where this one left)."""
        self._stop.set()
        task, self._task = self._task, None
        await cancel_and_wait(task)

    def next_delay(self) -> float:
        s = self.deps.settings
        return s.interval_s * (1.0 + self._random.uniform(-s.jitter, s.jitter))

    async def _sleep(self, seconds: float) -> bool:
        """False when asked to stop meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)
        return not self._stop.is_set()

    async def _loop(self) -> None:
        if not await self._sleep(self.deps.settings.initial_delay_s):
            return
        while True:
            await self.run_once()
            if not await self._sleep(self.next_delay()):
                return

    async def run_once(self) -> int:
        """One pass over every partition; returns how many were maintained."""
        deps = self.deps
        partitions = sorted(
            set(await deps.store.list_partitions()) | set(await deps.records.list_partitions()),
            key=lambda p: (p.tenant_id, p.agent_id),
        )
        done = 0
        for partition in partitions:
            if self._stop.is_set():
                break
            started, outcome = time.perf_counter(), "failed"
            try:
                async for event in self.maintainer.run(
                    partition, SecurityLevel.RESTRICTED, MaintenanceOptions()
                ):
                    if isinstance(event, MaintenanceResult) and (
                        event.archived or event.deleted_by_retention or event.expired
                    ):
                        log.info(
                            "maintenance",
                            tenant=partition.tenant_id,
                            agent=partition.agent_id,
                            archived=event.archived,
                            deleted_by_retention=event.deleted_by_retention,
                            expired=event.expired,
                            compacted=event.compacted,
                        )
                done += 1
                outcome = "ok"
                if self.maintained is not None:
                    self.maintained(partition)
            except asyncio.CancelledError:
                outcome = "cancelled"
                raise
            except Exception:
                # One partition's failure must not stop the others (or the schedule).
                log.exception(
                    "maintenance failed", tenant=partition.tenant_id, agent=partition.agent_id
                )
            finally:
                if self.on_run is not None:
                    self.on_run(time.perf_counter() - started, outcome)
            await scanning.pause()
        history = history_of(deps.store)
        if history is not None:  # as-of versions past history.retention_hours
            await history.prune()
        self.last_run_at = deps.clock()
        self.runs += 1
        return done


def compression_options(settings: MaintenanceSettings) -> ConsolidateOptions:
    """The consolidation run maintenance.compression makes."""
    c = settings.compression
    return ConsolidateOptions(
        min_age_days=c.min_age_days,
        min_group_size=c.min_group_size,
        by_type=True,
        max_access_count=c.max_access_count,
        max_parts=c.max_parts,
    )
