"""Keyed memory: SetMemory, GetKey, ListKeys and KeyHistory.

One slot per key per partition, last write wins; every write gets the partition's
next version and a history event; ``None`` content is a tombstone. A valid value is
also a long-term memory (its "mirror", id = uuid5 of partition and key) so recall
and snapshots find it; a tombstone deletes the mirror.

Every write names its ``source`` (tombstones too); its content is kept as the
writer's JSON text (service/keyed/validation.py). A key whose content's ``expired_at`` has passed reads as missing (GetKey,
ListKeys), as in DefaultRead and recall, until compaction removes its slot; its
slot's version still counts for ``if_version``, like a tombstone's, and KeyHistory
keeps its writes.

Ordering and atomicity. Writes to one partition are serialised by an asyncio lock
per partition, which makes the version counter and ``if_version`` checks exact in
this process; slot, event, counter and the long-term memory are one write-ahead log
entry (durability/). The slots written or read are kept per partition (exact: this
service is the store's only writer of keys, and lifecycle rewrites go through
``exclusive``), so a write reads its key's slot from the store once, not every
time. Where replicas share the store (Capabilities.shared) a partition's key writes
hold its keys lease instead, which carries the versions (service/keyed/shared.py),
and nothing about a partition is cached here beyond the lease's tenure.

With ``pending`` (keys.mirror_embedding "behind") and a store of its own, the
transaction holds the key's records alone and a background pass embeds and writes
the mirror (service/keyed/pending.py); else the mirror is embedded first and written
in the transaction.

Observers (:class:`KeyObserver`: the default-read index, the file mirror) are told
of each committed write, and of lifecycle rewrites (``exclusive``), under the same
lock, so they see a partition's writes in version order. They derive state from
the store and never fail a write.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from memoryd.config import KeysSettings, LimitsSettings
from memoryd.domain.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    StoreError,
)
from memoryd.domain.keyed import (
    KeyEntry,
    KeyHistoryPage,
    KeyHistoryQuery,
    KeyListing,
    KeyListQuery,
    KeyWrite,
)
from memoryd.domain.limits import next_version
from memoryd.domain.models import (
    Memory,
    Partition,
    SecurityLevel,
    Vector,
    utcnow,
)
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.durability.transaction import transaction
from memoryd.embedding.base import Embedder
from memoryd.resilience.embedder import embed_in_space
from memoryd.service.common import scanning
from memoryd.service.common import validation as check
from memoryd.service.common.leases import PartitionLeases
from memoryd.service.common.locks import KeyedLocks
from memoryd.service.common.pagination import (
    PageTokenCodec,
)
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.validation import Violations
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.docs import (
    COUNTER_KEY,
    check_if_version,
    entry_from,
    entry_records,
    history_prefix,
    is_live,
    mirror_fields,
    mirror_id,
    mirror_memory,
    source_summary,
    visible_slot,
)
from memoryd.service.keyed.history_reads import HistoryPage, history_page
from memoryd.service.keyed.keys import (
    InvalidKey,
    KeyLimits,
    normalise_key,
    normalise_prefix,
)
from memoryd.service.keyed.listing import ListingPage, key_listing, shown
from memoryd.service.keyed.observers import KeyObserver
from memoryd.service.keyed.pending import PendingMirror, PendingMirrors, queue_missing
from memoryd.service.keyed.shared import KEYS_LEASE, SharedKeyWrites, SlotWrite
from memoryd.service.keyed.validation import KeyContent, validated_content
from memoryd.storage.base import Store
from memoryd.storage.fenced import settled_here
from memoryd.storage.history import MemoryHistory
from memoryd.storage.records import RecordStore

log = structlog.get_logger(__name__)

DEFAULT_SECURITY_LEVEL = SecurityLevel.INTERNAL
DEFAULT_PAGE_SIZE = 100
#: Partitions whose counts are cached; past this the cache starts over.
_PARTITIONS_MAX = 10_000
#: Key slots kept per partition; past this the partition's start over.
_SLOTS_MAX = 10_000


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A key write checked and embedded, ready for its partition's lock."""

    key: str
    write: KeyWrite
    level: SecurityLevel
    content: KeyContent
    #: The mirror's vector (None: the write has no mirror) and its embedding space.
    vector: Vector | None
    space: str


@dataclass(slots=True)
class _PartitionState:
    #: The last version written (the COUNTER record); None: not read yet.
    version: int | None = None
    #: Key slots held, tombstones included; None: not counted yet.
    keys: int | None = None
    #: Key -> its stored slot (None: no slot), as read or last written here.
    slots: dict[str, Record | None] = field(default_factory=dict)
    #: ``slots`` holds every slot of the partition (it had none when counted).
    complete: bool = False


class KeyedMemoryService:
    def __init__(
        self,
        *,
        records: RecordStore,
        store: Store,
        embedder: Embedder,
        writer: WriteBatcher,
        page_tokens: PageTokenCodec,
        limits: LimitsSettings,
        keys: KeysSettings,
        quotas: Quotas | None = None,
        observers: Sequence[KeyObserver] = (),
        clock: Callable[[], datetime] = utcnow,
        leases: PartitionLeases | None = None,
        pending: PendingMirrors | None = None,
        history: MemoryHistory | None = None,
    ) -> None:
        self._records = records
        #: "Now" for expiry on reads.
        self._clock = clock
        self._observers = tuple(observers)
        self._store = store
        self._embedder = embedder
        self._writer = writer
        self._page_tokens = page_tokens
        self._limits = limits
        self._keys = keys
        self._key_limits = KeyLimits(keys.max_key_bytes)
        #: Sorts after every key below a directory (a page after it skips its subtree).
        self._subtree_end = "\U0010ffff" * (keys.max_key_bytes // 4 + 1)
        # Every key in a subtree "/a/b/" sorts before "/a/b/" + this: a key within the
        # byte limit cannot start its tail with this many U+10FFFF (4 bytes each).
        self._quotas = quotas
        self._locks = KeyedLocks()
        self._partitions: dict[Partition, _PartitionState] = {}
        #: Where replicas share the store, key writes and lifecycle rewrites hold the
        #: partition's keys lease (it carries the versions); else it is a no-op.
        self._leases = leases or PartitionLeases(records, name=KEYS_LEASE, versions=COUNTER_KEY)
        self._shared = (
            SharedKeyWrites(records, store, self._leases, quotas)
            if records.capabilities.shared
            else None
        )
        #: Writes in progress (strong references: see ``set``).
        self._applying: set[asyncio.Task[KeyEntry]] = set()
        #: Mirrors embedded behind the answer (never where replicas share the store:
        #: there every replica's reads must find a write's mirror once it is answered).
        self._pending = None if self._shared is not None else pending
        if self._pending is not None:
            check = functools.partial(queue_missing, records, store, limits, self._pending, history)
            self._pending.bind(self._write_mirror, check)

    def reader(self, records: RecordStore, clock: Callable[[], datetime]) -> KeyedMemoryService:
        """This service's reads (GetKey, ListKeys) over ``records`` with ``clock`` as
        its "now" (as-of reads: service/snapshot/as_of.py)."""
        return KeyedMemoryService(
            records=records,
            store=self._store,
            embedder=self._embedder,
            writer=self._writer,
            page_tokens=self._page_tokens,
            limits=self._limits,
            keys=self._keys,
            clock=clock,
        )

    # ------------------------------------------------------------------ writes

    async def set(self, scope: CallScope, write: KeyWrite) -> KeyEntry:
        key = self._key(write.key, "key")
        level = write.security_level or DEFAULT_SECURITY_LEVEL
        content = validated_content(write, key, self._keys, self._limits)
        if level > scope.clearance:
            raise PermissionDenied(f"security_level: {level.name} is above the caller's clearance")
        vector, space = None, self._embedder.model_id
        if content.mirror is not None and self._pending is None:
            # Embedded before taking the lock: it is the slow part. Behind: by the pass.
            embedded, space = await embed_in_space(self._embedder, [content.mirror.text])
            vector = embedded[0]
        # Shielded: a caller that goes away (deadline, disconnect) must not cut the
        # write between the key records and the mirror.
        prepared = _Prepared(key, write, level, content, vector, space)
        task = asyncio.create_task(self._apply(scope, prepared))
        self._applying.add(task)
        task.add_done_callback(self._applying.discard)
        return await asyncio.shield(task)

    async def _apply(self, scope: CallScope, prepared: _Prepared) -> KeyEntry:
        partition = scope.partition
        async with self._locks.hold(partition):
            if self._shared is None:
                entry = await self._apply_here(scope, prepared)
            else:
                entry = await self._shared.set(
                    scope,
                    prepared.key,
                    prepared.write.if_version,
                    lambda version: self._planned(scope, prepared, version),
                )
            log.info(
                "set_memory",
                tenant=partition.tenant_id,
                agent=partition.agent_id,
                key=prepared.key,
                ts=entry.updated_at.isoformat(),
                version=entry.version,
                valid=entry.valid,
                source=source_summary(prepared.write.source),
            )
            await self._notify(partition, entry)
        return entry

    async def _apply_here(self, scope: CallScope, prepared: _Prepared) -> KeyEntry:
        """The write where this process is the store's only writer (its lock held)."""
        key, write = prepared.key, prepared.write
        partition = scope.partition
        state = self._state(partition)
        held: bool | None  # whether the key had a slot (None: unknown, see _blind)
        try:
            slot = await self._slot(partition, state, key)
            held = slot is not None
        except StoreError:
            if not self._blind(write, state):
                raise
            slot, held = None, None
        current = visible_slot(scope.clearance, slot)
        check_if_version(write.if_version, current)
        if current is None:
            await self._admit_new_key(partition, state)
        if state.version is None:
            found = await self._records.get_records(partition, RecordKind.COUNTER, [COUNTER_KEY])
            state.version = found[0].version if found else 0
        planned = self._planned(scope, prepared, next_version(state.version))
        entry = planned.entry
        try:
            # One write-ahead log entry (durability/). Embedded before the answer, the
            # mirror goes second, under the lock, so mirrors of one key are written in
            # version order; behind it, the pass writes it (a crash before: the start's
            # check finds the slot newer than its mirror).
            async with transaction():
                await self._records.put_records(partition, planned.records)
                if prepared.content.mirror is None:
                    await self._store.delete(
                        partition, [entry.memory_id or self._mirror_id(scope, key)]
                    )
                elif planned.mirror is not None:  # else the pass writes it
                    await self._store.upsert(partition, [planned.mirror])
        except BaseException:
            # The commit may have happened anyway: re-read the counts next time.
            self._partitions.pop(partition, None)
            raise
        state.version = entry.version
        if not held and state.keys is not None:
            # Unknown (None, a blind write) counts as new: an upper bound, recounted
            # from the store before it refuses a write (_admit_new_key).
            state.keys += 1
        written = [r for r in planned.records if r.kind is RecordKind.KEY]
        if len(state.slots) >= _SLOTS_MAX and key not in state.slots:
            state.slots.clear()
            state.complete = False
        state.slots[key] = written[0] if written else None
        if self._pending is not None:
            if prepared.content.mirror is None:
                self._pending.drop(partition, key)
            else:
                self._pending.add(partition, PendingMirror(entry, prepared.content.mirror))
        return entry

    async def _write_mirror(self, partition: Partition, item: PendingMirror) -> None:
        """The pass: embed a key version's mirror, then write it in a log entry of its
        own unless the key has moved on (a later version queued, or its slot no longer
        this version: rewritten, tombstoned, erased)."""
        entry = item.entry
        embedded, space = await embed_in_space(self._embedder, [item.fields.text])
        async with self._locks.hold(partition):
            assert self._pending is not None
            if self._pending.newer(partition, entry.key, entry.version):
                return
            slot = await self._slot(partition, self._state(partition), entry.key)
            if slot is None or slot.version != entry.version or not is_live(slot):
                return
            memory = mirror_memory(
                partition, entry, item.fields, (embedded[0], space), self._embedder.dimension
            )
            async with transaction():
                await self._store.upsert(partition, [memory])

    async def embedded_mirror(self, partition: Partition, entry: KeyEntry) -> Memory:
        """A valid key version's mirror embedded now (an as-of read of a version whose
        mirror the pass wrote later, or never: service/snapshot/as_of.py)."""
        fields = mirror_fields(entry.content, self._limits, Violations())
        embedded, space = await embed_in_space(self._embedder, [fields.text])
        vector = (embedded[0], space)
        return mirror_memory(partition, entry, fields, vector, self._embedder.dimension)

    @staticmethod
    def _blind(write: KeyWrite, state: _PartitionState) -> bool:
        """Whether a write may go ahead without its slot while the store cannot read it
        (the write-ahead log takes it, as it takes Remember's): when no ``if_version``
        needs the slot and the partition's version counter is known here (read at
        start by ``warm``, or since). It counts as a new key for the key quota, which
        then needs the partition's key count known here too (``warm`` reads it)."""
        return write.if_version is None and state.version is not None

    async def warm(self) -> None:
        """Read every partition's version counter and key count once (started in the
        background), so that a key write during a later store outage can go to the log."""
        if self._shared is not None:
            return  # shared: the keys lease carries the versions
        try:
            partitions = await self._records.list_partitions()
            for partition in partitions[:_PARTITIONS_MAX]:  # what the cache holds
                if self._state(partition).version is not None:
                    continue
                # Read without the partition's lock (a store that hangs must not hold
                # up writes); kept only if no write came meanwhile (it sets both: a
                # write committed between the two reads makes the count one too high,
                # an upper bound the quota recounts before it refuses).
                found = await self._records.get_records(
                    partition, RecordKind.COUNTER, [COUNTER_KEY]
                )
                keys = await self._records.count_records(partition, RecordKind.KEY)
                state = self._state(partition)
                if state.version is None:
                    state.version, state.keys = (found[0].version if found else 0), keys
                await scanning.pause()
        except Exception:
            # A head start only: a write reads its partition's counter itself.
            log.exception("keyed memory: reading the version counters at start failed")
            return
        if self._pending is not None:  # mirrors a crash left unwritten, before a read asks
            for partition in partitions:
                await self._pending.checked(partition)

    async def _slot(self, partition: Partition, state: _PartitionState, key: str) -> Record | None:
        """The key's stored slot: kept since this process read or wrote it, else read.
        A partition counted with no slots at all (a new agent's) reads none: every
        slot it gets from then on is written here."""
        if key in state.slots:
            return state.slots[key]
        if state.complete:
            return None
        if state.keys is None:
            state.keys = await self._records.count_records(partition, RecordKind.KEY)
            if state.keys == 0:
                state.complete = True
                return None
        found = await self._records.get_records(partition, RecordKind.KEY, [key])
        if len(state.slots) >= _SLOTS_MAX:
            state.slots.clear()
            state.complete = False
        slot = state.slots[key] = found[0] if found else None
        return slot

    def _planned(self, scope: CallScope, prepared: _Prepared, version: int) -> SlotWrite:
        """The records and the mirror of this write at ``version``."""
        key, write, content = prepared.key, prepared.write, prepared.content
        valid = content.value is not None
        entry = KeyEntry(
            key=key,
            content=content.value,
            content_json=content.text,
            valid=valid,
            version=version,
            updated_at=self._clock(),
            source=write.source,
            security_level=prepared.level,
            memory_id=self._mirror_id(scope, key) if valid else "",
            namespace=write.namespace,
        )
        mirror = content.mirror
        memory = None
        if mirror is not None and prepared.vector is not None:
            embedded = (prepared.vector, prepared.space)
            memory = mirror_memory(
                scope.partition, entry, mirror, embedded, self._embedder.dimension
            )
        expires_at = None if mirror is None else mirror.expires_at
        return SlotWrite(entry, entry_records(entry, expires_at), memory)

    @staticmethod
    def _mirror_id(scope: CallScope, key: str) -> str:
        return mirror_id(scope.partition.tenant_id, scope.partition.agent_id, key)

    async def _notify(self, partition: Partition, entry: KeyEntry | None) -> None:
        """Tell the observers of a write (``entry``) or of a rewrite (None)."""
        for observer in self._observers:
            try:
                if entry is None:
                    await observer.keys_rewritten(partition)
                else:
                    await observer.key_written(partition, entry)
            except Exception:
                log.exception(
                    "key observer failed",
                    observer=type(observer).__name__,
                    tenant=partition.tenant_id,
                    agent=partition.agent_id,
                )

    def _state(self, partition: Partition) -> _PartitionState:
        """Cached counts of a partition (exact: only this service writes keys, under
        the partition's lock). Forgotten past _PARTITIONS_MAX; re-read on demand."""
        state = self._partitions.get(partition)
        if state is None:
            if len(self._partitions) >= _PARTITIONS_MAX:
                self._partitions.clear()
            state = self._partitions[partition] = _PartitionState()
        return state

    async def _admit_new_key(self, partition: Partition, state: _PartitionState) -> None:
        """quotas.max_keys_per_partition (tombstoned slots count: they are stored).
        Without a limit nothing is counted (a store that cannot count must not stop a
        write it could log)."""
        if self._quotas is None or not self._quotas.keys_limit(partition.tenant_id):
            return
        if state.keys is None:
            state.keys = await self._records.count_records(partition, RecordKind.KEY)
        try:
            self._quotas.check_keys(partition.tenant_id, state.keys, 1)
        except ResourceExhausted:
            # Maintenance may have purged tombstones since: count once more.
            state.keys = await self._records.count_records(partition, RecordKind.KEY)
            self._quotas.check_keys(partition.tenant_id, state.keys, 1)

    # ------------------------------------------------------------------ reads

    async def get(self, scope: CallScope, raw_key: str) -> KeyEntry:
        """The key's current value; NotFound for a tombstone, a key whose content's
        ``expired_at`` has passed (until compaction removes it, it only reads as
        missing) and a key above the caller's clearance."""
        key = self._key(raw_key, "key")
        found = await self._records.get_records(scope.partition, RecordKind.KEY, [key])
        if not found or found[0].expired(self._clock()) or not shown(scope, found[0]):
            raise NotFound(f"key {key!r} not found")
        return entry_from(found[0])  # DATA_LOSS if its value no longer decodes

    async def list(self, scope: CallScope, query: KeyListQuery) -> KeyListing:
        try:
            prefix = normalise_prefix(query.prefix, self._key_limits)
        except InvalidKey as exc:
            raise InvalidArgument.field("prefix", str(exc)) from None
        size = self._page_size(query.page_size)
        page = ListingPage(prefix, query.recursive, size, query.page_token, self._subtree_end)
        return await key_listing(self._records, self._page_tokens, scope, page, self._clock())

    async def history(self, scope: CallScope, query: KeyHistoryQuery) -> KeyHistoryPage:
        """A key's writes, oldest first, tombstones included. A directory ("/user/",
        "/" for everything) gives the writes of every key below it, by key, then
        oldest first: what an export needs, deleted keys included."""
        if query.key.endswith("/"):
            try:
                prefix = normalise_prefix(query.key, self._key_limits)
            except InvalidKey as exc:
                raise InvalidArgument.field("key", str(exc)) from None
            single = False
        else:
            prefix = history_prefix(self._key(query.key, "key"))
            single = True
        page = HistoryPage(prefix, self._page_size(query.page_size), query.page_token)
        found = await history_page(self._records, self._page_tokens, scope, page)
        if single and not found.entries and not query.page_token:
            raise NotFound(f"key {prefix[:-1]!r} has no history")
        return found

    # ------------------------------------------------------------------ lifecycle

    @asynccontextmanager
    async def exclusive(self, partition: Partition) -> AsyncIterator[None]:
        """Hold the partition's key-write lock while lifecycle operations rewrite its
        key records (import, reset, tombstone purge); cached counts are re-read after.
        Mirrors still to be embedded are written first: what it reads is complete, and
        its reads pass the store's read fence (storage/fenced.py), which would
        otherwise wait for a mirror pass that needs this lock."""
        async with await self._held_settled(partition):
            try:
                with settled_here(partition):
                    yield
            finally:
                self._partitions.pop(partition, None)
                if self._pending is not None:
                    self._pending.recheck(partition)
                await self._notify(partition, None)

    async def _held_settled(self, partition: Partition) -> AsyncExitStack:
        """The partition's key-write lock, taken once every key write made before it
        has its mirror (a write that came between the wait and the lock: wait again)."""
        while True:
            if self._pending is not None:
                await self._pending.settled(partition)
            async with AsyncExitStack() as attempt:
                await attempt.enter_async_context(self._locks.hold(partition))
                if self._pending is None or self._pending.caught_up(partition):
                    return attempt.pop_all()

    # ------------------------------------------------------------------ helpers

    def _key(self, raw: str, field: str) -> str:
        try:
            return normalise_key(raw, self._key_limits)
        except InvalidKey as exc:
            raise InvalidArgument.field(field, str(exc)) from None

    def _page_size(self, requested: int | None) -> int:
        v = Violations()
        check.check_limit(v, requested, self._limits.max_page_size, "page_size")
        v.raise_if_any()
        return requested or DEFAULT_PAGE_SIZE
