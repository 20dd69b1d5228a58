"""record_access accumulation; reopening a persistent store; dimension mismatch."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memoryd.domain.errors import StoreError
from memoryd.domain.models import AccessUpdate, MemoryFilter, Partition
from memoryd.storage.base import Store

from .conftest import Backend, Reopen, Scratch
from .support import BASE, DIM, assert_same, make_memory

P = Partition("tenant", "agent")


async def test_record_access_accumulates(store: Store) -> None:
    a, b = make_memory(P, id="a"), make_memory(P, id="b", access_count=10)
    await store.upsert(P, [a, b])
    t1, t2 = BASE + timedelta(hours=1), BASE + timedelta(hours=2)
    await store.record_access(P, {"a": AccessUpdate(2, t1), "b": AccessUpdate(1, t2)})
    await store.record_access(P, {"a": AccessUpdate(3, t2), "missing": AccessUpdate(9, t2)})
    got = {m.id: m for m in await store.get(P, ["a", "b", "missing"], with_vectors=True)}
    assert set(got) == {"a", "b"}
    assert (got["a"].access_count, got["a"].accessed_at) == (5, t2)
    assert (got["b"].access_count, got["b"].accessed_at) == (11, t2)
    # Nothing else changed.
    for name, original in (("a", a), ("b", b)):
        got[name].access_count, got[name].accessed_at = original.access_count, None
        assert_same(got[name], original, vector=True)


async def test_accessed_at_never_moves_backwards(store: Store) -> None:
    later = BASE + timedelta(days=2)
    await store.upsert(P, [make_memory(P, id="a", accessed_at=later, access_count=1)])
    await store.record_access(P, {"a": AccessUpdate(1, BASE)})
    [got] = await store.get(P, ["a"])
    assert (got.access_count, got.accessed_at) == (2, later)


async def test_record_access_of_nothing(store: Store) -> None:
    await store.record_access(P, {})
    await store.record_access(P, {"missing": AccessUpdate(1, BASE)})
    assert await store.count(P, MemoryFilter(include_archived=True)) == 0


async def test_reopen_keeps_everything(store: Store, reopen: Reopen) -> None:
    memories = [make_memory(P, tags=("k",), metadata={"i": i}) for i in range(20)]
    other = Partition("other", "agent")
    await store.upsert(P, memories)
    await store.upsert(other, [make_memory(other, id=memories[0].id)])
    await store.delete(P, [memories[0].id])
    await store.record_access(P, {memories[1].id: AccessUpdate(4, BASE + timedelta(days=1))})

    again = await reopen()
    ids = [m.id for m in memories]
    got = {m.id: m for m in await again.get(P, ids, with_vectors=True)}
    assert set(got) == set(ids[1:])
    assert got[ids[1]].access_count == 4
    for m in memories[2:]:
        assert_same(got[m.id], m, vector=True)
    assert await again.count(P, MemoryFilter(tags=("k",))) == 19
    assert await again.count(other, MemoryFilter()) == 1
    hits = await again.search(P, np.asarray(memories[5].vector), MemoryFilter(), limit=1)
    assert hits[0].memory.id == ids[5]
    # Still writable.
    await again.upsert(P, [make_memory(P, id="after-reopen")])
    assert await again.count(P, MemoryFilter()) == 20


async def test_a_store_declared_not_persistent_forgets(
    store: Store, backend: Backend, scratch: Scratch
) -> None:
    """``capabilities.persistent`` is what the reopen tests (and the composition) rely
    on: a store that declares False loses its data with the instance."""
    if store.capabilities.persistent:
        pytest.skip(f"{backend.name} persists: test_reopen_keeps_everything covers it")
    await store.upsert(P, [make_memory(P, id="gone")])
    new = backend.make(scratch, DIM)
    await new.open()
    try:
        assert await new.get(P, ["gone"]) == []
    finally:
        await new.close()


async def test_dimension_mismatch_on_reopen(store: Store, reopen: Reopen) -> None:
    await store.upsert(P, [make_memory(P)])
    with pytest.raises(StoreError) as info:
        await reopen(DIM * 2)
    assert str(DIM) in info.value.message and str(DIM * 2) in info.value.message
    # The data is untouched and opens fine with the right dimension.
    again = await reopen(DIM)
    assert await again.count(P, MemoryFilter()) == 1
