"""Remember-time deduplication through MemoryService (in-process store)."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import numpy as np
import pytest

from memoryd.config import DedupSettings
from memoryd.domain.errors import StoreError
from memoryd.domain.models import Memory, MemoryFilter, SecurityLevel, utcnow
from memoryd.domain.principal import CallScope
from memoryd.domain.requests import MemoryDraft
from memoryd.service.memories.dedup import DEDUP_METADATA_KEY
from memoryd.storage.base import ListPage

from .conftest import DIM, MakeRig, Rig, scope_for, unit, with_cosine

S = scope_for()
BASE = unit(np.arange(1, DIM + 1, dtype=np.float32))


async def stored(rig: Rig, scope: CallScope = S) -> list[Memory]:
    return await rig.store.list(
        scope.partition, MemoryFilter(include_archived=True), ListPage(limit=1000)
    )


async def test_exact_duplicate_updates_the_existing_memory(rig: Rig) -> None:
    first = await rig.service.remember(
        S,
        MemoryDraft(
            "Likes green tea", tags=("drinks", "pinned"), importance=0.9, metadata={"a": 1}
        ),
    )
    again = await rig.service.remember(
        S, MemoryDraft("  likes GREEN\ttea ", tags=("tea", "drinks"), importance=0.2)
    )
    assert not first.deduplicated and again.deduplicated
    m = again.memory
    assert m.id == first.memory.id
    assert m.version == 2
    assert m.content == "  likes GREEN\ttea "  # the newest wording is kept
    assert m.tags == ("drinks", "pinned", "tea")
    assert m.importance == 0.9
    assert m.supersedes == ""
    assert m.created_at == first.memory.created_at and m.updated_at >= first.memory.updated_at
    assert m.metadata["a"] == 1
    assert m.metadata[DEDUP_METADATA_KEY] == {
        "count": 1,
        "previous_content": "Likes green tea",
        "previous_version": 1,
    }
    [row] = await stored(rig)
    assert row.id == m.id and row.version == 2 and row.content == m.content
    # Same wording again: counted, no "previous" change recorded.
    third = await rig.service.remember(S, MemoryDraft("  likes GREEN\ttea "))
    assert third.memory.version == 3
    assert third.memory.metadata[DEDUP_METADATA_KEY]["count"] == 2
    assert third.memory.metadata[DEDUP_METADATA_KEY]["previous_version"] == 1


async def test_near_duplicate_by_cosine(rig: Rig) -> None:
    first = await rig.service.remember(S, MemoryDraft("original", embedding=BASE))
    near = await rig.service.remember(S, MemoryDraft("reworded", embedding=with_cosine(BASE, 0.97)))
    assert near.deduplicated and near.memory.id == first.memory.id
    assert near.memory.content == "reworded"
    np.testing.assert_allclose(near.memory.vector, with_cosine(BASE, 0.97), rtol=1e-5)
    far = await rig.service.remember(
        S, MemoryDraft("different", embedding=with_cosine(BASE, 0.9, seed=1))
    )
    assert not far.deduplicated and far.memory.id != first.memory.id
    assert len(await stored(rig)) == 2


@pytest.mark.parametrize(
    "settings",
    [DedupSettings(threshold=0), DedupSettings(threshold=1.5)],
    ids=["zero", "above-one"],
)
async def test_threshold_off_disables_near_but_not_exact(
    make_rig: MakeRig, settings: DedupSettings
) -> None:
    rig = await make_rig(dedup=settings)
    await rig.service.remember(S, MemoryDraft("original", embedding=BASE))
    near = await rig.service.remember(
        S, MemoryDraft("reworded", embedding=with_cosine(BASE, 0.999))
    )
    assert not near.deduplicated
    exact = await rig.service.remember(S, MemoryDraft("ORIGINAL"))
    assert exact.deduplicated


async def test_disabled_or_opted_out_stores_every_draft(make_rig: MakeRig) -> None:
    off = await make_rig(dedup=DedupSettings(enabled=False))
    for _ in range(2):
        assert not (await off.service.remember(S, MemoryDraft("same"))).deduplicated
    assert len(await stored(off)) == 2
    on = await make_rig()
    outcomes = await on.service.remember_batch(S, [MemoryDraft("same")] * 2, dedup=False)
    assert [o.deduplicated for o in outcomes] == [False, False]
    assert not (await on.service.remember(S, MemoryDraft("same"), dedup=False)).deduplicated
    assert len(await stored(on)) == 3


async def test_batch_items_collapse_into_each_other(rig: Rig) -> None:
    near_b = with_cosine(unit(np.ones(DIM)), 0.99)
    drafts = [
        MemoryDraft("alpha", tags=("x",)),
        MemoryDraft("beta", embedding=unit(np.ones(DIM))),
        MemoryDraft("ALPHA ", tags=("y",), importance=0.8),
        MemoryDraft("gamma"),
        MemoryDraft("beta, roughly", embedding=near_b),
        MemoryDraft("alpha"),
    ]
    outcomes = await rig.service.remember_batch(S, drafts)
    assert [o.deduplicated for o in outcomes] == [False, False, True, False, True, True]
    ids = [o.memory.id for o in outcomes]
    assert ids[0] == ids[2] == ids[5] and ids[1] == ids[4]
    assert len(set(ids)) == 3
    alpha = outcomes[0].memory
    # Every result of one memory shows its final state.
    assert outcomes[2].memory == alpha and outcomes[5].memory == alpha
    assert (alpha.version, alpha.content, alpha.tags, alpha.importance) == (
        3,
        "alpha",
        ("x", "y"),
        0.8,
    )
    assert outcomes[1].memory.content == "beta, roughly"
    rows = {m.id: m for m in await stored(rig)}
    assert len(rows) == 3 and rows[alpha.id].version == 3


async def test_a_batch_of_distinct_memories_and_one_near_pair(rig: Rig) -> None:
    """Batches with no duplicate at all skip the per-memory near lookup (one product
    decides); a single near pair among otherwise distinct memories must still merge."""
    rng = np.random.default_rng(4)
    distinct = [unit(rng.normal(size=DIM)) for _ in range(40)]
    quiet = await rig.service.remember_batch(
        S, [MemoryDraft(f"fact {i}", embedding=v) for i, v in enumerate(distinct)]
    )
    assert not any(o.deduplicated for o in quiet) and len(await stored(rig)) == 40
    fresh = [unit(rng.normal(size=DIM)) for _ in range(20)]
    fresh[13] = with_cosine(fresh[4], 0.99)  # no exact twin, nothing stored near it
    outcomes = await rig.service.remember_batch(
        S, [MemoryDraft(f"new fact {i}", embedding=v) for i, v in enumerate(fresh)]
    )
    assert [i for i, o in enumerate(outcomes) if o.deduplicated] == [13]
    assert outcomes[13].memory.id == outcomes[4].memory.id
    assert len(await stored(rig)) == 40 + 19


async def test_concurrent_near_duplicates_make_one_memory(rig: Rig) -> None:
    """In-flight writes of other requests are duplicate targets by vector too."""
    base = unit(np.ones(DIM))
    outcomes = await asyncio.gather(
        *(
            rig.service.remember_batch(
                S, [MemoryDraft(f"worded {i} ways", embedding=with_cosine(base, 0.99, seed=i))]
            )
            for i in range(8)
        )
    )
    flat = [o for batch in outcomes for o in batch]
    assert sum(not o.deduplicated for o in flat) == 1
    assert len({o.memory.id for o in flat}) == 1
    assert len(await stored(rig)) == 1


async def test_namespaces_levels_and_partitions_never_merge(rig: Rig) -> None:
    await rig.service.remember(S, MemoryDraft("shared fact", namespace="u1"))
    checks = [
        (S, MemoryDraft("shared fact", namespace="u2")),
        (S, MemoryDraft("shared fact", namespace="")),
        (S, MemoryDraft("shared fact", namespace="u1", security_level=SecurityLevel.PUBLIC)),
        (scope_for(agent="a2"), MemoryDraft("shared fact", namespace="u1")),
        (scope_for(tenant="t2"), MemoryDraft("shared fact", namespace="u1")),
    ]
    for scope, draft in checks:
        assert not (await rig.service.remember(scope, draft)).deduplicated
    assert len(await stored(rig)) == 4


async def test_a_secret_is_never_merged_into_or_revealed(rig: Rig) -> None:
    boss = scope_for(clearance=SecurityLevel.RESTRICTED)
    intern = scope_for(clearance=SecurityLevel.INTERNAL)
    secret = await rig.service.remember(
        boss,
        MemoryDraft("Project Bluebird launches in May", security_level=SecurityLevel.RESTRICTED),
    )
    vector_secret = await rig.service.remember(
        boss,
        MemoryDraft("vector secret", embedding=BASE, security_level=SecurityLevel.RESTRICTED),
    )
    exact = await rig.service.remember(intern, MemoryDraft("project bluebird launches in may"))
    near = await rig.service.remember(
        intern, MemoryDraft("guess", embedding=with_cosine(BASE, 0.999))
    )
    for outcome in (exact, near):
        assert not outcome.deduplicated
        assert outcome.memory.security_level == SecurityLevel.INTERNAL
        assert outcome.memory.id not in (secret.memory.id, vector_secret.memory.id)
        assert outcome.memory.version == 1
    rows = {m.id: m for m in await stored(rig)}
    assert rows[secret.memory.id].version == 1
    assert rows[secret.memory.id].content == "Project Bluebird launches in May"
    assert rows[vector_secret.memory.id].version == 1
    # Cleared callers writing below the secret's level do not merge into it either.
    confidential = scope_for(clearance=SecurityLevel.CONFIDENTIAL)
    below = await rig.service.remember(
        confidential,
        MemoryDraft("Project Bluebird launches in May", security_level=SecurityLevel.CONFIDENTIAL),
    )
    assert not below.deduplicated


async def test_keyed_archived_and_expired_memories_are_not_targets(rig: Rig) -> None:
    now = utcnow()
    base = (await rig.service.remember(S, MemoryDraft("seed", embedding=BASE))).memory
    assert base.vector is not None
    variants = [
        dataclasses.replace(base, id="keyed", key="/user/x", content="keyed text"),
        dataclasses.replace(base, id="archived", archived=True, content="archived text"),
        dataclasses.replace(
            base, id="expired", expires_at=now - timedelta(seconds=1), content="expired text"
        ),
    ]
    await rig.service.forget(S, [base.id])
    await rig.store.upsert(S.partition, variants)
    for text in ("keyed text", "archived text", "expired text"):
        outcome = await rig.service.remember(S, MemoryDraft(text))
        assert not outcome.deduplicated, text
    near = await rig.service.remember(S, MemoryDraft("near", embedding=with_cosine(BASE, 0.99)))
    assert not near.deduplicated


async def test_merge_keeps_the_later_expiry_and_the_earlier_creation(rig: Rig) -> None:
    now = utcnow()
    first = await rig.service.remember(
        S,
        MemoryDraft("fact", expires_at=now + timedelta(days=1), created_at=now - timedelta(days=3)),
    )
    later = await rig.service.remember(
        S, MemoryDraft("fact", expires_at=now + timedelta(days=5), created_at=now)
    )
    assert later.memory.expires_at == now + timedelta(days=5)
    assert later.memory.created_at == first.memory.created_at
    forever = await rig.service.remember(S, MemoryDraft("fact"))
    assert forever.memory.expires_at is None


async def test_concurrent_duplicates_make_one_memory(rig: Rig) -> None:
    outcomes = await asyncio.gather(
        *(rig.service.remember(S, MemoryDraft("racing text", tags=(f"t{i}",))) for i in range(10))
    )
    assert sum(not o.deduplicated for o in outcomes) == 1
    assert len({o.memory.id for o in outcomes}) == 1
    [row] = await stored(rig)
    assert row.version == 10
    assert set(row.tags) == {f"t{i}" for i in range(10)}


async def test_a_failed_write_leaves_nothing_to_merge_into(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*_: object, **__: object) -> None:
        raise StoreError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(rig.store, "upsert", broken)
        with pytest.raises(StoreError):
            await rig.service.remember(S, MemoryDraft("lost write"))
    assert rig.service._dedup._pending == {}
    retry = await rig.service.remember(S, MemoryDraft("lost write"))
    assert not retry.deduplicated and retry.memory.version == 1
