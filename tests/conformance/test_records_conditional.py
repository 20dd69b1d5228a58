"""put_record_if: a record is written only over the state the writer read; of racing
writers exactly one wins, and each learns whether it did."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest

from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.records import RecordStore, new_write_id

from .conftest import Opened, RecordBackend, Scratch
from .records_support import BASE as T0

P = Partition("tenant", "agent")
OTHER = Partition("tenant", "other")


def working(version: int, content: str) -> Record:
    return Record(
        RecordKind.WORKING,
        "thread\x00res",
        {"content": {"v": content}},
        version,
        T0 + timedelta(seconds=version),
        write_id=new_write_id(),
    )


async def current(store: RecordStore, partition: Partition = P) -> Record | None:
    found = await store.get_records(partition, RecordKind.WORKING, ["thread\x00res"])
    return found[0] if found else None


async def test_insert_only_when_absent(record_store: RecordStore) -> None:
    first, second = working(1, "first"), working(1, "second")
    assert await record_store.put_record_if(P, first, None)
    assert not await record_store.put_record_if(P, second, None)
    stored = await current(record_store)
    assert stored is not None and stored.doc == first.doc


async def test_update_only_over_the_state_read(record_store: RecordStore) -> None:
    assert await record_store.put_record_if(P, working(1, "a"), None)
    read = await current(record_store)
    assert read is not None
    assert await record_store.put_record_if(P, working(2, "b"), read)
    # ``read`` is stale now: a write based on it is refused and changes nothing.
    assert not await record_store.put_record_if(P, working(2, "c"), read)
    stored = await current(record_store)
    assert stored is not None and (stored.version, stored.doc) == (2, {"content": {"v": "b"}})
    # Expecting a record where there is one, or none where there is one, fails too.
    assert not await record_store.put_record_if(P, working(3, "d"), None)


async def test_a_record_written_unconditionally_can_be_expected(
    record_store: RecordStore,
) -> None:
    plain = dataclasses.replace(working(1, "plain"), write_id="")
    await record_store.put_records(P, [plain])
    read = await current(record_store)
    assert read is not None
    assert await record_store.put_record_if(P, working(2, "next"), read)
    assert not await record_store.put_record_if(P, working(2, "again"), read)


async def test_another_partitions_record_is_never_expected(record_store: RecordStore) -> None:
    assert await record_store.put_record_if(OTHER, working(1, "theirs"), None)
    theirs = await current(record_store, OTHER)
    assert theirs is not None
    # Same kind and key, other partition: absent here, so "expected theirs" fails...
    assert not await record_store.put_record_if(P, working(2, "mine"), theirs)
    assert await current(record_store) is None
    # ... and "expected nothing" succeeds without touching theirs.
    assert await record_store.put_record_if(P, working(1, "mine"), None)
    after = await current(record_store, OTHER)
    assert after is not None and after.doc == theirs.doc


async def test_of_racing_writers_exactly_one_wins(record_store: RecordStore) -> None:
    assert await record_store.put_record_if(P, working(1, "start"), None)
    read = await current(record_store)
    attempts = [working(2, f"writer {i}") for i in range(12)]
    won = await asyncio.gather(*(record_store.put_record_if(P, r, read) for r in attempts))
    assert won.count(True) == 1
    winner = attempts[won.index(True)]
    stored = await current(record_store)
    assert stored is not None and stored.doc == winner.doc


async def test_racing_read_modify_write_loops_lose_no_update(record_store: RecordStore) -> None:
    """Each of N writers adds its own field with a read / put_record_if loop: every
    field ends up in the record (a lost update would drop one)."""

    async def add(field: str) -> None:
        while True:
            read = await current(record_store)
            content = dict(read.doc["content"]) if read is not None else {}
            content[field] = True
            version = 1 if read is None else read.version + 1
            record = dataclasses.replace(working(version, ""), doc={"content": content})
            if await record_store.put_record_if(P, record, read):
                return

    fields = [f"f{i}" for i in range(10)]
    await asyncio.gather(*(add(f) for f in fields))
    stored = await current(record_store)
    assert stored is not None
    assert sorted(stored.doc["content"]) == sorted(fields)
    assert stored.version == len(fields)


def _log_decides(backend: RecordBackend, records: RecordStore) -> bool:
    """Composed in front of a store only this process writes: the write-ahead log's
    face decides put_record_if under its lock (the store's own condition is unused)."""
    return backend.store is not None and not records.capabilities.shared


async def test_two_processes_race_on_a_server(
    record_backend: RecordBackend, scratch: Scratch, record_store: RecordStore
) -> None:
    """Two independent clients (two memoryd replicas) on one Qdrant server: the server
    decides, exactly one of two writers expecting the same state wins."""
    if not record_backend.server:
        pytest.skip("one process: the lock of put_record_if is the condition")
    if _log_decides(record_backend, record_store):
        pytest.skip("a single writer's log decides: a second writer is not a deployment")
    other = record_backend.make(scratch)
    await other.open()
    try:
        assert other.capabilities.shared or not record_store.capabilities.shared
        for round_ in range(20):
            read = await current(record_store)
            mine, theirs = working(round_ + 1, "mine"), working(round_ + 1, "theirs")
            won = await asyncio.gather(
                record_store.put_record_if(P, mine, read), other.put_record_if(P, theirs, read)
            )
            assert sorted(won) == [False, True], round_
            stored = await current(other)
            assert stored is not None
            assert stored.doc == (mine if won[0] else theirs).doc
    finally:
        await other.close()


async def test_a_write_followed_at_once_by_another_is_still_confirmed(
    record_backend: RecordBackend,
    record_store: RecordStore,
    opened: Opened,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Qdrant does not say whether a conditional upsert wrote: the record is read back.
    Another write landing in between must not make the first look lost (its writer
    would apply it twice)."""
    if not record_backend.name.startswith("qdrant") or _log_decides(record_backend, record_store):
        pytest.skip("confirmed by the lock, not by reading back")
    assert await record_store.put_record_if(P, working(1, "start"), None)
    # The Qdrant record store's engine, under the composition's layers when composed.
    engine = opened.backend_records._engine  # type: ignore[union-attr]
    write = engine.upsert_if
    followers: list[Record] = []

    async def followed(name: str, points: object, condition: object) -> None:
        await write(name, points, condition)
        if followers:
            return
        for i in range(3):  # three more writes, each over the one before
            read = await current(record_store)
            follower = working(3 + i, f"follower {i}")
            followers.append(follower)
            assert await record_store.put_record_if(P, follower, read)

    monkeypatch.setattr(engine, "upsert_if", followed)
    read = await current(record_store)
    assert await record_store.put_record_if(P, working(2, "first"), read)
    stored = await current(record_store)
    assert stored is not None and stored.doc == followers[-1].doc
