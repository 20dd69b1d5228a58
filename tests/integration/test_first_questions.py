"""The questions a new user asks in the first minutes (issue 24), over real gRPC on a
daemon with the local model: the memory that answers comes first, and each scoring
preset's score is what the preset says, every component consistent with it."""

from __future__ import annotations

import math
import uuid

import pytest
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

FACTS = [
    "The user is allergic to peanuts",
    "The user has a dog named Biscuit",
    "The user lives in Lisbon",
    "The user plays tennis on Sundays",
    "The user's sister is called Ana",
]


def seeded_agent(stub: MemoryServiceStub) -> str:
    agent = f"first-{uuid.uuid4().hex[:8]}"
    items = [mpb.RememberRequest(content=text) for text in FACTS]
    stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    # A keyed preference: its mirror's content is the value's text.
    value = struct_pb2.Value(string_value="Prefers green tea, no coffee")
    stub.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/user/drink", content=value, source=USER_SOURCE_PB
        )
    )
    return agent


def recall(
    stub: MemoryServiceStub, agent: str, query: str, preset: int = 0
) -> list[mpb.RecallResult]:
    request = mpb.RecallRequest(agent_id=agent, query=query, scoring=mpb.Scoring(preset=preset))  # type: ignore[arg-type]
    return list(stub.Recall(request).results)


@pytest.fixture(scope="module")
def agent(memory_stub: MemoryServiceStub) -> str:
    return seeded_agent(memory_stub)


def test_what_pet_finds_the_dog_not_a_keyword_match_on_user(
    memory_stub: MemoryServiceStub, agent: str
) -> None:
    results = recall(memory_stub, agent, "what pet does the user have?")
    assert results[0].memory.content == "The user has a dog named Biscuit"
    # "user" is in nearly every memory: it cannot carry a keyword match on its own.
    assert all(r.components.keyword == 0 for r in results)


def test_what_does_the_user_drink_finds_the_keyed_preference(
    memory_stub: MemoryServiceStub, agent: str
) -> None:
    results = recall(memory_stub, agent, "what does the user drink")
    assert results[0].memory.content == "Prefers green tea, no coffee"
    assert results[0].memory.key == "/user/drink"


def test_the_score_is_what_the_preset_says(memory_stub: MemoryServiceStub, agent: str) -> None:
    query = "what pet does the user have?"
    by_default = recall(memory_stub, agent, query)
    similarity = recall(memory_stub, agent, query, mpb.SCORING_PRESET_SIMILARITY)
    relevance = recall(memory_stub, agent, query, mpb.SCORING_PRESET_RELEVANCE)
    decayed = recall(memory_stub, agent, query, mpb.SCORING_PRESET_DECAYED)
    weighted = recall(memory_stub, agent, query, mpb.SCORING_PRESET_WEIGHTED)
    # The default is the blended preset: the fused score on 0..1 with a little recency
    # and importance (recall.blend_*); here every memory is new and of one importance,
    # so the order is relevance's.
    assert [r.memory.id for r in by_default] == [r.memory.id for r in relevance]
    for r in by_default:
        c = r.components
        assert r.score == pytest.approx(0.9 * c.relevance + 0.05 * c.recency + 0.05 * c.importance)
        assert 0 <= r.components.relevance <= 1  # convex fusion: the worst candidate scores 0
    for r in relevance:
        assert r.score == pytest.approx(r.components.relevance)
    # SIMILARITY: the cosine, which the results are ordered by.
    scores = [r.score for r in similarity]
    assert scores == sorted(scores, reverse=True)
    for r in similarity:
        assert r.score == pytest.approx(r.components.similarity)
    assert not math.isclose(similarity[0].score, by_default[0].score)
    # DECAYED and WEIGHTED: the README's formulas over the returned components.
    for r in decayed:
        c = r.components
        assert r.score == pytest.approx(c.decayed)
        assert c.decayed == pytest.approx(c.relevance * c.recency)
    for r in weighted:
        c = r.components
        assert r.score == pytest.approx(c.weighted)
        assert c.weighted == pytest.approx(0.6 * c.relevance + 0.2 * c.recency + 0.2 * c.importance)
