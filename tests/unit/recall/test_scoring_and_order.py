"""Recency from the last access, negative weights rejected, ListMemories by access
count and by importance (paged)."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from pydantic import ValidationError

from memoryd.config import RecallSettings
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import Memory, MemoryOrder, utcnow
from memoryd.domain.requests import (
    ListQuery,
    MemoryDraft,
    RecallQuery,
    RecencyBasis,
    Scoring,
    ScoringPreset,
)
from memoryd.service.memories.scoring import Scorer

from .conftest import Rig, scope_for

S = scope_for()


def test_recency_can_count_from_the_last_access() -> None:
    now = utcnow()
    memory = Memory(
        id="m",
        tenant_id="t",
        agent_id="a",
        content="x",
        created_at=now - timedelta(days=60),
        updated_at=now - timedelta(days=60),
        accessed_at=now - timedelta(hours=1),
    )
    weighted = Scoring(preset=ScoringPreset.WEIGHTED)
    updated = Scorer.resolve(weighted, RecallSettings())
    by_access = Scoring(preset=ScoringPreset.WEIGHTED, recency_basis=RecencyBasis.LAST_ACCESS)
    accessed = Scorer.resolve(by_access, RecallSettings())
    assert updated.recency(memory, now) < 0.01
    assert accessed.recency(memory, now) == pytest.approx(math.exp(-math.log(2) / 168), rel=1e-6)
    configured = Scorer.resolve(weighted, RecallSettings(recency_basis="last_access"))
    assert configured.recency(memory, now) == accessed.recency(memory, now)
    # A memory never read counts from its update either way.
    unread = memory.copy()
    unread.accessed_at = None
    assert accessed.recency(unread, now) == updated.recency(unread, now)


async def test_a_recall_can_rank_recently_used_memories_higher(rig: Rig) -> None:
    old = await rig.service.remember(S, MemoryDraft("Invoice numbering scheme for clients"))
    await rig.service.get(S, old.memory.id)  # an access, flushed below
    await rig.service._access.flush()
    weighted = Scoring(preset=ScoringPreset.WEIGHTED, recency_basis=RecencyBasis.LAST_ACCESS)
    found = await rig.service.recall(S, RecallQuery(query="invoice numbering", scoring=weighted))
    assert found.results[0].components.recency == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("name", ["similarity_weight", "recency_weight", "importance_weight"])
@pytest.mark.parametrize("value", [-0.1, float("nan"), float("-inf")])
async def test_negative_or_non_finite_weights_are_rejected(
    rig: Rig, name: str, value: float
) -> None:
    scoring = Scoring(preset=ScoringPreset.WEIGHTED, **{name: value})
    with pytest.raises(InvalidArgument) as err:
        await rig.service.recall(S, RecallQuery(query="anything", scoring=scoring))
    assert err.value.violations[0].field == f"scoring.{name}"


def test_negative_weights_are_rejected_in_the_config() -> None:
    with pytest.raises(ValidationError):
        RecallSettings(recency_weight=-0.5)


async def test_list_by_access_count_and_by_importance(rig: Rig) -> None:
    ids = []
    for i, importance in enumerate([0.2, 0.9, 0.5, 0.9, 0.1]):
        out = await rig.service.remember(
            S, MemoryDraft(f"Distinct note number {i} about topic {i * 7}", importance=importance)
        )
        ids.append(out.memory.id)
    for i, reads in enumerate([3, 0, 5, 1, 3]):
        for _ in range(reads):
            await rig.service.get(S, ids[i])
    await rig.service._access.flush()

    async def listing(order: MemoryOrder) -> list[str]:
        got: list[str] = []
        token = ""
        while True:
            page = await rig.service.list_memories(
                S, ListQuery(order=order, page_size=2, page_token=token)
            )
            got.extend(m.id for m in page.memories)
            token = page.next_page_token
            if not token:
                return got

    # Ties go newest first.
    assert await listing(MemoryOrder.ACCESS_COUNT_DESC) == [ids[2], ids[4], ids[0], ids[3], ids[1]]
    assert await listing(MemoryOrder.IMPORTANCE_DESC) == [ids[3], ids[1], ids[2], ids[0], ids[4]]
    first = await rig.service.list_memories(
        S, ListQuery(order=MemoryOrder.IMPORTANCE_DESC, page_size=2)
    )
    with pytest.raises(InvalidArgument):  # a token of one order is no good for another
        await rig.service.list_memories(
            S,
            ListQuery(
                order=MemoryOrder.ACCESS_COUNT_DESC, page_size=2, page_token=first.next_page_token
            ),
        )
