"""Key mirrors embedded behind the answer (``keys.mirror_embedding: behind``).

A key write answers once its key records are logged; its mirror memory (service.py)
is embedded and written by a background pass, which takes the latest version of each
key written since it last looked: a key rewritten ten times while the pass is behind
costs one embedding. What that needs, and where it is:

- **The read fence** (:meth:`PendingMirrors.settled`): a read or change of a
  partition's memories, by any service but keyed memory's own (each reads through
  the store layer storage/fenced.py), first waits for the pass to cover every key
  write made to the partition before it began, so a written key is recalled as it
  was written. Writes made after the read began do not hold it (no starvation). The
  pass takes a partition some read waits for first. It embeds mirrors as a query is embedded, before the documents queued for
  writes (embedding/urgency.py): every read of the agent waits for them, and behind
  Remember's documents a read waited for the pass, and the pass for every Remember.
- **The check** (a partition's first fence or pass after a start, and a sweep of
  every partition at start): key slots whose mirror is missing or older than the
  slot are queued, so a crash between a write's answer and its pass loses nothing
  (the key records are in the write-ahead log; the mirror is derived from them).
- **Failures**: a mirror the pass could not write (the store, or an embedder that
  has no fallback, failed) is queued again and retried after a pause; a read that
  waits on it answers with the mirror the store holds, reported degraded, rather
  than hang. The daemon's embedder falls back to hashing on its own
  (resilience/embedder.py), so an embedder that is down or slow holds a read at
  most its timeout, and the mirror goes to the fallback space and its re-embed
  queue, like any write's.

Each text is embedded alone, as a write before the answer embeds it: the models
quantise per batch (bench/model_cost.py), and an as-of read that embeds a version
the pass skipped (service/snapshot/as_of.py) must get the vector a read then would
have seen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.config import LimitsSettings
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Partition
from memoryd.domain.records import RecordKind
from memoryd.embedding.urgency import awaited_by_a_read
from memoryd.resilience.degradation import report
from memoryd.service.common import scanning
from memoryd.service.common.undecodable import decodable
from memoryd.service.common.validation import Violations
from memoryd.service.keyed.docs import MirrorFields, entry_from, mirror_fields
from memoryd.storage.base import Store
from memoryd.storage.history import MemoryHistory
from memoryd.storage.records import RecordStore

log = structlog.get_logger(__name__)

#: The component a read names when it answers without a key's newest mirror.
EMBEDDER = "embedder"
#: Partitions remembered as checked since start (past it: checked again when touched).
CHECKED_MAX = 100_000
#: Key slots read at a time by the check.
CHECK_BATCH = 1000
#: Seconds the pass waits before it tries a failed mirror again (doubling to the max).
RETRY_S, RETRY_MAX_S = 0.5, 30.0

#: Writes one key's mirror (embed, then write under the partition's lock).
WriteMirror = Callable[[Partition, "PendingMirror"], Awaitable[None]]
#: Queues the mirrors a partition's stored key slots lack (the check).
CheckPartition = Callable[[Partition], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class PendingMirror:
    """A key version whose mirror memory is still to be embedded and written."""

    entry: KeyEntry
    fields: MirrorFields


@dataclass(slots=True)
class _Partition:
    #: Key -> its latest version waiting for the pass.
    keys: dict[str, PendingMirror] = field(default_factory=dict)
    #: Writes queued so far, and how many of them the pass has settled.
    queued: int = 0
    settled: int = 0
    #: The last pass over it failed for some key (queued again).
    failing: bool = False
    #: Reads waiting for it now (a round over it is not cut for another partition).
    readers: int = 0

    @property
    def idle(self) -> bool:
        return not self.keys and self.settled >= self.queued and not self.failing


class PendingMirrors:
    """The queue of mirrors to write, the pass that writes them and the fence."""

    def __init__(self, *, retry_s: float = RETRY_S) -> None:
        #: The pause before a failed mirror is tried again (doubling to RETRY_MAX_S).
        self._retry_s = retry_s
        self._parts: dict[Partition, _Partition] = {}
        self._changed = asyncio.Condition()
        self._wake = asyncio.Event()
        #: Partitions a read waits for (the pass takes them first).
        self._wanted: dict[Partition, None] = {}
        #: Partitions checked since start, and checks in progress.
        self._checked: set[Partition] = set()
        self._checking: dict[Partition, asyncio.Task[None]] = {}
        self._write: WriteMirror | None = None
        self._check: CheckPartition | None = None
        self._pass: asyncio.Task[None] | None = None

    def bind(self, write: WriteMirror, check: CheckPartition) -> None:
        """Set by the keyed service that owns the mirrors."""
        self._write, self._check = write, check

    # ------------------------------------------------------------------ queue

    def add(self, partition: Partition, item: PendingMirror) -> None:
        """Queue ``item`` unless a later version of its key is queued already."""
        part = self._parts.setdefault(partition, _Partition())
        held = part.keys.get(item.entry.key)
        if held is None or held.entry.version <= item.entry.version:
            part.keys[item.entry.key] = item
        part.queued += 1
        self._start()

    def drop(self, partition: Partition, key: str) -> None:
        """A tombstone, whose transaction deletes the mirror, drops a queued one."""
        part = self._parts.get(partition)
        if part is not None:
            part.keys.pop(key, None)

    def newer(self, partition: Partition, key: str, version: int) -> bool:
        """Whether a version of ``key`` after ``version`` is queued (it supersedes)."""
        part = self._parts.get(partition)
        held = None if part is None else part.keys.get(key)
        return held is not None and held.entry.version > version

    def recheck(self, partition: Partition) -> None:
        """A lifecycle rewrite (import, reset) changed the slots: check again."""
        self._checked.discard(partition)

    # ------------------------------------------------------------------ fence

    async def settled(self, partition: Partition) -> None:
        """Wait for the mirrors of every key write made to ``partition`` so far (and
        for its check after a start). While the pass fails for the partition (it
        retries after a pause), return at once, reported degraded: the read answers
        with the mirrors the store holds rather than wait for the retry."""
        await self.checked(partition)
        part = self._parts.get(partition)
        if part is None:
            return
        target = part.queued
        if part.settled < target and not part.failing:
            self._wanted[partition] = None
            self._start()
            part.readers += 1
            try:
                async with self._changed:
                    await self._changed.wait_for(lambda: part.settled >= target or part.failing)
            finally:
                part.readers -= 1
        if part.failing:
            report(EMBEDDER, "a key's newest value is not embedded yet; its mirror is older")

    def caught_up(self, partition: Partition) -> bool:
        """Whether every key write made to ``partition`` so far has its mirror, or the
        pass is failing for it (whose reads answer degraded rather than wait)."""
        part = self._parts.get(partition)
        return part is None or part.failing or (part.settled >= part.queued and not part.keys)

    async def drained(self) -> None:
        """Wait until every queued mirror is written (a failing one retried until it
        is): for tests, and for whoever wants none left to the next start's check."""
        async with self._changed:
            await self._changed.wait_for(lambda: all(p.idle for p in self._parts.values()))

    async def checked(self, partition: Partition) -> None:
        """Run the partition's check once after a start (shared by callers)."""
        if partition in self._checked or self._check is None:
            return
        task = self._checking.get(partition)
        if task is None:
            task = asyncio.create_task(self._check_once(partition, self._check))
            self._checking[partition] = task
        await asyncio.shield(task)

    async def _check_once(self, partition: Partition, check: CheckPartition) -> None:
        try:
            await check(partition)
            self._checked.add(partition)
        except Exception:
            # Not checked: the next read or write tries again; this one goes on.
            log.exception(
                "keyed mirrors: checking a partition's mirrors failed",
                tenant=partition.tenant_id,
                agent=partition.agent_id,
            )
        finally:
            self._checking.pop(partition, None)

    # ------------------------------------------------------------------ the pass

    def _start(self) -> None:
        self._wake.set()
        if self._write is not None and (self._pass is None or self._pass.done()):
            self._pass = asyncio.create_task(self._run(self._write), name="keyed-mirror-pass")

    async def close(self) -> None:
        """Stop the pass; what it had not written is found by the next start's check."""
        await cancel_and_wait(self._pass)
        for task in list(self._checking.values()):
            await cancel_and_wait(task)

    async def _run(self, write: WriteMirror) -> None:
        delay = self._retry_s
        while True:
            await self._wake.wait()
            self._wake.clear()
            failed: list[tuple[_Partition, PendingMirror]] = []
            while (partition := self._next()) is not None:
                # Checked before its keys are taken: a check after would find the
                # mirrors being written missing and queue them (embedded twice).
                await self.checked(partition)
                part, keys, target = self._taken(self._parts[partition])
                if await self._write_all(write, partition, part, keys, failed):
                    part.settled = max(part.settled, target)
                async with self._changed:
                    self._changed.notify_all()
            async with self._changed:  # partitions settled by _next (tombstoned since)
                self._changed.notify_all()
            self._forget_settled()
            if not failed:
                delay = self._retry_s
                continue
            # Retried after a pause, not at once: a store or model that fails keeps
            # failing for a while. A read meanwhile answers degraded (``settled``).
            for part, item in failed:
                self._requeue(part, item)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_S)
            self._wake.set()

    async def _write_all(
        self,
        write: WriteMirror,
        partition: Partition,
        part: _Partition,
        keys: list[PendingMirror],
        failed: list[tuple[_Partition, PendingMirror]],
    ) -> bool:
        """Write ``keys``' mirrors (those that fail go to ``failed``); False when a read
        of another partition came first (the rest are queued again, the partition not
        settled yet) while none waits for this one: with reads waiting on every
        partition, each round was cut after one key and no partition ever settled
        until the reads stopped (a minute under bench/mixed.py's load). ``failing``
        stays set until a round writes every one it took."""
        before = len(failed)
        for n, item in enumerate(keys):
            if self._wanted and partition not in self._wanted and not part.readers:
                for rest in keys[n:]:
                    self._requeue(part, rest)
                self._wake.set()
                return False
            try:
                # Every read of the agent waits for it: before the queued documents,
                # or a read waits for the pass, and the pass for every Remember queued.
                with awaited_by_a_read():
                    await write(partition, item)
            except Exception as exc:
                log.warning(
                    "keyed mirror not written; retried", key=item.entry.key, error=repr(exc)
                )
                failed.append((part, item))
        part.failing = len(failed) > before
        return True

    def _forget_settled(self) -> None:
        """Drop the partitions with nothing queued or in flight (a waiter holds its own
        reference, and a write starts a partition afresh); past CHECKED_MAX partitions
        checked, forget which (each is checked again when next touched)."""
        for partition in [p for p, part in self._parts.items() if part.idle]:
            del self._parts[partition]
        if len(self._checked) > CHECKED_MAX:
            self._checked.clear()

    def _next(self) -> Partition | None:
        """The next partition with keys queued, one a read waits for first."""
        while self._wanted:
            partition = next(iter(self._wanted))
            del self._wanted[partition]
            part = self._parts.get(partition)
            if part is not None and part.keys:
                return partition
        for partition, part in self._parts.items():
            if part.keys:
                return partition
            if part.settled < part.queued:  # its writes were all tombstones since
                part.settled = part.queued
        return None

    @staticmethod
    def _taken(part: _Partition) -> tuple[_Partition, list[PendingMirror], int]:
        """The partition's queued keys, and the count of its writes they settle."""
        keys = list(part.keys.values())
        part.keys.clear()
        return part, keys, part.queued

    @staticmethod
    def _requeue(part: _Partition, item: PendingMirror) -> None:
        held = part.keys.get(item.entry.key)
        if held is None or held.entry.version < item.entry.version:
            part.keys[item.entry.key] = item


async def queue_missing(
    records: RecordStore,
    store: Store,
    limits: LimitsSettings,
    pending: PendingMirrors,
    history: MemoryHistory | None,
    partition: Partition,
) -> None:
    """The check: queue the mirrors of ``partition``'s key slots that are missing or
    older than their slot (a write answered, then a crash before its pass). A mirror
    the ``history`` shows written at its slot's version and missing now was removed
    on purpose (ForgetMemories): it stays removed, as before the pass, until the
    key's next write. Without a history (history.enabled false), or past its
    retention, such a mirror is written again."""
    if history is not None:
        await history.load(partition)
    async for page in scanning.scan_records(records, partition, RecordKind.KEY, CHECK_BATCH):
        entries = [e for e in decodable(page, entry_from) if e.valid and e.memory_id]
        held = {m.id: m.version for m in await store.get(partition, [e.memory_id for e in entries])}
        for e in entries:
            if e.memory_id not in held and _was_written(history, partition, e):
                continue
            if held.get(e.memory_id, 0) < e.version:
                fields = mirror_fields(e.content, limits, Violations())
                pending.add(partition, PendingMirror(e, fields))
        await scanning.pause()


def _was_written(history: MemoryHistory | None, partition: Partition, entry: KeyEntry) -> bool:
    """Whether the mirror of ``entry``'s very version was written (and so, if it is
    missing now, removed since)."""
    if history is None:
        return False
    return history.first_at_version(partition, entry.memory_id, entry.version) is not None
