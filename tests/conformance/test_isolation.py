"""Partition isolation for every method: another partition's record behaves exactly
like a missing one, whatever characters the tenant and agent ids contain."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memoryd.domain.models import AccessUpdate, MemoryFilter, Partition
from memoryd.storage.base import ListPage, Store

from .support import BASE, DIM, NASTY, assert_same, make_memory

VICTIM = Partition("victim-tenant", "victim-agent")

#: Each nasty string as the tenant and as the agent, plus pairs built so that
#: naive string concatenation of tenant + agent would collide.
PARTITIONS = [
    *(Partition(s, "agent") for s in NASTY),
    *(Partition("tenant", s) for s in NASTY),
    Partition("victim-tenant", "victim-agent' OR '1'='1"),
    Partition("victim-tenant' AND agent_id = 'victim-agent", "x"),
    Partition("victim-tenantvictim-agent", ""),
    Partition("victim-tenant'", "'victim-agent"),
]


@pytest.fixture
async def victim(store: Store) -> Store:
    """The store holding one VICTIM record with id "shared" and one with id "private"."""
    await store.upsert(
        VICTIM,
        [
            make_memory(VICTIM, id="shared", content="victim shared", tags=("t",)),
            make_memory(VICTIM, id="private", content="victim private", tags=("t",)),
        ],
    )
    return store


@pytest.mark.parametrize("p", PARTITIONS, ids=repr)
async def test_every_method_is_partition_scoped(victim: Store, p: Partition) -> None:
    store = victim
    assert p != VICTIM
    mine = make_memory(p, id="shared", content="mine", tags=("t",))
    await store.upsert(p, [mine])

    # Same id in two partitions: two independent records.
    [got] = await store.get(p, ["shared", "private"], with_vectors=True)
    assert_same(got, mine, vector=True)
    [theirs] = await store.get(VICTIM, ["shared"])
    assert theirs.content == "victim shared"

    everything = MemoryFilter(include_archived=True)
    assert await store.count(p, everything) == 1
    assert [m.id for m in await store.list(p, everything, ListPage(limit=100))] == ["shared"]
    hits = await store.search(p, np.asarray(mine.vector), everything, limit=100)
    assert [(h.memory.id, h.memory.content) for h in hits] == [("shared", "mine")]
    tagged = MemoryFilter(tags=("t",))
    assert [m.content for m in await store.list(p, tagged, ListPage(limit=100))] == ["mine"]

    # record_access on the other partition's id is ignored.
    when = BASE + timedelta(days=1)
    await store.record_access(p, {"private": AccessUpdate(5, when)})
    [private] = await store.get(VICTIM, ["private"])
    assert private.access_count == 0 and private.accessed_at is None

    # delete of the other partition's id is a no-op; of the shared id, only mine.
    assert await store.delete(p, ["private"]) == []
    assert await store.delete(p, ["shared"]) == ["shared"]
    assert await store.count(p, everything) == 0
    assert {m.id for m in await store.get(VICTIM, ["shared", "private"])} == {"shared", "private"}
    assert await store.count(VICTIM, everything) == 2


async def test_upsert_never_overwrites_another_partition(victim: Store) -> None:
    intruder = Partition("victim-tenant", "intruder")
    await victim.upsert(intruder, [make_memory(intruder, id="private", content="overwritten?")])
    [private] = await victim.get(VICTIM, ["private"])
    assert private.content == "victim private"
    [own] = await victim.get(intruder, ["private"])
    assert own.content == "overwritten?"


async def test_upsert_rejects_records_of_another_partition(victim: Store) -> None:
    stray = make_memory(VICTIM, id="private", content="smuggled")
    with pytest.raises(ValueError):
        await victim.upsert(Partition("x", "y"), [stray])
    [private] = await victim.get(VICTIM, ["private"])
    assert private.content == "victim private"


async def test_empty_partition_sees_nothing(victim: Store) -> None:
    p = Partition("nobody", "nothing")
    flt = MemoryFilter(include_archived=True)
    assert await victim.count(p, flt) == 0
    assert await victim.list(p, flt) == []
    assert await victim.search(p, np.ones(DIM, np.float32) / np.sqrt(DIM), flt, 10) == []
    assert await victim.get(p, ["shared", "private"]) == []
