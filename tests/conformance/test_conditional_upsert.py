"""upsert_if: memories are written only over the versions their writer read, all or
nothing; of racing writers exactly one wins; access statistics are merged, never
lowered (storage/conditional.py). Run on every backend and every composed chain."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest

from memoryd.domain.models import AccessUpdate, Memory, MemoryFilter, Partition
from memoryd.storage.base import Store
from memoryd.storage.conditional import ConditionalWrite

from .conftest import Backend, Scratch
from .support import BASE, DIM, assert_same, make_memory

P = Partition("tenant", "agent")
OTHER = Partition("tenant", "other")
EVERYTHING = MemoryFilter(include_archived=True)


def changed(m: Memory, **fields: object) -> Memory:
    """``m``'s next version with ``fields`` changed."""
    return dataclasses.replace(m, version=m.version + 1, **fields)  # type: ignore[arg-type]


async def stored(store: Store, memory_id: str, partition: Partition = P) -> Memory | None:
    found = await store.get(partition, [memory_id], with_vectors=True)
    return found[0] if found else None


async def test_written_only_over_the_versions_read(store: Store) -> None:
    """Insert only where absent, update and delete only at the version read; an
    expected id that is not written is a condition alone."""
    first = make_memory(P, id="a", content="v1")
    assert await store.upsert_if(ConditionalWrite(P, [first], {"a": None})) == []
    assert await store.upsert_if(
        ConditionalWrite(P, [make_memory(P, id="a", content="x")], {"a": None})
    ) == ["a"]
    v2 = changed(first, content="v2")
    assert await store.upsert_if(ConditionalWrite(P, [v2], {"a": 1})) == []
    # A write computed from version 1 is stale now: refused, nothing changes.
    assert await store.upsert_if(
        ConditionalWrite(P, [changed(first, content="stale")], {"a": 1})
    ) == ["a"]
    got = await stored(store, "a")
    assert got is not None
    assert_same(got, v2, vector=True)
    # Expecting a memory that is not stored fails too, and writes nothing.
    assert await store.upsert_if(ConditionalWrite(P, [make_memory(P, id="b")], {"b": 3})) == ["b"]
    assert await stored(store, "b") is None
    # A condition alone: "c" must still be as read, and is left as it is.
    c = make_memory(P, id="c")
    await store.upsert(P, [c])
    assert (
        await store.upsert_if(ConditionalWrite(P, [changed(v2, content="v3")], {"a": 2, "c": 1}))
        == []
    )
    assert await store.upsert_if(
        ConditionalWrite(P, [changed(v2, content="no")], {"a": 3, "c": 7})
    ) == ["c"]
    got = await stored(store, "c")
    assert got is not None
    assert_same(got, c, vector=True)
    # A delete at a version that moved on deletes nothing.
    assert await store.upsert_if(ConditionalWrite(P, [], {"a": 2}, delete=["a"])) == ["a"]
    assert await store.upsert_if(ConditionalWrite(P, [], {"a": 3}, delete=["a"])) == []
    assert await stored(store, "a") is None
    assert await store.count(P, EVERYTHING) == 1


async def test_all_or_nothing(store: Store) -> None:
    """One stale condition and nothing of the call lands: not the other updates, not
    the new memories, not the deletes."""
    a, b, c = (make_memory(P, id=i, content=f"{i}1") for i in "abc")
    await store.upsert(P, [a, b, c])
    await store.upsert(P, [changed(b, content="b moved")])
    new = make_memory(P, id="new")
    conflicts = await store.upsert_if(
        ConditionalWrite(
            P,
            [changed(a, content="a2"), changed(b, content="b2"), new],
            {"a": 1, "b": 1, "c": 1},
            delete=["c"],
        )
    )
    assert conflicts == ["b"]
    by_id = {m.id: m for m in await store.get(P, ["a", "b", "c", "new"], with_vectors=True)}
    assert set(by_id) == {"a", "b", "c"}
    assert (by_id["a"].content, by_id["b"].content) == ("a1", "b moved")
    # The same change over the versions as they are now lands whole.
    assert (
        await store.upsert_if(
            ConditionalWrite(
                P,
                [changed(a, content="a2"), changed(by_id["b"], content="b3"), new],
                {"a": 1, "b": 2, "c": 1},
                delete=["c"],
            )
        )
        == []
    )
    by_id = {m.id: m for m in await store.get(P, ["a", "b", "c", "new"])}
    assert set(by_id) == {"a", "b", "new"}
    assert (by_id["a"].content, by_id["b"].content) == ("a2", "b3")


async def test_access_statistics_are_kept(store: Store) -> None:
    """A flush of access statistics between a change's read and its write neither
    fails the write nor is undone by it; nor does it move the version."""
    a = make_memory(P, id="a", access_count=1, accessed_at=BASE)
    await store.upsert(P, [a])
    read = await stored(store, "a")
    assert read is not None
    later = BASE + timedelta(hours=1)
    await store.record_access(P, {"a": AccessUpdate(4, later)})
    assert (
        await store.upsert_if(ConditionalWrite(P, [changed(read, content="edited")], {"a": 1}))
        == []
    )
    got = await stored(store, "a")
    assert got is not None
    assert (got.content, got.version, got.access_count, got.accessed_at) == (
        "edited",
        2,
        5,
        later,
    )
    # Higher counters written (a merge summing them) are taken as written.
    summed = changed(got, access_count=50, accessed_at=later + timedelta(hours=1))
    assert await store.upsert_if(ConditionalWrite(P, [summed], {"a": 2})) == []
    got = await stored(store, "a")
    assert got is not None and (got.access_count, got.accessed_at) == (50, summed.accessed_at)


async def test_flushes_racing_changes_lose_nothing(store: Store) -> None:
    """Access-statistics flushes racing read-modify-writes of the same memory: every
    change and every count survives (the counters are merged or the write is tried
    again, never the count put back)."""
    await store.upsert(P, [make_memory(P, id="a")])

    async def add(tag: str) -> None:
        while True:
            read = await stored(store, "a")
            assert read is not None
            later = changed(read, tags=(*read.tags, tag))
            if not await store.upsert_if(ConditionalWrite(P, [later], {"a": read.version})):
                return

    async def flush(i: int) -> None:
        await store.record_access(P, {"a": AccessUpdate(1, BASE + timedelta(minutes=i))})

    tags = [f"t{i}" for i in range(5)]
    await asyncio.gather(*(add(t) for t in tags), *(flush(i) for i in range(8)))
    got = await stored(store, "a")
    assert got is not None
    assert sorted(got.tags) == tags and got.version == 1 + len(tags)
    assert (got.access_count, got.accessed_at) == (8, BASE + timedelta(minutes=7))


async def test_another_partitions_memory_is_never_expected(store: Store) -> None:
    theirs = make_memory(OTHER, id="a", content="theirs")
    await store.upsert(OTHER, [theirs])
    # Same id, other partition: absent here.
    mine = make_memory(P, id="a", content="mine")
    assert await store.upsert_if(ConditionalWrite(P, [mine], {"a": 1})) == ["a"]
    assert await store.upsert_if(ConditionalWrite(P, [mine], {"a": None})) == []
    assert await store.upsert_if(ConditionalWrite(P, [], {"a": 1}, delete=["a"])) == []
    got = await stored(store, "a", OTHER)
    assert got is not None
    assert_same(got, theirs, vector=True)
    # Caller bugs, refused before anything is written: a delete without a condition
    # or of an id also written (by the write itself), a memory of another partition.
    with pytest.raises(ValueError, match="no expected version"):
        ConditionalWrite(P, [], {}, delete=["b"])
    with pytest.raises(ValueError, match="both written and deleted"):
        ConditionalWrite(P, [make_memory(P, id="b")], {"b": None}, delete=["b"])
    with pytest.raises(ValueError):
        await store.upsert_if(ConditionalWrite(P, [make_memory(OTHER, id="b")], {"b": None}))
    assert await store.count(P, EVERYTHING) == 0


async def test_racing_writers(store: Store) -> None:
    """Of writers expecting one version exactly one wins; writers adding their own
    tag in read / upsert_if loops lose no tag (a lost update would drop one)."""
    a = make_memory(P, id="a")
    await store.upsert(P, [a])
    attempts = [changed(a, content=f"writer {i}") for i in range(6)]
    results = await asyncio.gather(
        *(store.upsert_if(ConditionalWrite(P, [m], {"a": 1})) for m in attempts)
    )
    winners = [m for m, r in zip(attempts, results, strict=True) if r == []]
    assert len(winners) == 1
    assert all(r == ["a"] for r in results if r)
    got = await stored(store, "a")
    assert got is not None and got.content == winners[0].content

    async def add(tag: str) -> None:
        while True:
            read = await stored(store, "a")
            assert read is not None
            later = changed(read, tags=(*read.tags, tag))
            if not await store.upsert_if(ConditionalWrite(P, [later], {"a": read.version})):
                return

    tags = [f"t{i}" for i in range(6)]
    await asyncio.gather(*(add(t) for t in tags))
    got = await stored(store, "a")
    assert got is not None
    assert sorted(got.tags) == tags and got.version == 2 + len(tags)


async def test_two_processes_race_on_a_server(
    backend: Backend, scratch: Scratch, store: Store
) -> None:
    """Two independent clients (two replicas) on one Qdrant server: the server decides,
    exactly one of two writers expecting the same version wins, each round."""
    if not backend.server or backend.records is not None:
        pytest.skip("one process writes this store")
    other = backend.make(scratch, DIM)
    await other.open()
    try:
        await store.upsert(P, [make_memory(P, id="a")])
        for round_ in range(10):
            read = await stored(store, "a")
            assert read is not None
            mine, theirs = changed(read, content="mine"), changed(read, content="theirs")
            results = await asyncio.gather(
                store.upsert_if(ConditionalWrite(P, [mine], {"a": read.version})),
                other.upsert_if(ConditionalWrite(P, [theirs], {"a": read.version})),
            )
            assert sorted(map(len, results)) == [0, 1], round_
            got = await stored(other, "a")
            assert got is not None
            assert got.content == ("mine" if results[0] == [] else "theirs")
    finally:
        await other.close()


async def test_a_partial_landing_is_taken_back(
    backend: Backend, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qdrant judges each point of a conditional request on its own: when another
    writer changes one memory between the check and the write, the memories that
    did land are put back as they were, and the call reports the one that moved."""
    if not backend.name.startswith("qdrant") or backend.records is not None:
        pytest.skip("the store decides all or nothing in one step")
    a, b = make_memory(P, id="a", content="a1"), make_memory(P, id="b", content="b1")
    await store.upsert(P, [a, b])
    engine = store._engine  # type: ignore[attr-defined]
    write = engine.upsert_if
    interloper = changed(b, content="b by another writer")
    raced_once: list[Memory] = []

    async def raced(name: str, points: object, condition: object) -> None:
        if condition is not None and not raced_once:
            raced_once.append(interloper)
            await store.upsert(P, [interloper])
        await write(name, points, condition)

    monkeypatch.setattr(engine, "upsert_if", raced)
    new = make_memory(P, id="new")
    conflicts = await store.upsert_if(
        ConditionalWrite(
            P, [changed(a, content="a2"), changed(b, content="b2"), new], {"a": 1, "b": 1}
        )
    )
    assert conflicts == ["b"]
    got = {m.id: m for m in await store.get(P, ["a", "b", "new"], with_vectors=True)}
    assert set(got) == {"a", "b"}
    assert_same(got["a"], a, vector=True)
    assert got["b"].content == interloper.content
