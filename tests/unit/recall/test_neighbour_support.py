"""Neighbour support (service/memories/support.py): a candidate's relevance is raised by
the best other candidate within the window of turns of its own session, by
r + w * s * (1 - r); a memory without a session position, another session's turn and a
turn beyond the window give and take nothing; recall ranks by it end to end."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memoryd.config import RecallSettings
from memoryd.domain.conversation import with_position
from memoryd.domain.models import Memory
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.service.memories.hybrid import Candidate
from memoryd.service.memories.support import with_neighbour_support

from .conftest import DIM, MakeRig, scope_for, unit, with_cosine

S = scope_for()
T = datetime(2024, 1, 1, tzinfo=UTC)


def candidate(name: str, relevance: float, session: str = "", seq: int = 0) -> Candidate:
    metadata = with_position({}, session, seq)
    memory = Memory(
        id=name, tenant_id="t", agent_id="a", content=name, created_at=T, updated_at=T,
        metadata=metadata,
    )  # fmt: skip
    return Candidate(memory, 0.0, 0.0, 0.0, relevance)


def relevances(ranked: list[Candidate]) -> dict[str, float]:
    return {c.memory.id: c.relevance for c in ranked}


def test_support_is_the_best_neighbour_within_the_window_of_the_same_session() -> None:
    ranked = [
        candidate("hit", 0.9, "s", 5),
        candidate("beside", 0.3, "s", 6),
        candidate("two-away", 0.3, "s", 7),
        candidate("other-session", 0.3, "t", 4),
        candidate("no-position", 0.3),
    ]
    one = relevances(with_neighbour_support(ranked, RecallSettings(neighbour_weight=0.5)))
    assert one["beside"] == pytest.approx(0.3 + 0.5 * 0.9 * 0.7)
    assert one["hit"] == pytest.approx(0.9 + 0.5 * 0.3 * 0.1)
    assert one["two-away"] == pytest.approx(0.3 + 0.5 * 0.3 * 0.7)  # "beside" supports it
    assert one["other-session"] == one["no-position"] == 0.3
    wide = RecallSettings(neighbour_weight=0.5, neighbour_window=2)
    assert relevances(with_neighbour_support(ranked, wide))["two-away"] == pytest.approx(
        0.3 + 0.5 * 0.9 * 0.7
    )


def test_the_order_follows_the_supported_relevance_and_stays_in_the_unit_interval() -> None:
    ranked = [
        candidate("lone", 0.6, "s", 1),
        candidate("pair-a", 0.5, "s", 10),
        candidate("pair-b", 0.5, "s", 11),
        candidate("full", 1.0, "t", 1),
        candidate("full-next", 1.0, "t", 2),
    ]
    out = with_neighbour_support(ranked, RecallSettings(neighbour_weight=1.0))
    assert [c.memory.id for c in out] == ["full", "full-next", "pair-a", "pair-b", "lone"]
    assert all(0.0 <= c.relevance <= 1.0 for c in out)


def test_off_or_without_neighbours_nothing_changes() -> None:
    ranked = [candidate("a", 0.9, "s", 1), candidate("b", 0.5, "s", 2)]
    off = with_neighbour_support(ranked, RecallSettings(neighbour_weight=0.0))
    assert off == ranked
    apart = [candidate("a", 0.9, "s", 1), candidate("b", 0.5, "s", 9), candidate("c", 0.4)]
    assert with_neighbour_support(apart, RecallSettings(neighbour_weight=0.5)) == apart


async def test_recall_ranks_a_turn_beside_a_strong_match_above_a_closer_lone_one(
    make_rig: MakeRig,
) -> None:
    """ "They gave me Moon!" shares nothing with the question and its vector is farther
    than an unrelated turn's; beside the turn that matches best it outranks it."""
    query = unit(np.eye(DIM)[0])
    turns = [
        ("the rescue called about adopting the cat", 0.9, "chat", 1),
        ("they gave me Moon!", 0.25, "chat", 2),
        ("the weather is grey", 0.3, "other", 1),
    ]
    order = {}
    for weight in (0.0, 0.5):
        rig = await make_rig(recall=RecallSettings(neighbour_weight=weight, fusion="rrf"))
        for seed, (text, cosine, session, seq) in enumerate(turns):
            embedding = with_cosine(query, cosine, seed=seed)
            draft = MemoryDraft(text, embedding=embedding, session_id=session, sequence=seq)
            await rig.service.remember(S, draft, dedup=False)
        asked = RecallQuery(query="did the rescue let them adopt the cat?", embedding=query)
        out = await rig.service.recall(S, asked)
        order[weight] = [r.memory.content for r in out.results]
    assert order[0.0] == [turns[0][0], turns[2][0], turns[1][0]]
    assert order[0.5] == [turns[0][0], turns[1][0], turns[2][0]]
