"""The store layers that record the as-of history (storage/history.py): every write
of a memory (:class:`HistoryStore`) and of a kept record, a profile, a working memory
or a session's header (:class:`HistoryRecordStore`), recorded after the store took it, with
the state stored before its first write since the history started (read by id, with
the write). Each write's versions are recorded at its own log position and at an
instant in the log's order (storage/write_stamp.py), so that a read as of a Watch
cursor sees exactly the writes up to it; inside a transaction, once its entry is
logged (a failed transaction records nothing). A write returns once its versions are
written to the history's journal (with ``history.fsync``: fsynced).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence

from memoryd.domain.errors import Unavailable
from memoryd.domain.models import AccessUpdate, Memory, MemoryFilter, MemoryOrder, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import NO_HINTS, ListPage, PartitionUpsert, Store, UpsertHints
from memoryd.storage.conditional import ConditionalWrite
from memoryd.storage.delegating import DelegatingRecordStore, DelegatingStore
from memoryd.storage.history import MemoryHistory
from memoryd.storage.records import KeyPage, RecordStore, put_records_many
from memoryd.storage.write_stamp import WriteStamp, logged_later, stamp_of_write, when_logged

#: Memories (records) read per page when an as-of read lists what is stored.
_PAGE = 1000
_EVERYTHING = MemoryFilter(include_archived=True)
#: The records whose history is kept: the snapshot's profile, working memory and
#: session sections are rebuilt from them as of an instant (a session's window is
#: its header record: its summarised messages and attachments are not read by it).
KEPT_KINDS = frozenset({RecordKind.PROFILE, RecordKind.WORKING, RecordKind.SESSION})


def history_of(store: Store) -> MemoryHistory | None:
    """The history ``store`` records into, through the layers in front of the
    recording one (the read fence: storage/fenced.py); None: it records none."""
    while not isinstance(store, HistoryStore):
        if not isinstance(store, DelegatingStore):
            return None
        store = store.inner
    return store.history


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
    at a memory's first write since the start, its stored state before it). A write
    returns once its versions are fsynced in the history's journal, as it returns once
    its log entry is: what was answered is what a read as of then answers after a
    crash. Access statistics are best effort, as in the store: not waited for."""

    def __init__(self, inner: Store, history: MemoryHistory) -> None:
        super().__init__(inner)
        self.history = history

    async def _before(self, partition: Partition, ids: Iterable[str]) -> None:
        await self.history.load(partition)
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
        with stamp_of_write() as logged:
            await super().upsert(partition, memories, hints)
            await once_logged(
                self.history, logged, lambda s: self.history.record(partition, memories, stamp=s)
            )

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        for w in writes:
            await self._before(w.partition, (m.id for m in w.memories))

        def record(stamp: WriteStamp | None) -> None:
            for w in writes:
                self.history.record(w.partition, w.memories, stamp=stamp)

        with stamp_of_write() as logged:
            await super().upsert_many(writes)
            await once_logged(self.history, logged, record)

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        touched = [*(m.id for m in write.memories), *write.delete]
        await self._before(write.partition, touched)
        with stamp_of_write() as logged:
            conflicts = await super().upsert_if(write)
            if not conflicts:
                await once_logged(
                    self.history,
                    logged,
                    lambda s: self.history.record(
                        write.partition,
                        write.memories,
                        write.delete,
                        conditioned=frozenset(write.expected),
                        stamp=s,
                    ),
                )
        return conflicts

    async def delete(self, partition: Partition, ids: Sequence[str]) -> builtins.list[str]:
        await self._before(partition, ids)
        with stamp_of_write() as logged:
            deleted = await super().delete(partition, ids)
            # Inside a transaction a delete answers no ids: what it deletes is what it
            # was asked to (recorded only for memories the history holds alive).
            gone = builtins.list(ids) if logged_later() else deleted
            await once_logged(
                self.history,
                logged,
                lambda s: self.history.record(partition, deleted=gone, stamp=s),
            )
        return deleted

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        await self._before(partition, updates)
        await super().record_access(partition, updates)
        self.history.record_access(partition, updates)


async def stored_records(
    records: RecordStore, partition: Partition, kind: RecordKind
) -> builtins.list[Record]:
    """Every stored record of ``kind`` in ``partition``."""
    out: builtins.list[Record] = []
    page = KeyPage(limit=_PAGE)
    while True:
        batch = await records.list_records(partition, kind, page)
        out.extend(batch)
        if len(batch) < _PAGE:
            return out
        page = KeyPage(after=batch[-1].key, limit=_PAGE)


class HistoryRecordStore(DelegatingRecordStore):
    """The services' record store, recording every write of a kept kind's record
    (KEPT_KINDS) in ``history``, as :class:`HistoryStore` does memories."""

    def __init__(self, inner: RecordStore, history: MemoryHistory) -> None:
        super().__init__(inner)
        self.history = history

    async def _before(self, partition: Partition, kind: RecordKind, keys: Iterable[str]) -> None:
        await self.history.load(partition)
        self.history.start(partition)
        unwritten = self.history.unwritten_records(partition, kind, keys)
        if not unwritten:
            return
        try:
            stored = await self.inner.get_records(partition, kind, unwritten)
        except Unavailable:
            self.history.restart(partition)
            return
        self.history.record_records(partition, stored, before=True)

    async def _before_all(self, partition: Partition, records: Sequence[Record]) -> list[Record]:
        kept = [r for r in records if r.kind in KEPT_KINDS]
        for kind in {r.kind for r in kept}:
            await self._before(partition, kind, (r.key for r in kept if r.kind is kind))
        return kept

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        kept = await self._before_all(partition, records)
        with stamp_of_write() as logged:
            await super().put_records(partition, records)
            if kept:
                await once_logged(
                    self.history,
                    logged,
                    lambda s: self.history.record_records(partition, kept, stamp=s),
                )

    async def put_records_many(self, writes: Sequence[tuple[Partition, Sequence[Record]]]) -> None:
        kept = [(p, await self._before_all(p, records)) for p, records in writes]

        def record(stamp: WriteStamp | None) -> None:
            for partition, records in kept:
                if records:
                    self.history.record_records(partition, records, stamp=stamp)

        with stamp_of_write() as logged:
            await put_records_many(self.inner, writes)
            if any(records for _, records in kept):
                await once_logged(self.history, logged, record)

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        kept = await self._before_all(partition, [record])
        with stamp_of_write() as logged:
            written = await super().put_record_if(partition, record, expected)
            if written and kept:
                await once_logged(
                    self.history,
                    logged,
                    lambda s: self.history.record_records(partition, kept, stamp=s),
                )
        return written

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> builtins.list[str]:
        if kind not in KEPT_KINDS:
            return await super().delete_records(partition, kind, keys)
        await self._before(partition, kind, keys)
        with stamp_of_write() as logged:
            deleted = await super().delete_records(partition, kind, keys)
            gone = [(kind, k) for k in deleted]
            await once_logged(
                self.history,
                logged,
                lambda s: self.history.record_records(partition, deleted=gone, stamp=s),
            )
        return deleted


async def once_logged(
    history: MemoryHistory,
    logged: Callable[[], WriteStamp | None],
    record: Callable[[WriteStamp | None], None],
) -> None:
    """``record`` the write's versions at its stamp once it is logged (inside a
    transaction: when the transaction's entry is, and never if it fails), then wait
    for the history's files as the write waits for its log entry."""

    async def then(stamp: WriteStamp | None) -> None:
        record(stamp)
        await history.synced()

    await when_logged(then, logged)


def record_history_of(records: RecordStore) -> MemoryHistory | None:
    """The history ``records`` records into (None: it records none)."""
    return records.history if isinstance(records, HistoryRecordStore) else None
