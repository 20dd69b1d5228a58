"""MemoryService logic over the in-process store and the hashing embedder."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import numpy as np
import pytest

from memoryd.domain.errors import InvalidArgument, NotFound, PermissionDenied
from memoryd.domain.models import MemoryFilter, SecurityLevel
from memoryd.domain.requests import (
    ListQuery,
    MemoryDraft,
    MemoryPatch,
    RecallQuery,
    Scoring,
    ScoringPreset,
)
from tests.unit.service.helpers import Harness, scope_for


async def test_remember_assigns_server_fields(harness: Harness) -> None:
    scope = scope_for()
    outcome = await harness.service.remember(
        scope, MemoryDraft(content="hello world", tags=(" a ", "a", "b"))
    )
    m = outcome.memory
    assert (m.tenant_id, m.agent_id) == ("t1", "a1")
    assert m.tags == ("a", "b")  # trimmed and de-duplicated
    assert m.version == 1 and m.importance == 0.5 and m.confidence == 1.0
    assert m.security_level is SecurityLevel.INTERNAL
    assert m.embedding_model == "hashing-v1-64" and m.embedding_dimension == 64
    assert (await harness.store.get(scope.partition, [m.id]))[0].content == "hello world"


async def test_batch_validation_names_every_bad_item_and_stores_nothing(harness: Harness) -> None:
    scope = scope_for()
    drafts = [
        MemoryDraft(content="ok"),
        MemoryDraft(content=""),
        MemoryDraft(content="x", importance=2.0),
    ]
    with pytest.raises(InvalidArgument) as err:
        await harness.service.remember_batch(scope, drafts)
    fields = {v.field for v in err.value.violations}
    assert fields == {"items[1].content", "items[2].importance"}
    assert await harness.store.count(scope.partition, MemoryFilter(include_archived=True)) == 0


async def test_write_above_clearance_is_denied(harness: Harness) -> None:
    scope = scope_for(clearance=SecurityLevel.INTERNAL)
    with pytest.raises(PermissionDenied):
        await harness.service.remember(
            scope, MemoryDraft(content="secret", security_level=SecurityLevel.RESTRICTED)
        )


async def test_reads_never_exceed_clearance(harness: Harness) -> None:
    admin, low = scope_for(), scope_for(clearance=SecurityLevel.PUBLIC)
    secret = (
        await harness.service.remember(
            admin, MemoryDraft(content="launch codes", security_level=SecurityLevel.RESTRICTED)
        )
    ).memory
    public = (
        await harness.service.remember(
            admin, MemoryDraft(content="launch party", security_level=SecurityLevel.PUBLIC)
        )
    ).memory
    with pytest.raises(NotFound):
        await harness.service.get(low, secret.id)
    recalled = await harness.service.recall(low, RecallQuery(query="launch", limit=10))
    assert [r.memory.id for r in recalled.results] == [public.id]
    # A request may lower its ceiling but never raise it.
    raised = RecallQuery(
        query="launch", filter=MemoryFilter(max_security_level=SecurityLevel.RESTRICTED)
    )
    assert [r.memory.id for r in (await harness.service.recall(low, raised)).results] == [public.id]
    page = await harness.service.list_memories(low, ListQuery())
    assert [m.id for m in page.memories] == [public.id]
    assert await harness.service.forget(low, [secret.id]) == []
    assert await harness.store.get(admin.partition, [secret.id])


async def test_scoring_presets_rank_differently(harness: Harness) -> None:
    scope = scope_for()
    now = harness.clock()
    old = (
        await harness.service.remember(
            scope,
            MemoryDraft(
                content="deploy the service to the staging cluster",
                created_at=now - timedelta(days=60),
            ),
        )
    ).memory
    new = (
        await harness.service.remember(
            scope,
            MemoryDraft(content="deploy the service to the staging clusters maybe", importance=0.9),
        )
    ).memory
    by_similarity = await harness.service.recall(
        scope, RecallQuery(query="deploy the service to the staging cluster", limit=2)
    )
    assert by_similarity.results[0].memory.id == old.id
    decayed = await harness.service.recall(
        scope,
        RecallQuery(
            query="deploy the service to the staging cluster",
            limit=2,
            scoring=Scoring(ScoringPreset.DECAYED),
            hybrid=False,  # the preset formula over cosine similarity
        ),
    )
    assert decayed.results[0].memory.id == new.id
    top = decayed.results[0]
    assert top.score == pytest.approx(top.components.similarity * top.components.recency)
    old_components = decayed.results[1].components
    assert old_components.recency == pytest.approx(0.5 ** (60 * 24 / 168), rel=1e-3)
    custom = Scoring(
        ScoringPreset.WEIGHTED, similarity_weight=0.0, recency_weight=0.0, importance_weight=1.0
    )
    weighted = await harness.service.recall(
        scope, RecallQuery(query="deploy", limit=2, scoring=custom)
    )
    assert weighted.results[0].memory.id == new.id and weighted.results[0].score == pytest.approx(
        0.9
    )


async def test_recall_records_access_without_a_store_write_per_hit(harness: Harness) -> None:
    scope = scope_for()
    m = (await harness.service.remember(scope, MemoryDraft(content="a memorable fact"))).memory
    for _ in range(3):
        await harness.service.recall(scope, RecallQuery(query="memorable", limit=1))
    assert (await harness.store.get(scope.partition, [m.id]))[0].access_count == 0  # still buffered
    await harness.access.flush()
    stored = (await harness.store.get(scope.partition, [m.id]))[0]
    assert stored.access_count == 3 and stored.accessed_at is not None


async def test_update_patch_and_reembed(harness: Harness) -> None:
    scope = scope_for()
    m = (await harness.service.remember(scope, MemoryDraft(content="cats are great"))).memory
    before = (await harness.store.get(scope.partition, [m.id], with_vectors=True))[0].vector
    updated = await harness.service.update(
        scope,
        m.id,
        MemoryPatch(
            fields=frozenset({"content", "importance"}),
            values={"content": "dogs are great", "importance": 0.9},
        ),
    )
    assert (
        updated.version == 2 and updated.content == "dogs are great" and updated.importance == 0.9
    )
    after = (await harness.store.get(scope.partition, [m.id], with_vectors=True))[0].vector
    assert before is not None and after is not None and not np.allclose(before, after)
    with pytest.raises(InvalidArgument) as err:
        await harness.service.update(
            scope, m.id, MemoryPatch(fields=frozenset({"importance"}), values={"importance": 3.0})
        )
    assert err.value.violations[0].field == "memory.importance"


async def test_concurrent_remembers_are_coalesced(harness: Harness) -> None:
    calls = 0
    original = harness.store.upsert

    async def counting_upsert(partition, memories):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        await original(partition, memories)

    harness.store.upsert = counting_upsert  # type: ignore[method-assign]
    scope = scope_for()
    await asyncio.gather(
        *(harness.service.remember(scope, MemoryDraft(content=f"fact {i}")) for i in range(50))
    )
    assert await harness.store.count(scope.partition, MemoryFilter()) == 50
    assert calls < 50  # several writes shared a commit


async def test_expired_memories_are_invisible(harness: Harness) -> None:
    scope = scope_for()
    m = (
        await harness.service.remember(
            scope,
            MemoryDraft(
                content="short lived", expires_at=harness.clock() + timedelta(milliseconds=1)
            ),
        )
    ).memory
    harness.clock.advance(timedelta(milliseconds=10))  # the expiry passes
    assert (await harness.service.recall(scope, RecallQuery(query="short lived"))).results == []
    assert (await harness.service.list_memories(scope, ListQuery())).memories == []
    with pytest.raises(InvalidArgument):
        await harness.service.remember(
            scope, MemoryDraft(content="x", expires_at=harness.clock() - timedelta(seconds=1))
        )
    assert m.id
