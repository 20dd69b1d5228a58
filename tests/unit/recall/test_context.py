"""Context expansion (service/memories/context.py): the turns around the best match join the
results just below it, within its namespace and the request's filter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memoryd.config import RecallSettings
from memoryd.domain.models import SecurityLevel
from memoryd.domain.requests import MemoryDraft, RecallQuery

from .conftest import DIM, MakeRig, Rig, scope_for, unit

S = scope_for()
# Reciprocal rank fusion: the fused score of a memory every search found is > 0.
ON = RecallSettings(default_preset="relevance", context_neighbours=1, fusion="rrf")
START = datetime(2025, 3, 1, 12, tzinfo=UTC)
TURNS = [
    "Ana: morning! how was the weekend",
    "Ben: busy, I finally ran the Lisbon marathon",
    "Ana: did you finish it?",
    "Ben: yes, in four hours and ten minutes",
    "Ana: wow, congratulations",
]


def axis(i: int) -> np.ndarray:  # type: ignore[type-arg]
    return unit(np.eye(DIM)[i])


async def seed(rig: Rig, *, hidden_level: SecurityLevel | None = None) -> list[str]:
    """The chat in namespace "chat" (turn i on axis i, a minute apart) and a memory of
    another namespace written between turns 1 and 2."""
    ids = []
    for i, text in enumerate(TURNS):
        level = hidden_level if i == 2 and hidden_level is not None else None
        draft = MemoryDraft(
            text,
            namespace="chat",
            created_at=START + timedelta(minutes=i),
            embedding=axis(i),
            security_level=level,
        )
        ids.append((await rig.service.remember(S, draft)).memory.id)
    other = MemoryDraft(
        "elsewhere", namespace="other", created_at=START + timedelta(seconds=90), embedding=axis(9)
    )
    await rig.service.remember(S, other)
    return ids


def ask(query_axis: int, **fields: object) -> RecallQuery:
    return RecallQuery(query="the Lisbon marathon", embedding=axis(query_axis), **fields)  # type: ignore[arg-type]


async def test_the_turns_around_the_best_match_follow_it(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=ON)
    ids = await seed(rig)
    out = await rig.service.recall(S, ask(1, limit=3))
    got = [r.memory.id for r in out.results]
    # Turn 1 matches; turns 0 and 2 are its neighbours ("other" is not, though it
    # was written between them), ranked just below it.
    assert got[0] == ids[1] and set(got[1:]) == {ids[0], ids[2]}
    best = out.results[0].components.relevance
    for r in out.results[1:]:
        assert r.components.relevance == pytest.approx(best * ON.context_discount)
        # Found by the vector search too (every memory is, with so few), but far below.
        assert 0 < r.components.fused < out.results[0].components.fused / 3
        assert r.components.similarity == pytest.approx(0.0, abs=1e-6)  # orthogonal axes
        assert r.score == pytest.approx(r.components.relevance)


async def test_off_by_default_results_are_only_what_the_searches_found(
    make_rig: MakeRig,
) -> None:
    assert RecallSettings().context_neighbours == 0
    rig = await make_rig(recall=RecallSettings(default_preset="relevance", fusion="rrf"))
    ids = await seed(rig)
    out = await rig.service.recall(S, ask(1, limit=3))
    assert out.results[0].memory.id == ids[1]
    assert all(r.components.fused > 0 for r in out.results)


async def test_a_neighbour_the_caller_may_not_see_is_skipped(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=ON)
    ids = await seed(rig, hidden_level=SecurityLevel.RESTRICTED)
    low = scope_for(clearance=SecurityLevel.INTERNAL)
    out = await rig.service.recall(low, ask(1, limit=10))
    got = [r.memory.id for r in out.results]
    # The turn before and the next one the caller may see.
    assert got[0] == ids[1] and set(got[1:3]) == {ids[0], ids[3]}
    assert ids[2] not in got
