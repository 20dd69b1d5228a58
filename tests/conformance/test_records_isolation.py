"""RecordStore partition isolation: another partition's record behaves exactly like
a missing one, whatever characters the tenant and agent ids (and keys) contain."""

from __future__ import annotations

import pytest

from memoryd.domain.models import Partition
from memoryd.domain.records import RecordKind
from memoryd.storage.records import KeyPage, RecordStore

from .records_support import rec
from .support import NASTY

VICTIM = Partition("victim-tenant", "victim-agent")

PARTITIONS = [
    *(Partition(s, "agent") for s in NASTY),
    *(Partition("tenant", s) for s in NASTY),
    Partition("victim-tenant", "victim-agent' OR '1'='1"),
    Partition("victim-tenant' AND agent_id = 'victim-agent", "x"),
    Partition("victim-tenantvictim-agent", ""),
    Partition("victim-tenant'", "'victim-agent"),
    Partition("victim-tenant\x00", "victim-agent"),
    Partition("victim-tenant", "victim-agent\x00"),
]
#: Keys that would break naive SQL (and the kind predicate) if not quoted.
NASTY_KEYS = ["shared", "x' OR kind = 'key", "' OR '1'='1' --", "\\", "%", "_"]


@pytest.fixture
async def victim(record_store: RecordStore) -> RecordStore:
    await record_store.put_records(
        VICTIM,
        [
            rec("shared", {"who": "victim"}),
            rec("private", {"who": "victim"}),
            rec("shared", {"who": "victim-wm"}, kind=RecordKind.WORKING),
            *(rec(k, {"who": "victim"}) for k in NASTY_KEYS[1:]),
        ],
    )
    return record_store


@pytest.mark.parametrize("p", PARTITIONS, ids=repr)
async def test_every_method_is_partition_scoped(victim: RecordStore, p: Partition) -> None:
    store = victim
    assert p != VICTIM
    kind = RecordKind.KEY
    await store.put_records(p, [rec("shared", {"who": "me"})])

    got = await store.get_records(p, kind, ["shared", "private", *NASTY_KEYS])
    assert [(r.key, r.doc) for r in got] == [("shared", {"who": "me"})]
    assert await store.get_records(p, RecordKind.WORKING, ["shared"]) == []
    assert await store.count_records(p, kind) == 1
    assert await store.count_records(p, RecordKind.WORKING) == 0
    assert [r.key for r in await store.list_records(p, kind, KeyPage(limit=1000))] == ["shared"]
    assert await store.list_records(p, kind, KeyPage(prefix="p")) == []
    assert await store.list_records(p, kind, KeyPage(after="")) == (
        await store.list_records(p, kind, KeyPage(limit=1000))
    )

    # Deleting the victim's keys from here deletes nothing there.
    assert await store.delete_records(p, kind, ["private", *NASTY_KEYS[1:]]) == []
    assert await store.delete_records(p, RecordKind.WORKING, ["shared"]) == []
    assert await store.count_records(VICTIM, kind) == len(NASTY_KEYS) + 1

    # The victim's view is untouched by everything above.
    [theirs] = await store.get_records(VICTIM, kind, ["shared"])
    assert theirs.doc == {"who": "victim"}
    assert await store.count_records(VICTIM, RecordKind.WORKING) == 1

    assert await store.delete_records(p, kind, ["shared"]) == ["shared"]
    assert [r.doc for r in await store.get_records(VICTIM, kind, ["shared"])] == [{"who": "victim"}]


async def test_hostile_partitions_are_all_distinct(record_store: RecordStore) -> None:
    everyone = [VICTIM, *PARTITIONS]
    assert len(set(everyone)) == len(everyone)
    for i, p in enumerate(everyone):
        await record_store.put_records(p, [rec("k", {"i": i})])
    for i, p in enumerate(everyone):
        [got] = await record_store.get_records(p, RecordKind.KEY, ["k"])
        assert got.doc == {"i": i}, p
        assert await record_store.count_records(p, RecordKind.KEY) == 1
