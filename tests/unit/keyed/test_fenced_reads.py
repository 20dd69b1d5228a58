"""The mirrors' read fence is a store layer (storage/fenced.py), not a call each read
remembers to make: every service but keyed memory reads memories through it, so a
key written just before is read as written by any read of memories, including those
that never called a fence (GetStats counted a new key's mirror only after the pass).

The layer itself: a call on one partition waits for that partition's fence; blind
writes do not; a block that settled the partition under its write lock passes; a
fence that fails leaves no coroutine un-awaited behind it."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest

from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.models import MemoryFilter, Partition
from memoryd.domain.requests import ListQuery, RecallQuery
from memoryd.domain.snapshot import SnapshotRequest
from memoryd.service.keyed.pending import PendingMirrors
from memoryd.storage.fenced import FencedStore, settled_here
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_stores import HistoryStore, history_of
from memoryd.storage.memory import InMemoryStore
from tests.unit.keyed.test_mirror_behind import USER
from tests.unit.snapshot.test_as_of_behind import HeldEmbedder
from tests.unit.snapshot.world import DIM, World, scope_for, world

A, B = Partition("t1", "a1"), Partition("t1", "a2")
VALUE = "the user's locker code is 4417"


class Gate:
    """A fence that holds each partition's calls until the test opens it."""

    def __init__(self) -> None:
        self.open: dict[Partition, asyncio.Event] = {A: asyncio.Event(), B: asyncio.Event()}
        self.waiting: list[Partition] = []
        self.fail = False

    async def __call__(self, partition: Partition) -> None:
        self.waiting.append(partition)
        if self.fail:
            raise RuntimeError("the fence failed (test)")
        await self.open[partition].wait()


@pytest.fixture
async def gated() -> AsyncIterator[tuple[FencedStore, Gate]]:
    inner = InMemoryStore(DIM)
    await inner.open()
    gate = Gate()
    yield FencedStore(inner, gate), gate
    await inner.close()


async def test_a_read_waits_for_its_own_partitions_fence_only(
    gated: tuple[FencedStore, Gate],
) -> None:
    store, gate = gated
    read_a = asyncio.create_task(store.count(A, MemoryFilter()))
    read_b = asyncio.create_task(store.count(B, MemoryFilter()))
    await asyncio.sleep(0)
    assert gate.waiting == [A, B] and not read_a.done()
    gate.open[B].set()
    assert await read_b == 0 and not read_a.done()
    gate.open[A].set()
    assert await read_a == 0


async def test_blind_writes_and_access_statistics_do_not_wait(
    gated: tuple[FencedStore, Gate],
) -> None:
    store, gate = gated
    await store.upsert(A, [])
    await store.record_access(A, {})
    await store.list_partitions()
    assert gate.waiting == []


async def test_a_block_that_settled_the_partition_passes_its_fence(
    gated: tuple[FencedStore, Gate],
) -> None:
    store, gate = gated
    with settled_here(A):
        assert await store.count(A, MemoryFilter()) == 0
        assert gate.waiting == []
        read_b = asyncio.create_task(store.count(B, MemoryFilter()))
        await asyncio.sleep(0)
        assert gate.waiting == [B] and not read_b.done()  # only the partition it settled
    gate.open[B].set()
    await read_b
    read_a = asyncio.create_task(store.count(A, MemoryFilter()))
    await asyncio.sleep(0)
    assert not read_a.done()  # the block is over: A waits again
    gate.open[A].set()
    await read_a


async def test_a_failing_fence_fails_the_call_and_leaves_nothing_unawaited(
    gated: tuple[FencedStore, Gate],
) -> None:
    store, gate = gated
    gate.fail = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="fence failed"):
            await store.get(A, ["x"])
        gc.collect()
    assert [w for w in caught if "never awaited" in str(w.message)] == []


async def test_the_history_is_found_through_the_fence(gated: tuple[FencedStore, Gate]) -> None:
    """Erasure and maintenance find the as-of history through the store they are
    given (history_of): behind the fence it was not found, so an erasure left every
    version of what it erased in the history (tests/integration/test_erasure.py)."""
    store, _ = gated
    history = MemoryHistory(timedelta(hours=1))
    assert history_of(store) is None
    assert history_of(FencedStore(HistoryStore(store.inner, history), Gate())) is history


# ---------------------------------------------------------------- every service's reads


@dataclass(frozen=True)
class Read:
    """A read of the agent's memories and what it finds of ``VALUE``."""

    name: str
    finds: Callable[[World], Awaitable[bool]]


async def _recalled(w: World) -> bool:
    outcome = await w.memories.recall(scope_for(), RecallQuery(query="locker code", limit=5))
    return any(r.memory.content == VALUE for r in outcome.results)


async def _listed(w: World) -> bool:
    page = await w.memories.list_memories(scope_for(), ListQuery())
    return any(m.content == VALUE for m in page.memories)


async def _in_snapshot(w: World) -> bool:
    request = SnapshotRequest(trigger="What is the locker code?", token_budget=2000)
    return VALUE in (await w.snapshots.build(scope_for(), request)).text


async def _counted(w: World) -> bool:
    return (await w.lifecycle.stats(scope_for())).memories == 2


READS = [
    Read("Recall", _recalled),
    Read("ListMemories", _listed),
    Read("BuildSnapshot", _in_snapshot),
    Read("GetStats", _counted),
]


@pytest.mark.parametrize("read", READS, ids=[r.name for r in READS])
async def test_a_read_of_memories_finds_a_key_written_just_before(read: Read) -> None:
    """The key's mirror is held in the embedder when the read starts: the read waits
    for it, and finds it (GetStats counts it: one earlier key, and this one)."""
    embedder = HeldEmbedder()
    async with world(embedder=embedder, pending=PendingMirrors()) as w:
        scope = scope_for()
        await w.keyed.set(scope, KeyWrite("/user/earlier", Json.of("an earlier key"), source=USER))
        await w.memories.recall(scope, RecallQuery(query="earlier", limit=1))  # settled
        release = embedder.hold()
        await w.keyed.set(scope, KeyWrite("/user/locker", Json.of(VALUE), source=USER))
        await embedder.held.wait()  # the pass embeds the mirror now
        reading = asyncio.create_task(read.finds(w))
        for _ in range(100):  # turns of the loop, not time: the read cannot finish
            await asyncio.sleep(0)
        assert not reading.done()  # the read waits for the mirror ...
        release.set()
        assert await reading  # ... and finds the key as written
