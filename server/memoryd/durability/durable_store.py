"""Every mutation goes through the write-ahead log before the store sees it.

``Durability`` owns the log and both stores. A write (upsert, delete, put_records,
delete_records; access statistics are best effort and not logged) is appended,
fsynced with its group, then applied; the caller is answered after the fsync and
the apply attempt. If applying fails the write still stands: the entry stays
pending, the store is marked degraded, and a background task retries pending
entries in order with backoff (the circuit breaker's half-open probe). Reads overlay
pending entries (get, list, search, find_by_content, get_records), so a caller reads
its own writes while the store is down.

Entries are applied in log order per partition, merged into large store calls
(``ops.plan_calls``: the memory writes and the record writes of every partition a
pass takes go to the store as one call per kind, a few commits for a burst from many
agents); different partitions' rows are independent, so a write or a read that needs
its own partition applied applies that partition only (and whatever a transaction of
it also touches), never the whole backlog.

With ``apply_behind`` > 0 a memory write (upsert, delete) is answered right after its
fsync while at most that many memories wait to be applied, and a background task
applies them, ``apply_delay_s`` after the first (group commit: the entries logged
meanwhile share one store commit), in passes of at most PASS_ITEMS with the lock
released in between. The backlog (entries.Backlog) keeps what a write or a read asks
of it cheap, so a store that is slow for a while (a LanceDB compaction holding its
write lock) holds no writer while fewer than ``apply_behind`` items wait. It is as durable as before (the log has it; a crash
replays it) and reads see it through the overlay; the reads with no overlay (full
text, count, list_partitions) first apply the logged writes to their partition
(``caught_up``). An entry the store rejects as invalid is settled without holding up
later writes (apply.py). Applying behind is only for a store this process alone reads: another replica
reading a shared store would not see the write yet.

``transaction()`` (transaction.py) collects the writes of a block (in the same task)
into ONE log entry applied in order: keyed memory writes a key and its mirror memory
together.

An entry carries the STARTED audit events of the calls whose writes it holds
(security/admission.py): one group fsync makes a write and its audit record durable
together. Reads and applies see an entry only once it is durable. A checkpoint first
syncs the audit file (``AuditLog.sync``), so no entry leaves the log before its event
is durable in the file; a start re-appends the events the file lost.

A checkpoint task makes the store's files durable (``syncfs`` of its directory, off
the request path) and then records the highest sequence applied with every earlier
one, and the store's table versions then; segments below it are deleted. On start
the entries after the checkpoint are replayed; a store that fails the replay or does
not open leaves the daemon serving degraded while a background task catches up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.domain.errors import StoreError, Unavailable
from memoryd.domain.models import Clock, Partition, utcnow
from memoryd.durability.apply import EntryApplier
from memoryd.durability.changes import ChangeLog
from memoryd.durability.entries import Backlog, Entry, needed, partitions_of
from memoryd.durability.log_health import LogHealth
from memoryd.durability.ops import Op, decode_entry, encode
from memoryd.durability.sync import checkpoint
from memoryd.durability.transaction import collecting
from memoryd.durability.wal import WalUnusable, WriteAheadLog
from memoryd.observability.tracing import NO_TRACING, WAL_APPEND, WAL_APPLY, Tracing
from memoryd.resilience.breaker import BreakerState, CircuitBreaker
from memoryd.resilience.degradation import ComponentStates, report
from memoryd.security.admission import uncarried
from memoryd.security.audit import AuditLog
from memoryd.storage.base import Store
from memoryd.storage.failures import cause_of, public_reason
from memoryd.storage.records import RecordStore
from memoryd.storage.write_stamp import WriteStamp, stamp

log = structlog.get_logger(__name__)

STORE = "store"
#: Seconds a shutdown spends applying pending writes (the rest is replayed later).
FINAL_APPLY_S = 0.8
#: Items (memories, records, ids, keys) one background apply pass takes at most: the
#: apply lock is released between passes, so a read or a write that applies its own
#: partition waits for one bounded pass at most.
PASS_ITEMS = 4096
#: The least step between two writes' instants (the history's resolution).
_TICK = timedelta(microseconds=1)


class Durability:
    """The write-ahead log in front of both stores: logs, applies, replays,
    checkpoints, and lays the pending writes over reads (see the module's text)."""

    def __init__(
        self,
        wal: WriteAheadLog,
        store: Store,
        records: RecordStore,
        *,
        states: ComponentStates,
        store_dir: Path,
        checkpoint_interval_s: float = 1.0,
        retry_max_s: float = 5.0,
        apply_behind: int = 0,
        apply_delay_s: float = 0.0,
        tracing: Tracing = NO_TRACING,
        store_versions: Callable[[], Mapping[str, int]] | None = None,
        reopen: Callable[[], Awaitable[None]] | None = None,
        audit: AuditLog | None = None,
        clock: Clock = utcnow,
    ) -> None:
        self.wal = wal
        #: The instants writes are stamped with (storage/write_stamp.py).
        self.clock = clock
        self._last_stamped = datetime.min.replace(tzinfo=UTC)
        #: The audit log whose events ride in the entries (synced before a checkpoint).
        self.audit = audit
        self.store = store
        self.records = records
        self.states = states
        self.store_dir = store_dir
        self.checkpoint_interval_s = checkpoint_interval_s
        #: Memories acknowledged before they are applied, at most (0: none).
        self.apply_behind = apply_behind
        #: How long the background apply waits for more entries to join its commit.
        self.apply_delay_s = apply_delay_s
        #: Spans for the wait on the group fsync and for each apply pass.
        self.tracing = tracing
        #: The store's table versions, recorded with each checkpoint (LanceDB: a
        #: start never rolls a table back below them).
        self.store_versions = store_versions
        #: Opens the stores that are not open (a start with the store unreachable).
        self.reopen = reopen
        self._store_closed = False
        #: Why the stores did not open at start (for the degraded reason).
        self.open_error = ""
        #: How long close applies pending writes before leaving them to the log.
        self.final_apply_s = FINAL_APPLY_S
        #: Set on close: the background apply stops waiting for company.
        self._hurry = asyncio.Event()
        #: Wakes the background apply's wait for company: set on close (with
        #: ``_hurry``) and once half a pass's worth of items waits.
        self._wake = asyncio.Event()
        self.pending = Backlog()
        self.breaker = CircuitBreaker(
            STORE, failure_threshold=1, reset_after_s=0.2, max_reset_after_s=retry_max_s
        )
        self._apply_lock = asyncio.Lock()
        #: One checkpoint at a time (the loop's, an erasure's).
        self._checkpointing = asyncio.Lock()
        self._retry: asyncio.Task[None] | None = None
        self._checkpointer: asyncio.Task[None] | None = None
        self._behind: asyncio.Task[None] | None = None
        self.checkpoint = 0
        self.replayed = 0
        self._closed = False
        #: Durable entries the store refused before their callers were answered.
        self.refused: set[int] = set()
        #: What the change feed reads (docs/watch.md).
        self.changes = ChangeLog(wal, self.visible_seq, self.refused)
        self._log_health = LogHealth(wal, states)
        self._applier = EntryApplier(wal, store, records, self.refused)

    # -- start and stop ------------------------------------------------------------

    async def open(self, *, store_open: bool = True) -> None:
        """Replay the log after the checkpoint into the stores, then start.

        The replay applies every entry in a few large store calls (``ops.plan``). When
        the store fails meanwhile, or could not be opened (``store_open`` False; then
        ``reopen`` is tried first), the daemon starts anyway: the rest stays pending,
        laid over reads, the store is reported impaired, and a background task applies
        it once the store answers."""
        entries = await asyncio.to_thread(self.wal.recover)
        self.refused.update(await asyncio.to_thread(self.wal.refused_seqs))
        self.checkpoint = self.wal.recovered.applied
        loop = asyncio.get_running_loop()
        logged: list[tuple[int, str]] = []
        for seq, payload in entries:
            try:
                ops, events = decode_entry(payload)
            except Exception as exc:  # checksummed, yet not an entry this code can read
                await self._applier.set_aside(seq, payload, exc)
                continue
            logged.extend((seq, line) for line in events)
            durable: asyncio.Future[None] = loop.create_future()
            durable.set_result(None)
            self.pending.add(Entry(seq, ops, durable, answered=True))
        if self.audit is not None and logged:
            await asyncio.to_thread(self.audit.restore, logged)
        self._store_closed = not store_open
        self.wal.start()
        self._log_health.usable()
        started = loop.time()
        if self.pending and not self._store_closed:
            async with self._apply_lock:
                await self._apply_ready()
        self.replayed = len(entries) - len(self.pending)
        if entries:
            log.info(
                "write-ahead log replayed",
                entries=self.replayed,
                through=self._applied_through(),
                pending=len(self.pending),
                seconds=round(loop.time() - started, 3),
            )
        if self.pending or self._store_closed:
            self._start_degraded()
        else:
            self.states.set(STORE, ok=True)
            if entries:
                await asyncio.to_thread(self._make_durable, self._applied_through())
        await asyncio.to_thread(self.wal.truncate, self.checkpoint)
        self._checkpointer = asyncio.create_task(self._checkpoint_loop(), name="wal-checkpoint")

    def _start_degraded(self) -> None:
        if self._store_closed:
            self.breaker.failure(self.open_error or "the store did not open")
        reason = self._store_reason()
        self.states.set(STORE, ok=False, reason=reason)
        log.error("serving without the store; retried in the background", reason=reason)
        self._schedule_retry()
        self._log_health.check()

    async def close(self) -> None:
        """Stop taking writes, apply what is pending for at most ``final_apply_s``,
        checkpoint. What is not applied by then is left to the next start's replay:
        a shutdown is bounded (the log has every acknowledged write)."""
        self._closed = True
        self._hurry.set()
        self._wake.set()
        self.changes.close()
        await self.wal.close()
        await cancel_and_wait(self._retry)
        await self._log_health.close()
        try:
            async with asyncio.timeout(self.final_apply_s):
                if self._behind is not None:
                    await asyncio.wait([self._behind])
                async with self._apply_lock:
                    await self._apply_ready()
        except TimeoutError:
            log.warning(
                "shutdown: logged writes left for the next start to replay",
                entries=len(self.pending),
            )
        except Exception as exc:  # the store failing: the log keeps them
            log.warning("shutdown: logged writes not applied", error=repr(exc))
        await cancel_and_wait(self._behind)  # cut short: its entries stay pending
        await cancel_and_wait(self._checkpointer)
        with contextlib.suppress(OSError):
            await asyncio.to_thread(self._make_durable, self._applied_through())

    # -- writes --------------------------------------------------------------------

    async def write(self, op: Op) -> None:
        collected = collecting()
        if collected is not None:
            collected.append((self, op))
            return
        await self.commit([op])

    async def commit(self, ops: list[Op]) -> None:
        """Durable on return (or Unavailable: nothing was stored); applied unless the
        store is degraded, in which case the reason is reported to the call."""
        entry = self._log(ops)
        try:
            await self._settle(entry)
        except asyncio.CancelledError:
            self._orphaned(entry)
            raise
        finally:
            self.changes.signal.notify()  # decided: visible to watchers, or skipped

    def _log(self, ops: list[Op]) -> Entry:
        if self._closed:
            raise Unavailable("the server is shutting down; write not accepted")
        # The calls' STARTED events ride in the entry: durable with it, in one fsync.
        admissions = uncarried()
        try:
            seq, durable = self.wal.submit(encode(ops, [a.line() for a in admissions]))
        except WalUnusable as exc:
            raise self._log_health.unusable(exc) from None
        for admission in admissions:
            admission.logged(seq)
        stamp(WriteStamp(seq, self._instant_of_next()))
        entry = Entry(seq, ops, durable)
        self.pending.add(entry)
        return entry

    def _instant_of_next(self) -> datetime:
        """The instant of the write being logged: now, but after the previous write's
        (strictly: instants order writes as their sequence numbers do, even when the
        clock stands still or steps back)."""
        at = max(self.clock(), self._last_stamped + _TICK)
        self._last_stamped = at
        return at

    def _orphaned(self, entry: Entry) -> None:
        """The caller went away (its call cancelled) before its write was settled: once
        durable it is applied in the background like one answered early, or dropped if
        its fsync fails; never left undecided, holding up the change feed."""

        def settle(durable: asyncio.Future[None]) -> None:
            if durable.exception() is not None:
                self.pending.remove(entry)
            elif not entry.applied:
                entry.answered = True
                self._apply_behind()
            self.changes.signal.notify()

        entry.durable.add_done_callback(settle)

    async def _settle(self, entry: Entry) -> None:
        seq, durable = entry.seq, entry.durable
        try:
            with self.tracing.span(WAL_APPEND, {"memoryd.wal.seq": seq}):
                await asyncio.shield(durable)
        except WalUnusable as exc:
            self.pending.remove(entry)
            raise self._log_health.unusable(exc) from None
        self._log_health.usable()
        if not self.breaker.allow():
            entry.answered = True
            self._degraded_write()
            return
        if self._may_apply_behind(entry):
            entry.answered = True
            if self.pending.items >= PASS_ITEMS // 2:
                self._wake.set()
            self._apply_behind()
            return
        async with self._apply_lock:
            if not entry.applied:
                # Its partitions' entries only: a key write is not queued behind
                # other agents' bulk writes.
                await self._apply_ready(partitions_of([entry]))
        if entry.error is not None:
            raise entry.error
        if not entry.applied:
            entry.answered = True
            self._degraded_write()

    def _may_apply_behind(self, entry: Entry) -> bool:
        """Whether ``entry`` (durable, not applied) may be answered before it is
        applied: when few enough wait with it. Memory and record writes alike: every
        read of either lays the log over the store or applies its partition first
        (SetMemory held its agent's key lock through two commits, queued behind the
        agent's other applies: p50 10 s in the mixed bench)."""
        if self.apply_behind <= 0:
            return False
        return self.pending.items <= self.apply_behind

    def _apply_behind(self) -> None:
        if self._behind is None or self._behind.done():
            # Its passes apply many callers' writes: traces of their own, not the
            # trace of the write that happened to start it.
            with self.tracing.detached():
                self._behind = asyncio.create_task(self._apply_behind_loop(), name="wal-apply")

    async def _apply_behind_loop(self) -> None:
        # Loops: an entry acknowledged while a pass runs is in no pass yet.
        while self.pending.has_ready():
            if (
                self.apply_delay_s > 0
                and self.pending.items < PASS_ITEMS // 2
                and not self._hurry.is_set()
            ):
                # Group commit: the writes logged meanwhile join this pass's commit.
                # Nothing waits on it (reads overlay the log or apply it themselves,
                # a write past the bound applies itself), except close, which hurries;
                # half a pass's worth of items starts it at once.
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.apply_delay_s)
            if not self.breaker.allow():
                self._schedule_retry()
                return
            # Every partition's entries together, a bounded pass at a time, the lock
            # released in between: a write or a read waiting for its own partition
            # waits for one pass at most, never for the whole backlog.
            async with self._apply_lock:
                await self._apply_ready(max_items=PASS_ITEMS)
            if self.breaker.state is not BreakerState.CLOSED:
                self._schedule_retry()
                return

    async def caught_up(self, partition: Partition | None = None) -> None:
        """Return once every durable write to ``partition`` (None: to any) is applied,
        for reads that cannot overlay pending ones. That includes a write whose apply
        is under way: LanceDB replaces a row by a delete and an add. While the store
        is failing nothing waits: those reads are answered as they are (degraded) and
        the entries are retried."""
        if self.breaker.state is not BreakerState.CLOSED or not self.pending.has_ready(partition):
            return
        async with self._apply_lock:
            if self.breaker.allow():
                await self._apply_ready(None if partition is None else frozenset({partition}))

    def _degraded_write(self) -> None:
        report(STORE, self._store_reason())
        self._schedule_retry()

    def _store_reason(self) -> str:
        return (
            f"store unavailable ({self.breaker.last_error or 'recovering'}); "
            f"{len(self.pending)} logged write(s) not yet applied, applied when it returns"
        )

    async def _apply_ready(
        self, partitions: frozenset[Partition] | None = None, *, max_items: int | None = None
    ) -> None:
        """Apply the durable pending entries in sequence order (caller holds the lock):
        all (at most about ``max_items``), or those writing to ``partitions`` and,
        transitively, to any partition such an entry also writes to (each partition's
        own order is the log's; different partitions' rows are independent)."""
        ready = self.pending.ready(max_items if partitions is None else None)
        if partitions is not None:
            ready = needed(ready, partitions)
        if not ready:
            return
        with self.tracing.span(WAL_APPLY, {"memoryd.wal.entries": len(ready)}):
            await self._apply_entries(ready)

    async def _apply_entries(self, ready: list[Entry]) -> None:
        applied = await self._applier.apply(ready)
        if applied.failure is not None:
            self.breaker.failure(public_reason(applied.failure))
            self.states.set(STORE, ok=False, reason=self._store_reason())
            log.warning("store apply failed; writes stay in the log", error=repr(applied.failure))
        else:
            self.breaker.success()
        for entry in applied.settled:
            entry.applied = True
            self.pending.remove(entry)
        if not self.pending and self.breaker.state == "closed":
            self.states.set(STORE, ok=True)
        self.changes.signal.notify()

    def _schedule_retry(self) -> None:
        if self._closed or (self._retry is not None and not self._retry.done()):
            return
        with self.tracing.detached():
            self._retry = asyncio.create_task(self._retry_loop(), name="wal-apply-retry")

    async def _retry_loop(self) -> None:
        while self.pending or self._store_closed:
            await asyncio.sleep(self.breaker.wait_s)
            if not self.breaker.allow() or not await self._ensure_open():
                continue
            async with self._apply_lock:
                await self._apply_ready()
            if self.breaker.state == "closed" and self.pending:
                await asyncio.sleep(0)  # entries still in their fsync: next round
        self.states.set(STORE, ok=True)
        log.info("store recovered; every logged write applied")

    async def _ensure_open(self) -> bool:
        """Open the stores if the start could not (with the breaker allowing a try)."""
        if not self._store_closed:
            return True
        assert self.reopen is not None
        try:
            await self.reopen()
        except Exception as exc:
            self.breaker.failure(public_reason(exc))
            self.states.set(STORE, ok=False, reason=self._store_reason())
            log.warning("store still not open", error=repr(exc))
            return False
        self._store_closed = False
        log.info("store opened; applying the logged writes", pending=len(self.pending))
        return True

    def visible_seq(self) -> int:
        """The change feed's horizon: the highest sequence such that it and every
        earlier entry is durable and decided (applied, answered, refused, or failed
        in its fsync and so never written)."""
        return self.pending.first_undecided(self.wal.durable_seq) - 1

    # -- checkpoints ---------------------------------------------------------------

    def _applied_through(self) -> int:
        """Highest sequence with it and every earlier entry applied."""
        if self.pending:
            return self.pending.first_seq() - 1
        return self.wal.durable_seq

    async def _checkpoint_loop(self) -> None:
        while True:
            await asyncio.sleep(self.checkpoint_interval_s)
            target = self._applied_through()
            if target <= self.checkpoint:
                continue
            try:
                async with self._checkpointing:
                    await asyncio.to_thread(self._make_durable, target)
            except OSError as exc:
                log.warning("checkpoint failed; the log keeps the entries", error=str(exc))

    async def shred_log(self) -> int:
        """Drop every segment whose entries are all applied, the ones kept for the
        change feed included (an erasure: docs/erasure.md); returns how many went. A
        segment holding an entry not yet applied stays, so no acknowledged write
        loses its durability."""
        await asyncio.to_thread(self.wal.seal)  # what was written so far: droppable
        await self.caught_up()
        async with self._checkpointing:
            await asyncio.to_thread(self._make_durable, self._applied_through())
            return await asyncio.to_thread(self.wal.truncate, self.checkpoint, retain_bytes=0)

    def _make_durable(self, target: int) -> None:
        if target > self.checkpoint:
            versions = self.store_versions
            checkpoint(self.wal, target, self.store_dir, versions, self.audit)
            self.checkpoint = target

    # -- overlay of pending writes ---------------------------------------------------

    async def settled(self, partition: Partition) -> None:
        """Return once every entry logged for ``partition`` is out of its fsync
        (durable, or failed): a conditional write's check then reads what stands. An
        entry in its fsync is in no overlay yet, and its write was announced to the
        watches before the check began: compared without waiting, the check would
        pass against the version that write replaces (a lost update)."""
        waiting = self.pending.in_fsync(partition)
        if waiting:
            await asyncio.gather(*(asyncio.shield(f) for f in waiting), return_exceptions=True)

    def pending_ops(self, partition: Partition) -> list[Op]:
        """The operations on ``partition`` logged and not yet applied; an entry still
        in its fsync is not visible (its write, and its audit event, are not durable)."""
        return self.pending.ops_for(partition)

    def read_error(self, exc: Exception) -> StoreError:
        """What a read the store failed (and the log cannot answer) raises: a clean
        UNAVAILABLE (the backend's own text is in the daemon's log)."""
        self.note_read_failure(exc)
        reason = self.open_error if self._store_closed and self.open_error else public_reason(exc)
        return StoreError(f"store unavailable: {reason}; try again later", cause=cause_of(exc))

    def note_read_failure(self, exc: Exception) -> None:
        self.breaker.failure(public_reason(exc))
        self.states.set(STORE, ok=False, reason=self._store_reason())
        report(STORE, f"store unavailable for reads ({type(exc).__name__}); partial results")
        if self.pending:
            self._schedule_retry()
        else:
            self._schedule_read_probe()

    def _schedule_read_probe(self) -> None:
        if self._closed or (self._retry is not None and not self._retry.done()):
            return
        self._retry = asyncio.create_task(self._read_probe(), name="store-probe")

    async def _read_probe(self) -> None:
        while True:
            await asyncio.sleep(self.breaker.wait_s)
            if not self.breaker.allow():
                continue
            try:
                await self.store.list_partitions()
            except Exception as exc:
                self.breaker.failure(public_reason(exc))
                continue
            self.breaker.success()
            if self.pending:
                # Writes logged while this probe ran could not start the retry loop
                # (this task held its place): apply them now.
                await self._retry_loop()
            else:
                self.states.set(STORE, ok=True)
            return

    def report_if_degraded(self) -> None:
        self.states.report_if_impaired(STORE)
