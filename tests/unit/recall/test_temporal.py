"""Time-aware recall (service/memories/temporal.py): a query that names a time moves the
memories of that time (occurred_at, else created_at) up; nothing changes when it names
none, or a time no candidate falls in; the reference time is the request's ``now``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from memoryd.config import RecallSettings
from memoryd.domain.requests import MemoryDraft, RecallQuery, Scoring, ScoringPreset

from .conftest import DIM, MakeRig, Rig, scope_for, unit, with_cosine

S = scope_for()
NOW = datetime(2024, 1, 10, 20, tzinfo=UTC)
QUERY = unit(np.eye(DIM)[0])


async def seed(rig: Rig) -> dict[str, str]:
    """Three meals, each a little less like the query than the one before; the least
    alike happened on 29 Dec 2023 (told on the 30th), the others in January."""
    meals = [
        ("made risotto", NOW - timedelta(days=2), None, 0.62),
        ("made curry", NOW - timedelta(days=5), None, 0.60),
        # Learned (created) on 30 Dec, about the evening of the 29th.
        (
            "made pasta",
            datetime(2023, 12, 30, 21, tzinfo=UTC),
            datetime(2023, 12, 29, 19, tzinfo=UTC),
            0.58,
        ),
    ]
    ids = {}
    for i, (text, created, occurred, cosine) in enumerate(meals):
        draft = MemoryDraft(
            text,
            created_at=created,
            occurred_at=occurred,
            embedding=with_cosine(QUERY, cosine, seed=i),
        )
        ids[text] = (await rig.service.remember(S, draft)).memory.id
    return ids


async def ranked(rig: Rig, query: str, **fields: object) -> list[tuple[str, float]]:
    outcome = await rig.service.recall(
        S,
        RecallQuery(query=query, embedding=QUERY, hybrid=False, **fields),  # type: ignore[arg-type]
    )
    return [(r.memory.content, r.components.temporal) for r in outcome.results]


async def test_a_named_date_moves_the_memories_of_that_day_up(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    await seed(rig)
    found = await ranked(rig, "what did I cook on 29 Dec 2023?", now=NOW)
    assert found[0] == ("made pasta", 1.0)
    assert [t for _, t in found[1:]] == [0.0, 0.0]


async def test_the_event_time_counts_not_when_it_was_learned(make_rig: MakeRig) -> None:
    rig = await make_rig(
        recall=RecallSettings(
            default_preset="relevance", temporal_before_hours=0, temporal_after_hours=0
        )
    )
    await seed(rig)
    # Learned on the 30th, happened on the 29th: the 30th is not its day.
    found = await ranked(rig, "what did I cook on 30 Dec 2023?", now=NOW)
    assert [text for text, _ in found] == ["made risotto", "made curry", "made pasta"]


async def test_relative_times_count_from_the_request_s_now(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    await seed(rig)
    # Five days before NOW is the curry; "yesterday" from the 6th is the 5th.
    found = await ranked(rig, "what did I cook yesterday?", now=NOW - timedelta(days=4))
    assert found[0] == ("made curry", 1.0)
    # From the server's clock (2024 is long past) "yesterday" holds no memory.
    found = await ranked(rig, "what did I cook yesterday?")
    assert [text for text, _ in found] == ["made risotto", "made curry", "made pasta"]
    assert all(t == 0.0 for _, t in found)


async def test_no_time_or_no_match_leaves_relevance_alone(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    await seed(rig)
    plain = await rig.service.recall(S, RecallQuery(query="what did I cook?", embedding=QUERY))
    dated = await rig.service.recall(
        S, RecallQuery(query="what did I cook in 2019?", embedding=QUERY, now=NOW)
    )
    assert [(r.memory.id, r.score) for r in dated.results] == [
        (r.memory.id, r.score) for r in plain.results
    ]


async def test_off_with_weight_zero_and_the_cosine_preset_ignores_time(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance", temporal_weight=0))
    await seed(rig)
    found = await ranked(rig, "what did I cook on 29 Dec 2023?", now=NOW)
    assert [text for text, _ in found] == ["made risotto", "made curry", "made pasta"]
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    await seed(rig)
    similarity = Scoring(preset=ScoringPreset.SIMILARITY)
    found = await ranked(rig, "what did I cook on 29 Dec 2023?", now=NOW, scoring=similarity)
    assert [text for text, _ in found] == ["made risotto", "made curry", "made pasta"]


async def test_hybrid_recall_is_time_aware_too(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    await seed(rig)
    for i in range(3):  # far from the query: the meals' cosines are close to the top
        far = MemoryDraft(f"note {i}", embedding=with_cosine(QUERY, 0.1, seed=10 + i))
        await rig.service.remember(S, far)
    outcome = await rig.service.recall(
        S, RecallQuery(query="what did I cook on 29 Dec 2023?", embedding=QUERY, now=NOW)
    )
    first = outcome.results[0]
    assert first.memory.content == "made pasta"
    assert first.components.temporal == 1.0
    assert first.memory.occurred_at == datetime(2023, 12, 29, 19, tzinfo=UTC)


async def test_a_time_in_a_remark_before_the_question_is_not_read(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    await seed(rig)
    found = await ranked(rig, "It was 29 Dec 2023 last time I checked. What did I cook?", now=NOW)
    assert [text for text, _ in found] == ["made risotto", "made curry", "made pasta"]
    found = await ranked(rig, "Just wondering. What did I cook on 29 Dec 2023?", now=NOW)
    assert found[0] == ("made pasta", 1.0)
